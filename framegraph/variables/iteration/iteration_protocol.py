"""How CPython iterates what is not a builtin container, and searches any iterable.

* ``iter(obj)`` of a class with ``__getitem__`` and no ``__iter__``: the sequence protocol
  (``iterator`` of Objects/iterobject.c), ``obj[0]``, ``obj[1]``, ... until IndexError;
* ``iter(fn, sentinel)`` (``callable_iterator``): ``fn()`` until it returns the sentinel;
* ``reversed(obj)`` with ``__len__`` and ``__getitem__`` (Objects/enumobject.c);
* ``operator.countOf`` / ``indexOf``: identity, then ``==``, item by item.

Each takes one item per ``next()``, lazily, so the user's ``__getitem__`` or function
runs exactly as often as in CPython.
"""
from ..core.constant import ConstantVariable
from ..core.exceptions import TracedException, raise_in_trace
from ..core.iterator import IteratorVariable
from ..core.ops import compare, is_identical


class _SEQUENCE_SAMPLE:
    def __getitem__(self, index):
        raise IndexError(index)


class SequenceIteratorVariable(IteratorVariable):
    """``iter(obj)`` of a user sequence (``__getitem__``, no ``__iter__``), as CPython's
    ``iterator`` (Objects/iterobject.c): ``obj[0]``, ``obj[1]``, ... one per ``next()``,
    until ``__getitem__`` raises IndexError or StopIteration; exhausted, it forgets the
    sequence and stays exhausted even if the sequence grows."""

    py_type = type(iter(_SEQUENCE_SAMPLE()))

    def __init__(self, seq, **kwargs):
        super().__init__(**kwargs)
        self.seq, self.index = seq, 0  # seq None: exhausted

    def next(self, tx):
        if self.seq is None:
            return None
        try:
            item = self.seq.getitem(tx, ConstantVariable(self.index))
        except TracedException as error:
            if not issubclass(error.value.cls, (IndexError, StopIteration)):
                raise
            self.seq = None
            return None
        self.index += 1
        return item

    def __repr__(self):
        return f"SequenceIteratorVariable({self.index})"


class CallableIteratorVariable(IteratorVariable):
    """``iter(fn, sentinel)`` (``callable_iterator``, Objects/iterobject.c): each ``next()``
    calls ``fn()``; a result equal to the sentinel (``sentinel == result``, the sentinel
    asked first) or a StopIteration from the call ends it, and it forgets both."""

    py_type = type(iter(int, 1))

    def __init__(self, fn, sentinel, **kwargs):
        super().__init__(**kwargs)
        self.fn, self.sentinel = fn, sentinel  # fn None: exhausted

    def next(self, tx):
        if self.fn is None:
            return None
        try:
            result = self.fn.call(tx, [], {})
        except TracedException as error:
            if not issubclass(error.value.cls, StopIteration):
                raise
            self.fn = self.sentinel = None
            return None
        if self.fn is None:  # the call exhausted this iterator itself (gh-101892): nothing more
            return None
        if compare(tx, "==", self.sentinel, result).truth(tx):
            self.fn = self.sentinel = None
            return None
        return result

    def __repr__(self):
        return f"CallableIteratorVariable({self.fn})"


class SequenceReversedVariable(IteratorVariable):
    """``reversed(obj)`` of a user sequence (``__len__`` and ``__getitem__``, no
    ``__reversed__``), as CPython's reversed object (Objects/enumobject.c):
    ``len()`` once when made, then one ``__getitem__`` per ``next()``, from the
    end, so an early ``break`` reads no more items than CPython does."""

    py_type = reversed

    def __init__(self, seq, index, **kwargs):
        super().__init__(**kwargs)
        self.seq, self.index = seq, index  # seq None: exhausted (CPython drops it)

    def next(self, tx):
        if self.seq is None or self.index < 0:
            self.seq = None
            return None
        try:
            item = self.seq.call_method(tx, "__getitem__", [ConstantVariable(self.index)], {})
        except TracedException as error:
            if not issubclass(error.value.cls, (IndexError, StopIteration)):
                raise
            self.seq = None
            return None
        self.index -= 1
        return item

    def length(self, tx):
        """``__length_hint__``: ``len(seq)`` again, capped by the position (reversed_len)."""
        if self.seq is None:
            return 0
        size = self.seq.call_method(tx, "__len__", [], {}).as_python_constant()
        return 0 if size < self.index + 1 else self.index + 1

    def __repr__(self):
        return f"SequenceReversedVariable({self.index})"


def count_of(tx, seq, value):
    """``operator.countOf(seq, value)``: every item, counted when identical or equal."""
    iterator, count = seq.iter(tx), 0
    while (item := iterator.next(tx)) is not None:
        count += is_identical(item, value) or compare(tx, "==", item, value).truth(tx)
    return ConstantVariable(count)


def index_of(tx, seq, value):
    """``operator.indexOf(seq, value)``: items up to the first identical or equal one."""
    iterator, index = seq.iter(tx), 0
    while (item := iterator.next(tx)) is not None:
        if is_identical(item, value) or compare(tx, "==", item, value).truth(tx):
            return ConstantVariable(index)
        index += 1
    raise_in_trace(ValueError, "sequence.index(x): x not in sequence")
