"""torch.func's transforms in the graph: ``vmap``, ``grad``, ``grad_and_value``,
``jacrev``, ``jacfwd``, ``hessian``, ``jvp``, ``vjp``.

``torch.vmap(f, in_dims)(x, y)`` is traced like a control-flow operator: ``f`` is
traced into a body of its own (``control_flow.trace_body``) on FakeTensors of
one example's metadata (for vmap, the batched dimension removed; for the
derivative transforms, the inputs as they are), the tensors it reads from
outside become extra operands (unbatched, ``in_dims`` None; constants for
differentiation), and one node calls the transform on the body's GraphModule.
What the node returns is learnt by running that call on the FakeTensors, which
functorch supports. At run time the graph applies the transform exactly as
eager does, and AOTAutograd traces through it, so backends and backward see
the transform's own batching and derivative rules.

The body must follow the operators' rules (no side effects, no graph break,
no in-place write to an input); otherwise the call is a break and CPython runs
the transform, its frames unmodified (convert_frame never traces inside a
functorch level). ``has_aux`` (``grad``, ``grad_and_value``, ``jacrev``,
``jacfwd``, ``vjp``) takes a function returning ``(tensor, aux)``, ``aux`` tensors
in tuples, lists and dicts: the body returns the tensor and then aux's leaves,
and the graph's call hands the leaves back as the auxiliary output. vmap's
``out_dims`` is an int or a tuple of ints, one per output. Keyword arguments of
the transformed function, and other ``out_dims``, are breaks.
"""
import functools
import inspect

import torch

from ...errors import unsupported
from ..core.base import VariableTracker
from ..containers.lists import ListVariable, TupleVariable
from .control_flow import dict_pairs, examples_of, flatten, leaf_count, share_operands, trace_body, unflatten
from .tensor import TensorVariable


# ---- what the graph calls: the transform applied to a body's GraphModule
def _only_output(body):
    def fn(*args):
        return body(*args)[0]
    return fn


def run_vmap(body, in_dims, out_dims, randomness, chunk_size, *operands):
    """``torch.vmap`` of a body (which returns a tuple), as the graph calls it."""
    return torch.vmap(body, in_dims=in_dims, out_dims=out_dims, randomness=randomness,
                      chunk_size=chunk_size)(*operands)


def _with_aux(body):
    def fn(*args):
        out = body(*args)
        return out[0], tuple(out[1:])
    return fn


def run_derivative(body, transform, argnums, *operands):
    """``transform(f, argnums)(*operands)`` for a body that returns one tensor; ``argnums``
    is a tuple of the flat operands', so the result is one per operand chosen."""
    return _DERIVATIVES[transform](_only_output(body), argnums=argnums)(*operands)


def run_derivative_aux(body, transform, argnums, *operands):
    """``transform(f, argnums, has_aux=True)(*operands)`` for a body that returns the
    tensor differentiated, then the leaves of the auxiliary output (handed back as a tuple)."""
    return _DERIVATIVES[transform](_with_aux(body), argnums=argnums, has_aux=True)(*operands)


_DERIVATIVES = {
    "grad": torch.func.grad,
    "grad_and_value": torch.func.grad_and_value,
    "jacrev": torch.func.jacrev,
    "jacfwd": torch.func.jacfwd,
    "hessian": torch.func.hessian,
}
TRANSFORMS = {getattr(torch.func, name): name for name in ("vmap", *_DERIVATIVES)}


def _regroup(per_leaf, specs, single):
    """One result per differentiated tensor (a tuple tracker) regrouped into the
    arguments' structures: one structure for an int ``argnums``, else a tuple of them."""
    leaves = iter(per_leaf.items)
    groups = [unflatten(leaves, spec) for spec in specs]
    return groups[0] if single else TupleVariable(groups)


def _one_example(output, fake, dim):
    """What the vmapped function sees of ``fake`` batched along ``dim``: one slice (an
    empty batch still has the slice's metadata)."""
    if fake.shape[dim] > 0:
        return fake.select(dim, 0)
    shape = list(fake.shape)
    del shape[dim]
    with output.fake_mode:
        return torch.empty(shape, dtype=fake.dtype, device=fake.device, requires_grad=fake.requires_grad)


def run_jvp(body, primal_count, *operands):
    """``torch.func.jvp(f, primals, tangents)`` for a body that returns one tensor; the
    operands after the primals and tangents are what the body read from outside."""
    primals, tangents = operands[:primal_count], operands[primal_count:2 * primal_count]
    lifted = operands[2 * primal_count:]
    return torch.func.jvp(lambda *p: body(*p, *lifted)[0], primals, tangents)


