"""Instructions of framegraph's first call of a model, counted by valgrind: what
`first_call.py` times, without the machine's noise.

    python benchmarks/first_call_instructions.py [--models resnet-34,dinov2-8,gpt2]

Each model runs in a process of its own under `valgrind --tool=callgrind`, built
and warmed as `first_call.py` does it; an eager forward and then the first
compiled call each sit between two libc calls (`getppid` zeroes the counters,
`getpgrp` dumps them). The figure is the compiled call's count less the eager
forward's, in millions of instructions of the main thread. Counts repeat to a
fraction of a percent, so two trees compare by running this script with each on
PYTHONPATH. About three minutes a model (torch is imported under valgrind).
"""
import argparse
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def child(name):
    """The eager forward, then the first compiled call, each between the markers (inside valgrind)."""
    sys.path.insert(0, HERE)
    import torch

    import first_call
    import framegraph

    compile_fn = functools.partial(framegraph.compile, backend=first_call.backend)
    compile_fn(torch.nn.Sequential(torch.nn.Linear(4, 4)))(torch.randn(2, 4))
    model, inputs = first_call._build(name)
    with torch.no_grad():
        model(**inputs)
        compiled = compile_fn(model)
        for fn in (model, compiled):
            os.getppid()
            fn(**inputs)
            os.getpgrp()


def count(name) -> float:
    """Millions of instructions of the first compiled call less an eager forward."""
    from hook_instructions import callgrind_counts

    eager, first = callgrind_counts([sys.executable, os.path.abspath(__file__), "--child", name],
                                    dict(os.environ, HF_HUB_OFFLINE="1"))[:2]
    return (first - eager) / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet-34,dinov2-8,gpt2")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    print(f"{'model':16s} {'first call, M instructions':>27s}")
    for name in args.models.split(","):
        print(f"{name:16s} {count(name):27.1f}", flush=True)


if __name__ == "__main__":
    main()
