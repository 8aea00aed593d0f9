"""Per-call cost of the C hook: plain call vs SKIP-marked vs a cache hit.

    python benchmarks/hook_overhead.py [--rounds 15]

Everything runs in one process, interleaved, and the minimum over rounds is
reported (the machines are noisy). Targets: SKIP within 30 ns of a
plain call; a cache hit within 200 ns plus the guard's own cost.
"""
import argparse
import timeit

from framegraph import _C
from framegraph.runtime.convert_frame import as_positional


def f(a, b):
    return a


def g(a, b):
    return a


def h(a, b):
    return a


def k(a, b):
    return a


def replacement(a, b):
    return a


def trivial_guard(fn, a, b):
    return True


def _skip_callback(func, code, f_locals):
    return _C.SKIP


def _hit_callback(func, code, f_locals):
    if code is h.__code__:
        return trivial_guard, as_positional(replacement.__code__)
    return _C.SKIP


def measure(fn, callback, number):
    prior = _C.set_callback(callback)
    try:
        fn(1, 2)  # first call: the callback marks or caches
        return timeit.timeit("fn(1, 2)", globals={"fn": fn}, number=number) / number * 1e9
    finally:
        _C.set_callback(prior)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--number", type=int, default=200_000)
    args = parser.parse_args()
    cases = {
        "plain call, no hook": lambda: measure(f, None, args.number),
        "hook + callback, code marked SKIP": lambda: measure(g, _skip_callback, args.number),
        "cache hit, trivial guard (re-call)": lambda: measure(h, _hit_callback, args.number),
        "compile() wrapper, code marked SKIP": lambda: measure(_C.Wrapper(k, _skip_callback), None,
                                                               args.number),
        "guard alone": lambda: timeit.timeit("g(f, 1, 2)", globals={"g": trivial_guard, "f": f},
                                             number=args.number) / args.number * 1e9,
    }
    best = {name: float("inf") for name in cases}
    for _ in range(args.rounds):
        for name, run in cases.items():
            best[name] = min(best[name], run())
    plain = best["plain call, no hook"]
    print(f"{'case':40s} {'ns/call':>9s} {'vs plain':>9s} {'ratio':>6s}")
    for name, ns in best.items():
        print(f"{name:40s} {ns:9.1f} {ns - plain:+9.1f} {ns / plain:6.2f}")
    skip_extra = best["hook + callback, code marked SKIP"] - plain
    hit_extra = best["cache hit, trivial guard (re-call)"] - plain - best["guard alone"]
    print(f"\nSKIP overhead {skip_extra:.1f} ns (target < 30); "
          f"cache-hit overhead beyond the guard {hit_extra:.1f} ns (target < 200)")


if __name__ == "__main__":
    main()
