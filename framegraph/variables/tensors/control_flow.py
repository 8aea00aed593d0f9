"""torch's control-flow operators in the graph: ``cond``, ``while_loop``, ``scan``, ``map``.

The user calls torch's own wrappers (``torch.cond``, ``torch._higher_order_ops.
while_loop`` ...). They are traced like any function: in a trace
``torch.compiler.is_dynamo_compiling()`` is True, so they validate and flatten
their arguments and call the operator itself (``torch.ops.higher_order.cond``
and friends) with Python callables. That call is modelled here: each callable
is traced into a graph of its own (``graph/bodies.py``) on fresh FakeTensors
of its operands' metadata, the tensors it reads from outside become extra
operands, and the operator goes into the graph holding the bodies'
GraphModules, as torch's own tracer builds it, so that eager, AOTAutograd and
Inductor run it. A predicate that depends on the data therefore needs no
graph break.

What torch requires of a body is checked while it is traced: no graph break,
no side effect outside it (the ledger and grad mode are unchanged), no
in-place write to an operand or a view of one, tensors in tuples or lists as
its result. A body that breaks a rule is a ``control_flow_body`` break of the
whole call, and CPython runs torch's wrapper.
"""
import contextlib

import torch

from ...errors import Unsupported, unsupported
from ..containers.dicts import ConstDictVariable
from ..containers.lists import ListVariable, TupleVariable
from ..core.base import VariableTracker
from ..core.constant import ConstantVariable
from .symint import SymNodeVariable
from .tensor import TensorVariable

HOP = torch.ops.higher_order


# ---- results and operands: tensors in (nested) tuples, lists and dicts
def dict_pairs(var):
    """(constant key, item tracker) pairs of a plain dict tracker, or None for another value."""
    if not isinstance(var, ConstDictVariable) or var.python_type() is not dict:
        return None
    pairs = list(var.items.values())
    if not all(k.is_python_constant() for k, _ in pairs):
        return None
    return [(k.as_python_constant(), v) for k, v in pairs]


def flatten(var, what):
    """(tensor leaves, structure) of a body's result or an operator's operands."""
    if isinstance(var, TensorVariable):
        return [var], "tensor"
    pairs = dict_pairs(var)
    if type(var) in (TupleVariable, ListVariable) or pairs is not None:
        items = var.items if pairs is None else [v for _, v in pairs]
        leaves, parts = [], []
        for item in items:
            sub, spec = flatten(item, what)
            leaves += sub
            parts.append(spec)
        kind = type(var) if pairs is None else tuple(k for k, _ in pairs)  # a dict: its keys
        return leaves, (kind, tuple(parts))
    unsupported("control_flow_body", f"{what} holds {var}: only tensors, in tuples, lists and dicts")


def unflatten(leaves, spec):
    """The trackers of ``spec``'s structure with ``leaves`` (an iterator) in it."""
    if spec == "tensor":
        return next(leaves)
    kind, parts = spec
    items = [unflatten(leaves, part) for part in parts]
    if isinstance(kind, tuple):  # a dict's keys
        return ConstDictVariable([(ConstantVariable(k), v) for k, v in zip(kind, items)])
    return kind(items)


def leaf_count(spec) -> int:
    return 1 if spec == "tensor" else sum(leaf_count(part) for part in spec[1])


# ---- tracing one body
def fresh_like(output, fake):
    """A FakeTensor with ``fake``'s metadata and no aliasing: a body's own input."""
    with output.fake_mode:
        made = torch.empty_strided(fake.shape, fake.stride(), dtype=fake.dtype, device=fake.device)
    return made.requires_grad_(fake.requires_grad) if fake.requires_grad else made


class TracedBody:
    """A body traced into ``body`` (a graph/bodies.Body): its result's leaves and structure."""

    def __init__(self, body, leaves, spec):
        self.body = body
        self.leaves = leaves
        self.spec = spec


def trace_body(tx, fn: VariableTracker, examples, name: str, what: str, returns=tuple,
               mode=contextlib.nullcontext) -> TracedBody:
    """Trace ``fn(*inputs)`` into a body called ``name``, one input per FakeTensor of
    ``examples`` (a list; a nested list/tuple of them is passed as that structure).
    The body's graph returns its result's tensors as ``returns`` makes them: the
    operator's own convention (a tuple, a list, or None for one tensor). ``mode()``
    is entered while the body is traced (the operator's own torch function mode)."""
    output = tx.output
    body = output.new_body(name)
    before = (output.side_effects.mutations, output.grad_mode, len(output.open_states))
    with output.recording_into(body):
        args = [_body_input(output, body, example, f"arg{i}") for i, example in enumerate(examples)]
        try:
            with mode():
                result = fn.call(tx, args, {})
        except Unsupported as e:
            unsupported("control_flow_body", f"{what}: {e}")
    if (output.side_effects.mutations, output.grad_mode, len(output.open_states)) != before:
        unsupported("control_flow_body", f"{what} changes state outside its result")
    leaves, spec = flatten(result, f"the result of {what}")
    if returns is None and spec != "tensor":
        unsupported("control_flow_body", f"{what} returns {result}, not one boolean tensor")
    output.finish_body(body, leaves, returns)
    _check_no_input_writes(output, body, what)
    return TracedBody(body, leaves, spec)


