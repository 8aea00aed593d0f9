"""Activation checkpointing inside compiled code trains as eager does.

``torch.utils.checkpoint`` runs the checkpointed function in forward and
again in backward, where no compiled call is active. Its call tree runs
untraced in both runs (a break around the call), so both save the same
tensors; compiling only the forward run raised CheckpointError.
"""
import copy

import torch
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

from helpers import assert_same, run_counted


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
    assert (cnt.frame_count, [b.entry.id for b in breaks]) == (1, ["unsupported_call"])


def test_training_steps_with_checkpointed_blocks_match_eager():
    torch.manual_seed(0)
    eager_net = Net()
    net = copy.deepcopy(eager_net)
    eager_opt = torch.optim.SGD(eager_net.parameters(), lr=0.1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    graphs = []
    for step in range(3):
        x = torch.randn(5, 8, generator=torch.Generator().manual_seed(step))
        eager_opt.zero_grad()
        eager_net(x).backward()
        eager_opt.step()
        opt.zero_grad()
        loss, cnt, breaks, errors = run_counted(net.forward, x)
        loss.backward()
        opt.step()
        assert not errors
        graphs.append(cnt.frame_count)
    for p, q in zip(net.parameters(), eager_net.parameters()):
        torch.testing.assert_close(p, q)
    # x * 2, then one resume per checkpoint call: the head's graph after the last one
    assert graphs[0] == 2


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
