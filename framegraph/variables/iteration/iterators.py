"""Iterators: ``iter(list)``, ``enumerate``, ``zip``, ``map``, ``filter``, ``reversed``.

Iterators are created during the trace and advanced by FOR_ITER / ``next()``.
``next(tx)`` returns the next item tracker, or None when exhausted (the
iterator's StopIteration). ``map`` and ``filter`` call their function lazily,
one item at a time, like CPython, so the order of inlined calls (and of the
graph nodes they record) is the program's order.

An iterator that outlives the graph (returned, or in a local at a graph break)
is rebuilt as the object eager would hold, of its own type and at its position:
``zip(*inners)``, ``map(fn, *inners)``, ``enumerate(inner, count)``, and for an
iterator over a builtin container ``iter(container)`` (or ``reversed``)
advanced past the items the trace took (``resume_iterator``), so a list
iterator still sees the list as it is. ``iter(range(...))`` computes each item
from the range (``RangeIteratorVariable``): a range may hold 2**64 of them.

An exhausted ``next()`` raises ``StopIteration(*it.stop_args())``: bare, but
for a generator that has just returned a value (``gen_iternext``).
"""
import collections
import functools
import types
from typing import List, Optional

from ... import bytecode
from ...errors import unsupported
from ..containers.dicts import ConstDictVariable, DictViewVariable
from ..containers.lists import TupleVariable
from ..containers.ranges import MAX_RANGE_ITEMS, range_size
from ..containers.sets import SetVariable
from ..core import space
from ..core.base import BoundMethodVariable, VariableTracker
from ..core.constant import ConstantVariable
from ..core.exceptions import ExceptionVariable, TracedException
from ..core.iterator import (ITERATOR_TYPES, IteratorVariable, REVERSED_TYPES, advance_iterator,
                             builtin_iterator_type, resume_iterator)
from ..core.ops import compare, is_identical

def _dict_of(container):
    """The dict or set tracker an iterator's container stands for (a view's dict)."""
    return container.dict_var if isinstance(container, DictViewVariable) else container


def _keys_of(container):
    """The key trackers of a dict or set tracker (or a dict view's dict), in order;
    None for containers whose iterator does not check for changes (lists, tuples...)."""
    if isinstance(container, DictViewVariable):
        container = container.dict_var
    if isinstance(container, ConstDictVariable):
        return container.keys_vars()
    if isinstance(container, SetVariable):
        return list(container.items.values())
    return None


def _changed(before, now) -> bool:
    return len(before) != len(now) or any(a is not b for a, b in zip(before, now))


