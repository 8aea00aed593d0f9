"""The iterators of ``itertools``, lazy as in CPython's ``Modules/itertoolsmodule.c``.

``islice``, ``compress``, ``takewhile``, ``dropwhile``, ``accumulate``,
``starmap``, ``filterfalse``, ``cycle``, ``zip_longest``, ``pairwise``, ``count``, ``repeat`` and ``tee`` pull from their inner
iterators one item at a time, exactly when CPython's would: ``islice(it, 2)``
takes two items from ``it`` and leaves the rest to whoever reads ``it`` next,
and a predicate runs once per item, in the program's order. Each keeps the
state of its C struct (``islice``'s ``next``/``stop``/``step``/``cnt``,
``takewhile``'s stop flag) and is rebuilt after a graph break as a fresh one
of its own type in that state. ``combinations`` and ``permutations`` copy
their input into a pool at creation (CPython does too), so their items are
computed then.
"""
import itertools
import operator

from ...errors import unsupported
from ..containers.lists import TupleVariable
from ..core.base import BoundMethodVariable, VariableTracker
from ..core.constant import ConstantVariable
from ..core.exceptions import python_operation, raise_in_trace
from ..core.iterator import IteratorVariable
from ..core.ops import binary_op
from .iterators import ListIteratorVariable


def _endless(name):
    unsupported("unsupported_value", f"an endless itertools.{name} consumed whole")


def _never(_):
    """A dropwhile predicate once dropping is over: every item is kept."""
    return False


def emit_call(cg, fn, *args):
    """``fn(*args)``; each argument a tracker, or a plain constant."""
    cg.emit_op("PUSH_NULL")
    cg.load_const(fn)
    for arg in args:
        if isinstance(arg, VariableTracker):
            cg(arg)
        else:
            cg.load_const(arg)
    cg.call(len(args))


def _int_arg(v, name):
    if v is None or v.is_python_constant() and v.as_python_constant() is None:
        return None
    value = v.as_python_constant() if v.is_python_constant() else None
    if type(value) is not int or value < 0:
        unsupported("operator_error", f"{name} must be None or a non-negative int")
    return value


class IsliceVariable(IteratorVariable):
    py_type = itertools.islice

    def __init__(self, inner, start, stop, step, **kwargs):
        super().__init__(**kwargs)
        self.inner, self.next_index, self.stop, self.step, self.cnt = inner, start, stop, step, 0

    def next(self, tx):
        if self.inner is None:
            return None
        while self.cnt < self.next_index:  # skip to the next index, dropping what lies before
            if self.inner.next(tx) is None:
                return self._empty()
            self.cnt += 1
        if self.stop is not None and self.cnt >= self.stop:
            return self._empty()
        item = self.inner.next(tx)
        if item is None:
            return self._empty()
        self.cnt += 1
        self.next_index += self.step
        if self.stop is not None and self.next_index > self.stop:
            self.next_index = self.stop
        return item

    def _empty(self):
        self.inner = None  # CPython drops the inner iterator: the islice stays exhausted
        return None

    def reconstruct(self, cg):
        if self.inner is None:
            emit_call(cg, itertools.islice, (), 0)
            return
        stop = None if self.stop is None else self.stop - self.cnt
        emit_call(cg, itertools.islice, self.inner, self.next_index - self.cnt, stop, self.step)


def _islice(tx, iterable, *args):
    if not 1 <= len(args) <= 3:
        unsupported("operator_error", "islice expected 2 to 4 arguments")
    start, stop, step = (None, args[0], None) if len(args) == 1 else (list(args) + [None])[:3]
    start, stop = _int_arg(start, "start") or 0, _int_arg(stop, "stop")
    step = _int_arg(step, "step")
    if step == 0:
        unsupported("operator_error", "islice step must be a positive int")
    return IsliceVariable(iterable.iter(tx), start, stop, step or 1)


