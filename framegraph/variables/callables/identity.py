"""``id()`` and ``_thread.get_ident()``: values that name an object or a thread.

An id is an address. What the trace may rely on depends on where the object is:

* an object from outside the frame (the tracker has a source): its id is a
  trace-time constant, kept true by an ID_MATCH guard on that source (the
  guard compares exactly that number, so it holds whatever else changes);
* a persistent singleton made by no one (None, True, Ellipsis...): a constant;
* an object made in the trace: its address does not exist yet (the object is
  rebuilt after the graph). ``IdVariable`` stands for the number: ``==`` and
  ``!=`` with another such id are answered by the identity of the two
  trackers (two objects alive at once have different ids, one object one id),
  and when the number leaves the trace it is computed for real, ``id(obj)``
  of the rebuilt object (the rebuild keeps one object per tracker, so it is
  the id of the object the rest of the frame sees). Anything else (comparing
  with an int, arithmetic, hashing, formatting) would need the number itself:
  a graph break, never an invented value.

A frame runs on one thread, so every ``get_ident()`` of one trace is the same
number (``ThreadIdentVariable``): equal to each other, computed for real when
the value leaves the trace, and a break for any other use.
"""
import _thread
import operator
import threading

from ...errors import unsupported
from ..core.base import VariableTracker
from ..core.constant import ConstantVariable
from ..core.ops import is_op
from ..tensors.nn_module import NNModuleVariable
from ..tensors.tensor import TensorVariable
from .functions import UserFunctionVariable

# Objects every interpreter keeps for its whole life: their ids never change.
_SINGLETONS = (type(None), bool, type(Ellipsis), type(NotImplemented))


def _real_object(tx, var):
    """The real object a tracker of a value from outside the frame holds, as a
    1-tuple, or None. Only trackers that hold the very object read from the
    source count (a tuple's tracker holds its items, not the tuple)."""
    for value, tracker in tx.output.aliases.objects.values():  # mutable objects: one tracker each
        if tracker is var:
            return (value,)
    if isinstance(var, TensorVariable):
        tensors, inputs = tx.output.example_inputs, tx.output.inputs
        found = [t for t, v in zip(tensors, inputs) if v is var] if len(tensors) == len(inputs) else []
        return (found[0],) if found else None
    if isinstance(var, UserFunctionVariable):
        return (var.fn,)
    if isinstance(var, NNModuleVariable):
        return (var.module,)
    if type(var) is ConstantVariable:
        return (var.value,)
    identity = getattr(var, "identity", None)  # user objects, classes, modules
    if identity is not None and identity is not var:
        return (identity,)
    return None


def call_id(tx, obj):
    """``id(obj)``: a guarded constant, a singleton's constant, or an ``IdVariable``."""
    if obj.source is not None:
        found = _real_object(tx, obj)
        if found is None:
            unsupported("unsupported_call", f"id() of {obj}, whose object the trace cannot see")
        value = found[0]
        tx.output.add_guard("ID_MATCH", obj.source, (id(value), "the object id() read"))
        return ConstantVariable(id(value))
    if obj.is_python_constant():
        value = obj.as_python_constant()
        if isinstance(value, _SINGLETONS):
            return ConstantVariable(id(value))
        unsupported("unsupported_call", f"id() of the constant {value!r} made in the trace "
                                       "(which object holds it is not known)")
    return IdVariable(obj)


class _OpaqueInt(VariableTracker):
    """An int the trace cannot know: equal to its own kind by ``same``, rebuilt for real."""

    compares_by_binop = True  # ops.compare: no structural answer (``== 5`` is not known False)

    def python_type(self):
        return int

    def truth(self, tx):
        return True  # an address, a thread id: never 0

    def same(self, tx, other):
        raise NotImplementedError

    def binop(self, tx, fn, other, reflected):
        if fn in (operator.eq, operator.ne) and type(other) is type(self):
            equal = self.same(tx, other)
            return ConstantVariable(equal if fn is operator.eq else not equal)
        unsupported("unsupported_value", f"{getattr(fn, '__name__', fn)} of {self} and {other} "
                                         "(the number is only known at run time)")


class IdVariable(_OpaqueInt):
    """``id(target)`` of an object made in the trace."""

    def __init__(self, target, **kwargs):
        super().__init__(**kwargs)
        self.target = target

    def same(self, tx, other):
        return is_op(tx, self.target, other.target)

    def reconstruct(self, cg):
        cg.emit_op("PUSH_NULL")
        cg.load_const(id)
        cg(self.target)
        cg.call(1)

    def __repr__(self):
        return f"IdVariable({self.target!r})"


class ThreadIdentVariable(_OpaqueInt):
    """``_thread.get_ident()`` in the trace: the thread that runs the frame."""

    def same(self, tx, other):
        return True

    def reconstruct(self, cg):
        cg.call_constant(_thread.get_ident)

    def __repr__(self):
        return "ThreadIdentVariable()"


def call_get_ident(tx):
    """``_thread.get_ident()`` / ``threading.get_ident()``."""
    return ThreadIdentVariable()


MODELS = {id: call_id, _thread.get_ident: call_get_ident}
if threading.get_ident is not _thread.get_ident:  # pragma: no cover (the same function today)
    MODELS[threading.get_ident] = call_get_ident
