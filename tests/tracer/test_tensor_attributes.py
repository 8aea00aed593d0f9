"""Tensor attribute writes real training code does inside compiled functions."""
import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same


def test_clearing_gradients_by_hand_is_seen_by_the_caller():
    model = torch.nn.Linear(3, 2)

    def step(x):
        for p in model.parameters():
            p.grad = None  # zero_grad(set_to_none=True), written out
        return model(x).relu().sum()

    x = torch.randn(4, 3)
    model(x).sum().backward()
    cnt = CountingBackend()
    loss = framegraph.compile(step, backend=cnt, fullgraph=True)(x)
    assert_same(loss, model(x).relu().sum())
    assert model.weight.grad is None and model.bias.grad is None and cnt.frame_count == 1


def test_an_assigned_grad_is_read_back_and_written_to_the_parameter():
    def f(x, p):
        p.grad = x * 2
        return p.grad + 1

    p = torch.nn.Parameter(torch.ones(2))
    cnt = CountingBackend()
    got = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2), p)
    assert_same(got, torch.full((2,), 3.0))
    assert_same(p.grad, torch.full((2,), 2.0))
    assert cnt.frame_count == 1


def test_clearing_the_grad_of_a_fresh_leaf_changes_nothing():
    def f(x):
        w = x.clone().requires_grad_()  # CPython makes the leaf (a backend's graph could not)
        w.grad = None
        return w * 2

    cnt = CountingBackend()
    got = framegraph.compile(f, backend=cnt)(torch.ones(2))
    assert_same(got, f(torch.ones(2)))
    assert got.requires_grad and cnt.frame_count == 2  # the clone, then the rest with w as an input


def test_a_grad_of_another_shape_is_left_to_autograd_to_refuse():
    def f(x, p):
        p.grad = x.sum()  # the graph breaks here; CPython runs the write, and autograd raises
        return x + 1

    p = torch.nn.Parameter(torch.ones(2))
    cnt = CountingBackend()
    with pytest.raises(RuntimeError, match="assign a gradient of size"):
        framegraph.compile(f, backend=cnt)(torch.ones(2), p)
    assert p.grad is None and cnt.frame_count == 1  # the graph of x.sum()


@pytest.mark.parametrize("backend", ["counting", "aot_eager", "inductor"])
def test_assigning_data_swaps_what_the_tensor_holds_in_one_graph(backend):
    def f(x, y):
        x.data = y * 2
        return x + 1

    x, y = torch.randn(3), torch.randn(3)
    mine = x.clone()
    cnt = CountingBackend()
    result = framegraph.compile(f, backend=cnt if backend == "counting" else backend, fullgraph=True)(mine, y)
    assert_same(result, y * 2 + 1)
    assert_same(mine, y * 2)
    assert cnt.frame_count == (1 if backend == "counting" else 0)


def test_assigning_data_of_another_shape_keeps_the_parameter_and_its_grad_flow():
    w = torch.nn.Parameter(torch.randn(3))

    def f(x, y):
        w.data = y
        return (w * x).sum()

    cnt = CountingBackend()
    x, y = torch.randn(4), torch.randn(4)
    framegraph.compile(f, backend=cnt, fullgraph=True)(x, y).backward()
    assert isinstance(w, torch.nn.Parameter) and w.shape == (4,) and w.requires_grad
    assert_same(w.grad, x)
    assert cnt.frame_count == 1
