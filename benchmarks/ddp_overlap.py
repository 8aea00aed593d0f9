"""DDP on 2 gloo processes: does all-reduce start before backward ends, and a step's time.

One run, each variant on the same 2 processes, the same MLP (``--layers``
Linear(``--width``, ``--width``) with ReLU), the same batches and a bucket
cap that gives about one bucket per layer (``--bucket-mb``):

* ``eager``: DDP as it is;
* ``fg aot_eager`` / ``fg inductor``: ``framegraph.compile(DDP(model))``, whose
  graph is split at DDP's bucket boundaries (framegraph/backends/distributed.py);
* ``fg aot_eager DDP(compile)``: the other wrapping order, ``DDP(framegraph.compile(model))``;
* ``fg aot_eager unsplit``: the same with ``framegraph.config.optimize_ddp = False``,
  one graph whose backward produces every gradient at its end;
* ``torch.compile aot_eager`` / ``torch.compile inductor``: ``torch.compile(DDP(model))``
  (torch._dynamo's DDPOptimizer splits the same way).

A DDP communication hook records when each bucket's all-reduce is launched
(the bucket is ready: all its gradients exist), relative to the start of
``loss.backward()``; ``first`` and ``last`` are the first and last bucket's
launch, ``bwd`` the time backward returns (DDP waits for the all-reduces
there). With overlap, the first all-reduce starts long before the last bucket
is ready; without it, every bucket becomes ready at once at the end.
``step`` is the median time of a whole training step (forward, backward, SGD
step) over ``--steps`` steps after ``--warmup``, on rank 0.

    .venv/bin/python benchmarks/ddp_overlap.py
    .venv/bin/python benchmarks/ddp_overlap.py --no-inductor   # skip the C++ compiles (minutes)
"""
import argparse
import os
import socket
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def make_model(layers, width):
    torch.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return MLP(torch.nn.ModuleList(mods))


class MLP(torch.nn.Module):
    """A user module (its forward is traced as a frame of its own under DDP)."""

    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Timeline:
    """A comm hook: all-reduce (mean) each bucket, recording when it was launched."""

    def __init__(self):
        self.launches = []

    def hook(self, state, bucket):
        self.launches.append(time.perf_counter())
        buf = bucket.buffer().div_(dist.get_world_size())
        return dist.all_reduce(buf, async_op=True).get_future().then(lambda fut: fut.value()[0])


def build(variant, model, bucket_mb):
    """(DDP module, what the step calls) for one variant."""
    import framegraph

    if variant.startswith("fg "):
        framegraph.config.optimize_ddp = not variant.endswith("unsplit")
        backend = variant.split()[1]
        if variant.endswith("DDP(compile)"):
            ddp = DDP(framegraph.compile(model, backend=backend), bucket_cap_mb=bucket_mb)
            return ddp, ddp
        ddp = DDP(model, bucket_cap_mb=bucket_mb)
        return ddp, framegraph.compile(ddp, backend=backend)
    ddp = DDP(model, bucket_cap_mb=bucket_mb)
    if variant.startswith("torch.compile "):
        return ddp, torch.compile(ddp, backend=variant.split()[1])
    return ddp, ddp


def run_variant(rank, args, variant):
    ddp, model = build(variant, make_model(args.layers, args.width), args.bucket_mb)
    timeline = Timeline()
    ddp.register_comm_hook(None, timeline.hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(rank)
    xs = [torch.randn(args.batch, args.width, generator=gen) for _ in range(4)]
    steps, marks = [], []
    t_compile = time.perf_counter()
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            t_compile = time.perf_counter() - t_compile
        dist.barrier()
        t0 = time.perf_counter()
        loss = model(xs[i % len(xs)]).square().mean()
        timeline.launches.clear()
        tb = time.perf_counter()
        loss.backward()
        te = time.perf_counter()
        opt.step()
        opt.zero_grad()
        t1 = time.perf_counter()
        if i >= args.warmup:
            steps.append(t1 - t0)
            marks.append((tb - t0, [t - tb for t in timeline.launches], te - tb))
    params = [p.detach().clone() for p in ddp.parameters()]
    return {"step": statistics.median(steps), "compile": t_compile, "marks": marks, "params": params,
            "buckets": len(marks[-1][1])}


def worker(rank, world, port, args, out):
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    results = {}
    for variant in args.variants:
        results[variant] = run_variant(rank, args, variant)
        import framegraph
        framegraph.reset()
        torch._dynamo.reset()
    dist.destroy_process_group()
    if rank == 0:
        torch.save(results, out)


def summarize(results):
    eager = results["eager"]
    rows = ["| variant | buckets | first all-reduce ms | last ms | backward ms | overlap | step ms | vs eager | "
            "warm-up s | params = eager |", "|---|---|---|---|---|---|---|---|---|---|"]
    for variant, r in results.items():
        firsts = statistics.median(m[1][0] for m in r["marks"]) * 1e3
        lasts = statistics.median(m[1][-1] for m in r["marks"]) * 1e3
        bwd = statistics.median(m[2] for m in r["marks"]) * 1e3
        same = all(torch.equal(a, b) for a, b in zip(r["params"], eager["params"]))
        close = same or all(torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(r["params"], eager["params"]))
        rows.append(f"| {variant} | {r['buckets']} | {firsts:.1f} | {lasts:.1f} | {bwd:.1f} | "
                    f"{'yes' if firsts < 0.5 * lasts else 'no'} | {r['step'] * 1e3:.1f} | "
                    f"{r['step'] / eager['step']:.2f} | {r['compile']:.1f} | "
                    f"{'bitwise' if same else 'close' if close else 'NO'} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--bucket-mb", type=float, default=4.0)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-inductor", action="store_true")
    args = parser.parse_args()
    args.variants = ["eager", "fg aot_eager", "fg aot_eager DDP(compile)", "fg aot_eager unsplit",
                     "torch.compile aot_eager"]
    if not args.no_inductor:
        args.variants += ["fg inductor", "torch.compile inductor"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results.pt")
        mp.spawn(worker, args=(2, port, args, out), nprocs=2, join=True)
        results = torch.load(out, weights_only=False)
    print(f"{args.layers} x Linear({args.width}, {args.width}), batch {args.batch}, "
          f"bucket cap {args.bucket_mb} MB, 2 gloo processes x {args.threads} thread, "
          f"median of {args.steps} steps, rank 0; times from the start of loss.backward()")
    print(summarize(results))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
