"""Sets from outside the frame that hold tuples, classes or builtin functions:
read as sets (guarded by value) instead of breaking the graph."""
import operator

import torch

import framegraph
from helpers import CountingBackend, assert_same, assert_same_as_eager

REDUCERS = {operator.add, operator.mul, max}
EDGES = {(0, 1), (1, 2), (2, 0)}


def combine(x, op=operator.add):
    if op not in REDUCERS:
        raise ValueError(op)
    return x * len(REDUCERS | {min}), sorted(b for a, b in EDGES if a < b)


def test_a_set_of_functions_and_tuples_is_one_graph():
    assert_same_as_eager(combine, torch.ones(2), graphs=1)


def test_changing_the_set_recompiles():
    edges = {(0, 1)}

    def count(x):
        return x * len(edges), (0, 1) in edges

    cnt = CountingBackend()
    compiled = framegraph.compile(count, backend=cnt)
    assert_same(compiled(torch.ones(2)), count(torch.ones(2)))
    edges.add((5, 6))
    assert_same(compiled(torch.ones(2)), count(torch.ones(2)))
    assert cnt.frame_count == 2