class ChainVariable(IteratorVariable):
    """``chain(*iterables)``: ``iter()`` of each source is taken only when the one
    before is used up (``chain.from_iterable`` reads its sources lazily too)."""

    py_type = itertools.chain

    def __init__(self, sources, **kwargs):
        super().__init__(**kwargs)
        self.sources, self.active = sources, None  # sources: an iterator of iterables

    def next(self, tx):
        while True:
            if self.active is None:
                source = self.sources.next(tx)
                if source is None:
                    return None
                self.active = source.iter(tx)
            item = self.active.next(tx)
            if item is not None:
                return item
            self.active = None

    def reconstruct(self, cg):
        emit_call(cg, _chain_rest, self.sources, self.active if self.active is not None else ())


def _chain_rest(sources, active):
    """A chain that first finishes ``active``, then takes the iterables ``sources`` yields."""
    return itertools.chain.from_iterable(itertools.chain((active,), sources))


class CompressVariable(IteratorVariable):
    py_type = itertools.compress

    def __init__(self, data, selectors, **kwargs):
        super().__init__(**kwargs)
        self.data, self.selectors = data, selectors

    def next(self, tx):
        while True:
            item = self.data.next(tx)
            if item is None:
                return None
            selector = self.selectors.next(tx)
            if selector is None:
                return None
            if selector.truth(tx):
                return item

    def reconstruct(self, cg):
        emit_call(cg, itertools.compress, self.data, self.selectors)


class TakeWhileVariable(IteratorVariable):
    py_type = itertools.takewhile

    def __init__(self, predicate, inner, **kwargs):
        super().__init__(**kwargs)
        self.predicate, self.inner, self.stopped = predicate, inner, False

    def next(self, tx):
        if self.stopped:
            return None
        item = self.inner.next(tx)
        if item is None:
            return None
        if self.predicate.call(tx, [item], {}).truth(tx):
            return item
        self.stopped = True  # the first item that fails is consumed, and iteration ends for good
        return None

    def reconstruct(self, cg):
        if self.stopped:
            emit_call(cg, itertools.takewhile, _never, ())
        else:
            emit_call(cg, itertools.takewhile, self.predicate, self.inner)


class DropWhileVariable(IteratorVariable):
    py_type = itertools.dropwhile

    def __init__(self, predicate, inner, **kwargs):
        super().__init__(**kwargs)
        self.predicate, self.inner, self.started = predicate, inner, False

    def next(self, tx):
        while True:
            item = self.inner.next(tx)
            if item is None:
                return None
            if self.started or not self.predicate.call(tx, [item], {}).truth(tx):
                self.started = True
                return item

    def reconstruct(self, cg):
        emit_call(cg, itertools.dropwhile, _never if self.started else self.predicate, self.inner)


class AccumulateVariable(IteratorVariable):
    py_type = itertools.accumulate

    def __init__(self, inner, func, initial, **kwargs):
        super().__init__(**kwargs)
        self.inner, self.func, self.initial, self.total = inner, func, initial, None

    def next(self, tx):
        if self.initial is not None:  # the initial value comes first, before any item is read
            self.total, self.initial = self.initial, None
            return self.total
        item = self.inner.next(tx)
        if item is None:
            return None
        if self.total is None:
            self.total = item
        elif self.func is None:
            self.total = binary_op(tx, operator.add, self.total, item)
        else:
            self.total = self.func.call(tx, [self.total, item], {})
        return self.total

    def reconstruct(self, cg):
        if self.total is not None:  # a running total cannot be handed to a new accumulate
            unsupported("cannot_resume", "an itertools.accumulate part way through")
        if self.initial is None:
            emit_call(cg, itertools.accumulate, self.inner, self.func)
        else:
            emit_call(cg, _accumulate_from, self.inner, self.func, self.initial)


def _accumulate_from(iterable, func, initial):
    """``accumulate(iterable, func, initial=initial)`` (a positional call for the rebuild)."""
    return itertools.accumulate(iterable, func, initial=initial)


def _accumulate(tx, iterable, func=None, *, initial=None):
    if func is not None and func.is_python_constant() and func.as_python_constant() is None:
        func = None
    if initial is not None and initial.is_python_constant() and initial.as_python_constant() is None:
        initial = None
    return AccumulateVariable(iterable.iter(tx), func, initial)


