"""The brief's examples, compiled and shown: bytecode before and after, graphs, guards, breaks.

    bash scripts/demo.sh          (or: .venv/bin/python examples/demo.py)
"""
import os
import sys

import torch

import framegraph
from framegraph.runtime import cache
from framegraph.bytecode import format_bytecode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brief import f, g, g_cond  # noqa: E402  (the brief's examples)


def banner(text):
    print(f"\n{'=' * 8} {text} {'=' * (70 - len(text))}")


def show_f():
    banner("f(x) = torch.sin(x) + 1")
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = framegraph.compile(f, backend=backend)
    x = torch.randn(8)
    out = compiled(x)
    print("same as eager:", torch.equal(out, f(x)))
    print(format_bytecode("ORIGINAL BYTECODE", f.__code__))
    entries = cache.entries(f)
    if not entries:
        print("(not captured: see the warning above)")
        return
    print(format_bytecode("MODIFIED BYTECODE", entries[0].code))
    print(f"f.__code__ is untouched: {f.__code__.co_name} with {len(f.__code__.co_code)} bytes of bytecode")
    for gm in graphs:
        print("captured graph:")
        print(gm.code.strip())
    print("guards:")
    for line in entries[0].guard_lines:
        print("  " + line)
    compiled(torch.randn(8))
    print("cache hits after a second call:", cache.entries(f)[0].hits)
    compiled(torch.randn(8, dtype=torch.float64))
    print("entries after a float64 call (a recompile):", len(cache.entries(f)))


def show_g():
    banner("g(x): if x.sum() > 0: return x * 2 / return x + 1")
    for sign in (1, -1):
        x = sign * torch.ones(4)
        report = framegraph.explain(g)(x)
        print(f"input sum {float(x.sum()):+.0f}: result equals eager: {torch.equal(report.result, g(x))}")
        print(report)


def show_g_cond():
    banner("g with torch.cond, as the hint says: one graph, fullgraph=True")
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = framegraph.compile(g_cond, backend=backend, fullgraph=True)
    for sign in (1, -1):
        x = sign * torch.ones(4)
        print(f"input sum {float(x.sum()):+.0f}: result equals eager: {torch.equal(compiled(x), g(x))}")
    print(f"graphs: {len(graphs)}")
    graphs[0].print_readable()


def main():
    print(f"framegraph {framegraph.__version__}, torch {torch.__version__}, "
          f"backends: {', '.join(framegraph.list_backends())}")
    show_f()
    show_g()
    show_g_cond()


if __name__ == "__main__":
    main()
