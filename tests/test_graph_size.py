"""Graphs no larger than torch._dynamo's: what framegraph leaves out of a graph, and what it must keep.

benchmarks/zoo_graphs.py compares framegraph's graphs with torch._dynamo's
on the zoo; docs/design-notes.md ("Graphs against torch._dynamo's") says why
each difference is right. Each test here pins one of them on a small program:
the ops the graph holds, and eager's answer.
"""
import pytest
import torch
import torch.nn.functional as F

import framegraph
from helpers import check


@pytest.fixture(autouse=True)
def fresh():
    framegraph.reset()
    yield
    framegraph.reset()


def ops_of(cnt):
    return [t if isinstance(t, str) else t.__name__ for t in cnt.targets()]


# ---- an op that hands back its argument untouched does no work: no node is left of it
def no_op_calls(x):
    y = F.dropout(x, 0.1, False)  # eval-mode dropout returns its input and draws nothing
    z = y.contiguous().float().to(torch.float32).type_as(x)
    return z * 2, z is x


def test_unread_no_op_calls_leave_no_node():
    cnt = check(no_op_calls, torch.randn(4), ops=1)
    assert ops_of(cnt) == ["mul"]


def test_dropout_module_in_eval_leaves_no_node():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5), torch.nn.ReLU()).eval()
    cnt = check(model, torch.randn(2, 4), ops=2)
    assert ops_of(cnt) == ["linear", "relu"]


# ---- a write that returns its argument stays, however it is spelled
def positional_in_place(x):
    F.relu(x, True)  # inplace given by position: only the version counter says it wrote
    F.hardtanh(x, -0.5, 0.5, True)
    return x + 1


def test_unread_bitwise_operators_leave_no_node():
    # operator.and_/or_ end in "_" only to dodge the keywords: they write nothing
    def f(x, y):
        unused = (x & y) | (x ^ y)
        return (x | y) + 1

    cnt = check(f, torch.tensor([1, 2, 3]), torch.tensor([3, 1, 2]), ops=2)
    assert ops_of(cnt) == ["or_", "add"]


def test_in_place_bitwise_operators_are_kept():
    def f(x, y):
        z = x + 0
        z &= y
        z |= 4
        return x * 2

    check(f, torch.tensor([1, 2, 3]), torch.tensor([3, 1, 2]), ops=4)


def test_positional_in_place_write_is_kept():
    x = torch.randn(6)
    written = x.relu().clamp(-0.5, 0.5)
    cnt = check(positional_in_place, x, ops=3)  # eager, then compiled: both writes are idempotent
    torch.testing.assert_close(x, written)  # the caller's tensor, written as in eager
    assert ops_of(cnt) == ["relu", "hardtanh", "add"]


def test_in_place_write_under_inference_mode_is_kept():
    # inference mode bumps no version counter: an unchanged one proves nothing there
    with torch.inference_mode():
        x = torch.randn(6)
        written = x.relu().clamp(-0.5, 0.5)
        cnt = check(positional_in_place, x, ops=3)
        torch.testing.assert_close(x, written)
    assert ops_of(cnt) == ["relu", "hardtanh", "add"]


def test_user_function_in_graph_returning_its_argument_is_kept():
    # a function of the user's allowed in the graph: the trace cannot see everything it does
    @framegraph.allow_in_graph
    def same(t):
        return t

    def f(x):
        same(x)
        return x * 3

    cnt = check(f, torch.randn(3), ops=2)
    assert ops_of(cnt) == ["same", "mul"]