class StarmapVariable(IteratorVariable):
    py_type = itertools.starmap

    def __init__(self, fn, inner, **kwargs):
        super().__init__(**kwargs)
        self.fn, self.inner = fn, inner

    def next(self, tx):
        args = self.inner.next(tx)
        return None if args is None else self.fn.call(tx, args.unpack(tx), {})

    def reconstruct(self, cg):
        emit_call(cg, itertools.starmap, self.fn, self.inner)


class FilterFalseVariable(IteratorVariable):
    """``filterfalse(predicate, it)``: the items for which the predicate (``bool`` when it is
    None) is false, each read and tested when asked for."""

    py_type = itertools.filterfalse

    def __init__(self, predicate, inner, **kwargs):
        super().__init__(**kwargs)
        self.predicate, self.inner = predicate, inner

    def next(self, tx):
        while True:
            item = self.inner.next(tx)
            if item is None:
                return None
            test = item if _is_none_var(self.predicate) else self.predicate.call(tx, [item], {})
            if not test.truth(tx):
                return item

    def reconstruct(self, cg):
        emit_call(cg, itertools.filterfalse, self.predicate, self.inner)


class CycleVariable(IteratorVariable):
    """``cycle(it)`` (cycle_next): the items of ``it`` as it yields them, each saved; once
    ``it`` is exhausted, the saved ones again and again (nothing, if it yielded none)."""

    py_type = itertools.cycle

    def __init__(self, inner, **kwargs):
        super().__init__(**kwargs)
        self.inner, self.saved, self.index = inner, [], 0

    def next(self, tx):
        if self.inner is not None:
            item = self.inner.next(tx)
            if item is not None:
                self.saved.append(item)
                return item
            self.inner = None
        if not self.saved:
            return None
        item = self.saved[self.index]
        self.index = (self.index + 1) % len(self.saved)
        return item

    def unpack(self, tx):
        if self.next(tx) is None:  # nothing to repeat
            return []
        _endless("cycle")

    def reconstruct(self, cg):
        if self.saved:  # its saved items have no constructor argument (only deprecated pickling)
            unsupported("graph_output", "rebuilding an itertools.cycle that has saved items")
        emit_call(cg, itertools.cycle, self.inner if self.inner is not None else ())


def _is_none_var(v):
    return v.is_python_constant() and v.as_python_constant() is None


class ZipLongestVariable(IteratorVariable):
    py_type = itertools.zip_longest

    def __init__(self, inners, fillvalue, **kwargs):
        super().__init__(**kwargs)
        self.inners, self.fillvalue = list(inners), fillvalue
        self.active = [True] * len(self.inners)
        self.done = False

    def next(self, tx):
        if self.done or not self.inners:
            return None
        items = []
        for i, it in enumerate(self.inners):
            item = it.next(tx) if self.active[i] else None
            if item is None:
                if self.active[i]:
                    self.active[i] = False
                    if not any(self.active):  # the last one ran out: the whole zip ends
                        self.done = True
                        return None
                item = self.fillvalue
            items.append(item)
        return TupleVariable(items)

    def reconstruct(self, cg):
        if self.done or not all(self.active):
            unsupported("cannot_resume", "an itertools.zip_longest with an exhausted input")
        emit_call(cg, _zip_longest_with, self.fillvalue, *self.inners)


def _zip_longest_with(fillvalue, *iterables):
    """``zip_longest(*iterables, fillvalue=fillvalue)`` (a positional call for the rebuild)."""
    return itertools.zip_longest(*iterables, fillvalue=fillvalue)


def _zip_longest(tx, *iterables, fillvalue=None):
    return ZipLongestVariable([it.iter(tx) for it in iterables],
                              fillvalue if fillvalue is not None else ConstantVariable(None))


class CountVariable(IteratorVariable):
    py_type = itertools.count

    def __init__(self, start, step, **kwargs):
        super().__init__(**kwargs)
        self.current, self.step = start, step

    def next(self, tx):
        value = self.current
        self.current += self.step
        return ConstantVariable(value)

    def unpack(self, tx):
        _endless("count")

    def reconstruct(self, cg):
        emit_call(cg, itertools.count, self.current, self.step)


