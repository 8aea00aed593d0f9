"""Custom ``torch.autograd.Function``s called in compiled code: one graph node
that calls ``apply``, so the user's backward runs as in eager."""
import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, run_counted


class ScaledGrad(torch.autograd.Function):
    """Forward multiplies by k; backward deliberately is not forward's derivative."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ctx.k * 10 + x, None


class ClampGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark = ctx.needs_input_grad[0]
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-1, 1)


LOG = []


class Logs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        LOG.append("forward")
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class Drops(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.nn.functional.dropout(x, 0.5, training=True)

    @staticmethod
    def backward(ctx, grad):
        return grad


class Legendre3(torch.autograd.Function):
    """The new style: forward without ctx, setup_context saves what backward needs."""

    @staticmethod
    def forward(x):
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.mark_non_differentiable()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 1.5 * (5 * x ** 2 - 1)


def grads_of(fn, *inputs):
    for t in inputs:
        t.grad = None
    out = fn(*inputs)
    out.backward()
    return out, [t.grad.clone() for t in inputs]


def test_a_custom_function_is_one_graph_and_its_backward_runs():
    def f(x):
        y = ScaledGrad.apply(x.sin(), 3.0)
        return ClampGrad.apply(y).cos().sum()

    x = torch.randn(5, requires_grad=True)
    expected, want = grads_of(f, x)
    cnt = CountingBackend()
    got, have = grads_of(framegraph.compile(f, backend=cnt, fullgraph=True), x)
    assert_same(got, expected)
    assert_same(have, want)
    assert cnt.frame_count == 1


def test_with_aot_autograd_the_custom_backward_is_in_the_backward_graph():
    def f(x):
        return ScaledGrad.apply(x * 2, 0.5).sum()

    x = torch.randn(4, requires_grad=True)
    expected, want = grads_of(f, x)
    got, have = grads_of(framegraph.compile(f, backend="aot_eager", fullgraph=True), x)
    assert_same(got, expected)
    assert_same(have, want)


@pytest.mark.parametrize("backend", ["counting", "aot_eager"])
def test_a_function_with_setup_context_is_one_graph_and_its_backward_runs(backend):
    def f(x, w):
        return (Legendre3.apply(x) * w).sum()

    x, w = torch.randn(6, requires_grad=True), torch.randn(6, requires_grad=True)
    expected, want = grads_of(f, x, w)
    cnt = CountingBackend()
    got, have = grads_of(framegraph.compile(f, backend=cnt if backend == "counting" else backend,
                                            fullgraph=True), x, w)
    assert_same(got, expected)
    assert_same(have, want)
    assert cnt.frame_count == (1 if backend == "counting" else 0)


def test_forward_with_a_side_effect_breaks_the_graph_and_runs_once():
    def f(x):
        y = x + 1
        return Logs.apply(y).sum() * 2

    x = torch.randn(3)
    LOG.clear()
    expected = f(x)
    assert LOG == ["forward"]
    LOG.clear()
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, expected)
    assert LOG == ["forward"]  # never run at trace time
    # x + 1; then forward itself, compiled when apply calls it (the append
    # replayed after its graph); then the resume function's sum
    assert (cnt.frame_count, [b.entry.id for b in breaks], errors) == (3, ["side_effect"], [])


def test_forward_with_a_random_op_breaks_the_graph():
    def f(x):
        return Drops.apply(x + 1).sum()

    x = torch.randn(8)
    torch.manual_seed(0)
    expected = f(x)
    torch.manual_seed(0)
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, expected)
    assert [b.entry.id for b in breaks] == ["side_effect"] and not errors