class JvpVariable(VariableTracker):
    """``torch.func.jvp(f, primals, tangents)``: ``f`` traced on the primals, one node."""

    def python_type(self):
        return type(torch.func.jvp)

    def call(self, tx, args, kwargs):
        try:
            bound = inspect.signature(torch.func.jvp).bind(*args, **kwargs)
        except TypeError as e:
            unsupported("unsupported_call", f"torch.func.jvp: {e}")
        a = bound.arguments
        if any(isinstance(a.get(flag), VariableTracker) and a[flag].as_python_constant() for flag in
               ("strict", "has_aux")):
            unsupported("unsupported_call", "torch.func.jvp with strict or has_aux")
        what = "the function torch.func.jvp differentiates"
        primals, primal_spec = flatten(a["primals"], f"{what}'s primals")
        tangents, tangent_spec = flatten(a["tangents"], f"{what}'s tangents")
        if primal_spec != tangent_spec or not isinstance(a["primals"], TupleVariable):
            unsupported("control_flow_body", f"{what}: primals and tangents must be tuples of one structure")
        traced = trace_body(tx, a["func"], [examples_of(p, what) for p in a["primals"].items], "jvp_body", what)
        if traced.spec != "tensor":
            unsupported("control_flow_body", f"{what} returns more than one tensor")
        lifted, lifted_fakes = share_operands([traced])
        operands = primals + tangents
        return tx.output.call_operator(
            tx, run_jvp, (traced.body, len(primals), *(t.node for t in operands), *lifted),
            (traced.body, len(primals), *(t.fake for t in operands), *lifted_fakes))


def run_vjp(body, primal_count, *operands):
    """The pullback of ``torch.func.vjp(f, *primals)`` applied to the cotangent (the last
    operand), for a body that returns one tensor; the operands between the primals and
    the cotangent are what the body read from outside."""
    primals, lifted, cotangent = operands[:primal_count], operands[primal_count:-1], operands[-1]
    return torch.func.vjp(lambda *p: body(*p, *lifted)[0], *primals)[1](cotangent)


class VjpVariable(VariableTracker):
    """``torch.func.vjp(f, *primals)``: ``f``'s output, traced in the graph as a call of
    ``f``, and the pullback, a function whose call is one node."""

    def python_type(self):
        return type(torch.func.vjp)

    def call(self, tx, args, kwargs):
        what = "the function torch.func.vjp differentiates"
        has_aux = kwargs.get("has_aux")
        if set(kwargs) - {"has_aux"} or has_aux is not None and not has_aux.is_python_constant():
            unsupported("unsupported_call", f"torch.func.vjp with keywords {sorted(kwargs)}")
        has_aux = has_aux is not None and bool(has_aux.as_python_constant())
        if not args or not all(isinstance(a, TensorVariable) for a in args[1:]):
            unsupported("control_flow_body", f"{what}: only tensors as primals")
        fn, primals = args[0], list(args[1:])
        traced = trace_body(tx, fn, [p.fake for p in primals], "vjp_body", what)
        if has_aux:
            _aux_spec(traced.spec, what)  # (tensor, aux): the pullback differentiates the tensor
        elif traced.spec != "tensor":
            unsupported("control_flow_body", f"{what} returns more than one tensor")
        lifted, lifted_fakes = share_operands([traced])
        out = fn.call(tx, primals, {})  # a pure function (trace_body checked): its output, in this graph
        pullback = PullbackVariable(traced, primals, lifted, lifted_fakes)
        if has_aux:
            return TupleVariable([out.items[0], pullback, out.items[1]])
        return TupleVariable([out, pullback])


class PullbackVariable(VariableTracker):
    """The function ``torch.func.vjp`` returns: called with a cotangent, one node."""

    def __init__(self, traced, primals, lifted, lifted_fakes, **kwargs):
        super().__init__(**kwargs)
        self.traced, self.primals, self.lifted, self.lifted_fakes = traced, primals, lifted, lifted_fakes

    def python_type(self):
        return type(lambda: None)

    def call(self, tx, args, kwargs):
        if kwargs or len(args) != 1 or not isinstance(args[0], TensorVariable):
            unsupported("control_flow_body", "the function torch.func.vjp returns takes one cotangent tensor")
        n = len(self.primals)
        return tx.output.call_operator(
            tx, run_vjp, (self.traced.body, n, *(p.node for p in self.primals), *self.lifted, args[0].node),
            (self.traced.body, n, *(p.fake for p in self.primals), *self.lifted_fakes, args[0].fake))


