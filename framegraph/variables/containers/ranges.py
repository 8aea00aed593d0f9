"""Slices and ranges: constants that compute what they are asked (a range's items,
up to 2**64 of them, are listed only where code asks for all of them)."""
from ...errors import unsupported
from ..core import space
from ..core.base import VariableTracker
from ..core.constant import ConstantVariable, wrap_constant
from ..core.exceptions import python_operation, raise_in_trace
from ..core.number_protocol import sequence_index
from .lists import ORDERINGS, BaseListVariable, ordered_alike, sequence_order


@space.register
class SliceVariable(BaseListVariable):
    """slice(start, stop, step) of constants (three item trackers)."""

    py_type = slice

    def as_python_constant(self):
        return slice(*(x.as_python_constant() for x in self.items))

    def getattr(self, tx, name):
        if name in ("start", "stop", "step"):
            return self.items[("start", "stop", "step").index(name)]
        return super().getattr(tx, name)

    def unpack(self, tx):
        raise_in_trace(TypeError, "'slice' object is not iterable")

    def iter(self, tx):
        raise_in_trace(TypeError, "'slice' object is not iterable")

    def length(self, tx):
        raise_in_trace(TypeError, "object of type 'slice' has no len()")

    def truth(self, tx):
        return True  # no __bool__ nor __len__

    def getitem(self, tx, key):
        raise_in_trace(TypeError, "'slice' object is not subscriptable")

    def contains(self, tx, item):
        raise_in_trace(TypeError, "argument of type 'slice' is not iterable")

    def binop(self, tx, fn, other, reflected):
        """Slices only compare (as the tuples of their three fields)."""
        if fn in ORDERINGS and not reflected and ordered_alike(self, other, fn):
            return sequence_order(tx, fn, self, other)
        return NotImplemented

    def call_method(self, tx, name, args, kwargs):
        if name == "indices" and len(args) == 1 and not kwargs and args[0].is_python_constant():
            with python_operation("slice.indices"):  # a negative or non-int length raises
                return wrap_constant(self.as_python_constant().indices(args[0].as_python_constant()))
        return super().call_method(tx, name, args, kwargs)

    def reconstruct(self, cg):
        cg.load_const(self.as_python_constant())


# A longer range is not listed item by item at trace time (``list(range(2**40))``): the
# break hands it to CPython. Shorter ones are listed (slow, but as before): a break there
# would give the resume function a long list from outside, guarded item by item.
MAX_RANGE_ITEMS = 1 << 26


def range_size(r: range) -> int:
    """``len(r)``, also past ``sys.maxsize`` (where ``len()`` raises OverflowError)."""
    return (r[-1] - r[0]) // r.step + 1 if r else 0


@space.register
class RangeVariable(BaseListVariable):
    """range(...) of constants. Like CPython's range it computes what it is asked
    (``count``, ``index``, ``in``, iteration) from start, stop and step: a range can
    hold 2**64 items, so its items are only listed where code asks for all of them."""

    py_type = range

    def __init__(self, value, **kwargs):
        VariableTracker.__init__(self, **kwargs)
        self.value = value

    @property
    def items(self):
        size = range_size(self.value)
        if size > MAX_RANGE_ITEMS:
            unsupported("unsupported_value", f"the {size} items of {self.value!r}, one by one")
        return [ConstantVariable(v) for v in self.value]

    def as_python_constant(self):
        return self.value

    def is_python_constant(self):
        return True  # ints only (asking every item would list them)

    def iter(self, tx):
        return space.RangeIteratorVariable(self)

    def contains(self, tx, item):
        if item.is_python_constant() and type(item.as_python_constant()) in (int, bool):
            return item.as_python_constant() in self.value  # range_contains_long: arithmetic
        return super().contains(tx, item)

    def length(self, tx):
        with python_operation("len()"):  # past sys.maxsize: OverflowError, as in CPython
            return len(self.value)

    def truth(self, tx):
        return bool(self.value)

    def getitem(self, tx, key):
        index = sequence_index(tx, key)
        with python_operation("range index %r", index):
            item = self.value[index]
        return wrap_constant(item)

    def getattr(self, tx, name):
        if name in ("start", "stop", "step"):
            return ConstantVariable(getattr(self.value, name))
        return super().getattr(tx, name)

    def call_method(self, tx, name, args, kwargs):
        """A range is an immutable constant: its methods run now, raising what CPython raises
        (iterators are the trackers' own)."""
        values = list(args) + list(kwargs.values())
        if name in ("__iter__", "__reversed__") or not all(v.is_python_constant() for v in values):
            return super().call_method(tx, name, args, kwargs)
        with python_operation(f"range.{name}"):
            result = getattr(self.value, name)(*[a.as_python_constant() for a in args],
                                               **{k: v.as_python_constant() for k, v in kwargs.items()})
        return wrap_constant(result)

    def reconstruct(self, cg):
        cg.load_const(self.value)
