"""What each of the 2 processes of tests/distributed/test_ddp.py runs (spawned: module level)."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

import framegraph
from framegraph.backends import distributed as fg_distributed

STEPS = 3


class Net(torch.nn.Module):
    """Three linear layers: with a small bucket cap DDP makes three buckets."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 64)
        self.b = torch.nn.Linear(64, 64)
        self.c = torch.nn.Linear(64, 4)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.tanh(self.a(x)))))


BUCKET_MB = 1024 / 2**20  # 1 KiB: c (1040 bytes), b and a each fill a bucket of their own


def sequential():
    """Net's layers as torch's own nn.Sequential (whose forward is torch's code)."""
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64),
                               torch.nn.ReLU(), torch.nn.Linear(64, 4))


def train(rank, wrap, make=Net):
    """(grads, params) after each of STEPS SGD steps of the model ``wrap`` builds."""
    torch.manual_seed(0)
    model = wrap(make())
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    gen = torch.Generator().manual_seed(100 + rank)  # each rank its own batch
    history = []
    for _ in range(STEPS):
        x = torch.randn(8, 16, generator=gen)
        opt.zero_grad()
        model(x).square().mean().backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
        history.append((grads, [p.detach().clone() for p in model.parameters()]))
    return history, model


def ddp_buckets(ddp):
    """The bytes of each of DDP's gradient buckets (rebuilt after the first step), in its order."""
    return [b.buffer().numel() * b.buffer().element_size() for b in ddp.reducer._get_zeros_like_grad_buckets()]


def same_bitwise(a, b):
    return all(torch.equal(x, y) for (ga, pa), (gb, pb) in zip(a, b) for x, y in zip(ga + pa, gb + pb))


def compiled_scenario(rank, order, backend, make=Net):
    """Train eager DDP and compiled DDP in ``order``; what the test checks."""
    from framegraph_pytest import TraceWatch

    ddp = lambda m: DDP(m, bucket_cap_mb=BUCKET_MB)  # noqa: E731
    eager, eager_ddp = train(rank, ddp, make)
    if order == "compile(DDP(model))":
        wrap = lambda m: framegraph.compile(ddp(m), backend=backend)  # noqa: E731
    else:
        wrap = lambda m: ddp(framegraph.compile(m, backend=backend))  # noqa: E731
    watch, splits = TraceWatch(), []
    with watch.observing(), fg_distributed.observing(splits.append):
        compiled, _ = train(rank, wrap, make)
    framegraph.reset()
    return {"same": same_bitwise(eager, compiled), "graphs": watch.graphs, "frames": watch.frames,
            "problems": watch.problems(), "pieces": [len(s.pieces) for s in splits],
            "piece_bytes": [s.param_bytes for s in splits], "ddp_buckets": ddp_buckets(eager_ddp)}


def ddp_worker(rank, world_size):
    results = {(order, backend): compiled_scenario(rank, order, backend)
               for order in ("compile(DDP(model))", "DDP(compile(model))")
               for backend in ("eager", "aot_eager")}
    results["varied"] = varied_worker(rank, world_size)
    results["sequential"] = compiled_scenario(rank, "compile(DDP(model))", "aot_eager", make=sequential)
    for option in OPTIONS:
        results[option] = options_scenario(rank, option)
    return results


OPTIONS = ("find_unused_parameters", "static_graph", "gradient_as_bucket_view")


def options_scenario(rank, option):
    """compile(DDP(Net, option=True)) with aot_eager (split) against eager DDP with it."""
    from framegraph_pytest import TraceWatch

    ddp = lambda m: DDP(m, bucket_cap_mb=BUCKET_MB, **{option: True})  # noqa: E731
    eager, _ = train(rank, ddp)
    watch, splits = TraceWatch(), []
    with watch.observing(), fg_distributed.observing(splits.append):
        compiled, _ = train(rank, lambda m: framegraph.compile(ddp(m), backend="aot_eager"))
    framegraph.reset()
    return {"same": same_bitwise(eager, compiled), "graphs": watch.graphs, "frames": watch.frames,
            "problems": watch.problems(), "pieces": [len(s.pieces) for s in splits]}


class NormNet(torch.nn.Module):
    """BatchNorm's running statistics (buffers updated in place, broadcast by DDP
    before each forward) and two outputs, one of them in a dict."""

    def __init__(self):
        super().__init__()
        self.a, self.norm, self.b = torch.nn.Linear(16, 64), torch.nn.BatchNorm1d(64), torch.nn.Linear(64, 4)

    def forward(self, x):
        h = self.norm(self.a(x))
        return self.b(torch.relu(h)), {"mean": h.mean()}


def train_varied(rank, wrap, sizes=(8, 6, 4, 6)):
    """NormNet trained on batches of changing size: a recompile, then a symbolic batch."""
    torch.manual_seed(0)
    model = wrap(NormNet())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)
    history = []
    for n in sizes:
        opt.zero_grad()
        out, aux = model(torch.randn(n, 16, generator=gen))
        (out.square().mean() + aux["mean"]).backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
        state = [p.detach().clone() for p in model.parameters()] + [b.clone() for b in model.buffers()]
        history.append((grads, state))
    return history, model


def varied_worker(rank, world_size):  # noqa: ARG001
    """compile(DDP(NormNet)) with aot_eager: split, recompiled for a symbolic batch size."""
    from framegraph_pytest import TraceWatch

    ddp = lambda m: DDP(m, bucket_cap_mb=BUCKET_MB)  # noqa: E731
    eager, eager_ddp = train_varied(rank, ddp)
    watch, splits = TraceWatch(), []
    with watch.observing(), fg_distributed.observing(splits.append):
        compiled, _ = train_varied(rank, lambda m: framegraph.compile(ddp(m), backend="aot_eager"))
    framegraph.reset()
    return {"same": same_bitwise(eager, compiled), "graphs": watch.graphs, "frames": watch.frames,
            "problems": watch.problems(), "pieces": [len(s.pieces) for s in splits],
            "symbolic": [s.symbolic for s in splits], "piece_bytes": [s.param_bytes for s in splits],
            "ddp_buckets": ddp_buckets(eager_ddp)}
