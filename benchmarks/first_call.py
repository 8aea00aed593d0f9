"""First call of real models: framegraph against torch._dynamo, and where framegraph's time goes.

    python benchmarks/first_call.py [--models gpt2,bert,...] [--layers 2,4,8,16] [--stages N] [--repeat 3]
                                    [--trace-cache] [--gc] [--vision-deep]

Each (model, compiler) runs in a process of its own, as a new user meets it:
torch and the compiler imported, the compiler warmed on an unrelated small
module (its one-time imports land on neither model), the model built with
random weights and run eagerly twice, then compiled and called once under
``torch.no_grad()`` with a pass-through backend (``gm.forward``, what backend
``eager`` does). The first call is CPU time of the process (the machine is
shared: wall time moves with the other jobs) minus the second eager forward;
``--repeat`` runs keep the minimum. Models are zoo architectures
(benchmarks/zoo.py ``ARCHS``) or ``gpt2:N``, GPT-2 with N layers (``--layers``
adds them for the scaling table).

``--trace-cache`` adds framegraph's first call in a second process with the
persistent trace cache (runtime/trace_cache.py): one process fills a fresh
cache directory, the next one (measured the same way) loads from it; the
row says how many frames came from the cache and how many were traced.

``--gc`` adds the cyclic garbage collections each first call ran into, per
generation (count and wall time): a full (generation 2) collection in a
process holding torch and transformers takes a large part of a second, and
a first call that allocates enough to trigger one pays it.

``--vision-deep`` adds vision models deep enough for 100 or more operators
(benchmarks/zoo.py ``VISION_DEEP``).

``--stages N`` profiles framegraph's first call of the N largest models (by
graph operators) into exclusive time per stage: each instrumented function's
time, less that of the instrumented functions it calls (see ``STAGES``).
"""
import argparse
import collections
import functools
import gc
import importlib
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = "gpt2,bert,llama,t5,vit,qwen2,bart,whisper,clip,convnext,swin,resnet"

# (module, qualified name, stage): the innermost instrumented call running owns the time
STAGES = [
    ("framegraph.runtime.pipeline", "run_root", "interpreting bytecode"),
    ("framegraph.graph.output_graph", "OutputGraph._run_fake", "shape propagation"),
    ("framegraph.graph.output_graph", "OutputGraph.add_input", "graph inputs (fake tensors)"),
    ("torch.fx.graph", "Graph.create_node", "FX nodes"),
    ("framegraph.variables.builder", "wrap_value", "wrapping values (sources)"),
    ("framegraph.graph.output_graph", "OutputGraph.compile", "GraphModule + backend"),
    ("framegraph.guards.compile", "CompiledGuard.__init__", "guards"),
    ("framegraph.runtime.pipeline", "finish_frame", "code generation"),
    ("framegraph.runtime.pipeline", "return_code", "code generation"),
    ("framegraph.runtime.pipeline", "break_code", "code generation"),
]


def _build(name):
    """(model, inputs) for a zoo architecture or ``gpt2:N``."""
    import torch

    sys.path.insert(0, HERE)
    import zoo

    if name.startswith("gpt2:"):
        from transformers import GPT2Config, GPT2LMHeadModel

        torch.manual_seed(0)
        cfg = GPT2Config(n_layer=int(name.split(":")[1]), n_head=2, n_embd=64, vocab_size=zoo.VOCAB, n_positions=64,
                         bos_token_id=0, eos_token_id=0)
        return GPT2LMHeadModel(cfg).eval(), {"input_ids": zoo._ids(), "use_cache": False}
    if name in zoo.VISION_DEEP:
        model, inputs, _ = zoo.build_from(zoo.VISION_DEEP[name])
    else:
        model, inputs, _ = zoo.build_arch(name)
    return model.eval(), inputs


class _Stages:
    """Exclusive CPU time per stage, by wrapping the functions of ``STAGES``."""

    def __init__(self):
        self.total, self.calls, self.stack = collections.Counter(), collections.Counter(), []
        for module, qualname, stage in STAGES:
            owner = importlib.import_module(module)
            *path, attr = qualname.split(".")
            for part in path:
                owner = getattr(owner, part)
            setattr(owner, attr, self._wrap(getattr(owner, attr), stage))

    def _wrap(self, fn, stage):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            now = time.process_time()
            if self.stack:
                self.total[self.stack[-1][0]] += now - self.stack[-1][1]
            self.stack.append([stage, now])
            self.calls[stage] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                end = time.process_time()
                done = self.stack.pop()
                self.total[done[0]] += end - done[1]
                if self.stack:
                    self.stack[-1][1] = end
        return timed


OPS = [0]


class _GcClock:
    """The cyclic garbage collections during a block: how many of each generation,
    and their wall time (a full collection of a process holding torch and
    transformers takes a large part of a second)."""

    def __init__(self):
        self.count, self.seconds, self._start = [0, 0, 0], [0.0, 0.0, 0.0], 0.0

    def _callback(self, phase, info):
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.count[info["generation"]] += 1
            self.seconds[info["generation"]] += time.perf_counter() - self._start

    def __enter__(self):
        gc.callbacks.append(self._callback)

    def __exit__(self, *exc):
        gc.callbacks.remove(self._callback)

    def row(self):
        return {"count": self.count, "ms": [round(s * 1e3, 1) for s in self.seconds]}


def backend(gm, example_inputs):
    """Pass-through, counting the graph's operators (a module-level function: the trace
    cache keys entries by the backend's name)."""
    OPS[0] += sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output", "get_attr"))
    return gm.forward


