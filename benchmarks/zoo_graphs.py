"""Graph equality on the zoo: the FX graphs framegraph and torch._dynamo hand the backend, side by side.

    python benchmarks/zoo_graphs.py [--only gpt2,bert] [--family decoder] [--json out.json] [--md out.md]
    python benchmarks/zoo_graphs.py --only gpt2 --show      # print both graphs' operator lists

Each model of ``benchmarks/zoo.py`` (ARCHS) runs in its own process
(``--worker NAME``), with its default inputs under ``torch.no_grad()`` on
one thread, once through framegraph and once through torch._dynamo, each
with a pass-through backend that keeps the ``GraphModule`` it is given
(what backend ``eager`` does). Per graph it records:

* the call nodes (call_function / call_method / call_module) as a sequence of
  comparable names: an operator's own name without its namespace, so that
  ``torch.add``, ``operator.add``, ``Tensor.add`` and ``aten.add`` are all
  ``add``; a module call is its class name;
* the placeholders (graph inputs; parameters lifted as inputs count here)
  and the get_attr nodes;
* the values the output node returns, the call nodes nothing reads
  (``unused``), and the dead code: the call nodes torch.fx's
  ``eliminate_dead_code`` removes from a copy of the graph (``dead``).

The table gives, per model, graphs, ops, inputs and outputs of each compiler
(``fg/dyn``) and the first place where the operator sequences differ.
Graphs are paired in the order the backend received them; where the graph
counts differ only totals are compared. ``--json`` keeps every graph's
operator list; ``--md`` writes the table and the summary. ``--variants``
runs every variant zoo_parity.py runs (``use_cache=False`` and the default
cache, ``eager`` and ``sdpa`` attention); ``--constructs`` compares the
programs of ``benchmarks/constructs.py`` instead of the zoo (each in its own
process; the ops of higher-order operators' bodies are counted after a
``+``).
"""
import argparse
import collections
import copy
import difflib
import json
import operator
import os
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.dirname(__file__))

from zoo_parity import compare, guarded, quiet_worker, variants  # noqa: E402

CALLS = ("call_function", "call_method", "call_module")


# --- one graph as comparable data ----------------------------------------------------------------

def op_name(node, modules):
    """A name for a call node that is the same for the same operator in either compiler's graph."""
    target = node.target
    if node.op == "call_method":
        return target
    if node.op == "call_module":
        return type(modules[target]).__name__ if target in modules else str(target)
    if isinstance(target, str):
        return target
    # torch.ops.aten.add.Tensor -> add; torch._C._nn.linear / F.linear -> linear; operator.add -> add
    name = getattr(target, "__name__", None) or str(target)
    if hasattr(target, "overloadpacket"):
        name = target.overloadpacket.__name__
    return name.split(".")[-1]


