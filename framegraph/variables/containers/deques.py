"""``collections.deque`` made in the trace: a sequence of item trackers with two open ends.

The methods follow ``Modules/_collectionsmodule.c``: a bounded deque drops
from the other end when full (``append`` drops the leftmost item,
``appendleft`` the rightmost), ``insert`` into a full one raises, indexing
takes integers only, and an iterator raises ``RuntimeError`` once the deque
changed under it (the ``state`` counter CPython keeps is kept here too).
A deque from outside the frame is not modelled by this tracker.
"""
import collections
import operator

from ...errors import unsupported
from ..core.base import BoundMethodVariable
from ..core.call_shapes import check_method_shape, fits
from ..core.constant import ConstantVariable, items_of
from ..core.number_protocol import sequence_index
from ..core.exceptions import raise_in_trace
from ..core.iterator import IteratorVariable, resume_iterator
from ..core.ops import compare
from .lists import BaseListVariable, ListVariable

_ITERATOR_TYPE = type(iter(collections.deque()))


class DequeVariable(BaseListVariable):
    py_type = collections.deque

    def __init__(self, items, maxlen=None, **kwargs):
        super().__init__([], **kwargs)
        self.maxlen, self.state = maxlen, 0
        for item in items:
            self._append(item)

    def as_python_constant(self):
        unsupported("unsupported_value", "a deque is not a trace-time constant")

    def similar(self, items):
        return DequeVariable(items, self.maxlen)

    def _changed(self, tx, what):
        self.check_mutable(f"deque.{what}", tx)
        self.state += 1

    def _append(self, item):
        self.items.append(item)
        if self.maxlen is not None and len(self.items) > self.maxlen:
            self.items.pop(0)

    def _appendleft(self, item):
        self.items.insert(0, item)
        if self.maxlen is not None and len(self.items) > self.maxlen:
            self.items.pop()

    def getitem(self, tx, key):
        return self.items[self._position(tx, key)]

    def setitem(self, tx, key, value):
        index = self._position(tx, key)
        self._changed(tx, "__setitem__")
        self.items[index] = value

    def delitem(self, tx, key):
        index = self._position(tx, key)
        self._changed(tx, "__delitem__")
        del self.items[index]

    def _position(self, tx, key) -> int:
        """deque_item's index: an int (``__index__`` read once) within the deque."""
        index = sequence_index(tx, key)
        if not isinstance(index, int):
            raise_in_trace(TypeError, f"sequence index must be integer, not '{type(index).__name__}'")
        if not -len(self.items) <= index < len(self.items):
            raise_in_trace(IndexError, "deque index out of range")
        return index

    def getattr(self, tx, name):
        if name == "maxlen":
            return ConstantVariable(self.maxlen)
        if name in _METHODS or name in ("count", "index"):
            return BoundMethodVariable(self, name)
        return super().getattr(tx, name)

    def iter(self, tx):
        return DequeIteratorVariable(self)

    def binop(self, tx, fn, other, reflected):
        if reflected or not (isinstance(other, DequeVariable) or fn in (operator.mul, operator.imul)):
            return NotImplemented
        if fn is operator.iadd:  # deque += iterable extends in place
            self.call_method(tx, "extend", [other], {})
            return self
        result = super().binop(tx, fn, other, reflected)
        if fn is operator.imul and result is not NotImplemented:  # in place: aliases see it
            self._changed(tx, "__imul__")
            self.items = result.items
            return self
        return result

    def call_method(self, tx, name, args, kwargs):
        method = _METHODS.get(name)
        if method is None:
            return super().call_method(tx, name, args, kwargs)
        check_method_shape(collections.deque, name, args, kwargs)  # `d.append()`: CPython's TypeError
        if not fits(method, 2, args, kwargs):
            unsupported("unsupported_call", f"deque.{name} with these arguments")
        if name not in _READING:
            self._changed(tx, name)
        return method(self, tx, *args) or ConstantVariable(None)

    def reconstruct(self, cg):
        cg.emit_op("PUSH_NULL")
        cg.load_const(collections.deque)
        cg(ListVariable(self.items))
        cg.load_const(self.maxlen)
        cg.call(2)


def _pop(end):
    def method(d, tx):
        if not d.items:
            raise_in_trace(IndexError, "pop from an empty deque")
        return d.items.pop(end)
    return method


def _rotate(d, tx, n=ConstantVariable(1)):
    k = sequence_index(tx, n)
    if d.items:
        k %= len(d.items)
        d.items[:] = d.items[-k:] + d.items[:-k] if k else d.items


def _insert(d, tx, i, value):
    if d.maxlen is not None and len(d.items) >= d.maxlen:
        raise_in_trace(IndexError, "deque already at its maximum size")
    d.items.insert(sequence_index(tx, i), value)


def _remove(d, tx, value):
    for i, item in enumerate(d.items):
        if compare(tx, "==", item, value).truth(tx):
            del d.items[i]
            return
    raise_in_trace(ValueError, f"{value.as_python_constant()!r} is not in deque" if value.is_python_constant()
                   else "deque.remove(x): x not in deque")


def _extend(add):
    def method(d, tx, iterable):
        for item in (list(d.items) if iterable is d else items_of(tx, iterable)):
            add(d, item)
    return method


_METHODS = {
    "append": lambda d, tx, x: d._append(x),
    "appendleft": lambda d, tx, x: d._appendleft(x),
    "pop": _pop(-1),
    "popleft": _pop(0),
    "extend": _extend(DequeVariable._append),
    "extendleft": _extend(DequeVariable._appendleft),
    "rotate": _rotate,
    "clear": lambda d, tx: d.items.clear(),
    "reverse": lambda d, tx: d.items.reverse(),
    "insert": _insert,
    "remove": _remove,
    "copy": lambda d, tx: DequeVariable(d.items, d.maxlen),
}
_READING = {"copy"}


class DequeIteratorVariable(IteratorVariable):
    """``iter(a_deque)``: raises RuntimeError at the next step once the deque changed."""

    py_type = _ITERATOR_TYPE

    def __init__(self, deque, **kwargs):
        super().__init__(**kwargs)
        self.deque, self.state, self.index = deque, deque.state, 0

    def next(self, tx):
        if self.deque is None:
            return None
        if self.deque.state != self.state:
            raise_in_trace(RuntimeError, "deque mutated during iteration")
        if self.index >= len(self.deque.items):
            self.deque = None  # exhausted: CPython's iterator stays so
            return None
        self.index += 1
        return self.deque.items[self.index - 1]

    def reconstruct(self, cg):
        if self.deque is not None and self.deque.state != self.state:
            unsupported("cannot_resume", "an iterator over a deque that changed since iter()")
        cg.emit_op("PUSH_NULL")
        cg.load_const(resume_iterator)
        cg.load_const(iter)
        cg(self.deque if self.deque is not None else DequeVariable([]))
        cg.load_const(self.index if self.deque is not None else 0)
        cg.load_const(self.deque is None)
        cg.call(4)


def make_deque(tx, iterable=None, maxlen=None):
    """``collections.deque(iterable=(), maxlen=None)``."""
    bound = None if maxlen is None else maxlen.as_python_constant()
    if bound is not None and (type(bound) is not int or bound < 0):
        unsupported("operator_error", "maxlen must be a non-negative integer")
    return DequeVariable(items_of(tx, iterable) if iterable is not None else [], bound)
