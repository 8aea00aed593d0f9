"""The parity zoo: every architecture of benchmarks/zoo.py (ARCHS), framegraph and torch._dynamo side by side.

    python benchmarks/zoo_parity.py [--only gpt2,bert] [--family decoder] [--json out.json] [--md out.md]

Each model runs in its own process (``--worker NAME``, started by the parent,
one after another). In it, both frontends first compile a small unrelated
module (one-time costs land on neither), then for every variant of the
model (``use_cache=False`` and the default cache where ``forward`` takes
``use_cache``; ``eager`` and ``sdpa`` attention where the model has both),
each frontend with the same counting pass-through backend (what backend
``eager`` does), under ``torch.no_grad()`` on one thread:

* graphs after the first call, and graph breaks with their reasons
  (framegraph: catalogue ids; torch._dynamo: its ``graph_break`` counters);
* recompiles: graphs added and frames traced again over five steady calls;
* whether every output tensor equals eager's (``exact``, ``close`` within
  1e-4, or ``MISMATCH``), on the first and the steady calls;
* first-call seconds (trace, compile and run) and the steady per-call median,
  as ratios of framegraph's to torch._dynamo's;
* where torch._dynamo gives one graph, whether framegraph's
  ``fullgraph=True`` compiles.

framegraph runs before torch._dynamo on each variant. A crash of either
frontend is recorded with its message; a worker that dies or runs past
``--timeout`` is recorded as such. ``--json`` keeps every row; ``--md`` writes
the table and the summary (median first-call ratio, per-call ratios).
"""
import argparse
import collections
import inspect
import json
import logging
import os
import statistics
import subprocess
import sys
import time
import traceback
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.dirname(__file__))

STEADY = 5
TOL = dict(rtol=1e-4, atol=1e-5)


# --- one model, in the worker process ---------------------------------------------------------

class Counter:
    """A pass-through backend that counts the graphs it is given."""

    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


def tensors(value, out=None):
    """Every tensor of a model output, in a fixed order (ModelOutput, tuples, dicts, caches)."""
    import torch

    out = [] if out is None else out
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            tensors(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            tensors(v, out)
    elif hasattr(value, "layers"):  # a transformers Cache: its layers' keys and values
        for layer in value.layers:
            tensors([getattr(layer, "keys", None), getattr(layer, "values", None)], out)
    return out


def compare(got, expected):
    """'exact', 'close' or 'MISMATCH' for two outputs of the same model."""
    import torch

    a, b = tensors(got), tensors(expected)
    if len(a) != len(b) or any(x.shape != y.shape for x, y in zip(a, b)):
        return "MISMATCH"
    if all(torch.equal(x, y) for x, y in zip(a, b)):
        return "exact"
    if all(torch.allclose(x.float(), y.float(), **TOL, equal_nan=True) for x, y in zip(a, b)):
        return "close"
    return "MISMATCH"


def worst(*results):
    order = ["MISMATCH", "close", "exact"]
    return min(results, key=order.index)


def median_call(fn, inputs, calls):
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn(**inputs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_framegraph(model, inputs, expected, calls):
    """Graphs, breaks, recompiles, match and times of framegraph on one variant."""
    import framegraph
    from framegraph.diagnostics.records import observing

    framegraph.reset()
    cnt, records = Counter(), []
    compiled = framegraph.compile(model, backend=cnt)
    with observing(records.append):
        start = time.perf_counter()
        match = compare(compiled(**inputs), expected)
        first = time.perf_counter() - start
        graphs, traced = cnt.graphs, len(records)
        for _ in range(STEADY):
            match = worst(match, compare(compiled(**inputs), expected))
    reasons = collections.Counter()
    for r in records:
        for brk in getattr(r.compiled, "breaks", None) or ():
            reasons[f"break {brk.entry.id}: {str(brk.context)[:120]}"] += 1
        if r.fallback:
            entry = getattr(r.error, "entry", None)
            reasons[f"fallback {getattr(entry, 'id', type(r.error).__name__)} in {r.code.co_name}: "
                    f"{str(r.error)[:120]}"] += 1
    breaks = sum(len(getattr(r.compiled, "breaks", None) or ()) for r in records[:traced])
    fallbacks = sum(1 for r in records[:traced] if r.fallback)
    return {"graphs": graphs, "breaks": breaks, "fallbacks": fallbacks, "recompiles": cnt.graphs - graphs,
            "retraced": len(records) - traced, "match": match, "first": first,
            "call": median_call(compiled, inputs, calls), "reasons": dict(reasons.most_common(8))}


def run_fullgraph(model, inputs, expected):
    """None when framegraph's fullgraph=True compiles one graph equal to eager, else why not."""
    import framegraph

    framegraph.reset()
    cnt = Counter()
    try:
        got = framegraph.compile(model, backend=cnt, fullgraph=True)(**inputs)
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
    if cnt.graphs != 1:
        return f"{cnt.graphs} graphs"
    return None if compare(got, expected) != "MISMATCH" else "MISMATCH"


def run_dynamo(model, inputs, expected, calls):
    """The same numbers for torch.compile (torch._dynamo) with the same backend."""
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    cnt = Counter()
    compiled = torch.compile(model, backend=cnt)
    start = time.perf_counter()
    match = compare(compiled(**inputs), expected)
    first = time.perf_counter() - start
    graphs = cnt.graphs
    reasons = {k[:140]: v for k, v in counters["graph_break"].most_common(8)}
    breaks = sum(counters["graph_break"].values())
    for _ in range(STEADY):
        match = worst(match, compare(compiled(**inputs), expected))
    return {"graphs": graphs, "breaks": breaks, "recompiles": cnt.graphs - graphs, "match": match,
            "first": first, "call": median_call(compiled, inputs, calls), "reasons": reasons}


def guarded(fn, *args):
    try:
        return fn(*args)
    except Exception as e:
        return {"crash": f"{type(e).__name__}: {str(e)[:300]}", "trace": traceback.format_exc(limit=-4)[-1500:]}


def variants(name):
    """(cache, attn) pairs for a model: cache None is the default, attn None the only implementation."""
    import zoo

    model, _, _ = zoo.build_arch(name)
    caches = [False, None] if "use_cache" in inspect.signature(model.forward).parameters else [None]
    attns = [None]
    if getattr(model, "_supports_sdpa", False):
        try:
            zoo.build_arch(name, attn="eager")
            attns = ["eager", "sdpa"]
        except Exception:
            pass
    return [(c, a) for c in caches for a in attns]


def warm_up():
    """Compile a small module with both frontends: the first compile in a process pays one-time costs."""
    import torch
    import torch._dynamo

    import framegraph

    block = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16)).eval()
    x = torch.randn(2, 3, 8)
    with torch.no_grad():
        framegraph.compile(block, backend="eager")(x)
        torch.compile(block, backend="eager")(x)
    framegraph.reset()
    torch._dynamo.reset()


