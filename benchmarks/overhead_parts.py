"""Where a compiled call's time goes beyond the captured graph, per zoo model.

    python benchmarks/overhead_parts.py [--models gpt2,llama] [--rounds 15]

framegraph with a backend that returns ``gm.forward`` (like ``eager``), under
``torch.no_grad()``, one intra-op thread. Each part is measured on its own,
in a loop (median over rounds of N calls):

* ``graph``: the captured graph called directly, back to back (the baseline
  of benchmarks/models.py's "bare graph");
* ``guard``: the entry's check function on the call's arguments;
* ``code``: the replacement code with the graph call stubbed out (reading
  the inputs, rebuilding outputs, replaying side effects);
* ``compiled - graph``: a compiled call minus the graph, each round timing
  both back to back;
* ``graph+guard - graph``: the graph and the guard called alternately,
  minus the graph: what running the guard *between* graph calls costs.

The last two are larger than guard + code: a graph called back to back
keeps its code and data in the CPU caches, and anything run between two
calls (the guard touches every parameter and module it checks) evicts some
of it. torch.compile pays the same; the table shows what is framegraph's
own work (guard, code) and what is the machine.
"""
import argparse
import inspect
import os
import statistics
import sys
import timeit
import types

import torch

sys.path.insert(0, os.path.dirname(__file__))
import zoo  # noqa: E402

import framegraph  # noqa: E402
from framegraph import _C  # noqa: E402
from framegraph.runtime.convert_frame import touched_codes  # noqa: E402


def entry_of(model):
    """(check, replacement function, arguments, graph name) of the model's one cache entry."""
    for code in list(touched_codes):
        for check, new_code, _ in _C.cache_entries(code):
            fn = type(model).forward
            while getattr(fn, "__code__", None) is not code and hasattr(fn, "__wrapped__"):
                fn = fn.__wrapped__
            if getattr(fn, "__code__", None) is code:
                return check, fn, new_code
    raise RuntimeError("no cache entry found for the model's forward")


def argument_slots(fn, model, inputs):
    """The frame's argument slots for ``fn(model, **inputs)``, in the order the guard
    and the replacement code take them (co_varnames: parameters, *args, **kwargs)."""
    bound = inspect.signature(fn, follow_wrapped=False).bind(model, **inputs)
    bound.apply_defaults()
    code = fn.__code__
    n = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    return [bound.arguments[name] for name in code.co_varnames[:n]]


def measure(name, rounds, calls):
    model, inputs = zoo.ZOO[name]()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append((gm, list(example_inputs)))
        return gm.forward

    compiled = framegraph.compile(model, backend=backend)
    with torch.no_grad():
        compiled(**inputs)
        compiled(**inputs)
        gm, graph_args = graphs[-1]
        check, fn, new_code = entry_of(model)
        slots = argument_slots(fn, model, inputs)
        if not check(fn, *slots):
            return None
        replacement = types.FunctionType(new_code, fn.__globals__, None, None, fn.__closure__)
        graph_name = next(n for n in new_code.co_names if n.startswith("__compiled_fn"))
        real = fn.__globals__[graph_name]
        outputs = real(*graph_args)

        def t(f):
            return timeit.timeit(f, number=calls) / calls * 1e6

        def graph_and_guard():
            check(fn, *slots)
            return gm.forward(*graph_args)

        parts = {"graph": [], "guard": [], "code": [], "compiled - graph": [], "graph+guard - graph": []}
        for _ in range(rounds):
            g = t(lambda: gm.forward(*graph_args))
            parts["graph"].append(g)
            parts["compiled - graph"].append(t(lambda: compiled(**inputs)) - g)
            parts["graph+guard - graph"].append(t(graph_and_guard) - g)
            parts["guard"].append(t(lambda: check(fn, *slots)))
            fn.__globals__[graph_name] = lambda *a: outputs
            try:
                parts["code"].append(t(lambda: replacement(*slots)))
            finally:
                fn.__globals__[graph_name] = real
    return {k: statistics.median(v) for k, v in parts.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(zoo.ZOO))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| model | graph us | guard us | code us | guard + code (% of graph) "
          "| compiled - graph us | graph+guard - graph us |")
    print("|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        framegraph.reset()
        p = measure(name, args.rounds, args.calls)
        if p is None:
            print(f"| {name} | (its entry's guard rejects the re-bound arguments) | | | | | |")
            continue
        own = p["guard"] + p["code"]
        print(f"| {name} | {p['graph']:.0f} | {p['guard']:.1f} | {p['code']:.1f} | {own:.1f} "
              f"({100 * own / p['graph']:.1f}%) | {p['compiled - graph']:.0f} | {p['graph+guard - graph']:.0f} |")


if __name__ == "__main__":
    main()
