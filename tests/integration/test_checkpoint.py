"""Activation checkpointing inside compiled code trains as eager does.

``checkpoint(fn, x, use_reentrant=False)`` is one ``tag_activation_checkpoint``
node holding ``fn``'s graph: the frame stays one graph, and backward
recomputes the body as eager's checkpoint does. What the operator cannot run
as eager would (the reentrant variant, random numbers drawn inside under a
backend other than Inductor) breaks the graph, and ``checkpoint`` runs with
its whole call tree untraced in forward and in backward, so both runs save
the same tensors (compiling only the forward run raised CheckpointError).
"""
import copy

import torch
import pytest
from torch._higher_order_ops.wrap import tag_activation_checkpoint
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

import framegraph
from helpers import CountingBackend, assert_same, run_counted


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x))).sin()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.head = torch.nn.Linear(8, 1)

    def forward(self, x):
        x = x * 2
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.head(x).sum()


def test_checkpointed_function_then_backward_gives_eager_gradients():
    lin = torch.nn.Linear(4, 4)

    def inner(x):
        return torch.relu(lin(x)).sin()

    def f(x):
        y = checkpoint(inner, x, use_reentrant=False)
        return (y * 2).sum()

    x = torch.randn(3, 4, requires_grad=True)
    expected = f(x)
    expected.backward()
    want = (x.grad.clone(), lin.weight.grad.clone())
    x.grad = lin.weight.grad = None
    result, cnt, breaks, errors = run_counted(f, x)
    result.backward()
    assert_same(result, expected)
    assert_same((x.grad, lin.weight.grad), want)
    assert not errors
    assert (cnt.frame_count, breaks) == (1, [])
    assert tag_activation_checkpoint in cnt.targets()


def test_training_steps_with_checkpointed_blocks_match_eager():
    torch.manual_seed(0)
    eager_net = Net()
    net = copy.deepcopy(eager_net)
    eager_opt = torch.optim.SGD(eager_net.parameters(), lr=0.1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    cnt = CountingBackend()
    forward = framegraph.compile(net.forward, backend=cnt, fullgraph=True)
    for step in range(3):
        x = torch.randn(5, 8, generator=torch.Generator().manual_seed(step))
        eager_opt.zero_grad()
        eager_net(x).backward()
        eager_opt.step()
        opt.zero_grad()
        forward(x).backward()
        opt.step()
    for p, q in zip(net.parameters(), eager_net.parameters()):
        torch.testing.assert_close(p, q)
    # the whole forward with both checkpointed blocks inside, kept for every step
    assert cnt.frame_count == 1
    assert cnt.targets().count(tag_activation_checkpoint) == 2


def test_checkpoint_sequential_matches_eager():
    torch.manual_seed(0)
    seq = torch.nn.Sequential(*[torch.nn.Linear(6, 6) for _ in range(4)])

    def f(x):
        return checkpoint_sequential(seq, 2, x, use_reentrant=False).pow(2).sum()

    x = torch.randn(2, 6, requires_grad=True)
    expected = f(x)
    expected.backward()
    want = x.grad.clone()
    x.grad = None
    result, cnt, breaks, errors = run_counted(f, x)
    result.backward()
    assert_same(result, expected)
    assert_same(x.grad, want)
    assert not errors and cnt.frame_count == 1


def backward_of(f, x, params):
    """f(x), then x's and params' gradients after a backward of its sum."""
    params = list(params)
    out = f(x)
    out.sum().backward()
    grads = [t.grad.clone() for t in (x, *params)]
    for t in (x, *params):
        t.grad = None
    return out, grads


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_checkpointed_block_with_constant_arguments_is_one_graph(backend):
    lin = torch.nn.Linear(4, 4)

    def block(x, scale, mask=None, *, shift):
        y = lin(x) * scale + shift
        return y if mask is None else y.masked_fill(mask, 0.0)

    def f(x):
        h = x.cos()
        return checkpoint(block, h, 2.0, None, shift=1.0, use_reentrant=False).tanh()

    x = torch.randn(3, 4, requires_grad=True)
    expected, want = backward_of(f, x, lin.parameters())
    cnt = CountingBackend()
    graphs = []

    def counting(gm, inputs):
        graphs.append(gm)
        return framegraph.backends.lookup_backend(backend)[0](gm, inputs)

    compiled = framegraph.compile(f, backend=counting, fullgraph=True)
    got, grads = backward_of(compiled, x, lin.parameters())
    assert_same(got, expected)
    assert_same(grads, want)
    assert len(graphs) == 1
    assert tag_activation_checkpoint in [n.target for n in graphs[0].graph.nodes]


def test_reentrant_checkpoint_breaks_and_runs_as_eager():
    lin = torch.nn.Linear(4, 4)

    def f(x):
        return checkpoint(lambda t: lin(t).relu(), x * 2, use_reentrant=True).sum()

    x = torch.randn(2, 4, requires_grad=True)
    expected, want = backward_of(f, x, lin.parameters())
    result, cnt, breaks, errors = run_counted(f, x)
    result.sum().backward()
    assert_same(result, expected)
    assert_same([x.grad, *(p.grad for p in lin.parameters())], want)
    assert not errors
    assert [b.entry.id for b in breaks] == ["unsupported_call"] and cnt.frame_count == 2  # x * 2, .sum()
    assert "use_reentrant" in breaks[0].context


def test_dropout_inside_a_checkpoint_breaks_under_eager_backends():
    # the operator does not keep the RNG state: a recomputed dropout would draw another mask
    drop = torch.nn.Dropout(0.5)

    def f(x):
        return checkpoint(lambda t: drop(t.sin()), x, use_reentrant=False) * 3

    x = torch.randn(64, requires_grad=True)
    torch.manual_seed(1)
    expected, want = backward_of(f, x, [])
    torch.manual_seed(1)
    result, cnt, breaks, errors = run_counted(f, x)
    result.sum().backward()
    assert_same(result, expected)
    assert_same([x.grad], want)
    assert not errors
    assert [b.entry.id for b in breaks] == ["unsupported_call"] and cnt.frame_count == 1  # * 3
    assert "random" in breaks[0].context


def test_dropout_inside_a_checkpoint_under_aot_eager_is_one_graph_with_one_mask():
    drop, lin = torch.nn.Dropout(0.5), torch.nn.Linear(16, 16)

    def f(x):
        return checkpoint(lambda t: drop(lin(t)), x, use_reentrant=False)

    x = torch.randn(8, 16, requires_grad=True)
    graphs = []

    def counting(gm, inputs):
        graphs.append(gm)
        return framegraph.backends.lookup_backend("aot_eager")[0](gm, inputs)

    counting.__name__ = "aot_eager"  # the backend's name decides whether its draws are kept
    out = framegraph.compile(f, backend=counting, fullgraph=True)(x)
    out.sum().backward()
    # backward saw forward's mask: x's gradient is what that mask gives
    kept = (out != 0).float() * 2.0
    assert_same(x.grad, (kept @ lin.weight).detach())
    assert len(graphs) == 1