@space.register
class ListIteratorVariable(IteratorVariable):
    """Iteration over a known list of items (lists, tuples, dict keys, ranges...)."""

    def __init__(self, items, from_generator=False, container=None, make=iter, kind=None, **kwargs):
        super().__init__(**kwargs)
        self.items = list(items)
        self.index = 0
        self.from_generator = from_generator  # stands for a generator (nn.Module.parameters())
        # what it iterates, when that is a builtin container: ``make(container)`` is the
        # real iterator (rebuilt with its own type and position); ``kind`` its type
        self.container, self.make, self.kind = container, make, kind
        # a dict's or set's iterator raises RuntimeError once its container changed size
        self.keys_at_start = _keys_of(container)
        self.done = False  # exhausted: a builtin iterator stays so, whatever its container does

    def remaining(self):  # a live list iterator continues as a snapshot
        return list(self.items[self.index:])

    def size_check(self):
        """(container, size, message) for a dict's or set's iterator: handed over at a
        graph break as the items it had left, it must still fail as CPython's does if
        the container's size changed meanwhile (``checked_rest``); else None."""
        if self.keys_at_start is None or self.done or self.container is None:
            return None
        what = "Set" if self.make is iter and self.kind in (ITERATOR_TYPES[set], ITERATOR_TYPES[frozenset]) \
            else "dictionary"
        return self.container, len(self.keys_at_start), f"{what} changed size during iteration"

    def python_type(self):
        if self.from_generator:
            return types.GeneratorType
        return self.kind or self.py_type

    def reconstruct(self, cg):
        """The iterator eager would hold: ``iter(container)`` (or ``reversed``) advanced
        to this position, of the container's own iterator type; the items left, as a
        tuple iterator, where the container is not a builtin one."""
        if self.from_generator:
            unsupported("generator", "a generator object outlives the graph (it would be a tuple iterator)")
        if self.container is None and self.kind is not None:
            unsupported("cannot_resume", f"a {self.kind.__name__} iterator cannot be rebuilt")
        if self.done and self.container is not None:
            # CPython's builtin iterators drop their container once exhausted and stay
            # so: what the container became since does not matter, only the type
            cg.emit_op("PUSH_NULL")
            cg.load_const(resume_iterator)
            cg.load_const(self.make)
            cg(self.container)
            cg.load_const(0)
            cg.load_const(True)
            cg.call(4)
            return
        if self.keys_at_start is not None and _changed(self.keys_at_start, _keys_of(self.container)):
            # iter(container) now would not know: CPython's iterator raises, or walks its table
            unsupported("cannot_resume", "an iterator over a dict or set that changed since iter()")
        cg.emit_op("PUSH_NULL")
        if self.container is None:
            cg.load_const(self.kind or iter)
            cg(TupleVariable(self.items[self.index:]))
            cg.call(1)
            return
        if self.keys_at_start is not None and id(_dict_of(self.container)) in getattr(cg, "replayed", ()):
            # the trace changed the dict or set before iter(); its iterator would be made
            # before the replay makes that change, and a dict iterator sees its size change
            unsupported("cannot_resume", "an iterator over a dict or set the trace changed")
        done = False
        later = getattr(cg, "after_replay", None)
        # A list the trace appended to gets those appends when the side effects are
        # replayed, after this value is built: advancing its iterator now would run
        # past the old end, and a list iterator that reached the end stays exhausted.
        # So build it at the start and advance it after the replay.
        defer = later is not None and (self.index or done) and self.container.python_type() is list
        cg.load_const(resume_iterator)
        cg.load_const(self.make)
        cg(self.container)
        cg.load_const(0 if defer else self.index)
        cg.load_const(False if defer else done)
        cg.call(4)
        if defer:
            temp = cg.new_temp()
            cg.emit(bytecode.create_dup_top())
            cg.store_fast(temp)
            later.append((temp, self.index, done))

    def lend(self, values, read=None):
        """A real iterator over ``values`` (the rest of the items, as constants) for a
        builtin run at trace time; this one moves past them. With ``read``, the pair
        goes there for ``GiveBackUnread`` to move back over what the builtin left."""
        self.index += len(values)
        real = iter(values)
        if read is not None:
            read.append((self, real))
        return real

    def check_container(self):
        """CPython's dict and set iterators: RuntimeError once the size changed; a
        change of keys at the same size depends on the hash table (not modelled)."""
        now = _keys_of(self.container)
        if self.keys_at_start is None or not _changed(self.keys_at_start, now):
            return
        if len(now) == len(self.keys_at_start):
            unsupported("unsupported_value", "a dict or set whose keys changed during iteration")
        raise TracedException(ExceptionVariable(RuntimeError, [ConstantVariable(self.size_check()[2])]))

    def next(self, tx) -> Optional[VariableTracker]:
        if self.done:
            return None
        self.check_container()
        if self.index >= len(self.items):
            self.done = True
            return None
        self.index += 1
        return self.items[self.index - 1]

    def length(self, tx):
        return len(self.items) - self.index

    def __repr__(self):
        return f"ListIteratorVariable({self.index}/{len(self.items)})"


