"""Iterators: ``iter(list)``, ``enumerate``, ``zip``, ``map``, ``filter``, ``reversed``.

Iterators are created during the trace and advanced by FOR_ITER / ``next()``.
``next(tx)`` returns the next item tracker, or None when exhausted (the
iterator's StopIteration). ``map`` and ``filter`` call their function lazily,
one item at a time, like CPython, so the order of inlined calls (and of the
graph nodes they record) is the program's order.
"""
import types
from typing import List, Optional

from ..graph_breaks import unsupported
from .base import VariableTracker
from .constant import ConstantVariable
from .lists import TupleVariable


class IteratorVariable(VariableTracker):
    py_type = type(iter([]))

    def python_type(self):
        return self.py_type

    def iter(self, tx):
        return self

    def unpack(self, tx) -> List[VariableTracker]:
        items = []
        while (item := self.next(tx)) is not None:
            items.append(item)
        return items

    def truth(self, tx):
        return True

    def call_method(self, tx, name, args, kwargs):
        if name == "__next__" and not args:
            item = self.next(tx)
            if item is None:
                unsupported("exception", "StopIteration from next()")
            return item
        if name == "__iter__":
            return self
        unsupported("unsupported_call", f"iterator.{name}")


class ListIteratorVariable(IteratorVariable):
    """Iteration over a known list of items (lists, tuples, dict keys, ranges...)."""

    def __init__(self, items, from_generator=False, **kwargs):
        super().__init__(**kwargs)
        self.items = list(items)
        self.index = 0
        self.from_generator = from_generator  # a generator run eagerly (tracer/inliner.py)
        self.mutations_seen = None  # side_effects.changes() when it ran (generators only)

    def python_type(self):
        return types.GeneratorType if self.from_generator else self.py_type

    def check_fresh(self, tx):
        """A generator's values were computed at its call: refuse them if anything changed since."""
        if self.mutations_seen is not None:
            from ..side_effects import changes

            if changes(tx) != self.mutations_seen:
                unsupported("generator", "the loop consuming a generator changed state before taking all "
                            "its values (the generator ran at its call and saw the old state)")

    def next(self, tx) -> Optional[VariableTracker]:
        self.check_fresh(tx)
        if self.index >= len(self.items):
            return None
        self.index += 1
        return self.items[self.index - 1]

    def length(self, tx):
        return len(self.items) - self.index

    def __repr__(self):
        return f"ListIteratorVariable({self.index}/{len(self.items)})"


class LiveListIteratorVariable(ListIteratorVariable):
    """``iter(a_list)``: reads the list as it is at each step, like CPython's list
    iterator (a worklist loop that appends while iterating sees the new items);
    once exhausted it stays exhausted."""

    def __init__(self, seq, **kwargs):
        super().__init__([], **kwargs)
        self.seq, self.done = seq, False

    @property
    def items(self):
        return [] if self.done else self.seq.items

    @items.setter
    def items(self, value):
        pass  # the constructor's snapshot: this iterator has none

    def next(self, tx):
        item = super().next(tx)
        if item is None:
            self.done = True
        return item


class EnumerateVariable(IteratorVariable):
    py_type = enumerate

    def __init__(self, inner, start=0, **kwargs):
        super().__init__(**kwargs)
        self.inner, self.count = inner, start

    def next(self, tx):
        item = self.inner.next(tx)
        if item is None:
            return None
        self.count += 1
        return TupleVariable([ConstantVariable(self.count - 1), item])


class ZipVariable(IteratorVariable):
    py_type = zip

    def __init__(self, inners, strict=False, **kwargs):
        super().__init__(**kwargs)
        self.inners, self.strict = inners, strict

    def next(self, tx):
        items = []
        for it in self.inners:  # CPython stops at the first exhausted one: the rest are not advanced
            item = it.next(tx)
            if item is None:
                if self.strict and (items or any(i.next(tx) is not None for i in self.inners[1:])):
                    unsupported("exception", "zip(strict=True) of sequences of different lengths")
                return None
            items.append(item)
        return TupleVariable(items)


class MapVariable(IteratorVariable):
    py_type = map

    def __init__(self, fn, inners, **kwargs):
        super().__init__(**kwargs)
        self.fn, self.inners = fn, inners

    def next(self, tx):
        items = [it.next(tx) for it in self.inners]
        if any(item is None for item in items):
            return None
        return self.fn.call(tx, items, {})


class FilterVariable(IteratorVariable):
    py_type = filter

    def __init__(self, fn, inner, **kwargs):
        super().__init__(**kwargs)
        self.fn, self.inner = fn, inner

    def next(self, tx):
        while (item := self.inner.next(tx)) is not None:
            keep = item if self.fn.is_python_constant() and self.fn.as_python_constant() is None \
                else self.fn.call(tx, [item], {})
            if keep.truth(tx):
                return item
        return None
