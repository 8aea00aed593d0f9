"""The model zoo under framegraph and under torch.compile, in one run.

For each zoo model (benchmarks/zoo.py), inference forward under no_grad:

* eager per-call time;
* framegraph with backend ``eager``: first-call latency (trace + compile +
  run), per-call time, graphs and breaks; the captured graph called directly
  (``bare``: what the eager backend's per-call time is compared with);
* framegraph with ``inductor``: first-call latency, per-call time;
* torch.compile (torch._dynamo) with the same two backends, same numbers.

Before the first model, both frontends compile a small unrelated module once
(`warm_up`): the first compile in a process pays one-time costs (imports,
first calls of kernels and meta functions) that would otherwise land on
whichever frontend runs first. framegraph then runs before torch._dynamo on
each model, so FakeTensorMode's process-wide cache favours torch._dynamo.

Per-call times are medians over ``--calls`` calls after two warm-up calls, on
one thread (``torch.set_num_threads(1)``) so that the numbers are stable on a
shared machine. Prints a markdown table; ``--readme`` appends it, dated, to
benchmarks/README.md.

    .venv/bin/python benchmarks/models.py                    # all models, all backends
    .venv/bin/python benchmarks/models.py --models gpt2 --no-inductor
"""
import argparse
import datetime
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import zoo  # noqa: E402

import framegraph  # noqa: E402
from framegraph.diagnostics.records import observing  # noqa: E402


def per_call(fn, inputs, calls):
    """Median seconds of ``fn(**inputs)`` after two warm-up calls."""
    for _ in range(2):
        fn(**inputs)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn(**inputs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def first_call(fn, inputs):
    start = time.perf_counter()
    fn(**inputs)
    return time.perf_counter() - start


class Recorder:
    """A backend wrapper that keeps each graph and its inputs (for the bare-graph time)."""

    def __init__(self, backend):
        self.backend, self.graphs = backend, []

    def __call__(self, gm, example_inputs):
        self.graphs.append((gm, list(example_inputs)))
        return framegraph.backends.lookup_backend(self.backend)[0](gm, example_inputs)


def run_framegraph(model, inputs, backend, calls):
    framegraph.reset()
    recorder = Recorder(backend)
    records = []
    with observing(records.append):
        fn = framegraph.compile(model, backend=recorder)
        first = first_call(fn, inputs)
    graphs = sum(r.compiled.graph_count for r in records if r.compiled)
    breaks = sum(len(r.compiled.breaks) for r in records if r.compiled)
    breaks += sum(1 for r in records if r.error is not None)
    result = {"first": first, "call": per_call(fn, inputs, calls), "graphs": graphs, "breaks": breaks}
    if backend == "eager" and len(recorder.graphs) == 1:
        gm, example = recorder.graphs[0]
        result["bare"] = per_call(lambda: gm(*example), {}, calls)
    return result


def run_dynamo(model, inputs, backend, calls):
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        if backend == "eager":
            return gm.forward
        from torch._inductor.compile_fx import compile_fx

        return compile_fx(gm, example_inputs)

    fn = torch.compile(model, backend=counting)
    first = first_call(fn, inputs)
    breaks = sum(counters["graph_break"].values())
    return {"first": first, "call": per_call(fn, inputs, calls), "graphs": len(graphs), "breaks": breaks}


def warm_up():
    """Compile a small module of the zoo's usual ops with both frontends (eager backend)."""
    import torch._dynamo

    block = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16)).eval()
    x = torch.randn(2, 3, 8)
    with torch.no_grad():
        framegraph.compile(block, backend="eager")(x)
        torch.compile(block, backend="eager")(x)
    framegraph.reset()
    torch._dynamo.reset()


def bench(name, calls, inductor):
    model, inputs = zoo.build(name)
    row = {"model": name}
    with torch.no_grad():
        row["eager"] = per_call(model, inputs, calls)
        row["fg"] = run_framegraph(model, inputs, "eager", calls)
        row["dy"] = run_dynamo(model, inputs, "eager", calls)
        if inductor:
            row["fg_ind"] = run_framegraph(model, inputs, "inductor", calls)
            row["dy_ind"] = run_dynamo(model, inputs, "inductor", calls)
    return row


def _ms(seconds):
    return f"{seconds * 1e3:.2f}"


def table(rows):
    head = ("| model | eager ms | fg eager ms (x eager) | bare graph ms | fg/bare | dynamo eager ms | "
            "fg ind ms | dynamo ind ms | first call s: fg / dynamo (eager) | first call s: fg / dynamo "
            "(inductor) | graphs/breaks fg | graphs/breaks dynamo |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        fg, dy = r["fg"], r["dy"]
        bare = fg.get("bare")
        fgi, dyi = r.get("fg_ind"), r.get("dy_ind")
        lines.append(" | ".join([
            f"| {r['model']}", _ms(r["eager"]), f"{_ms(fg['call'])} ({fg['call'] / r['eager']:.2f})",
            _ms(bare) if bare else "-", f"{fg['call'] / bare:.2f}" if bare else "-", _ms(dy["call"]),
            _ms(fgi["call"]) if fgi else "-", _ms(dyi["call"]) if dyi else "-",
            f"{fg['first']:.2f} / {dy['first']:.2f}",
            f"{fgi['first']:.1f} / {dyi['first']:.1f}" if fgi else "-",
            f"{fg['graphs']}/{fg['breaks']}", f"{dy['graphs']}/{dy['breaks']} |"]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(zoo.ZOO))
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--readme", action="store_true", help="append the table to benchmarks/README.md")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    warm_up()
    for name in args.models.split(","):
        rows.append(bench(name, args.calls, not args.no_inductor))
        print(f"{name}: done", file=sys.stderr, flush=True)
    text = table(rows)
    print(text)
    if args.readme:
        path = os.path.join(os.path.dirname(__file__), "README.md")
        with open(path, "a") as f:
            f.write(f"\n## Model zoo, {datetime.date.today()} (benchmarks/models.py, 1 thread, "
                    f"median of {args.calls} calls)\n\n{text}\n")


if __name__ == "__main__":
    main()