class TransformVariable(VariableTracker):
    """``torch.vmap`` / ``torch.func.grad`` ... themselves: called with a function and
    constant options, they return the transformed function."""

    def __init__(self, transform, **kwargs):
        super().__init__(**kwargs)
        self.transform = transform
        self.kind = TRANSFORMS[transform]

    def python_type(self):
        return type(self.transform)

    def call(self, tx, args, kwargs):
        try:
            bound = inspect.signature(self.transform).bind(*args, **kwargs)
        except TypeError as e:
            unsupported("unsupported_call", f"torch.func.{self.kind}: {e}")
        bound.apply_defaults()
        options = dict(bound.arguments)
        fn = options.pop("func")
        for name, value in options.items():  # a default is a plain value; a given one a tracker
            if isinstance(value, VariableTracker):
                options[name] = _constant_tree(value, f"torch.func.{self.kind}'s {name}")
        if options.get("_preallocate_and_copy"):
            unsupported("unsupported_call", f"torch.func.{self.kind} with _preallocate_and_copy")
        return TransformedVariable(self.kind, fn, options)

    def __repr__(self):
        return f"TransformVariable({self.kind})"


def _constant_tree(var, what):
    """The value of a constant, or of tuples, lists and dicts of them (``in_dims``)."""
    if var.is_python_constant():
        return var.as_python_constant()
    pairs = dict_pairs(var)
    if pairs is not None:
        return {k: _constant_tree(v, what) for k, v in pairs}
    if type(var) in (TupleVariable, ListVariable):
        return type(var).py_type(_constant_tree(v, what) for v in var.items)
    unsupported("unsupported_call", f"{what} is not a constant")


def _example(output, fake, dim):
    return fake if dim is None else _one_example(output, fake, dim)


def _leaf_in_dims(spec, dims, what) -> list:
    """An argument's ``in_dims`` (an int or None for all of it, or a tuple, list or
    dict of them matching its structure, as vmap reads a pytree) per tensor leaf."""
    if dims is None or type(dims) is int:
        return [dims] * leaf_count(spec)
    if spec != "tensor":
        kind, parts = spec
        if isinstance(kind, tuple) and type(dims) is dict and set(dims) == set(kind):
            return [d for key, part in zip(kind, parts) for d in _leaf_in_dims(part, dims[key], what)]
        if not isinstance(kind, tuple) and type(dims) in (tuple, list) and len(dims) == len(parts):
            return [d for part, sub in zip(parts, dims) for d in _leaf_in_dims(part, sub, what)]
    unsupported("control_flow_body", f"{what}: in_dims {dims!r} for an argument of another structure")


def _leaf_out_dims(spec, out_dims, what):
    """``out_dims`` (an int per output of a function returning a tuple or list) per
    tensor leaf of the body's flat result, which vmap applies to the tuple it returns."""
    if spec == "tensor" or isinstance(spec[0], tuple) or len(spec[1]) != len(out_dims):
        unsupported("control_flow_body", f"{what}: out_dims {out_dims!r} for a result of another structure")
    return tuple(d for d, part in zip(out_dims, spec[1]) for _ in range(leaf_count(part)))


def _aux_spec(spec, what):
    """The auxiliary output's structure, of a function returning ``(tensor, aux)``."""
    if spec == "tensor" or len(spec[1]) != 2 or spec[1][0] != "tensor" or isinstance(spec[0], tuple):
        unsupported("control_flow_body", f"{what} with has_aux must return (tensor, aux)")
    return spec[1][1]