def quiet_worker():
    """A worker process's setting: no library chatter, one thread, both compilers warmed up."""
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    warm_up()


def worker(name, calls):
    """Every variant of one model, as a list of rows."""
    import torch

    import zoo

    quiet_worker()
    rows = []
    for cache, attn in variants(name):
        model, inputs, _ = zoo.build_arch(name, attn=attn)
        if cache is not None:
            inputs["use_cache"] = cache
        row = {"model": name, "family": zoo.ARCHS[name].family, "cache": "off" if cache is False else "default",
               "attn": attn or model.config._attn_implementation}
        with torch.no_grad():
            expected = model(**inputs)
            row["eager_call"] = median_call(model, inputs, calls)
            row["fg"] = guarded(run_framegraph, model, inputs, expected, calls)
            row["dy"] = guarded(run_dynamo, model, inputs, expected, calls)
            if row["dy"].get("graphs") == 1:
                row["fullgraph"] = guarded(run_fullgraph, model, inputs, expected)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


# --- the parent: one process per model, then the table ---------------------------------------

def run_all(names, calls, timeout):
    rows = []
    here = os.path.abspath(__file__)
    for name in names:
        start = time.time()
        try:
            proc = subprocess.run([sys.executable, here, "--worker", name, "--calls", str(calls)],
                                  capture_output=True, text=True, timeout=timeout)
            got = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
            if proc.returncode != 0:
                got.append({"model": name, "died": f"exit {proc.returncode}: {proc.stderr[-600:]}"})
        except subprocess.TimeoutExpired:
            got = [{"model": name, "died": f"timeout after {timeout} s"}]
        rows.extend(got)
        print(f"{name}: {len(got)} rows, {time.time() - start:.0f} s; " + "; ".join(
            summary_line(r) for r in got), file=sys.stderr, flush=True)
    return rows


def summary_line(r):
    if "died" in r:
        return f"DIED {r['died'][:80]}"
    fg, dy = r["fg"], r["dy"]
    if "crash" in fg or "crash" in dy:
        return f"{r['cache']}/{r['attn']} CRASH fg={fg.get('crash', '')[:60]} dy={dy.get('crash', '')[:60]}"
    return (f"{r['cache']}/{r['attn']} graphs {fg['graphs']}/{dy['graphs']} recompiles "
            f"{fg['recompiles']}+{fg['retraced']}/{dy['recompiles']} {fg['match']}/{dy['match']}")


