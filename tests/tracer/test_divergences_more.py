"""Wrong answers CPython's own test suite found, as the code that meets them.

Each test is a small program a user could write whose compiled result differed
from eager (a generator's return value lost, an iterator read too far, a call
that does not bind, ``!=`` of a collections.abc.Set, a huge range). Every one
compares with eager and states its graphs.
"""
import operator
import sys
from collections.abc import Set

import torch

import framegraph
from helpers import assert_same, assert_same_as_eager, check


# ---- a generator's return value reaches the consumer through StopIteration.value
def running_mean():
    total, n = 0.0, 0
    while True:
        value = yield
        if value is None:
            return total / n
        total, n = total + value, n + 1


def test_the_value_a_generator_returns_is_the_value_of_its_stop_iteration():
    def f(x):
        mean = running_mean()
        next(mean)
        for v in (1.0, 2.0, 6.0):
            mean.send(v)
        try:
            mean.send(None)
        except StopIteration as stop:
            return x * stop.value, stop.args
        return x, ()

    check(f, torch.ones(2), frames=1)


def test_next_raises_the_return_value_once_then_a_bare_stop_iteration():
    def answer():
        yield "thinking"
        return 42

    def f(x):
        g = answer()
        seen = []
        for _ in range(3):
            try:
                seen.append(next(g))
            except StopIteration as stop:
                seen.append((stop.value, stop.args))
        return x + 1, seen

    check(f, torch.ones(2), frames=1)


def test_a_tuple_or_an_exception_returned_is_one_argument_of_the_stop_iteration():
    def give_back():
        return (yield)

    def f(x, value):
        g = give_back()
        next(g)
        try:
            g.send(value)
        except StopIteration as stop:
            return x + 1, stop.value, stop.args
        return x, None, None

    check(f, torch.ones(2), (2,), frames=1)
    check(f, torch.ones(2), None, frames=1)

    def g(x):
        out = f(x, StopIteration(7))
        return out[0], type(out[1]).__name__, out[1].value

    check(g, torch.ones(2), frames=1)


def test_yield_from_passes_on_the_delegate_s_return_value():
    def inner():
        yield 1
        return "done"

    def outer():
        result = yield from inner()
        return result.upper()

    def f(x):
        g = outer()
        next(g)
        try:
            next(g)
        except StopIteration as stop:
            return x * 2, stop.value
        return x, None

    check(f, torch.ones(2), frames=1)


def test_enumerate_zip_map_and_filter_pass_the_return_value_on():
    def answer():
        yield 1
        return "done"

    def f(x):
        values = []
        for wrap in (enumerate, lambda it: map(str, it), lambda it: filter(None, it), lambda it: zip("ab", it)):
            wrapped = wrap(answer())
            next(wrapped)
            try:
                next(wrapped)
            except StopIteration as stop:
                values.append(stop.value)
        return x + 1, values

    check(f, torch.ones(2), frames=1)


# ---- a builtin run at trace time reads an iterator only as far as CPython's does
def test_map_stops_at_the_first_exhausted_iterable_and_leaves_the_others():
    def f(x):
        short, long = iter([1, 2]), iter([10, 20, 30, 40])
        sums = list(map(lambda a, b: a + b, short, long))
        return x + 1, sums, next(long)

    check(f, torch.ones(2), frames=1)


def test_index_of_leaves_the_iterator_just_after_the_match():
    def f(x):
        words = iter("find the first e and go on")
        where = operator.indexOf(words, "e")
        return x + where, next(words), list(words)

    check(f, torch.ones(2), frames=1)


def test_index_of_a_missing_item_exhausts_the_iterator():
    def f(x):
        letters = iter("abc")
        try:
            operator.indexOf(letters, "z")
        except ValueError:
            return x + 1, list(letters)
        return x, None

    check(f, torch.ones(2), frames=1)


def test_in_reads_an_iterator_up_to_the_first_match():
    def f(x):
        queue = iter([1, 2, 3, 4, 5])
        evens = (n * 2 for n in range(6))
        return x + 1, 3 in queue, next(queue), 4 in evens, next(evens), 99 in queue, list(queue)

    check(f, torch.ones(2), frames=1)


def test_pairwise_reads_its_iterable_one_pair_at_a_time(framegraph_trace):
    import itertools

    def f(x):
        readings = iter([1.0, 1.5, 3.0, 2.0])
        steps = itertools.pairwise(readings)
        first = next(steps)
        return x * (first[1] - first[0]), next(readings), steps

    x = torch.ones(2)
    expected, actual = f(x), framegraph.compile(f, backend="eager", fullgraph=True)(x)
    assert_same(actual[:2], expected[:2])
    assert type(actual[2]) is itertools.pairwise and list(actual[2]) == list(expected[2]) == [(1.5, 2.0)]
    assert framegraph_trace.graphs == 1


# ---- a call that does not bind raises CPython's own TypeError, caught in the trace
def is_same(a, b):  # operator.is_ as the pure-Python operator module writes it
    return a is b


def scaled(x, /, factor=2, *, bias, clip=None):
    return x * factor + bias


