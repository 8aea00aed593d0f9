"""Custom operators (``torch.library.custom_op``) are one node each in the graph.

The trace runs an operator's registered fake implementation on FakeTensors;
the graph calls the operator itself, so its real kernel runs at run time and
its registered autograd formula in backward. An operator with no fake
implementation cannot be traced: the graph breaks around the call.
"""
import numpy as np
import pytest
import torch

import framegraph

from helpers import CountingBackend, assert_same, run_counted


@torch.library.custom_op("fgtest::numpy_sin", mutates_args=())
def numpy_sin(x: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.sin(x.detach().numpy()))


@numpy_sin.register_fake
def _(x):
    return torch.empty_like(x)


def _save_input(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _sin_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * x.cos()


numpy_sin.register_autograd(_sin_backward, setup_context=_save_input)


@torch.library.custom_op("fgtest::scale_into", mutates_args=("out",))
def scale_into(x: torch.Tensor, factor: float, out: torch.Tensor) -> None:
    out.copy_(x * factor)


@scale_into.register_fake
def _(x, factor, out):
    return None


@torch.library.custom_op("fgtest::no_fake", mutates_args=())
def no_fake(x: torch.Tensor) -> torch.Tensor:
    return x.clone() * 3


def test_a_custom_op_with_a_fake_implementation_is_one_node():
    def f(x):
        return numpy_sin(x) * 2 + 1

    cnt = CountingBackend()
    x = torch.randn(5)
    assert_same(framegraph.compile(f, backend=cnt, fullgraph=True)(x), f(x))
    assert cnt.frame_count == 1
    assert torch.ops.fgtest.numpy_sin.default in cnt.targets()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_custom_ops_autograd_formula_runs_in_backward(backend):
    def f(x):
        return numpy_sin(x * 2) + x

    x = torch.randn(5, requires_grad=True)
    f(x).sum().backward()
    expected = x.grad.clone()
    x.grad = None
    graphs = []

    def counting(gm, inputs):
        graphs.append(gm)
        return framegraph.backends.lookup_backend(backend)[0](gm, inputs)

    framegraph.compile(f, backend=counting, fullgraph=True)(x).sum().backward()
    assert_same(x.grad, expected)
    assert len(graphs) == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_custom_op_that_writes_its_argument_writes_it_as_in_eager(backend):
    def f(x, out):
        scale_into(x.sin(), 3.0, out)  # its result (None) unused: the node must stay
        return out + 1

    x = torch.randn(4)
    out, eager_out = torch.zeros(4), torch.zeros(4)
    graphs = []

    def counting(gm, inputs):
        graphs.append(gm)
        return framegraph.backends.lookup_backend(backend)[0](gm, inputs)

    assert_same(framegraph.compile(f, backend=counting, fullgraph=True)(x, out), f(x, eager_out))
    assert_same(out, eager_out)
    assert len(graphs) == 1


def test_a_cond_branch_that_calls_a_writing_custom_op_fails_as_in_eager():
    # torch refuses a branch that writes to an operand; so must the compiled call
    def f(x, out):
        def write(x, out):
            scale_into(x, 2.0, out)
            return x.clone()
        return torch.cond(x.sum() > 0, write, lambda x, out: x.clone(), (x, out))

    x = torch.ones(3)
    with pytest.raises(Exception) as eager:
        f(x, torch.zeros(3))
    cnt = CountingBackend()
    with pytest.raises(type(eager.value)):
        framegraph.compile(f, backend=cnt)(x, torch.zeros(3))
    assert cnt.frame_count == 1  # the predicate, before the break at the call


def test_a_custom_op_without_a_fake_implementation_breaks_the_graph():
    def f(x):
        return no_fake(x.cos()) + 1

    x = torch.randn(3)
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, f(x))
    assert not errors
    assert len(breaks) == 1 and cnt.frame_count == 2, [(b.entry.id, b.context) for b in breaks]


def test_a_branch_calling_an_aten_op_through_its_packet_stays_one_graph():
    # torch.ops.aten.sin has a mutable sin.out overload; the call without out= writes nothing
    def f(x):
        return torch.cond(x.sum() > 0, lambda x: torch.ops.aten.sin(x), lambda x: x.cos(), (x,))

    cnt = CountingBackend()
    x = torch.randn(4)
    assert_same(framegraph.compile(f, backend=cnt, fullgraph=True)(x), f(x))
    assert cnt.frame_count == 1
