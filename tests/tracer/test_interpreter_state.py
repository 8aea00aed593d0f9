"""Interpreter state read in a trace: the int/str digit limit, the recursion limit.

CPython's test_int reads ``sys.get_int_max_str_digits()`` and converts
strings of that many digits; a library parsing long numbers depends on the
limit without reading it. Both answers are constants of the trace, guarded,
so a call after ``sys.set_int_max_str_digits(...)`` traces again.
"""
import sys

import pytest
import torch

import framegraph
from helpers import assert_same

pytestmark = pytest.mark.skipif(not hasattr(sys, "get_int_max_str_digits"), reason="Python without the limit")


@pytest.fixture
def limit():
    before = sys.get_int_max_str_digits()
    yield
    sys.set_int_max_str_digits(before)


def test_reading_the_limit_is_one_graph_and_guarded(framegraph_trace, limit):
    def fn(x):
        digits = sys.get_int_max_str_digits()
        try:
            int("1" * (digits + 1))
            refused = False
        except ValueError:
            refused = True
        return x + digits, refused

    compiled = framegraph.compile(fn, backend="eager")
    assert_same(compiled(torch.ones(2)), fn(torch.ones(2)))
    sys.set_int_max_str_digits(5000)
    assert_same(compiled(torch.ones(2)), fn(torch.ones(2)))  # traced again for the new limit
    assert framegraph_trace.graphs == 2


def test_a_long_conversion_depends_on_the_limit_unread(framegraph_trace, limit):
    def fn(x):
        try:
            return x * len(str(int("7" * 4500)))
        except ValueError:
            return x - 1

    sys.set_int_max_str_digits(4300)
    compiled = framegraph.compile(fn, backend="eager")
    assert_same(compiled(torch.ones(2)), torch.ones(2) - 1)
    sys.set_int_max_str_digits(0)  # no limit: the same call now converts
    assert_same(compiled(torch.ones(2)), torch.ones(2) * 4500)
    assert framegraph_trace.graphs == 2


def test_short_conversions_do_not_guard_the_limit(framegraph_trace, limit):
    def fn(x):
        return x * int("12")

    compiled = framegraph.compile(fn, backend="eager")
    compiled(torch.ones(2))
    sys.set_int_max_str_digits(5000)
    assert_same(compiled(torch.ones(2)), torch.ones(2) * 12)
    assert framegraph_trace.graphs == 1


def test_recursion_limit_is_a_guarded_constant(framegraph_trace):
    def fn(x):
        return x + sys.getrecursionlimit()

    before = sys.getrecursionlimit()
    compiled = framegraph.compile(fn, backend="eager")
    try:
        assert_same(compiled(torch.ones(2)), fn(torch.ones(2)))
        sys.setrecursionlimit(before + 1)
        assert_same(compiled(torch.ones(2)), fn(torch.ones(2)))
    finally:
        sys.setrecursionlimit(before)
    assert framegraph_trace.graphs == 2