def verdict(r):
    """What is wrong with a row, '' when framegraph is at parity."""
    if "died" in r:
        return "died"
    fg, dy = r["fg"], r["dy"]
    if "crash" in fg and "crash" in dy:  # the library itself takes another path when compiled
        return "both crash"
    if "crash" in fg:
        return "fg crash"
    if "crash" in dy:
        return "dynamo crash"
    bad = []
    if fg["match"] == "MISMATCH":
        bad.append("mismatch")
    if fg["graphs"] > dy["graphs"]:
        bad.append("more graphs")
    if fg["recompiles"] or fg["retraced"]:
        bad.append("recompiles")
    if fg["fallbacks"]:
        bad.append("fallbacks")
    if r.get("fullgraph"):
        bad.append("fullgraph fails")
    return ", ".join(bad)


def markdown(rows):
    head = ("| model | family | cache | attn | graphs fg/dyn | breaks fg/dyn | recompiles fg/dyn | match fg/dyn "
            "| 1st fg/dyn s | 1st ratio | call ratio | problem |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if "died" in r:
            lines.append(f"| {r['model']} | | | | | | | | | | | died: {r['died'][:60]} |")
            continue
        fg, dy = r["fg"], r["dy"]
        if "crash" in fg or "crash" in dy:
            lines.append(f"| {r['model']} | {r['family']} | {r['cache']} | {r['attn']} | | | | | | | | "
                         f"{verdict(r)}: {(fg.get('crash') or dy.get('crash'))[:70]} |")
            continue
        lines.append(
            f"| {r['model']} | {r['family']} | {r['cache']} | {r['attn']} | {fg['graphs']}/{dy['graphs']} "
            f"| {fg['breaks']}/{dy['breaks']} | {fg['recompiles'] + fg['retraced']}/{dy['recompiles']} "
            f"| {fg['match']}/{dy['match']} | {fg['first']:.2f}/{dy['first']:.2f} "
            f"| {fg['first'] / dy['first']:.2f} | {fg['call'] / dy['call']:.2f} | {verdict(r)} |")
    return "\n".join(lines) + "\n\n" + summary(rows)


def summary(rows):
    ok = [r for r in rows if "died" not in r and "crash" not in r["fg"] and "crash" not in r["dy"]]
    models = sorted({r["model"] for r in rows})
    first = [r["fg"]["first"] / r["dy"]["first"] for r in ok]
    calls = [r["fg"]["call"] / r["dy"]["call"] for r in ok]
    by_model = collections.defaultdict(list)
    for r in rows:
        by_model[r["model"]].append(verdict(r))
    at_parity = [m for m, v in by_model.items() if not any(v)]
    both = sorted({r["model"] for r in rows if verdict(r) == "both crash"})
    count = collections.Counter(p for r in rows for p in verdict(r).split(", ") if p)
    text = [f"- {len(models)} models, {len(rows)} variants; {len(at_parity)} models at parity on every variant "
            f"(graphs <= torch._dynamo's, no recompile, no fallback, equal to eager, fullgraph where dynamo has 1)."]
    text.append("- variants with a problem: " + (", ".join(f"{k} {v}" for k, v in count.most_common()) or "none"))
    if both:
        text.append(f"- both compilers raise (not a framegraph problem): {', '.join(both)}")
    if first:
        text.append(f"- first call fg/dynamo: median {statistics.median(first):.2f} "
                    f"(min {min(first):.2f}, max {max(first):.2f})")
        text.append(f"- per call fg/dynamo: median {statistics.median(calls):.2f} "
                    f"(min {min(calls):.2f}, max {max(calls):.2f}); "
                    f"{sum(c <= 1.0 for c in calls)} of {len(calls)} at or under 1")
    return "\n".join(text) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--family", default="", help="decoder, encoder, seq2seq, vision, audio, multimodal")
    parser.add_argument("--calls", type=int, default=15, help="steady calls timed per variant")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per model process")
    parser.add_argument("--json", help="write every row here")
    parser.add_argument("--md", help="write the markdown table and summary here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--from-json", help="only render a JSON written earlier")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.calls)
        return
    if args.from_json:
        with open(args.from_json) as f:
            rows = json.load(f)
    else:
        import zoo

        names = [n for n in args.only.split(",") if n] or [
            n for n, a in zoo.ARCHS.items() if not args.family or a.family in args.family.split(",")]
        rows = run_all(names, args.calls, args.timeout)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
    text = markdown(rows)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