def _count(tx, start=ConstantVariable(0), step=ConstantVariable(1)):
    values = [v.as_python_constant() if v.is_python_constant() else None for v in (start, step)]
    if not all(type(v) in (int, float) for v in values):
        unsupported("unsupported_value", "itertools.count of values that are not int or float constants")
    return CountVariable(*values)


class RepeatVariable(IteratorVariable):
    py_type = itertools.repeat

    def __init__(self, obj, times, **kwargs):
        super().__init__(**kwargs)
        self.obj, self.times = obj, times

    def next(self, tx):
        if self.times is not None:
            if self.times <= 0:
                return None
            self.times -= 1
        return self.obj

    def unpack(self, tx):
        if self.times is None:
            _endless("repeat")
        return super().unpack(tx)

    def length(self, tx):  # operator.length_hint; len() of a repeat raises in CPython
        unsupported("operator_error", "object of type 'itertools.repeat' has no len()")

    def reconstruct(self, cg):
        if self.times is None:
            emit_call(cg, itertools.repeat, self.obj)
        else:
            emit_call(cg, itertools.repeat, self.obj, self.times)


def _repeat(tx, obj, times=None):
    n = _int_arg(times, "times") if times is not None else None
    return RepeatVariable(obj, n)


class PairwiseVariable(IteratorVariable):
    """``pairwise(it)`` (pairwise_next): the first ``next()`` takes two items, each
    later one a single item, paired with the one before; so ``it`` is read no
    further than the pairs asked for. Rebuilt as ``pairwise(chain([old], it))``."""

    py_type = itertools.pairwise

    def __init__(self, inner, **kwargs):
        super().__init__(**kwargs)
        self.inner, self.old = inner, None  # inner None: exhausted (CPython drops it)
        self.ended = None  # the inner iterator, when it ran out in the last next()

    def next(self, tx):
        self.ended = None
        it, old = self.inner, self.old
        if it is None:
            return None
        if old is None:
            old = self.old = it.next(tx)
            if old is None:
                return self._end(it)
            if self.inner is None:  # the inner iterator's __next__ exhausted this pairwise (reentry)
                self.old = None
                return None
            it = self.inner
        new = it.next(tx)  # `it` and `old` as read before: a reentrant next() may have moved them
        if new is None:
            return self._end(it)
        self.old = new
        return TupleVariable([old, new])

    def _end(self, it):
        self.ended, self.inner, self.old = it, None, None
        return None

    def stop_args(self):  # pairwise_next passes the inner's StopIteration on
        return self.ended.stop_args() if isinstance(self.ended, IteratorVariable) else []

    def reconstruct(self, cg):
        if self.inner is None:
            emit_call(cg, itertools.pairwise, ())
        elif self.old is None:
            emit_call(cg, itertools.pairwise, self.inner)
        else:
            cg.emit_op("PUSH_NULL")
            cg.load_const(itertools.pairwise)
            emit_call(cg, itertools.chain, TupleVariable([self.old]), self.inner)
            cg.call(1)


class _TeeData:
    """The buffer the iterators of one ``tee()`` share (teedataobject): every item taken from
    the inner iterator so far, in order (CPython frees links all iterators passed: unseen)."""

    def __init__(self, inner):
        self.inner, self.items, self.done, self.running = inner, [], False, False

    def item(self, tx, i):
        """The ``i``-th item, taken from the inner iterator when no iterator read it yet."""
        if i < len(self.items):
            return self.items[i]
        if self.done:
            return None
        if self.running:  # teedataobject_getitem: the inner iterator's next() came back here
            raise_in_trace(RuntimeError, "cannot re-enter the tee iterator")
        self.running = True
        try:
            item = self.inner.next(tx)
        finally:
            self.running = False
        if item is None:
            self.done = True
            return None
        self.items.append(item)
        return item