class GiveBackUnread:
    """``with GiveBackUnread(lent):`` around a builtin run on the real iterators
    ``ListIteratorVariable.lend`` made: on the way out, raising or not, each tracker
    is where its real iterator stopped (``operator.indexOf`` stops after the match),
    and exhausted if that was (a list iterator that ran out reduces to ``iter([])``,
    without a position). A class: constant folding runs it thousands of times."""

    __slots__ = ("lent",)

    def __init__(self, lent):
        self.lent = lent

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        for tracker, real in self.lent:
            tracker.index -= real.__length_hint__()
            tracker.done = tracker.done or len(real.__reduce__()) == 2
        return False


@space.register
class LiveListIteratorVariable(ListIteratorVariable):
    """``iter(a_list)``: reads the list as it is at each step, like CPython's list
    iterator (a worklist loop that appends while iterating sees the new items);
    once exhausted it stays exhausted."""

    def __init__(self, seq, **kwargs):
        super().__init__([], container=seq, kind=ITERATOR_TYPES[list], **kwargs)
        self.seq = seq

    @property
    def items(self):
        return [] if self.done else self.seq.items

    @items.setter
    def items(self, value):
        pass  # the constructor's snapshot: this iterator has none


class _RangeItems:
    """The items of a range as trackers, made when read (a list of them could be 2**64 long)."""

    def __init__(self, r):
        self.range = r

    def __len__(self):
        return range_size(self.range)

    def __getitem__(self, index):
        if isinstance(index, slice):
            part = self.range[index]
            if range_size(part) > MAX_RANGE_ITEMS:
                unsupported("unsupported_value", f"the {range_size(part)} items of {part!r}, one by one")
            return [ConstantVariable(v) for v in part]
        return ConstantVariable(self.range[index])


@space.register
class RangeIteratorVariable(ListIteratorVariable):
    """``iter(range(...))``: each ``next()`` computes its item, as CPython's rangeiter
    does, so a loop that stops early never lists the range; rebuilt as
    ``iter(range)`` advanced, of the range's own iterator type (a range past
    ``sys.maxsize`` has a ``longrange_iterator``)."""

    def __init__(self, container, **kwargs):
        super().__init__([], container=container, kind=type(iter(container.value)), **kwargs)
        self.range = container.value

    @property
    def items(self):
        return _RangeItems(self.range)

    @items.setter
    def items(self, value):
        pass  # the constructor's empty snapshot: the range is the items

    def next(self, tx):
        if self.done or self.index >= range_size(self.range):
            self.done = True
            return None
        self.index += 1
        return ConstantVariable(self.range[self.index - 1])

    def remaining(self):
        rest = self.range[self.index:]
        if range_size(rest) > MAX_RANGE_ITEMS:
            unsupported("cannot_resume", f"the rest of iter({self.range!r}) is too long to hand over")
        return [ConstantVariable(v) for v in rest]

    def length(self, tx):
        return max(range_size(self.range) - self.index, 0)

    def __repr__(self):
        return f"RangeIteratorVariable({self.range!r} at {self.index})"


class EnumerateVariable(IteratorVariable):
    py_type = enumerate

    def __init__(self, inner, start=0, **kwargs):
        super().__init__(**kwargs)
        self.inner, self.count = inner, start

    def remaining(self):
        rest = remaining_items(self.inner)
        return [TupleVariable([ConstantVariable(self.count + i), x]) for i, x in enumerate(rest)]

    def next(self, tx):
        item = self.inner.next(tx)
        if item is None:
            return None
        self.count += 1
        return TupleVariable([ConstantVariable(self.count - 1), item])

    def stop_args(self):
        return _stop_args_of(self.inner)  # enum_next passes the inner's StopIteration on

    def reconstruct(self, cg):  # enumerate(inner, count): the inner iterator is shared
        cg.emit_op("PUSH_NULL")
        cg.load_const(enumerate)
        cg(self.inner)
        cg.load_const(self.count)
        cg.call(2)


def _rebuild_call(cg, fn, args):
    """``fn(*args)`` for trackers ``args`` (each inner iterator rebuilt once, shared)."""
    cg.emit_op("PUSH_NULL")
    cg.load_const(fn)
    for arg in args:
        cg(arg)
    cg.call(len(args))