def _body_input(output, body, example, name):
    if isinstance(example, dict):
        return ConstDictVariable([(ConstantVariable(k), _body_input(output, body, e, f"{name}_{k}"))
                                        for k, e in example.items()])
    if isinstance(example, (list, tuple)):
        items = [_body_input(output, body, e, f"{name}_{i}") for i, e in enumerate(example)]
        return (TupleVariable if isinstance(example, tuple) else ListVariable)(items)
    fake = fresh_like(output, example)
    return TensorVariable(body.placeholder(name, fake), fake)


def _check_no_input_writes(output, body, what):
    """torch's bodies are functions: an in-place write may only go to a tensor the body
    made, never to an operand or a view (of anything)."""
    for node in body.graph.nodes:
        if node.op == "call_function" and output.mutates_by_schema(node):  # which argument: the schema's
            unsupported("control_flow_body", f"{what} calls an operator that writes to an argument "
                                             f"({node.format_node()})")
        if node.op in ("call_function", "call_method") and node.args and output.writes_in_place(node):
            target = node.args[0]
            example = getattr(target, "meta", {}).get("example_value")
            if getattr(target, "op", None) == "placeholder" or \
                    isinstance(example, torch.Tensor) and example._is_view():
                unsupported("control_flow_body", f"{what} writes to an operand in place ({node.format_node()})")


# ---- operands
def examples_of(var, what, leaf=lambda fake: fake):
    """The FakeTensors of an operand tracker (``leaf`` of each), in its structure."""
    leaves, spec = flatten(var, what)
    return _examples(iter([leaf(t.fake) for t in leaves]), spec)


def _examples(fakes, spec):
    if spec == "tensor":
        return next(fakes)
    kind, parts = spec
    items = [_examples(fakes, part) for part in parts]
    return dict(zip(kind, items)) if isinstance(kind, tuple) else kind.py_type(items)  # a tuple or list of fakes


def tensor_operands(var, what):
    """The flat tensor trackers of an operator's operands (a tuple or list of them, or None)."""
    if var.is_python_constant() and var.as_python_constant() is None:
        return []
    leaves, _ = flatten(var, what)
    return leaves


def share_operands(traced):
    """Give every body the same extra operands in one order (what any of them lifted,
    in first-read order); the nodes of the enclosing graph, and their FakeTensors."""
    union = {}
    for t in traced:
        for node in t.body.lifted:
            union.setdefault(node, None)
    nodes = list(union)
    for t in traced:
        for node in nodes:
            t.body.lift_unused(node)
        t.body.order_lifted(nodes)
    return nodes, [node.meta["example_value"] for node in nodes]


def bind(args, kwargs, names, what, optional=()):
    """Positional and keyword arguments of an operator call, by name: every one of
    ``names`` is required but those in ``optional``, which are None when not given."""
    bound = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names or name in bound:
            unsupported("unsupported_call", f"{what}: unexpected argument {name!r}")
        bound[name] = value
    if len(args) > len(names) or any(name not in bound for name in names if name not in optional):
        unsupported("unsupported_call", f"{what} takes the arguments {', '.join(names)}")
    return [bound.get(name) for name in names]


def _nodes(leaves):
    return tuple(leaf.node for leaf in leaves)


def _fakes(leaves):
    return tuple(leaf.fake for leaf in leaves)


# ---- the operators
class HigherOrderVariable(VariableTracker):
    """A higher-order operator of ``torch.ops.higher_order``, called with Python callables."""

    def __init__(self, op, **kwargs):
        super().__init__(**kwargs)
        self.op = op

    def python_type(self):
        return type(self.op)

    def __repr__(self):
        return f"{type(self).__name__}({self.op.name()})"


class CondVariable(HigherOrderVariable):
    """``cond(pred, true_fn, false_fn, operands)``: both branches traced, one node.
    A predicate known while tracing (a Python bool, a static shape's comparison)
    picks its branch, which is traced inline, as torch.compile does."""

    def call(self, tx, args, kwargs):
        pred, true_fn, false_fn, operands = bind(args, kwargs, ("pred", "true_fn", "false_fn", "operands"),
                                                 "torch.cond")
        items = list(operands.items) if isinstance(operands, (TupleVariable, ListVariable)) else None
        if items is None:
            unsupported("control_flow_body", f"torch.cond's operands must be a tuple or list, not {operands}")
        if pred.is_python_constant():
            return (true_fn if pred.as_python_constant() else false_fn).call(tx, items, {})
        if not isinstance(pred, (TensorVariable, SymNodeVariable)):
            unsupported("control_flow_body", f"torch.cond's predicate is {pred}")
        examples = [examples_of(item, "torch.cond's operands") for item in items]
        leaves, _ = flatten(operands, "torch.cond's operands")
        true = trace_body(tx, true_fn, examples, "cond_true", "torch.cond's true_fn")
        false = trace_body(tx, false_fn, examples, "cond_false", "torch.cond's false_fn")
        if true.spec != false.spec:
            unsupported("control_flow_body", "torch.cond's branches return different structures")
        lifted, lifted_fakes = share_operands([true, false])
        pred_fake = pred.fake if isinstance(pred, TensorVariable) else pred.value
        result = tx.output.call_operator(
            tx, self.op, (pred.node, true.body, false.body, _nodes(leaves) + tuple(lifted)),
            (pred_fake, true.body, false.body, _fakes(leaves) + tuple(lifted_fakes)))
        return unflatten(iter(result.items), true.spec)