def test_a_call_that_does_not_bind_raises_the_type_error_of_eager_in_the_trace():
    def f(x):
        text = "xyzpdq"
        copy = text[:3] + text[3:]
        messages = []
        for call in (lambda: is_same(), lambda: is_same(1, 2, 3), lambda: scaled(x, 3),
                     lambda: scaled(x=x, bias=1), lambda: scaled(x, bias=1, shift=2)):
            try:
                call()
            except TypeError as error:
                messages.append(str(error))
        return scaled(x, bias=1), messages, is_same(text, text), is_same(text, copy)

    check(f, torch.ones(2), frames=1)


# ---- != of a class that defines only __eq__ (object.__ne__ inverts it)
class ListSet(Set):
    def __init__(self, items=()):
        self.data = []
        for item in items:
            if item not in self.data:
                self.data.append(item)

    def __contains__(self, item):
        return item in self.data

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        if not isinstance(other, Money):
            return NotImplemented
        return self.cents == other.cents


def test_not_equal_of_a_class_with_only_eq_is_the_opposite_of_eq():
    def f(x):
        mine = ListSet("abc")
        return (x + 1, {"a", "b", "c"} != mine, mine != {"a", "b", "c"}, mine != {"a"}, {"a"} != mine,
                Money(5) != Money(5), Money(5) != Money(6), Money(5) != 5)

    check(f, torch.ones(2), frames=1)


# ---- ranges are arithmetic: no trace lists the items of range(10**20)
def test_huge_ranges_answer_count_index_in_and_len_without_listing_items():
    def f(x):
        big = range(0, 10**20, 3)
        out = [big.count(9), big.count(10), big.index(3 * 10**15), 10**19 + 2 in big, 10**19 in big,
               big[10**18], big == range(0, 10**20 - 1, 3), len(range(sys.maxsize))]
        try:
            len(range(-sys.maxsize, sys.maxsize))
        except OverflowError:
            out.append("too long for len()")
        try:
            big.index(10)
        except ValueError as error:
            out.append(str(error))
        return x + 1, out

    check(f, torch.ones(2), frames=1)


def test_range_count_and_index_take_exactly_one_argument():
    def f(x):
        out = []
        for call in (lambda: range(9).index(4, 2), lambda: range(9).count(), lambda: range(9).index(x=1),
                     lambda: range(9).index(4), lambda: range(9).count(1.0)):
            try:
                out.append(call())
            except TypeError as error:
                out.append(str(error))
        return x + 1, out

    check(f, torch.ones(2), frames=1)


def test_a_loop_over_a_huge_range_stops_early_without_listing_it():
    def f(x):
        for i in iter(range(2**64)):
            x = x + i
            if i == 3:
                break
        return x

    check(f, torch.ones(2), frames=1)


def test_a_range_iterator_left_half_way_is_handed_back_at_its_position(framegraph_trace):
    def f(x):
        it = iter(range(10**12))
        first = next(it), next(it)
        return x + 1, first, it

    x = torch.ones(2)
    expected, actual = f(x), framegraph.compile(f, backend="eager", fullgraph=True)(x)
    assert_same(actual[:2], expected[:2])
    assert type(actual[2]) is type(expected[2])
    assert next(actual[2]) == next(expected[2]) == 2
    assert framegraph_trace.graphs == 1


def test_a_short_range_loop_still_unrolls_into_one_graph():
    def f(x):
        for i in range(1, 6):
            x = x * i
        return x, list(range(3)), sum(range(100))

    cnt = assert_same_as_eager(f, torch.ones(2), graphs=1)
    assert cnt.op_count == 5


# ---- what the frame drops after a graph break dies then, not when the frame returns
class Node:
    def __init__(self, payload):
        self.payload = payload


def test_an_object_dropped_after_a_graph_break_is_freed_before_the_frame_returns(framegraph_trace):
    import weakref

    def f(nodes, x):
        node = nodes.pop()
        alive = weakref.ref(node)  # weakref.ref is a graph break: the frame resumes after it
        node = None
        return x + 1, alive() is None

    for _ in range(2):  # the first call (traced) and a cached one
        assert_same(framegraph.compile(f, backend="eager")([Node(torch.ones(2))], torch.ones(2)),
                    f([Node(torch.ones(2))], torch.ones(2)))
    assert framegraph_trace.graphs == 1  # x + 1, after the break (nothing to capture before it)


def test_a_builtin_given_a_huge_range_iterator_runs_in_cpython_after_a_break(framegraph_trace):
    def f(x):
        numbers = iter(range(10**20))
        where = operator.indexOf(numbers, 5)
        return x + where, next(numbers)

    assert_same(framegraph.compile(f, backend="eager")(torch.ones(2)), f(torch.ones(2)))
    assert framegraph_trace.graphs == 1  # x + where, after the break at indexOf


def test_range_and_slice_with_bad_arguments_raise_cpython_s_errors_in_the_trace():
    def f(x):
        errors = []
        for args in [(), (1.5,), (1, 2, 0), (1, 2, 3, 4)]:
            for make in (range, slice):
                try:
                    make(*args)
                except (TypeError, ValueError) as error:
                    errors.append((make.__name__, type(error).__name__, str(error)))
        return x + 1, errors

    check(f, torch.ones(2), frames=1)
