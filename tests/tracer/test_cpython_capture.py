"""What CPython's own test suite found the tracer could not capture in one graph.

Each case is the pattern, in small, behind many Lib/test tests that ran
correctly compiled but broke their graph or ran unmodified
(``framegraph/testing/cpython.py``, the "captured" measure). Every test
compares with eager and states its graph count.
"""
import unittest

import pytest

import torch

import framegraph
from helpers import assert_same


def same_as_eager(fn, *args):
    expected = fn(*args)
    actual = framegraph.compile(fn, backend="eager")(*args)
    assert_same(actual, expected)
    return actual


# ---- unittest's assertEqual: self._type_equality_funcs.get(type(first))
class Checker:
    """The shape of unittest.TestCase's equality dispatch: a dict keyed by classes."""

    def __init__(self):
        self.by_type = {dict: "dicts", list: "lists", tuple: "tuples"}

    def kind(self, first):
        return self.by_type.get(type(first), "plain")


def test_dict_keyed_by_classes_with_a_computed_key(framegraph_trace):
    checker = Checker()

    def fn(x):
        return x + 1, checker.kind(3), checker.kind([1]), checker.kind(x.shape[0])

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1
    # the guard holds the key: a class added to the dict later is seen
    checker.by_type[int] = "ints"
    assert framegraph.compile(fn, backend="eager")(torch.ones(2))[1] == "ints"


def test_assert_equal_traces_in_one_graph(framegraph_trace):
    case = unittest.TestCase()

    def fn(x):
        case.assertEqual(len([1, 2]), 2)
        case.assertEqual([1, 2], [1, 2])
        case.assertEqual("ab", "a" + "b")
        return x * 2

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- test_set: set methods, and CPython's iteration order
def set_methods(x):
    s = {30, 1, 2}
    s.add(17)
    s.add(9)
    s.discard(2)
    t = s.union([40, 1.0], (5,))
    u = s.difference({1, 9}).symmetric_difference(range(3))
    s.intersection_update({1, 17, 30, 99})
    return (x + 1, list(t), list(u), list(s), s.isdisjoint([0]), s.issubset(t), t.issuperset(s),
            frozenset(s).copy(), s.pop(), list(s))


def test_set_methods_in_cpython_order(framegraph_trace):
    same_as_eager(set_methods, torch.ones(2))
    assert framegraph_trace.graphs == 1


def equal_elements_keep_the_first(x):
    a = {1} | {1.0, True}
    b = {1.0}.union([1])
    return x + 1, [type(v) for v in a], [type(v) for v in b]


def test_set_keeps_the_element_cpython_keeps(framegraph_trace):
    same_as_eager(equal_elements_keep_the_first, torch.ones(2))
    assert framegraph_trace.graphs == 1


def remove_missing(x):
    s = {1, 2}
    try:
        s.remove(3)
    except KeyError as e:
        return x + 1, e.args
    return x, ()


