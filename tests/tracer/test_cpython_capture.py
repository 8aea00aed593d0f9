"""What CPython's own test suite found the tracer could not capture in one graph.

Each case is the pattern, in small, behind many Lib/test tests that ran
correctly compiled but broke their graph or ran unmodified
(``framegraph/testing/cpython.py``, the "captured" measure). Every test
compares with eager and states its graph count.
"""
import unittest

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


def test_dict_keyed_by_classes_with_a_computed_key(strict_trace):
    checker = Checker()

    def fn(x):
        return x + 1, checker.kind(3), checker.kind([1]), checker.kind(x.shape[0])

    same_as_eager(fn, torch.ones(2))
    assert strict_trace.graphs == 1
    # the guard holds the key: a class added to the dict later is seen
    checker.by_type[int] = "ints"
    assert framegraph.compile(fn, backend="eager")(torch.ones(2))[1] == "ints"


def test_assert_equal_traces_in_one_graph(strict_trace):
    case = unittest.TestCase()

    def fn(x):
        case.assertEqual(len([1, 2]), 2)
        case.assertEqual([1, 2], [1, 2])
        case.assertEqual("ab", "a" + "b")
        return x * 2

    same_as_eager(fn, torch.ones(2))
    assert strict_trace.graphs == 1
