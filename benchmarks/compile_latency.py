"""First-call latency and per-call overhead: framegraph vs torch._dynamo vs eager.

    python benchmarks/compile_latency.py [--workloads f,mlp,...] [--calls 2000]

Workloads: the brief's ``f`` (``examples/brief.py``), a 3-layer MLP, a loop
over a list of 50 tensors, a chain of 20 helper functions and a transformer
block; and three with graph breaks: the brief's ``g`` (two graphs, one break),
``breaks5`` (six graphs, five breaks) and ``train`` (forward, loss,
``backward()``: a break at the backward call), which run with grad mode on.

* **first call**: each (workload, compiler) runs in a fresh process, with the
  compiler and torch already imported and the inputs built; the time of the
  first call (trace + backend ``eager`` + run) is reported.
* **per call**: in one process, the steady-state time of a compiled call
  minus the time of calling the captured graph directly (the "bare graph"),
  i.e. what guards, the hook and the generated code cost.

Both compilers use backend ``eager``. Results are printed as a table with the
ratios to torch._dynamo (targets: first call <= 0.2x, per-call overhead
<= 0.1x). Nothing here is asserted in tests.
"""
import argparse
import json
import os
import subprocess
import sys
import timeit

WORKLOADS = ("f", "mlp", "loop50", "chain20", "transformer", "g", "breaks5", "train")
WITH_GRAD = ("train",)


def build(name):
    """(function, args) of a workload."""
    import torch
    from torch import nn

    if name == "f":
        def f(x):
            return torch.sin(x) + 1
        return f, (torch.randn(8),)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                              nn.Linear(128, 10))
        return model, (torch.randn(32, 64),)
    if name == "loop50":
        def loop(xs):
            total = xs[0]
            for x in xs[1:]:
                total = total + x * 2
            return total
        return loop, ([torch.randn(16) for _ in range(50)],)
    if name == "chain20":
        return _chain(20), (torch.randn(16),)
    if name == "transformer":
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True).eval()
        return layer, (torch.randn(2, 16, 64),)
    return _with_breaks(name)


def _with_breaks(name):
    """The workloads with graph breaks: ``g``, ``breaks5`` and ``train``."""
    import torch
    from torch import nn

    if name == "g":
        def g(x):
            if x.sum() > 0:
                return x * 2
            return x + 1
        return g, (torch.randn(8),)
    if name == "breaks5":
        def breaks5(x):
            for _ in range(5):
                x = torch.sin(x) * 2
                print(end="")  # a graph break
            return x + 1
        return breaks5, (torch.randn(8),)
    if name == "train":
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))

        def step(x, y):
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss.detach()
        return step, (torch.randn(16, 32), torch.randn(16, 1))
    raise ValueError(name)


def _grad_mode(workload):
    import torch

    return torch.enable_grad() if workload in WITH_GRAD else torch.no_grad()


def _chain(n):
    """A function calling n nested helpers (each one op), built with exec."""
    import torch

    ns = {"torch": torch}
    src = "def h0(x):\n    return x + 1\n"
    for i in range(1, n):
        src += f"def h{i}(x):\n    return h{i - 1}(x) * 1.0001\n"
    src += f"def chain(x):\n    return h{n - 1}(x)\n"
    exec(compile(src, "<chain>", "exec"), ns)  # noqa: S102
    return ns["chain"]


def compiler(kind):
    """compile(fn) -> compiled callable, plus a way to get the bare graph back."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append((gm.forward, list(example_inputs)))
        return gm.forward

    if kind == "framegraph":
        import framegraph

        return (lambda fn: framegraph.compile(fn, backend=backend)), graphs
    if kind == "dynamo":
        import torch

        return (lambda fn: torch.compile(fn, backend=backend)), graphs
    return (lambda fn: fn), graphs


def first_call(workload, kind):
    """Run in a child process: time the first call only."""
    import time

    import torch

    compile_fn, _ = compiler(kind)
    _import_compiler(kind)
    fn, args = build(workload)
    compiled = compile_fn(fn)
    with _grad_mode(workload):
        start = time.perf_counter()
        compiled(*args)
        return time.perf_counter() - start


def _import_compiler(kind):
    """'Compiler already imported': load what the first trace would import.

    FakeTensorMode() imports torch._dynamo.config, i.e. all of torch._dynamo
    (about 3 s here): framegraph pays it on its first trace too.
    """
    if kind == "framegraph":
        import framegraph.runtime.pipeline  # noqa: F401
        from torch._subclasses.fake_tensor import FakeTensorMode

        FakeTensorMode()
    elif kind == "dynamo":
        import torch._dynamo  # noqa: F401


def per_call(workload, kind, calls):
    """(compiled call, bare graph call) in seconds; the bare call gets the real inputs."""
    import torch

    compile_fn, graphs = compiler(kind)
    fn, args = build(workload)
    compiled = compile_fn(fn)
    with _grad_mode(workload):
        compiled(*args)
        t_call = min(timeit.repeat(lambda: compiled(*args), number=calls, repeat=5)) / calls
        if len(graphs) != 1:
            return t_call, None
        bare, inputs = graphs[0]
        t_bare = min(timeit.repeat(lambda: bare(*inputs), number=calls, repeat=5)) / calls
    return t_call, t_bare


def _child(workload, kind):
    cmd = [sys.executable, __file__, "--child", workload, kind]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.getcwd()))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(first_call(*args.child)))
        return
    rows = []
    for w in args.workloads.split(","):
        first = {k: _child(w, k) for k in ("eager", "framegraph", "dynamo")}
        calls = {k: per_call(w, k, args.calls) for k in ("eager", "framegraph", "dynamo")}
        rows.append((w, first, calls))
    _print(rows)


def _print(rows):
    head = (f"{'workload':12} {'1st eager':>10} {'1st fg':>10} {'1st dynamo':>11} {'ratio':>6} | "
            f"{'call eager':>10} {'call fg':>9} {'call dyn':>9} {'fg ovh':>8} {'dyn ovh':>8}")
    print(head)
    us = 1e6
    for w, first, calls in rows:
        ratio = first["framegraph"] / first["dynamo"]
        fg_call, fg_bare = calls["framegraph"]
        dyn_call, dyn_bare = calls["dynamo"]
        fg_ovh = (fg_call - fg_bare) * us if fg_bare else float("nan")
        dyn_ovh = (dyn_call - dyn_bare) * us if dyn_bare else float("nan")
        print(f"{w:12} {first['eager'] * 1e3:9.2f}ms {first['framegraph'] * 1e3:9.1f}ms "
              f"{first['dynamo'] * 1e3:10.1f}ms {ratio:6.2f} | {calls['eager'][0] * us:8.1f}us "
              f"{fg_call * us:7.1f}us {dyn_call * us:7.1f}us {fg_ovh:6.1f}us {dyn_ovh:6.1f}us")


if __name__ == "__main__":
    main()
