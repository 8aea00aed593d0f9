"""What scripts/sanitize.sh runs under AddressSanitizer: real programs through
compiled calls, graph breaks, resume functions of resume functions, recompiles
and cache resets, each compared with eager.

    python scripts/sanitize_run.py [--quick]

--quick: the programs and two small models (the slice CI runs); otherwise
every model of benchmarks/zoo.py (ZOO and MORE: eleven) and CPython's own
functools.partial tests with each test method compiled. Exits non-zero if
a result differs from eager; a memory error aborts the process with a report.
"""
import argparse
import functools
import gc
import logging
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "benchmarks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

import framegraph  # noqa: E402

logging.disable(logging.WARNING)  # the expected breaks and fallbacks are logged as warnings


def counting():
    def backend(gm, example_inputs):
        backend.graphs += 1
        return gm.forward
    backend.graphs = 0
    return backend


def capture(*args, **kw):
    return args, kw


def loop_with_breaks(self, items):
    """A break inside a loop: each iteration resumes in a resume function of
    the last one, with the loop's iterator and tuples as arguments."""
    out = []
    for args in items:
        p = self.partial(capture, *args)
        got, kw = p("x")
        out.append((got, kw))
        if len(got) > 2:
            framegraph.graph_break()
    return out


class Partials:
    partial = functools.partial


class PyPartials:
    def partial(self, fn, *args):
        return lambda *more: fn(*args, *more)


def closures(x, n):
    def inner(y):
        return y * n + x.sum()
    total = x
    for i in range(n):
        total = inner(total)
        if i == 1:
            framegraph.graph_break()
    return total, inner


def shared_cells(x, n):
    """A closure made before a break shares its cell with the resumed frame,
    which writes it (nonlocal) after the break: the cell itself is handed on."""
    total = x.sum()

    def bump(k):
        nonlocal total
        total = total + k
        return total

    bump(1)
    framegraph.graph_break()
    for i in range(n):
        bump(i)
        if i == 1:
            framegraph.graph_break()
    total = total * 2
    return bump(0), total


def programs():
    """Small programs, each run compiled several times with new arguments."""
    items = [(), (0,), (0, 1), (0, 1, 2), (0, 1, 2, 3)]
    for owner in (Partials(), PyPartials(), Partials()):
        f = framegraph.compile(loop_with_breaks, backend=counting())
        for _ in range(3):
            fresh = tuple(tuple(list(t)) for t in items)  # new tuples each call: freed after it
            assert f(owner, fresh) == loop_with_breaks(owner, fresh)
            gc.collect()
    g = framegraph.compile(closures, backend=counting())
    for n in (2, 3, 2, 4):
        x = torch.randn(3)
        got, _ = g(x, n)
        want, _ = closures(x, n)
        assert torch.equal(got, want)
    c = framegraph.compile(shared_cells, backend=counting())
    for n in (1, 3, 2, 3):
        x = torch.randn(4)
        got, want = c(x, n), shared_cells(x, n)
        assert all(torch.equal(a, b) for a, b in zip(got, want))
        gc.collect()
    framegraph.reset()
    print("programs: ok", flush=True)


def models(names):
    import zoo
    for name in names:
        framegraph.reset()
        model, inputs = zoo.build(name)
        backend = counting()
        compiled = framegraph.compile(model, backend=backend)
        with torch.no_grad():
            want = zoo.output_tensor(model(**inputs))
            for _ in range(3):
                got = zoo.output_tensor(compiled(**inputs))
                if not torch.equal(got, want):
                    sys.exit(f"{name}: compiled output differs from eager")
        del model, compiled
        gc.collect()
        print(f"{name}: ok ({backend.graphs} graphs)", flush=True)


def cpython_partial_tests():
    from test import test_functools

    suite = unittest.TestSuite()
    for cls in (test_functools.TestPartialC, test_functools.TestPartialCSubclass,
                test_functools.TestPartialPy, test_functools.TestPartialPySubclass):
        for name in unittest.TestLoader().getTestCaseNames(cls):
            test = cls(name)
            setattr(test, name, framegraph.compile(getattr(test, name), backend="eager"))
            suite.addTest(test)
    result = unittest.TextTestRunner(verbosity=0, stream=open(os.devnull, "w")).run(suite)
    print(f"test_functools partial tests: ran {result.testsRun}, "
          f"{len(result.failures)} failed, {len(result.errors)} errors", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the CI slice")
    args = parser.parse_args()
    programs()
    import zoo
    models(["gpt2", "bloom"] if args.quick else list(zoo.ZOO) + list(zoo.MORE))
    if not args.quick:
        cpython_partial_tests()


if __name__ == "__main__":
    main()
