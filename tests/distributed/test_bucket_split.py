"""The DDP bucket split in one process (framegraph/backends/distributed.py).

``DDPSplit(cap, backend)`` is an ordinary backend: used directly, with no
process group, it shows what DDP gets from it. Each piece's backward runs
on its own, last piece first, so the gradients of the last layer are
accumulated (and a DDP bucket holding them can all-reduce) before backward
reaches the first layer.
"""
import types

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

import framegraph
from framegraph.backends import distributed as fgd
from framegraph.backends import lookup_backend
from framegraph.config import CompileOptions
from helpers import assert_same


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = torch.nn.Linear(8, 32), torch.nn.Linear(32, 32), torch.nn.Linear(32, 2)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


def compiled(cap):
    torch.manual_seed(0)
    net = Net()
    split = fgd.DDPSplit(cap, lookup_backend("aot_eager")[0])
    return net, framegraph.compile(net, backend=split, fullgraph=True), split


def test_pieces_follow_the_parameter_bytes_from_the_output_back(framegraph_trace):
    net, fast, split = compiled(cap=1000)  # c: 264 bytes, b: 4224, a: 1152
    x = torch.randn(4, 8)
    assert_same(fast(x), net(x))
    assert framegraph_trace.graphs == 1 and len(split.pieces) == 2 and split.param_bytes == [1152, 264 + 4224]


def test_one_bucket_is_not_split(framegraph_trace):
    net, fast, split = compiled(cap=1 << 20)
    x = torch.randn(4, 8)
    assert_same(fast(x), net(x))
    assert framegraph_trace.graphs == 1 and split.pieces == []


def test_the_last_layer_gradients_exist_before_backward_reaches_the_first(framegraph_trace):
    net, fast, split = compiled(cap=1)  # one piece per layer
    events = []
    for name, p in net.named_parameters():
        p.register_post_accumulate_grad_hook(lambda p, name=name: events.append(name))
    x = torch.randn(4, 8, requires_grad=True)
    x.register_hook(lambda g: events.append("x"))
    fast(x).sum().backward()
    assert len(split.pieces) == 3 and framegraph_trace.graphs == 1
    assert events.index("c.weight") < events.index("b.weight") < events.index("a.weight")
    assert events.index("c.weight") < events.index("x") and events.index("b.weight") < events.index("x")
    eager = Net()
    eager.load_state_dict(net.state_dict())
    x2 = x.detach().clone().requires_grad_()
    eager(x2).sum().backward()
    for p, q in zip(net.parameters(), eager.parameters()):
        assert torch.equal(p.grad, q.grad)
    assert torch.equal(x.grad, x2.grad)


def test_no_split_outside_a_ddp_forward_or_without_aot_autograd():
    aot = CompileOptions(*lookup_backend("aot_eager"))
    assert fgd.active_ddp_module() is None and fgd.backend_for(aot) is aot.backend
    DDP._active_ddp_module = types.SimpleNamespace(bucket_bytes_cap=1024)  # as DDP sets it
    try:  # around its module's call (DDP._inside_ddp_forward)
        assert isinstance(fgd.backend_for(aot), fgd.DDPSplit)
        eager = CompileOptions(*lookup_backend("eager"))
        assert fgd.backend_for(eager) is eager.backend
        with torch.no_grad():
            assert fgd.backend_for(aot) is aot.backend
        framegraph.config.optimize_ddp = False
        assert fgd.backend_for(aot) is aot.backend
    finally:
        framegraph.config.optimize_ddp = True
        DDP._active_ddp_module = None