def test_set_remove_missing_raises_key_error(framegraph_trace):
    same_as_eager(remove_missing, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- with blocks left by an exception: assertRaises, a suppressing __exit__
class Suppress:
    """Suppresses KeyError; records what __exit__ was handed."""

    def __init__(self):
        self.seen = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        self.seen = (kind, type(value), tb is None, tb.tb_next is None)
        return issubclass(kind, KeyError)


def look_up(d, k):
    return d[k]


CASE = unittest.TestCase()


def with_blocks_left_by_exceptions(x):
    with CASE.assertRaises(ZeroDivisionError) as cm:
        1 / 0
    with CASE.assertRaises(KeyError):
        look_up({}, "zz")
    quiet = Suppress()
    with quiet:
        look_up({}, "a")  # two frames in the traceback
    return x + 1, type(cm.exception), cm.exception.args, cm.exception.__traceback__, quiet.seen


def test_with_block_exit_gets_the_exception(framegraph_trace):
    same_as_eager(with_blocks_left_by_exceptions, torch.ones(2))
    assert framegraph_trace.graphs == 1


def exception_through_no_grad(x):
    try:
        with torch.no_grad():
            y = x * 2
            raise ValueError("v")
    except ValueError as e:
        return y, torch.is_grad_enabled(), e.__traceback__ is not None


def test_exception_leaves_no_grad(framegraph_trace):
    same_as_eager(exception_through_no_grad, torch.ones(2, requires_grad=True))
    assert framegraph_trace.graphs == 1


def raises_regex(x):
    with CASE.assertRaisesRegex(KeyError, "z+"):
        {}["zz"]
    with CASE.assertRaisesRegex(ValueError, "invalid literal"):
        int("x")
    return x + 1


def test_assert_raises_regex_compiles_its_pattern_at_trace_time(framegraph_trace):
    same_as_eager(raises_regex, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- dict equality; assertRaises(E, obj.method) reads the method's __name__
def dict_equality(x):
    import collections

    nan = float("nan")
    a, b = {1: "a", 2: [3]}, {2: [3], 1: "a"}
    o1, o2 = collections.OrderedDict(a), collections.OrderedDict(b)
    return (x + 1, a == b, a != b, {} != {}, o1 == o2, o1 == b, {1: nan} == {1: nan},
            {1: float("nan")} == {1: float("nan")}, {1: 1} == {1.0: True})


def test_dict_equality(framegraph_trace):
    same_as_eager(dict_equality, torch.ones(2))
    assert framegraph_trace.graphs == 1


def method_names(x):
    items = [1, 2]
    CASE.assertRaises(IndexError, [].pop)
    return x + 1, items.append.__name__, items.append.__qualname__


def test_bound_method_names(framegraph_trace):
    same_as_eager(method_names, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- class statements in traced code (LOAD_BUILD_CLASS)
def class_in_function(x):
    class Seq:
        """A sized thing."""

        extra = 3

        def __init__(self, k):
            self.k = k

        def __len__(self):
            return self.k + self.extra

        @property
        def double(self):
            return self.k * 2

        @staticmethod
        def plus_one(a):
            return a + 1

        def kind(self):
            return type(self)

    s = Seq(2)
    CASE.assertEqual(len(s), 5)
    return (x + 1, len(s), s.double, Seq.plus_one(4), Seq.__name__, Seq.__qualname__, Seq.__doc__,
            isinstance(s, Seq), s.kind() is Seq)


def test_class_statement_in_one_graph(framegraph_trace):
    same_as_eager(class_in_function, torch.ones(2))
    assert framegraph_trace.graphs == 1


def returns_its_class(x):
    class Local(Exception):
        pass

    try:
        raise Local("boom")
    except Local as e:
        args = e.args
    return x + 1, Local, args


def test_each_call_makes_its_own_class(framegraph_trace):
    compiled = framegraph.compile(returns_its_class, backend="eager")
    first, second = compiled(torch.ones(2)), compiled(torch.ones(2))
    assert first[1] is not second[1] and first[1].__qualname__ == "returns_its_class.<locals>.Local"
    assert first[2] == ("boom",)
    assert framegraph_trace.graphs == 1


def returns_an_instance_of_its_class(x):
    class Local(Exception):
        pass

    return x + 1, Local("a")


@pytest.mark.expect_fallback("graph_output")
def test_a_trace_time_class_is_never_a_constant_of_the_code():
    # the exception would be rebuilt with the class the trace made: one for every call
    compiled = framegraph.compile(returns_an_instance_of_its_class, backend="eager")
    first, second = compiled(torch.ones(2)), compiled(torch.ones(2))
    assert type(first[1]) is not type(second[1])


def class_reading_a_local(x):
    k = 2

    class Reads:
        def get(self):
            return k

    return x + Reads().get()


def test_class_body_with_free_variables(framegraph_trace):
    # a method reading the enclosing function's locals reads the frame's cell (its real
    # cell is stood for by one the trace maps to it): one graph (tests/tracer/test_class_bodies.py)
    same_as_eager(class_reading_a_local, torch.ones(2))
    assert framegraph_trace.graphs == 1
