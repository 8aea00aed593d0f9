"""Hook scenarios that could take the interpreter down, each in its own process."""
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import os, signal, sys, threading
sys.path.insert(0, {here!r})
from hookutil import Replace, hooked
from framegraph import _C
"""


def run_isolated(body):
    here = __file__.rsplit("/", 1)[0]
    src = PRELUDE.format(here=here) + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_real_sigint_during_the_callback():
    out = run_isolated("""
        def f(x):
            return x

        def cb(func, code, loc):
            if code is f.__code__ and not getattr(cb, "done", False):
                cb.done = True
                # to this thread, so the handler has run when the call returns (os.kill may
                # deliver it to one of torch's threads, late on a loaded machine)
                signal.pthread_kill(threading.get_ident(), signal.SIGINT)
                sum(range(1000))  # the signal is handled at the next Python instruction
            return None

        # a shell that starts the suite in the background hands its children SIGINT
        # ignored, and then Python installs no handler of its own: install it here
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with hooked(cb):
            try:
                f(1)
            except KeyboardInterrupt:
                print("interrupted")
            print(f(2))
    """)
    assert out.split() == ["interrupted", "2"]


@pytest.mark.parametrize("mode", ["unmodified", "replaced"])
def test_deep_recursion_is_a_recursion_error(mode):
    out = run_isolated(f"""
        def down(n):
            return down(n + 1)

        def alt(n):
            return down(n + 1)

        cb = Replace(down, alt) if {mode!r} == "replaced" else (lambda *a: None)
        with hooked(cb):
            try:
                down(0)
            except RecursionError:
                print("RecursionError")
    """)
    assert out.strip() == "RecursionError"


def test_recursion_under_the_hook_reaches_the_recursion_limit():
    # With a hook CPython nests its evaluator in C for each call. The hook keeps
    # CPython's C recursion units as eager spends them and stops nesting when the
    # C stack runs low, so a recursion stops where eager's does, not earlier
    # (3.12, 3.13) and not in a crash (3.11).
    out = run_isolated("""
        sys.setrecursionlimit(100_000)

        def down(n):
            global deepest
            deepest = n
            down(n + 1)

        def reach():
            try:
                down(0)
            except RecursionError:
                return deepest

        eager = reach()
        with hooked(lambda func, code, f_locals: _C.SKIP):
            hooked_depth = reach()
        with hooked(lambda func, code, f_locals: None):
            asked_each_time = reach()
        print(eager, hooked_depth, asked_each_time)
    """)
    eager, hooked_depth, asked_each_time = map(int, out.split())
    assert eager > 99_000
    assert hooked_depth == eager
    assert asked_each_time == eager


def test_reset_from_inside_a_guard():
    out = run_isolated("""
        def f(x):
            return x

        def guard(fn, x):
            _C.reset(f.__code__)  # frees the entry list the hook is walking
            return True

        with hooked(Replace(f, lambda x: ("alt", x), guard)):
            print(f(1), f(2), f(3))
    """)
    assert out.strip() == "('alt', 1) ('alt', 2) ('alt', 3)"


# In a fresh process, where the slot held CPython's own evaluator before the hook: after
# another evaluator took the slot in this process (the hook then chains to it), the hook
# never hands the slot to that one, and keeps it.
def test_a_callback_running_alone_runs_with_the_slot_handed_back():
    """The callback (a trace) is never intercepted itself: while no other thread is in a
    compiled call, CPython's own evaluator runs it, inlining its Python calls."""
    out = run_isolated("""
        def f(x):
            return x

        seen = []

        def callback(func, code, f_locals):
            if code is f.__code__:
                seen.append(_C.is_installed())
            return None

        with hooked(callback):
            assert f(1) == 1 and _C.is_installed()
        print(seen, _C.is_installed())
    """)
    assert out.split() == ["[False]", "False"]


def test_a_thread_starting_a_compiled_call_during_a_callback_takes_the_slot_again():
    out = run_isolated("""
        def f(x):
            return x

        def g(x):
            return x

        def alt(x):
            return ("alt", x)

        tracing, done, seen = threading.Event(), threading.Event(), {}

        def slow_callback(func, code, f_locals):  # a trace that waits for the other thread
            if code is f.__code__:
                seen["before"] = _C.is_installed()
                tracing.set()
                assert done.wait(10)
                seen["after"] = _C.is_installed()
            return None

        def other():
            assert tracing.wait(10)
            with hooked(Replace(g, alt)):
                seen["g"] = g(2)  # intercepted: this thread's compiled call
            done.set()

        thread = threading.Thread(target=other)
        thread.start()
        with hooked(slow_callback):
            assert f(1) == 1
            assert _C.is_installed()
        thread.join()
        print(sorted(seen.items()), _C.is_installed())
    """)
    assert out.strip() == "[('after', True), ('before', False), ('g', ('alt', 2))] False"