class ZipVariable(IteratorVariable):
    py_type = zip

    def __init__(self, inners, strict=False, **kwargs):
        super().__init__(**kwargs)
        self.inners, self.strict = inners, strict
        self.ended = None  # the inner iterator that ended the last next(): zip_next passes its StopIteration on

    def remaining(self):
        if self.strict:  # the length check must still run
            return super().remaining()
        return [TupleVariable(list(t)) for t in zip(*(remaining_items(i) for i in self.inners))]

    def next(self, tx):
        if not self.inners:  # zip() is empty
            return None
        items = []
        for it in self.inners:  # CPython stops at the first exhausted one: the rest are not advanced
            item = it.next(tx)
            if item is None:
                if self.strict and (items or any(i.next(tx) is not None for i in self.inners[1:])):
                    unsupported("exception", "zip(strict=True) of sequences of different lengths")
                self.ended = it
                return None
            items.append(item)
        return TupleVariable(items)

    def stop_args(self):
        return _stop_args_of(self.ended)

    def reconstruct(self, cg):
        _rebuild_call(cg, functools.partial(zip, strict=True) if self.strict else zip, self.inners)


class MapVariable(IteratorVariable):
    py_type = map

    def __init__(self, fn, inners, **kwargs):
        super().__init__(**kwargs)
        self.fn, self.inners = fn, inners
        self.ended = None  # the inner iterator that ended the last next(), as for zip

    def next(self, tx):
        items = []
        for it in self.inners:  # map_next stops at the first exhausted one: the rest are not advanced
            item = it.next(tx)
            if item is None:
                self.ended = it
                return None
            items.append(item)
        return self.fn.call(tx, items, {})

    def stop_args(self):
        return _stop_args_of(self.ended)

    def reconstruct(self, cg):
        _rebuild_call(cg, map, [self.fn] + list(self.inners))


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

    def stop_args(self):
        return _stop_args_of(self.inner)  # filter_next passes the inner's StopIteration on

    def reconstruct(self, cg):
        _rebuild_call(cg, filter, [self.fn, self.inner])


def _stop_args_of(inner) -> List[VariableTracker]:
    """The StopIteration arguments an inner iterator's end leaves for its wrapper to pass
    on (enumerate, zip, map and filter call its tp_iternext and do not clear them)."""
    return inner.stop_args() if isinstance(inner, IteratorVariable) else []


def remaining_items(it) -> List[VariableTracker]:
    """``it.remaining()`` for an iterator tracker; anything else cannot be rebuilt so."""
    if not isinstance(it, IteratorVariable):
        unsupported("cannot_resume", f"the iterator {it} cannot be rebuilt")
    return it.remaining()


class ChangedSize:
    """What a dict's or set's iterator handed over at a graph break became when its
    container changed size meanwhile: its next step raises CPython's RuntimeError.
    The resume function that gets it is traced (``ChangedSizeVariable``)."""

    def __init__(self, message):
        self.message = message

    def __iter__(self):
        return self

    def __next__(self):
        raise RuntimeError(self.message)


def checked_rest(container, size, rest, message):
    """The items a dict's or set's iterator had left at a graph break (``rest``) if its
    container still has the ``size`` it had, else a ``ChangedSize``. The break site's
    code calls it after the break instruction ran (breaks/split.py)."""
    return rest if len(container) == size else ChangedSize(message)


class ChangedSizeVariable(IteratorVariable):
    """A ``ChangedSize`` from outside: iterating it raises the RuntimeError."""

    py_type = ChangedSize

    def __init__(self, message, **kwargs):
        super().__init__(**kwargs)
        self.message = message

    def next(self, tx):
        raise TracedException(ExceptionVariable(RuntimeError, [ConstantVariable(self.message)]))


def wrap_changed_size(tx, value, source):
    """builder rule for ``ChangedSize``: its type is guarded, its message is a constant."""
    if source is not None:
        tx.output.add_guard("TYPE_MATCH", source, ChangedSize)
    return ChangedSizeVariable(value.message)
