"""Per-family corpora of Python constructs: framegraph and torch._dynamo side by side, one table per family.

    .venv/bin/python benchmarks/families.py --jobs 1 --json /tmp/families.json
    .venv/bin/python benchmarks/families.py --only send_into_started,list_iadd_unbound
    .venv/bin/python benchmarks/families.py --family coroutines
    .venv/bin/python benchmarks/families.py --one send_into_started --compiler framegraph

The programs live in ``benchmarks/families/`` (one module per family:
builtin descriptors, generator-based coroutines, subclass constructors, the
dict protocol on OrderedDict and friends, objects as keys and sets of
constants, functools.partial, others). This runner is benchmarks/constructs.py
applied to them: the same child process (fresh per program and compiler, under
``--timeout``: a hang or a crash is recorded and the run goes on), the same
counting backend, ``fullgraph=False`` for both compilers, the same comparison
with eager (every program is called twice; state it mutates is compared after
the second call), the same break reasons (framegraph: catalogue id and
context; torch._dynamo: its ``graph_break`` counters). It prints the
per-program table, then the per-family one:

* programs; dynamo one graph (torch._dynamo gives eager's answer in exactly one
  graph); framegraph one graph there (framegraph too, in one graph);
* graphs summed over the family, per compiler;
* equal to eager, per compiler; framegraph hangs and crashes.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import constructs  # noqa: E402  (the machinery this runner shares)
from families import FAMILIES, PROGRAMS  # noqa: E402

# constructs.py's child and parent look programs up in its registry: point it at the corpora
constructs.CONSTRUCTS.clear()
constructs.CONSTRUCTS.update(PROGRAMS)


def family_table(rows):
    """The per-family markdown table: programs, one-graph counts and equality with eager, per compiler."""
    lines = ["| family | programs | dynamo one graph | framegraph one graph there | dynamo graphs | "
             "framegraph graphs | equal to eager dynamo | equal to eager framegraph | framegraph hang/crash |",
             "|---|---|---|---|---|---|---|---|---|"]
    table = constructs.by_construct(rows)
    totals = [0] * 8
    for family in FAMILIES:
        pairs = [p for p in table.values() if p["dynamo"]["group"] == family]
        if not pairs:
            continue
        one = [p for p in pairs if constructs.correct(p["dynamo"]) and p["dynamo"]["graphs"] == 1]
        fg_one = [p for p in one if constructs.correct(p["framegraph"]) and p["framegraph"]["graphs"] == 1]
        counts = [len(pairs), len(one), len(fg_one),
                  sum(p["dynamo"]["graphs"] or 0 for p in pairs),
                  sum(p["framegraph"]["graphs"] or 0 for p in pairs),
                  sum(constructs.correct(p["dynamo"]) for p in pairs),
                  sum(constructs.correct(p["framegraph"]) for p in pairs),
                  sum(p["framegraph"]["outcome"] in ("hang", "crash") for p in pairs)]
        totals = [a + b for a, b in zip(totals, counts)]
        lines.append(f"| {family} | " + " | ".join(map(str, counts)) + " |")
    lines.append("| all | " + " | ".join(map(str, totals)) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated program names")
    parser.add_argument("--family", default="", help="comma-separated families")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per (program, compiler) process")
    parser.add_argument("--jobs", type=int, default=2, help="processes at a time")
    parser.add_argument("--json", help="write every result here")
    parser.add_argument("--list", action="store_true", help="print the programs and their families")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--compiler", choices=constructs.COMPILERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(constructs.child(args.one, args.compiler or "framegraph")), flush=True)
        return
    if args.list:
        for name, (family, _) in PROGRAMS.items():
            print(f"{family}: {name}")
        return
    families = [f for f in args.family.split(",") if f]
    names = [n for n in args.only.split(",") if n] or [
        n for n, (fam, _) in PROGRAMS.items() if not families or fam in families]
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown programs: {', '.join(unknown)}")
    rows = constructs.run_all(names, args.timeout, args.jobs, script=__file__)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(constructs.markdown(rows))
    print()
    print(family_table(rows))


if __name__ == "__main__":
    main()
