"""optimizer.step() under framegraph and under torch.compile, in one run.

For SGD (momentum), Adam and AdamW over ``--params`` parameters of shape
``--shape``: the per-step time of eager ``opt.step()``, of
``framegraph.compile(opt.step, backend="eager")`` and of
``torch.compile(opt.step, backend="eager")``, plus the graphs each captured
and whether framegraph's parameters are bitwise equal to eager's after the
timed steps. Each variant has its own optimizer over its own copy of the same
parameters and gradients; the first step (which creates the optimizer state)
is a warm-up, not timed.

Times are the best of ``--repeats`` medians of ``--steps`` steps, variants
interleaved, on one thread, so the numbers are stable on a shared machine.

    .venv/bin/python benchmarks/optimizers.py
    .venv/bin/python benchmarks/optimizers.py --foreach   # the multi-tensor implementations
    .venv/bin/python benchmarks/optimizers.py --readme   # append the table to README.md
"""
import argparse
import datetime
import os
import statistics
import time

import torch

import framegraph

KINDS = {
    "SGD": (torch.optim.SGD, dict(lr=0.01, momentum=0.9, weight_decay=1e-4)),
    "Adam": (torch.optim.Adam, dict(lr=0.01)),
    "AdamW": (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.01)),
}


FOREACH = False  # --foreach: the multi-tensor implementations (torch._foreach_* ops)


def make(kind, n, shape):
    gen = torch.Generator().manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(*shape, generator=gen)) for _ in range(n)]
    for p in params:
        p.grad = torch.randn(*shape, generator=gen)
    cls, kwargs = KINDS[kind]
    return params, cls(params, foreach=FOREACH, **kwargs)


def median_us(step, steps):
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


class _Counting:
    """The ``eager`` backend, counting the graphs it is given."""

    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


def warm(step):
    step()
    step()  # the first step creates the state (framegraph runs it eagerly); this one is traced
    return step


def best_of(steps_of, steps, repeats):
    best = {name: float("inf") for name in steps_of}
    for _ in range(repeats):  # interleaved, so load on the machine hits every variant alike
        for name, step in steps_of.items():
            best[name] = min(best[name], median_us(step, steps))
    return best


def run_framegraph(kind, n, shape, steps, repeats):
    """eager vs framegraph: (times, graphs, bitwise equal after the same steps)."""
    (p_eager, eager), (p_fg, fg) = make(kind, n, shape), make(kind, n, shape)
    backend = _Counting()
    steps_of = {"eager": warm(eager.step), "framegraph": warm(framegraph.compile(fg.step, backend=backend))}
    best = best_of(steps_of, steps, repeats)
    same = all(torch.equal(a, b) for a, b in zip(p_eager, p_fg))
    return best, backend.graphs, same


def run_dynamo(kind, n, shape, steps, repeats):
    """eager vs torch.compile. Run after every framegraph run: torch.compile of an
    optimizer leaves torch._disable_dynamo wrappers behind, which framegraph refuses."""
    (_, eager), (_, dyn) = make(kind, n, shape), make(kind, n, shape)
    steps_of = {"eager": warm(eager.step), "dynamo": warm(torch.compile(dyn.step, backend="eager"))}
    return best_of(steps_of, steps, repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=int, default=50)
    parser.add_argument("--shape", type=int, nargs="+", default=[64, 64])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--foreach", action="store_true", help="foreach=True optimizers")
    parser.add_argument("--readme", action="store_true", help="append the table to benchmarks/README.md")
    args = parser.parse_args()
    global FOREACH
    FOREACH = args.foreach
    torch.set_num_threads(1)
    lines = ["| optimizer | eager us/step | framegraph us (x eager) | torch.compile us (x eager) "
             "| fg graphs | fg bitwise == eager |", "|---|---|---|---|---|---|"]
    shape = tuple(args.shape)
    results = {k: run_framegraph(k, args.params, shape, args.steps, args.repeats) for k in KINDS}
    for kind, (best, graphs, same) in results.items():
        dyn = run_dynamo(kind, args.params, shape, args.steps, args.repeats)
        e, fg = best["eager"], best["framegraph"]
        d = dyn["dynamo"] * e / dyn["eager"]  # dynamo's ratio to its own eager run, in this run's eager
        lines.append(f"| {kind} | {e:.0f} | {fg:.0f} ({fg / e:.2f}) | {d:.0f} ({dyn['dynamo'] / dyn['eager']:.2f}) "
                     f"| {graphs} | {same} |")
        print(lines[-1], flush=True)
    table = "\n".join(lines)
    print()
    print(table)
    if args.readme:
        shape = "x".join(map(str, args.shape))
        path = os.path.join(os.path.dirname(__file__), "README.md")
        with open(path, "a") as f:
            f.write(f"\n## Optimizer step ({datetime.date.today()}, `benchmarks/optimizers.py`)\n\n"
                    f"{args.params} parameters of {shape}, backend `eager`, one thread, best of "
                    f"{args.repeats} medians of {args.steps} steps:\n\n{table}\n")


if __name__ == "__main__":
    main()
