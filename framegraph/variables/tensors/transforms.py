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
functorch level). Keyword arguments of the transformed function, ``has_aux``,
and ``out_dims`` other than an int are breaks too.
"""
import functools
import inspect

import torch

from ...errors import unsupported
from ..core.base import VariableTracker
from ..containers.lists import TupleVariable
from .control_flow import examples_of, flatten, share_operands, trace_body, unflatten
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


def run_derivative(body, transform, argnums, *operands):
    """``transform(f, argnums)(*operands)`` for a body that returns one tensor; ``argnums``
    is a tuple of the flat operands', so the result is one per operand chosen."""
    return _DERIVATIVES[transform](_only_output(body), argnums=argnums)(*operands)


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
        if kwargs.get("has_aux") is not None and kwargs["has_aux"].as_python_constant() or \
                set(kwargs) - {"has_aux"}:
            unsupported("unsupported_call", "torch.func.vjp with has_aux")
        if not args or not all(isinstance(a, TensorVariable) for a in args[1:]):
            unsupported("control_flow_body", f"{what}: only tensors as primals")
        fn, primals = args[0], list(args[1:])
        traced = trace_body(tx, fn, [p.fake for p in primals], "vjp_body", what)
        if traced.spec != "tensor":
            unsupported("control_flow_body", f"{what} returns more than one tensor")
        lifted, lifted_fakes = share_operands([traced])
        out = fn.call(tx, primals, {})  # a pure function (trace_body checked): its output, in this graph
        return TupleVariable([out, PullbackVariable(traced, primals, lifted, lifted_fakes)])


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
                if not value.is_python_constant():
                    unsupported("unsupported_call", f"torch.func.{self.kind}'s {name} is not a constant")
                options[name] = value.as_python_constant()
        if options.get("has_aux") or options.get("_preallocate_and_copy"):
            unsupported("unsupported_call", f"torch.func.{self.kind} with has_aux")
        return TransformedVariable(self.kind, fn, options)

    def __repr__(self):
        return f"TransformVariable({self.kind})"


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
        if len(in_dims) != len(args) or not all(d is None or type(d) is int for d in in_dims):
            unsupported("control_flow_body", f"{what}: in_dims {in_dims} for {len(args)} arguments "
                                             "(an int or None per argument is modelled)")
        if type(out_dims) is not int:
            unsupported("control_flow_body", f"{what}: out_dims {out_dims!r} (an int is modelled)")
        if all(d is None for d in in_dims):
            unsupported("control_flow_body", f"{what}: no input is batched")
        output = tx.output
        examples = [examples_of(a, what, (lambda f: f) if d is None else (lambda f, d=d: _one_example(output, f, d)))
                    for a, d in zip(args, in_dims)]
        traced = trace_body(tx, self.fn, examples, "vmap_body", what)
        lifted, lifted_fakes = share_operands([traced])
        leaves = [leaf for arg_leaves, _ in flat for leaf in arg_leaves]
        leaf_dims = tuple(d for (arg_leaves, _), d in zip(flat, in_dims) for _ in arg_leaves)
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
        if traced.spec != "tensor":
            unsupported("control_flow_body", f"{what} returns more than one tensor")
        lifted, lifted_fakes = share_operands([traced])
        leaves = [leaf for arg_leaves, _ in flat for leaf in arg_leaves]
        result = tx.output.call_operator(
            tx, run_derivative, (traced.body, self.kind, leaf_argnums, *(a.node for a in leaves), *lifted),
            (traced.body, self.kind, leaf_argnums, *(a.fake for a in leaves), *lifted_fakes))
        specs = [flat[a][1] for a in chosen]
        regroup = (lambda per_leaf: _regroup(per_leaf, specs, type(argnums) is int))
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