class WhileLoopVariable(HigherOrderVariable):
    """``while_loop(cond_fn, body_fn, carried_inputs, additional_inputs)``: the loop
    condition and the body traced on the carried values, one node."""

    def call(self, tx, args, kwargs):
        cond_fn, body_fn, carried, additional = bind(
            args, kwargs, ("cond_fn", "body_fn", "carried_inputs", "additional_inputs"), "while_loop")
        carried_leaves = tensor_operands(carried, "while_loop's carried_inputs")
        extra_leaves = tensor_operands(additional, "while_loop's additional_inputs")
        examples = [leaf.fake for leaf in carried_leaves + extra_leaves]
        cond = trace_body(tx, cond_fn, examples, "while_loop_cond", "while_loop's cond_fn", returns=None)
        body = trace_body(tx, body_fn, examples, "while_loop_body", "while_loop's body_fn")
        lifted, lifted_fakes = share_operands([cond, body])
        result = tx.output.call_operator(
            tx, self.op,
            (cond.body, body.body, _nodes(carried_leaves), _nodes(extra_leaves) + tuple(lifted)),
            (cond.body, body.body, _fakes(carried_leaves), _fakes(extra_leaves) + tuple(lifted_fakes)))
        return unflatten(iter(result.items), body.spec)


class ScanVariable(HigherOrderVariable):
    """``scan(combine_fn, init, xs, additional_inputs)``: ``combine_fn`` traced on the
    carry and one slice of each ``xs``; one node."""

    def call(self, tx, args, kwargs):
        combine_fn, init, xs, additional = bind(args, kwargs, ("combine_fn", "init", "xs", "additional_inputs"),
                                                "scan")
        init_leaves = tensor_operands(init, "scan's init")
        xs_leaves = tensor_operands(xs, "scan's xs")
        extra_leaves = tensor_operands(additional, "scan's additional_inputs")
        examples = [leaf.fake for leaf in init_leaves] + [_slice(leaf.fake) for leaf in xs_leaves] + \
            [leaf.fake for leaf in extra_leaves]
        combine = trace_body(tx, combine_fn, examples, "scan_combine_fn", "scan's combine_fn", returns=list)
        lifted, lifted_fakes = share_operands([combine])
        result = tx.output.call_operator(
            tx, self.op,
            (combine.body, list(_nodes(init_leaves)), list(_nodes(xs_leaves)),
             list(_nodes(extra_leaves)) + lifted),
            (combine.body, list(_fakes(init_leaves)), list(_fakes(xs_leaves)),
             list(_fakes(extra_leaves)) + lifted_fakes))
        return unflatten(iter(result.items), combine.spec)


class MapVariable(HigherOrderVariable):
    """``map_impl(f, xs, args)``: ``f`` traced on one slice of each ``xs``; one node."""

    def call(self, tx, args, kwargs):
        fn, xs, extra = bind(args, kwargs, ("f", "xs", "args"), "map")
        xs_leaves = tensor_operands(xs, "map's xs")
        extra_leaves = tensor_operands(extra, "map's args")
        examples = [_slice(leaf.fake) for leaf in xs_leaves] + [leaf.fake for leaf in extra_leaves]
        body = trace_body(tx, fn, examples, "map_body", "map's f")
        lifted, lifted_fakes = share_operands([body])
        result = tx.output.call_operator(
            tx, self.op, (body.body, list(_nodes(xs_leaves)), list(_nodes(extra_leaves)) + list(lifted)),
            (body.body, list(_fakes(xs_leaves)), list(_fakes(extra_leaves)) + list(lifted_fakes)))
        return unflatten(iter(result.items), body.spec)


def _slice(fake):
    """One step's slice of a scanned tensor: its first dimension dropped."""
    return fake[0]


# torch's wrappers exported as torch.*: traced, so that they reach the operators below
TRACED_WRAPPERS = frozenset({torch.cond})

OPERATORS = {
    HOP.cond: CondVariable,
    HOP.while_loop: WhileLoopVariable,
    HOP.scan: ScanVariable,
    HOP.map_impl: MapVariable,
}


def wrap_operator(value, source):
    """The tracker of a ``torch.ops.higher_order`` operator modelled here, or None."""
    kind = OPERATORS.get(value)
    return kind(value, source=source) if kind is not None else None
