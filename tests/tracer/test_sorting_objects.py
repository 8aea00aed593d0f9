"""sorted(), list.sort(), min() and max() of objects that compare by Python code.

CPython's sort calls ``__lt__`` in an order fixed by its algorithm; the
trace sorts stand-ins whose ``<`` runs the traced comparison, so the calls,
their order and what a raising one leaves in the list are CPython's.
"""
import torch

from helpers import same_as_eager


def test_sorting_objects_that_compare_in_python(framegraph_trace):
    import functools

    @functools.total_ordering
    class Version:
        def __init__(self, major, minor):
            self.major, self.minor = major, minor

        def __lt__(self, other):
            return (self.major, self.minor) < (other.major, other.minor)

        def __eq__(self, other):
            return (self.major, self.minor) == (other.major, other.minor)

    def fn(x):
        vs = [Version(1, 2), Version(0, 9), Version(1, 0)]
        ordered = [(v.major, v.minor) for v in sorted(vs)]
        vs.sort(reverse=True)
        return x + 1, ordered, [(v.major, v.minor) for v in vs], max(vs).minor, min(vs).minor

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


class Boom(Exception):
    pass


class Fragile:
    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        if self.v == 3:
            raise Boom
        return self.v < other.v


def test_a_raising_comparison_leaves_the_list_as_cpython_does(framegraph_trace):
    def fn(x):
        items = [Fragile(1), Fragile(3), Fragile(2)]
        try:
            items.sort()
        except Boom:
            return x - 1, [i.v for i in items]
        return x, None

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


def test_sorting_with_cmp_to_key(framegraph_trace):
    from functools import cmp_to_key

    def by_length_then_reversed(a, b):
        return (len(a) - len(b)) or ((a < b) - (a > b))

    def fn(x):
        words = ["bb", "a", "ccc", "aa"]
        words.sort(key=cmp_to_key(by_length_then_reversed))
        return x + 1, words, max(["x", "yy"], key=cmp_to_key(by_length_then_reversed))

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


def test_reduce_reads_its_iterable_in_step_with_the_function(framegraph_trace):
    import functools

    def fn(x):
        seen = []

        def numbers():
            for i in range(3):
                seen.append(("yield", i))
                yield i

        def add(a, b):
            seen.append(("add", a, b))
            return a + b

        return x + functools.reduce(add, numbers(), 10), seen

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1
