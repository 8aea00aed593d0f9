"""Repeated reads through a Python ``__getattribute__``, answered by the first one.

A class with its own ``__getattribute__`` runs Python on every attribute
read: transformers' configs map aliases in one and check per-layer
attributes in another, so ``config.hidden_size`` is two inlined calls and
four ``super()`` lookups, about a hundred instructions, and every layer of a
model reads the same few names again (a third of the instructions of tracing
a small decoder). A call ``getattribute(obj, name)`` is answered with what an
earlier identical call returned when nothing it could depend on changed:

* ``obj`` comes from outside the frame (it has a source) and ``name`` is a
  constant, so what the call can reach is outside state or objects it makes
  itself: an object made earlier in the trace is reachable only once outside
  state holds it, and every change of outside state is in the ledger of side
  effects (``side_effects.mutations``);
* the first call recorded nothing: no op in the graph, no side effect, no
  grad mode or context switch; it returned normally;
* since then, the ledger changed nothing, no in-place op ran on any tensor
  (``x.unsqueeze_(0)`` changes what ``x.shape`` reads), grad mode and open
  contexts are the same, and ops still go to the same graph;
* the answer is an object that existed before the call, a constant or a
  tracker with a source: eager would return that same object again.

The guards the first call added stay in the trace, and hold for the second.
"""
from ..variables.callables.functions import UserFunctionVariable
from ..variables.core.constant import ConstantVariable
from ..variables.objects.user_defined import UserDefinedObjectVariable


def _state(output):
    """What a call that changes something changes (ops are counted separately)."""
    se = output.side_effects
    return len(se), se.mutations, se.tensor_writes, output.grad_mode, len(output.open_states), output.graph


def _key(fn_var, args, kwargs):
    """(function, obj tracker, name) of a ``__getattribute__(obj, name)`` call that may be
    answered again, or None."""
    if kwargs or len(args) != 2 or type(fn_var) is not UserFunctionVariable or not fn_var.by_identity:
        return None
    obj, name = args
    if not isinstance(obj, UserDefinedObjectVariable) or obj.source is None or type(name) is not ConstantVariable \
            or type(name.value) is not str:
        return None
    return fn_var.fn, id(obj), name.value


def getattribute_call(output, fn_var, args, kwargs, run):
    """``run()``, the traced call ``fn_var(*args, **kwargs)`` of a ``__getattribute__``,
    or the answer of an identical earlier call where it is still the answer."""
    key = _key(fn_var, args, kwargs)
    if key is None:
        return run()
    state = _state(output)
    found = output.attribute_reads.get(key)
    if found is not None and found[0] == state:
        return found[1]
    nodes = len(output.graph.nodes)
    result = run()
    if _state(output) == state and len(output.graph.nodes) == nodes and (
            type(result) is ConstantVariable or result.source is not None):
        output.attribute_reads[key] = (state, result, args[0])  # the obj tracker kept: its id is in the key
    return result