def worker(name, compiler, stages):
    """One first call, in this process; prints a JSON line."""
    import torch

    torch.set_num_threads(1)
    ops = OPS

    loaded = []
    if compiler.startswith("framegraph"):
        import framegraph
        from framegraph.diagnostics import records

        compile_fn = functools.partial(framegraph.compile, backend=backend)
        records.observers.append(lambda r: loaded.append(r.from_cache))
    else:
        compile_fn = functools.partial(torch.compile, backend=backend)
    warm = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    compile_fn(warm)(torch.randn(2, 4))
    probe = _Stages() if stages else None
    model, inputs = _build(name)
    ops[0] = 0
    loaded.clear()
    with torch.no_grad():
        model(**inputs)
        start = time.process_time()
        model(**inputs)
        eager = time.process_time() - start
        compiled = compile_fn(model)
        if probe is not None:
            probe.total.clear()
        collections_seen = _GcClock()
        start, wall = time.process_time(), time.perf_counter()
        with collections_seen:
            compiled(**inputs)
        first, wall = time.process_time() - start, time.perf_counter() - wall
    row = {"model": name, "compiler": compiler, "first": first - eager, "wall": wall, "eager": eager, "ops": ops[0],
           "from_cache": sum(loaded), "traced": len(loaded) - sum(loaded), "gc": collections_seen.row()}
    if probe is not None:
        row["stages"] = {k: round(v, 5) for k, v in probe.total.most_common()}
    print("ROW " + json.dumps(row))


def run(name, compiler, stages=False, timeout=600, env=None):
    """The worker's row, or a row saying why there is none."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, compiler] + (["--with-stages"] if stages else [])
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"model": name, "compiler": compiler, "error": "timeout"}
    for line in done.stdout.splitlines():
        if line.startswith("ROW "):
            return json.loads(line[4:])
    return {"model": name, "compiler": compiler, "error": (done.stderr.strip().splitlines() or ["?"])[-1][:200]}


def cached(name):
    """framegraph's first call in a second process, the first having filled a new cache."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, FRAMEGRAPH_CACHE_DIR=folder)
        run(name, "framegraph-cache", env=env)
        return run(name, "framegraph-cache", env=env)


def best(name, compiler, repeat):
    rows = [cached(name) if compiler == "cache" else run(name, compiler) for _ in range(repeat)]
    good = [r for r in rows if "error" not in r]
    return min(good, key=lambda r: r["first"]) if good else rows[0]


def _gc_text(row) -> str:
    """``n0/n1/n2 in t0/t1/t2 ms``: collections per generation and their wall time."""
    counts, ms = row["gc"]["count"], row["gc"]["ms"]
    return "/".join(map(str, counts)) + " in " + "/".join(f"{t:.0f}" for t in ms) + " ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--vision-deep", action="store_true",
                        help="add the vision models with 100+ operators (benchmarks/zoo.py VISION_DEEP)")
    parser.add_argument("--layers", default="", help="GPT-2 layer counts for the scaling table, e.g. 2,4,8,16")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--stages", type=int, default=0, help="stage profiles of the N models with most operators")
    parser.add_argument("--trace-cache", action="store_true", help="add the first call of a second process")
    parser.add_argument("--gc", action="store_true", help="add the garbage collections during each first call")
    parser.add_argument("--json")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--with-stages", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker, args.with_stages)
        return
    names = [m for m in args.models.split(",") if m] + [f"gpt2:{n}" for n in args.layers.split(",") if n]
    if args.vision_deep:
        sys.path.insert(0, HERE)
        import zoo

        names += [n for n in zoo.VISION_DEEP if n not in names]
    rows = []
    extra = f" {'cached ms':>10s} {'ratio':>6s} {'loaded/traced':>13s}" if args.trace_cache else ""
    print(f"{'model':14s} {'ops':>5s} {'framegraph ms':>14s} {'torch._dynamo ms':>17s} {'ratio':>6s}{extra}",
          flush=True)
    for name in names:
        fg, dy = best(name, "framegraph", args.repeat), best(name, "dynamo", args.repeat)
        row = {"model": name, "framegraph": fg, "dynamo": dy}
        if args.trace_cache:
            row["cached"] = best(name, "cache", args.repeat)
        rows.append(row)
        failed = [r["error"] for r in row.values() if isinstance(r, dict) and "error" in r]
        if failed:
            print(f"{name:14s} error: {failed[0]}", flush=True)
            continue
        line = (f"{name:14s} {fg['ops']:5d} {fg['first'] * 1e3:14.1f} {dy['first'] * 1e3:17.1f} "
                f"{fg['first'] / dy['first']:6.2f}")
        if args.trace_cache:
            c = row["cached"]
            line += (f" {c['first'] * 1e3:10.1f} {c['first'] / dy['first']:6.3f} "
                     f"{c['from_cache']:>6d}/{c['traced']}")
        if args.gc:
            line += "   gc fg " + _gc_text(fg) + ", torch._dynamo " + _gc_text(dy)
        print(line, flush=True)
    if args.stages:
        ranked = sorted((r for r in rows if "error" not in r["framegraph"]), key=lambda r: -r["framegraph"]["ops"])
        for r in ranked[:args.stages]:
            prof = run(r["model"], "framegraph", stages=True)
            r["stages"] = prof.get("stages")
            if not prof.get("stages"):
                continue
            print(f"\n{r['model']} ({prof['ops']} operators): first call {prof['first'] * 1e3:.1f} ms")
            for stage, seconds in prof["stages"].items():
                print(f"  {stage:30s} {seconds * 1e3:8.1f} ms  {100 * seconds / prof['first']:5.1f}%")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