def flat_outputs(node):
    """The values an output node returns, nested tuples and dicts flattened."""
    out = []

    def walk(v):
        if isinstance(v, (tuple, list)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        else:
            out.append(v)

    walk(node.args[0] if node.args else ())
    return out


def describe(gm):
    """Ops, inputs, get_attrs and outputs of one GraphModule."""
    modules = dict(gm.named_modules())
    nodes = list(gm.graph.nodes)
    outputs = [o for n in nodes if n.op == "output" for o in flat_outputs(n)]
    import torch.fx

    # the bodies of higher-order operators (torch.cond's branches, scan's step) are graphs of their own
    subgraphs = [m for name, m in modules.items() if name and isinstance(m, torch.fx.GraphModule)]
    return {"ops": [op_name(n, modules) for n in nodes if n.op in CALLS],
            "sub_ops": sum(n.op in CALLS for m in subgraphs for n in m.graph.nodes),
            "inputs": sum(n.op == "placeholder" for n in nodes),
            "get_attr": sum(n.op == "get_attr" for n in nodes),
            # call nodes whose value nothing reads (no user, not an output): work thrown away unless impure
            "unused": [op_name(n, modules) for n in nodes if n.op in CALLS and not n.users],
            "dead": dead_ops(gm),
            "outputs": len(outputs),
            # outputs that are graph inputs returned as they are, or constants: work the graph does not do
            "passthrough": sum(getattr(o, "op", None) == "placeholder" for o in outputs),
            "const_outputs": sum(not hasattr(o, "op") for o in outputs)}


def writes_or_impure(node):
    """torch.fx's test, plus the writes it calls pure (``operator.iadd``, ``setitem``, ``x.add_()``)."""
    name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    in_place = name in ("setitem", "delitem") or (name.startswith("i") and name[1:] in dir(operator)
                                                  and getattr(node.target, "__module__", "") == "_operator")
    return node.is_impure() or in_place or (name.endswith("_") and not name.endswith("__")
                                            and name not in ("and_", "or_", "not_"))


def dead_ops(gm):
    """Call nodes torch.fx's own dead code elimination removes from a copy of the graph: pure
    work whose result reaches no output (a chain of them counts whole, not only its last node)."""
    graph = copy.deepcopy(gm.graph)
    before = sum(n.op in CALLS for n in graph.nodes)
    graph.eliminate_dead_code(is_impure_node=writes_or_impure)
    return before - sum(n.op in CALLS for n in graph.nodes)


class Keeper:
    """A pass-through backend that keeps a description of every graph it is given."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(describe(gm))
        return gm.forward


# --- one model, in the worker process -------------------------------------------------------------

def run_framegraph(model, inputs, expected):
    import framegraph

    framegraph.reset()
    keep = Keeper()
    got = framegraph.compile(model, backend=keep)(**inputs)
    return {"graphs": keep.graphs, "match": compare(got, expected)}


def run_dynamo(model, inputs, expected):
    import torch
    import torch._dynamo

    torch._dynamo.reset()
    keep = Keeper()
    got = torch.compile(model, backend=keep)(**inputs)
    return {"graphs": keep.graphs, "match": compare(got, expected)}


def worker(name, all_variants):
    """Both compilers' graphs of one model, one JSON row per variant (the default one only unless asked)."""
    import torch

    import zoo

    quiet_worker()
    for cache, attn in (variants(name) if all_variants else [(None, None)]):
        model, inputs, _ = zoo.build_arch(name, attn=attn)
        if cache is not None:
            inputs["use_cache"] = cache
        row = {"model": name, "family": zoo.ARCHS[name].family, "cache": "off" if cache is False else "default",
               "attn": attn or model.config._attn_implementation}
        with torch.no_grad():
            expected = model(**inputs)
            row["fg"] = guarded(run_framegraph, model, inputs, expected)
            row["dy"] = guarded(run_dynamo, model, inputs, expected)
        print(json.dumps(row), flush=True)


def construct_worker(name):
    """Both compilers' graphs of one program of benchmarks/constructs.py, as one JSON row."""
    import torch

    import constructs

    torch.set_num_threads(1)
    group, build = constructs.CONSTRUCTS[name]
    torch.manual_seed(0)
    case = build()
    try:
        expected, _ = constructs.execute(case, case.fn)
    finally:
        if case.cleanup:
            case.cleanup()
    row = {"model": name, "family": group}
    for key, compiler in (("fg", "framegraph"), ("dy", "dynamo")):
        constructs.warm_up(compiler)
        torch.manual_seed(0)
        case = build()
        if case.capture:
            if compiler == "framegraph":
                import framegraph
                options = framegraph.config
            else:
                import torch._dynamo
                options = torch._dynamo.config
            options.capture_scalar_outputs = options.capture_dynamic_output_shape_ops = True
        keep = Keeper()

        def run():
            if compiler == "framegraph":
                import framegraph
                compiled = framegraph.compile(case.fn, backend=keep)
            else:
                compiled = torch.compile(case.fn, backend=keep)
            got, _ = constructs.execute(case, compiled)
            match = constructs.compare(got, expected)
            return {"graphs": keep.graphs, "match": "MISMATCH" if match.startswith("mismatch") else match}

        try:
            row[key] = guarded(run)
        finally:
            if case.cleanup:
                case.cleanup()
    print(json.dumps(row), flush=True)


# --- the parent: one process per model, then the table --------------------------------------------

def run_all(names, timeout, flags):
    rows = []
    here = os.path.abspath(__file__)
    for name in names:
        start = time.time()
        try:
            proc = subprocess.run([sys.executable, here, "--worker", name, *flags], capture_output=True,
                                  text=True, timeout=timeout)
            got = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
            if proc.returncode != 0 or not got:
                got = [{"model": name, "died": f"exit {proc.returncode}: {proc.stderr[-600:]}"}]
        except subprocess.TimeoutExpired:
            got = [{"model": name, "died": f"timeout after {timeout} s"}]
        rows.extend(got)
        print(f"{name}: {time.time() - start:.0f} s; " + "; ".join(label(r) + line(r) for r in got),
              file=sys.stderr, flush=True)
    return rows


def totals(side):
    g = side["graphs"]
    return {k: sum(len(x.get(k, ())) if k in ("ops", "unused") else x.get(k, 0) for x in g)
            for k in ("ops", "unused", "dead", "sub_ops", "inputs", "outputs", "get_attr", "passthrough",
                      "const_outputs")}


def first_difference(a, b, context=2):
    """The first place two operator sequences differ, as 'fg [...] / dyn [...]' ('' when equal)."""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            lo = max(0, i1 - context)
            return (f"at op {i1}: fg {' '.join(a[i1:i2][:4]) or '-'} / dyn {' '.join(b[j1:j2][:4]) or '-'}"
                    f" (after {' '.join(a[lo:i1])})")
    return ""


def pairs(r):
    """(fg graph, dyn graph) pairs where the graph counts agree, else one pair of concatenations."""
    fg, dy = r["fg"]["graphs"], r["dy"]["graphs"]
    if len(fg) == len(dy):
        return list(zip(fg, dy))
    return [({"ops": [o for g in fg for o in g["ops"]], "sub_ops": sum(g.get("sub_ops", 0) for g in fg)},
             {"ops": [o for g in dy for o in g["ops"]], "sub_ops": sum(g.get("sub_ops", 0) for g in dy)})]


def verdict(r):
    """'' when framegraph's graphs are no larger than torch._dynamo's, else what is larger."""
    if "died" in r:
        return "died"
    if "crash" in r["fg"] or "crash" in r["dy"]:
        return "crash"
    bad = []
    if len(r["fg"]["graphs"]) > len(r["dy"]["graphs"]):
        bad.append("more graphs")
    if any(len(a["ops"]) > len(b["ops"]) for a, b in pairs(r)):
        bad.append("more ops")
    if any(len(a["ops"]) + a.get("sub_ops", 0) > len(b["ops"]) + b.get("sub_ops", 0) for a, b in pairs(r)):
        bad.append("more ops with bodies")  # torch._dynamo may inline what framegraph keeps as a body
    if r["fg"]["match"] == "MISMATCH":
        bad.append("mismatch")
    return ", ".join(bad)


def label(r):
    """The variant of a zoo row ('' for constructs): '[cache off, sdpa] '."""
    if "cache" not in r:
        return ""
    return "[" + ", ".join((["cache off"] if r["cache"] == "off" else []) + [r["attn"]]) + "] "


def line(r):
    if "died" in r:
        return f"DIED {r['died'][:100]}"
    if "crash" in r["fg"] or "crash" in r["dy"]:
        return f"CRASH fg={r['fg'].get('crash', '')[:80]} dy={r['dy'].get('crash', '')[:80]}"
    f, d = totals(r["fg"]), totals(r["dy"])
    return (f"graphs {len(r['fg']['graphs'])}/{len(r['dy']['graphs'])} ops {ops(f)}/{ops(d)} "
            f"inputs {f['inputs']}/{d['inputs']} outputs {f['outputs']}/{d['outputs']} {verdict(r)}")


def ops(t):
    """Ops of a graph, with its bodies' ops after a '+' where it has bodies."""
    return f"{t['ops']}+{t['sub_ops']}" if t["sub_ops"] else f"{t['ops']}"


def markdown(rows):
    head = ("| model | family | graphs fg/dyn | ops fg/dyn | dead fg/dyn | inputs fg/dyn | get_attr fg/dyn "
            "| outputs fg/dyn "
            "| first difference | problem |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if "died" in r or "crash" in r["fg"] or "crash" in r["dy"]:
            lines.append(f"| {r['model']} {label(r)}| {r.get('family', '')} | | | | | | | {line(r)[:90]} "
                         f"| {verdict(r)} |")
            continue
        f, d = totals(r["fg"]), totals(r["dy"])
        diff = next((x for x in (first_difference(a["ops"], b["ops"]) for a, b in pairs(r)) if x), "")
        lines.append(f"| {r['model']} {label(r)}| {r['family']} | {len(r['fg']['graphs'])}/{len(r['dy']['graphs'])} "
                     f"| {ops(f)}/{ops(d)} | {f['dead']}/{d['dead']} | {f['inputs']}/{d['inputs']} "
                     f"| {f['get_attr']}/{d['get_attr']} "
                     f"| {f['outputs']}/{d['outputs']} | {diff.replace('|', '/')[:110]} | {verdict(r)} |")
    return "\n".join(lines) + "\n\n" + summary(rows)


def summary(rows):
    """Counts per model: a model is at most torch._dynamo's when every variant of it is."""
    ok = [r for r in rows if "died" not in r and "crash" not in r["fg"] and "crash" not in r["dy"]]
    by_model = collections.defaultdict(list)
    for r in ok:
        by_model[r["model"]].append(r)
    at_most = [m for m, rs in by_model.items() if not any(verdict(r) for r in rs)]
    equal = [m for m, rs in by_model.items() if all(
        len(r["fg"]["graphs"]) == len(r["dy"]["graphs"]) and all(a["ops"] == b["ops"] for a, b in pairs(r))
        for r in rs)]
    fewer = [m for m in at_most if any(totals(r["fg"])["ops"] < totals(r["dy"])["ops"] for r in by_model[m])]
    larger = [f"{r['model']} {label(r)}({verdict(r)})" for r in ok if verdict(r)]
    broken = sorted({f"{r['model']} {label(r)}".strip() for r in rows if r not in ok})
    text = [f"- {len({r['model'] for r in rows})} models, {len(rows)} rows; compared {len(by_model)} models: "
            f"framegraph's ops per graph <= torch._dynamo's on {len(at_most)} (the same operator sequence on "
            f"{len(equal)}, fewer ops on {len(fewer)}); dead code (the 'dead' column): framegraph "
            f"{sum(totals(r['fg'])['dead'] for r in ok)}, torch._dynamo {sum(totals(r['dy'])['dead'] for r in ok)}."]
    text.append("- larger in framegraph: " + (", ".join(larger) or "none"))
    if broken:
        text.append("- not compared (a crash or a dead worker): " + ", ".join(broken))
    return "\n".join(text) + "\n"


def show(rows):
    """Both operator lists of every graph, side by side, for reading a difference."""
    for r in rows:
        if "died" in r or "crash" in r["fg"] or "crash" in r["dy"]:
            print(r["model"], label(r), line(r))
            continue
        for i, (a, b) in enumerate(pairs(r)):
            print(f"== {r['model']} {label(r)}graph {i}: fg {len(a['ops'])} ops, dyn {len(b['ops'])} ops")
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a["ops"], b["ops"],
                                                               autojunk=False).get_opcodes():
                if tag != "equal":
                    print(f"  {tag:8} fg[{i1}:{i2}] {a['ops'][i1:i2]}\n           dyn[{j1}:{j2}] {b['ops'][j1:j2]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--family", default="", help="decoder, encoder, seq2seq, vision, audio, multimodal")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per model process")
    parser.add_argument("--json", help="write every row here")
    parser.add_argument("--md", help="write the markdown table and summary here")
    parser.add_argument("--show", action="store_true", help="print each graph's differing operators")
    parser.add_argument("--variants", action="store_true",
                        help="every variant of zoo_parity.py (cache off and default, eager and sdpa attention)")
    parser.add_argument("--constructs", action="store_true",
                        help="the programs of benchmarks/constructs.py instead of the zoo")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--from-json", help="only render a JSON written earlier")
    args = parser.parse_args()
    if args.worker:
        if args.constructs:
            construct_worker(args.worker)
        else:
            worker(args.worker, args.variants)
        return
    if args.from_json:
        with open(args.from_json) as f:
            rows = json.load(f)
    else:
        if args.constructs:
            import constructs

            table = {n: group for n, (group, _) in constructs.CONSTRUCTS.items()}
        else:
            import zoo

            table = {n: a.family for n, a in zoo.ARCHS.items()}
        names = [n for n in args.only.split(",") if n] or [
            n for n, family in table.items() if not args.family or family in args.family.split(",")]
        flags = [f for f, on in (("--variants", args.variants), ("--constructs", args.constructs)) if on]
        rows = run_all(names, args.timeout, flags)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
    if args.show:
        show(rows)
    text = markdown(rows)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
