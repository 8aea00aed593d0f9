"""Guard cost and automatic-dynamic recompile latency, framegraph vs torch._dynamo.

    python benchmarks/guards.py [--rounds 7] [--calls 2000]

Per-call overhead is a steady-state compiled call minus a direct call of the
captured graph (the GraphModule the backend received) with the same inputs:
what the frontend adds (hook, guard, generated code). Workloads: functions
of 1, 4 and 16 tensor inputs, and an nn.Module with 50 parameters (25
Linear layers). Both compilers use a backend that returns ``gm.forward``
(like "eager"), under ``torch.no_grad()``, in one process; each round times
compiled, graph, compiled back to back and the median difference over rounds
is reported (the machine is shared and noisy). Torch
runs with one intra-op thread, which makes the graph call (the baseline)
steady.

The last three columns repeat the measurement with a backend whose graph
does no work (``Stub``): the frontend's own cost, the same for both
compilers, without the graph's cache effects.

Recompile latency: a fresh function is called with batch 8 (first compile),
then timed on a call with batch 16, the recompile that makes dim 0 dynamic
(``dynamic=None`` in both). Median over rounds.
Targets: overhead <= 0.1x torch._dynamo's; recompile <= 0.25x.
"""
import argparse
import statistics
import time
import timeit

import torch
import torch._dynamo

import framegraph


def f1(a):
    return a + 1


def f4(a, b, c, d):
    return a + b + c + d


def f16(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p):  # noqa: E741
    return a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p


class Stub:
    """A backend whose compiled graph does no work: it returns the outputs the
    graph gave once, at compile time. A compiled call minus a call of the stub
    is the frontend's own cost, without the graph's effect on the CPU caches
    (which makes the graph itself slower after anything that runs between two
    of its calls, the guard included)."""

    def __init__(self):
        self.fn = None

    def __call__(self, gm, example_inputs):
        outputs = gm.forward(*example_inputs)

        def stub(*args):
            return outputs

        self.fn, self.inputs = stub, list(example_inputs)
        return stub


def stub_overhead(compile_fn, fn, args, rounds, calls):
    """ns per compiled call over a call of its no-op graph (median over rounds)."""
    stub = Stub()
    compiled = compile_fn(fn, stub)
    compiled(*args)
    compiled(*args)
    diffs = []
    for _ in range(rounds):
        c = timeit.timeit(lambda: compiled(*args), number=calls) / calls * 1e9
        g = timeit.timeit(lambda: stub.fn(*stub.inputs), number=calls) / calls * 1e9
        diffs.append(c - g)
    return statistics.median(diffs)


class Recorder:
    """A backend that keeps the graph it got and runs it as is."""

    def __init__(self):
        self.gm = None
        self.inputs = None

    def __call__(self, gm, example_inputs):
        self.gm, self.inputs = gm, list(example_inputs)
        return gm.forward


def workloads():
    small = [torch.randn(4) for _ in range(16)]
    model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(25)])
    assert sum(1 for _ in model.parameters()) == 50
    return [("1 tensor", f1, small[:1]), ("4 tensors", f4, small[:4]),
            ("16 tensors", f16, small[:16]), ("module, 50 params", model, [torch.randn(2, 4)])]


def per_call(compile_fn, fn, args, rounds, calls):
    """ns of overhead per compiled call: the median over rounds of (compiled call -
    bare graph call), each round timing both back to back so they share the
    machine's state (the graph itself swings by more than the overhead)."""
    rec = Recorder()
    compiled = compile_fn(fn, rec)
    compiled(*args)
    compiled(*args)
    graph, graph_args = rec.gm.forward, rec.inputs  # what the backend returned, on its inputs
    diffs = []
    for _ in range(rounds):
        c = timeit.timeit(lambda: compiled(*args), number=calls) / calls * 1e9
        g = timeit.timeit(lambda: graph(*graph_args), number=calls) / calls * 1e9
        c2 = timeit.timeit(lambda: compiled(*args), number=calls) / calls * 1e9
        diffs.append((c + c2) / 2 - g)
    return statistics.median(diffs)


def fg_compile(fn, backend):
    return framegraph.compile(fn, backend=backend)


def dynamo_compile(fn, backend):
    return torch.compile(fn, backend=backend)


def recompile_latency(compile_fn, reset, rounds):
    """Seconds for the call that recompiles f with dim 0 dynamic (median)."""
    times = []
    for _ in range(rounds):
        reset()

        def f(x):
            return (x * 2).sum(0) + x.size(0)

        compiled = compile_fn(f, "eager")
        compiled(torch.randn(8, 4))
        start = time.perf_counter()
        compiled(torch.randn(16, 4))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    torch.set_num_threads(1)  # one intra-op thread: the graph call no longer swings by 2x between rounds
    torch._dynamo.config.cache_size_limit = 64
    print("| workload | framegraph ovh (ns) | dynamo ovh (ns) | ratio (target <= 0.1) "
          "| no-op graph: fg ns | dynamo ns | ratio |")
    print("|---|---|---|---|---|---|---|")
    with torch.no_grad():
        for name, fn, inputs in workloads():
            framegraph.reset()
            torch._dynamo.reset()
            fo = per_call(fg_compile, fn, inputs, args.rounds, args.calls)
            do = per_call(dynamo_compile, fn, inputs, args.rounds, args.calls)
            framegraph.reset()
            torch._dynamo.reset()
            fs = stub_overhead(fg_compile, fn, inputs, args.rounds, args.calls)
            ds = stub_overhead(dynamo_compile, fn, inputs, args.rounds, args.calls)
            print(f"| {name} | {fo:.0f} | {do:.0f} | {fo / do:.2f} | {fs:.0f} | {ds:.0f} | {fs / ds:.2f} |")
        fr = recompile_latency(fg_compile, framegraph.reset, args.rounds)
        dr = recompile_latency(dynamo_compile, torch._dynamo.reset, args.rounds)
    print(f"| automatic-dynamic recompile | {fr * 1e3:.1f} ms | {dr * 1e3:.1f} ms | {fr / dr:.2f} "
          "(target <= 0.25) |")


if __name__ == "__main__":
    main()
