"""Iteration of instances of user classes, as ``PyObject_GetIter`` and ``tp_iternext`` run it.

``iter(obj)`` calls the class's ``__iter__``; without one, a class with ``__getitem__`` is a
sequence iterated by index (iteration_protocol.py). An iterator object of a user class is
advanced by its own ``__next__``, one item per ``next()``, and stays itself (``iter(it) is
it``); ``in`` walks it only up to the first match. Each site words its TypeError as CPython
does ("'X' object is not iterable", "cannot unpack non-iterable X object", ...).
``ObjectIteration`` is mixed into ``UserDefinedObjectVariable``.
"""
import types

from ...errors import unsupported
from ..core import space
from ..core.base import type_lookup
from ..core.exceptions import ExceptionVariable, TracedException, raise_in_trace
from ..core.iterator import IteratorVariable
from ..core.ops import compare, is_identical
from .iteration_protocol import SequenceIteratorVariable
from .iterators import ListIteratorVariable


class ObjectIteration:
    """The iteration slots of a user object tracker (a mixin of UserDefinedObjectVariable)."""

    def contains(self, tx, item):
        """``item in obj``: the class's ``__contains__`` when it has one, else iteration."""
        found, fn = type_lookup(self.cls, "__contains__")
        if found and isinstance(fn, types.FunctionType):
            return space.bind_class_attribute(tx, self, fn, None).call(tx, [item], {}).truth(tx)
        if found and fn is None:
            raise_in_trace(TypeError, f"'{self.cls.__name__}' object is not a container")
        if type_lookup(self.cls, "__iter__") == (True, None):
            raise_in_trace(TypeError, f"argument of type '{self.cls.__name__}' is not iterable")
        self.check_iterable(f"argument of type '{self.cls.__name__}' is not iterable")
        iterator = self.iter(tx)  # _PySequence_IterSearch: up to the first match, no further
        while (found := iterator.next(tx)) is not None:  # (asking the iterator's own `in` would
            if is_identical(found, item) or compare(tx, "==", found, item).truth(tx):  # iterate it again)
                return True
        return False

    def iter(self, tx):
        """``iter(obj)``: the class's ``__iter__`` runs now (``iterator_of``)."""
        self.check_iterable()
        return iterator_of(tx, self._iterator(tx))

    def unpack(self, tx):
        self.check_iterable(f"cannot unpack non-iterable {self.cls.__name__} object")  # UNPACK_SEQUENCE's words
        return _items_of(tx, self._iterator(tx))

    def check_iterable(self, message=None):
        """CPython's TypeError when the class has neither ``__iter__`` nor ``__getitem__``
        (nor a slot for them: a C base's would show as an attribute)."""
        if not hasattr(self.cls, "__iter__") and not hasattr(self.cls, "__getitem__"):
            raise_in_trace(TypeError, message or f"'{self.cls.__name__}' object is not iterable")

    def _iterator(self, tx):
        """``PyObject_GetIter``: the class's ``__iter__``; without one, a class with
        ``__getitem__`` is a sequence, iterated by index (``iterator`` of iterobject.c)."""
        found, fn = type_lookup(self.cls, "__iter__")
        if found and fn is None:  # `__iter__ = None`: explicitly not iterable
            raise_in_trace(TypeError, f"'{self.cls.__name__}' object is not iterable")
        result = self._dunder(tx, "__iter__", [])
        if result is NotImplemented:
            found, fn = type_lookup(self.cls, "__getitem__")
            if found and isinstance(fn, types.FunctionType):
                return SequenceIteratorVariable(self)
            unsupported("operator_error", f"{self.cls.__name__} is not iterable")
        return result

    def next(self, tx):
        """``next(obj)`` (tp_iternext): the class's ``__next__``; its StopIteration is the end
        (None), and the next call asks ``__next__`` again, as CPython does."""
        return self._step(tx, f"'{self.cls.__name__}' object is not an iterator")

    def _step(self, tx, not_iterator):
        """One ``__next__``: the item, or None at its StopIteration; ``not_iterator`` is the
        TypeError's message when the class has none."""
        try:
            item = self._dunder(tx, "__next__", [])
        except TracedException as error:
            if issubclass(error.value.cls, StopIteration):
                return None
            raise
        if item is NotImplemented:
            raise_in_trace(TypeError, not_iterator)
        return item

    def raise_stop(self):
        """``next(obj)`` without a default past the end: a bare StopIteration."""
        raise TracedException(ExceptionVariable(StopIteration, []))

    def _drain(self, tx, limit=10000):
        """``list(it)`` for an iterator object of a user class: ``__next__`` until StopIteration."""
        items = []
        while len(items) < limit:
            item = self._step(tx, f"iter() returned non-iterator of type '{self.cls.__name__}'")
            if item is None:
                return items
            items.append(item)
        unsupported("unsupported_value", f"more than {limit} items from a {self.cls.__name__} iterator")


def iterator_of(tx, result):
    """What ``iter()`` makes of an ``__iter__`` result: the iterator it returns (a
    generator, ``iter(self.items)``) is consumed lazily, one ``next()`` at a time, as
    CPython does; an iterator object of a user class is read to its end here."""
    if isinstance(result, IteratorVariable):
        return result
    if isinstance(result, space.UserDefinedObjectVariable) and type_lookup(result.cls, "__next__")[0]:
        return result  # advanced by its own __next__, one item per next(), and still itself
    if isinstance(result, space.UserDefinedObjectVariable):  # PyObject_GetIter checks tp_iternext
        raise_in_trace(TypeError, f"iter() returned non-iterator of type '{result.cls.__name__}'")
    return ListIteratorVariable(_items_of(tx, result))


def _items_of(tx, iterator):
    """Every item of what ``__iter__`` returned; an iterator of a user class: ``__next__`` until it stops."""
    if isinstance(iterator, ObjectIteration):
        return iterator._drain(tx)
    return iterator.unpack(tx)
