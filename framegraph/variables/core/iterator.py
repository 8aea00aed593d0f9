"""The iterator protocol (``tp_iter``/``tp_iternext``) every iterator tracker extends.

``next(tx)`` returns the next item tracker, or None when exhausted (the
iterator's StopIteration); an iterator over a builtin container remembers what
``type(iter(container))`` is, so that it can be rebuilt after the graph as
``iter(container)`` advanced past the items the trace took.
"""
import collections
import types
from typing import List, Optional

from ...errors import unsupported
from . import space
from .base import BoundMethodVariable, VariableTracker
from .constant import items_of
from .exceptions import ExceptionVariable, TracedException
from .ops import compare, is_identical

# iter(x) and reversed(x) of the builtin containers: what an iterator over one is, rebuilt
_SAMPLES = (collections.OrderedDict(), (), [], {}, set(), frozenset(), "", b"", range(0), {}.keys(), {}.values(),
            {}.items())
ITERATOR_TYPES = {type(c): type(iter(c)) for c in _SAMPLES}
REVERSED_TYPES = {type(c): type(reversed(c)) for c in _SAMPLES if not isinstance(c, (set, frozenset))}
_EMPTY_ITERATORS = {**{type(iter(c)): (iter, c) for c in _SAMPLES},
                    **{type(reversed(c)): (reversed, c) for c in _SAMPLES if not isinstance(c, (set, frozenset))}}
_SLOTS = ("__iter__", "__reversed__", "__getitem__", "__len__")


@space.register
def iterator_stand_in(kind):
    """A real, empty iterator of type ``kind`` (``list_iterator``...), or None: what a
    builtin that takes an iterator as a value (``repr(it)``, ``int(it)``) sees of its type."""
    made = _EMPTY_ITERATORS.get(kind)
    return made[0](made[1]) if made is not None else None


@space.register
def builtin_iterator_type(container_type, table=ITERATOR_TYPES) -> Optional[type]:
    """``type(iter(x))`` (``type(reversed(x))`` with ``REVERSED_TYPES``) for a builtin
    container type, or a subclass that keeps its iteration slots; None for anything
    else (its iteration is user code)."""
    for base in getattr(container_type, "__mro__", ()):
        if base in table:
            return table[base]
        if any(isinstance(base.__dict__.get(name), types.FunctionType) for name in _SLOTS):
            return None
    return None


def resume_iterator(make, container, consumed, done):
    """The real iterator after the graph: ``make(container)`` (``iter``, ``reversed``)
    advanced past the ``consumed`` items the trace took; an exhausted one stays so."""
    return advance_iterator(make(container), consumed, done)


def advance_iterator(it, consumed, done):
    """``it`` advanced past ``consumed`` items (and exhausted if ``done``)."""
    for _ in range(consumed):
        next(it)
    if done:
        for _ in it:
            pass
    return it



class IteratorVariable(VariableTracker):
    py_type = type(iter([]))

    def python_type(self):
        return self.py_type

    def remaining(self) -> List[VariableTracker]:
        """What iterating to the end would produce, without advancing (a resume
        function gets the rest of a loop's iterator as a tuple, breaks/split.py)."""
        unsupported("cannot_resume", f"the iterator {self} cannot be rebuilt")

    def size_check(self):
        """(container, size, message) when the iterator must fail once its container's
        size changes (a dict's or set's); None for the others."""
        return None

    def stop_args(self) -> List[VariableTracker]:
        """The arguments of the StopIteration that the last exhausted ``next()``
        raises: a generator that just returned a value carries it (``gen_iternext``
        sets ``StopIteration(value)``); every other iterator raises a bare one."""
        return []

    def raise_stop(self):
        """Raise in the trace the StopIteration that ``next()`` on this exhausted iterator raises."""
        raise TracedException(ExceptionVariable(StopIteration, self.stop_args()))

    def iter(self, tx):
        return self

    def unpack(self, tx) -> List[VariableTracker]:
        items = []
        while (item := self.next(tx)) is not None:
            items.append(item)
        return items

    def truth(self, tx):
        return True

    def contains(self, tx, item) -> bool:
        """``x in it`` (``_PySequence_IterSearch``): items are taken one at a time up to
        the first identical or equal one; the iterator stays just after it."""
        while (found := self.next(tx)) is not None:
            if is_identical(found, item) or compare(tx, "==", found, item).truth(tx):
                return True
        return False

    def getattr(self, tx, name):
        """``it.__next__`` (a method-wrapper, called later, as ``check_iterandlist`` does)."""
        if name in ("__next__", "__iter__"):
            return BoundMethodVariable(self, name)
        return super().getattr(tx, name)

    def call_method(self, tx, name, args, kwargs):
        if name == "__next__" and not args:
            item = self.next(tx)
            if item is None:
                self.raise_stop()
            return item
        if name == "__iter__":
            return self
        unsupported("unsupported_call", f"iterator.{name}")


@space.register
def items_one_by_one(tx, var):
    """What iterating ``var`` gives, as ``items_of``; an iterator is read item by item, so
    that a builtin raising partway (``sum()`` meeting a str, ``dict()`` a bad pair)
    leaves the rest unread, as in CPython."""
    if not isinstance(var, IteratorVariable):
        yield from items_of(tx, var)
        return
    while (item := var.next(tx)) is not None:
        yield item