class TeeVariable(IteratorVariable):
    """One iterator of ``tee(it, n)`` (tee_next): its own place in the shared buffer, so each
    reads every item, and the inner iterator is read once per item, by the one ahead."""

    py_type = type(itertools.tee(())[0])

    def __init__(self, data, index=0, **kwargs):
        super().__init__(**kwargs)
        self.data, self.index = data, index

    def next(self, tx):
        item = self.data.item(tx, self.index)
        if item is not None:
            self.index += 1
        return item

    def getattr(self, tx, name):
        if name == "__copy__":
            return BoundMethodVariable(self, name)
        return super().getattr(tx, name)

    def call_method(self, tx, name, args, kwargs):
        if name == "__copy__" and not args and not kwargs:  # tee_copy: same buffer, same place
            return TeeVariable(self.data, self.index)
        return super().call_method(tx, name, args, kwargs)

    def reconstruct(self, cg):
        unsupported("graph_output", "rebuilding an itertools.tee iterator (its buffer is shared with "
                                    "the others of its tee() and exists only in the trace)")


def _tee(tx, iterable, n=ConstantVariable(2)):
    """``tee(iterable, n=2)`` (itertools_tee_impl): ``n`` iterators over one buffer; an
    iterator that is itself a tee is the first of them and the rest are its copies."""
    count = n.as_python_constant() if n.is_python_constant() else None
    if type(count) is not int:
        unsupported("operator_error", "tee() with an n that is not an int")
    if count < 0:
        raise_in_trace(ValueError, "n must be >= 0")
    if count == 0:
        return TupleVariable([])
    it = iterable.iter(tx)
    first = it if isinstance(it, TeeVariable) else TeeVariable(_TeeData(it))
    return TupleVariable([first] + [TeeVariable(first.data, first.index) for _ in range(count - 1)])


_MAX_PICKS = 10000


def _pooled(fn):
    """combinations, permutations...: the input is copied to a pool at creation, as CPython does."""
    def model(tx, iterable, *args):
        pool = iterable.unpack(tx)
        params = [a.as_python_constant() for a in args]
        with python_operation(fn.__name__):  # "r must be non-negative": after the pool, as in C
            picks = list(itertools.islice(fn(range(len(pool)), *params), _MAX_PICKS + 1))
        if len(picks) > _MAX_PICKS:  # CPython makes them one at a time; the trace would hold them all
            unsupported("unsupported_value", f"{fn.__name__} of {len(pool)} items: more than {_MAX_PICKS}")
        return ListIteratorVariable([TupleVariable([pool[i] for i in pick]) for pick in picks], kind=fn)
    return model


def _product(tx, *iterables, repeat=ConstantVariable(1)):
    """``itertools.product``: every combination of the (finite, known) iterables, in order."""
    pools = [it.unpack(tx) for it in iterables] * repeat.as_python_constant()
    return ListIteratorVariable([TupleVariable(list(combo)) for combo in itertools.product(*pools)],
                                kind=itertools.product)


MODELS = {
    itertools.product: _product,
    itertools.chain: lambda tx, *iterables: ChainVariable(ListIteratorVariable(iterables)),
    itertools.chain.from_iterable: lambda tx, iterables: ChainVariable(iterables.iter(tx)),
    itertools.islice: _islice,
    itertools.compress: lambda tx, data, selectors: CompressVariable(data.iter(tx), selectors.iter(tx)),
    itertools.takewhile: lambda tx, predicate, it: TakeWhileVariable(predicate, it.iter(tx)),
    itertools.dropwhile: lambda tx, predicate, it: DropWhileVariable(predicate, it.iter(tx)),
    itertools.accumulate: _accumulate,
    itertools.starmap: lambda tx, fn, it: StarmapVariable(fn, it.iter(tx)),
    itertools.filterfalse: lambda tx, predicate, it: FilterFalseVariable(predicate, it.iter(tx)),
    itertools.cycle: lambda tx, it: CycleVariable(it.iter(tx)),
    itertools.zip_longest: _zip_longest,
    itertools.count: _count,
    itertools.repeat: _repeat,
    itertools.pairwise: lambda tx, iterable: PairwiseVariable(iterable.iter(tx)),
    itertools.tee: _tee,
    itertools.combinations: _pooled(itertools.combinations),
    itertools.combinations_with_replacement: _pooled(itertools.combinations_with_replacement),
    itertools.permutations: _pooled(itertools.permutations),
}