class TransformedVariable(VariableTracker):
    """``torch.vmap(f, ...)``: called with tensors, one node in the graph."""

    def __init__(self, kind, fn, options, **kwargs):
        super().__init__(**kwargs)
        self.kind, self.fn, self.options = kind, fn, options

    def python_type(self):
        return type(lambda: None)

    def call(self, tx, args, kwargs):
        what = f"the function torch.func.{self.kind} transforms"
        if kwargs:
            unsupported("control_flow_body", f"{what}, called with keyword arguments")
        flat = [flatten(a, f"{what}'s arguments") for a in args]  # tensors in tuples, lists, dicts
        if self.kind == "vmap":
            return self._vmap(tx, args, flat, what)
        return self._derivative(tx, args, flat, what)

    def _vmap(self, tx, args, flat, what):
        in_dims = self.options["in_dims"]
        in_dims = (in_dims,) * len(args) if isinstance(in_dims, int) or in_dims is None else tuple(in_dims)
        out_dims = self.options["out_dims"]
        if len(in_dims) != len(args):
            unsupported("control_flow_body", f"{what}: in_dims {in_dims} for {len(args)} arguments")
        per_leaf = [_leaf_in_dims(spec, d, what) for (_, spec), d in zip(flat, in_dims)]
        if not (type(out_dims) is int or type(out_dims) is tuple and all(type(d) is int for d in out_dims)):
            unsupported("control_flow_body", f"{what}: out_dims {out_dims!r} (an int, or a tuple of them)")
        if all(d is None for dims in per_leaf for d in dims):
            unsupported("control_flow_body", f"{what}: no input is batched")
        output = tx.output
        examples = [examples_of(a, what, lambda f, it=iter(dims): _example(output, f, next(it)))
                    for a, dims in zip(args, per_leaf)]
        traced = trace_body(tx, self.fn, examples, "vmap_body", what)
        if type(out_dims) is tuple:  # one per output, each an int: per leaf of the flat result
            out_dims = _leaf_out_dims(traced.spec, out_dims, what)
        lifted, lifted_fakes = share_operands([traced])
        leaves = [leaf for arg_leaves, _ in flat for leaf in arg_leaves]
        leaf_dims = tuple(d for dims in per_leaf for d in dims)
        options = (leaf_dims + (None,) * len(lifted), out_dims, self.options["randomness"],
                   self.options["chunk_size"])
        result = tx.output.call_operator(
            tx, run_vmap, (traced.body, *options, *(a.node for a in leaves), *lifted),
            (traced.body, *options, *(a.fake for a in leaves), *lifted_fakes))
        return unflatten(iter(result.items), traced.spec)

    def _derivative(self, tx, args, flat, what):
        argnums = self.options["argnums"]
        chosen = [argnums] if type(argnums) is int else list(argnums)
        if not all(type(a) is int and -len(args) <= a < len(args) for a in chosen):
            unsupported("control_flow_body", f"{what}: argnums {argnums!r} for {len(args)} arguments")
        starts = [0]
        for arg_leaves, _ in flat:
            starts.append(starts[-1] + len(arg_leaves))
        chosen = [a % len(args) for a in chosen]
        leaf_argnums = tuple(i for a in chosen for i in range(starts[a], starts[a + 1]))
        traced = trace_body(tx, self.fn, [examples_of(a, what) for a in args], f"{self.kind}_body", what)
        aux_spec = _aux_spec(traced.spec, what) if self.options.get("has_aux") else None
        if aux_spec is None and traced.spec != "tensor":
            unsupported("control_flow_body", f"{what} returns more than one tensor")
        lifted, lifted_fakes = share_operands([traced])
        leaves = [leaf for arg_leaves, _ in flat for leaf in arg_leaves]
        run = run_derivative if aux_spec is None else run_derivative_aux
        result = tx.output.call_operator(
            tx, run, (traced.body, self.kind, leaf_argnums, *(a.node for a in leaves), *lifted),
            (traced.body, self.kind, leaf_argnums, *(a.fake for a in leaves), *lifted_fakes))
        specs = [flat[a][1] for a in chosen]
        regroup = (lambda per_leaf: _regroup(per_leaf, specs, type(argnums) is int))
        if aux_spec is not None:  # (result, aux); grad_and_value's is (grads, (value, aux))
            first, rest = result.items
            if self.kind == "grad_and_value":
                value, aux = rest.items
                return TupleVariable([regroup(first), TupleVariable([value, unflatten(iter(aux.items), aux_spec)])])
            return TupleVariable([regroup(first), unflatten(iter(rest.items), aux_spec)])
        if self.kind == "grad_and_value":
            grads, value = result.items
            return TupleVariable([regroup(grads), value])
        if self.kind == "hessian":  # per leaf, per leaf
            return regroup(TupleVariable([regroup(row) for row in result.items]))
        return regroup(result)

    def reconstruct(self, cg):
        """``transform(fn, **options)`` again, where a break leaves it on the stack."""
        cg.emit_op("PUSH_NULL")
        cg.load_const(functools.partial(getattr(torch.func, self.kind), **self.options))
        cg(self.fn)
        cg.call(1)

    def __repr__(self):
        return f"TransformedVariable({self.kind})"
