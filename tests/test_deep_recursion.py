"""Recursion goes as deep under framegraph as in eager.

With a frame hook installed CPython nests its evaluator in C for every Python
call, so a recursion eager runs on the data stack alone could overflow the C
stack (3.11) or hit the C recursion limit (3.12, 3.13). Each case runs in a
fresh process: a crash shows as its exit status.
"""
import subprocess
import sys
import textwrap

PRELUDE = """
import sys, threading, torch, framegraph
sys.setrecursionlimit(200_000)
DEPTH = 100_000
graphs = []

def counting(gm, example_inputs):
    graphs.append(gm)
    return gm.forward

def count(n):
    return 0 if n == 0 else 1 + count(n - 1)

def report(name, fn, *args):
    framegraph.reset()  # count's code caches what an earlier case compiled
    graphs.clear()
    compiled = framegraph.compile(fn, backend=counting)
    first, again = compiled(*args), compiled(*args)
    same = torch.equal(first, fn(*args)) and torch.equal(again, first)
    print(name, same, len(graphs))
"""


def run(body):
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return proc.stdout.splitlines()


def test_a_recursion_100000_deep_runs_as_in_eager():
    lines = run("""
        def after_a_break(x):
            y = x + 1
            framegraph.graph_break()
            return y + count(DEPTH)

        def inside(x):
            return x + count(DEPTH)

        def into_itself(x, n):
            return x if n == 0 else into_itself(x + 1, n - 1)

        x = torch.ones(2)
        report("after_a_break", after_a_break, x)
        report("inside", inside, x)
        report("into_itself", into_itself, x, DEPTH)
        threading.stack_size(64 << 20)  # a thread's own stack is measured, not assumed
        worker = threading.Thread(target=report, args=("in_a_thread", inside, x))
        worker.start()
        worker.join()
    """)
    # Inlining stops at 32 calls deep: the graphs are the parts around the calls
    # the tracer left to the interpreter, as many for 100,000 as for 100.
    assert lines == ["after_a_break True 4", "inside True 3", "into_itself True 2", "in_a_thread True 3"]


def test_runaway_recursion_after_a_break_stops_at_the_recursion_limit():
    lines = run("""
        sys.setrecursionlimit(50_000)

        def runaway(n):
            global deepest
            deepest = n
            return runaway(n + 1)

        def depth_reached():
            # counted from the bottom of the stack: the compiled program's frames differ
            below, frame = 0, sys._getframe()
            while frame is not None:
                below, frame = below + 1, frame.f_back
            try:
                runaway(0)
            except RecursionError:
                return below + deepest

        def program(x):
            y = x * 0
            framegraph.graph_break()
            return y + depth_reached()

        x = torch.ones(1)
        eager = int(program(x).item())
        graphs.clear()
        compiled = int(framegraph.compile(program, backend=counting)(x).item())
        print(eager, compiled, len(graphs))
    """)
    eager, compiled, graph_count = map(int, lines[0].split())
    # Each compiled frame of runaway does the work of the 32 calls the tracer
    # inlined, so the frames (what the limit counts) and the values of n differ
    # a little; the C stack no longer stops it early (747 frames on 3.12 before).
    assert eager > 49_000 and abs(compiled - eager) <= 32
    assert graph_count == 9


def test_a_limit_lowered_to_provoke_recursion_error_behaves_as_in_eager():
    # CPython's test_exceptions sets the limit a few frames above the current depth:
    # a frame met with too little room to trace runs as it is, and nothing of
    # framegraph raises or half-imports a module on the way
    lines = run("""
        def provoke(x):
            def recurse_in_except():
                try:
                    1 / 0
                except ZeroDivisionError:
                    recurse_in_except()

            limit = sys.getrecursionlimit()
            depth = 1
            while True:
                try:
                    sys.setrecursionlimit(depth)
                    break
                except RecursionError:
                    depth += 1
            sys.setrecursionlimit(depth + 10)
            try:
                recurse_in_except()
            except RecursionError:
                raised = True
            finally:
                sys.setrecursionlimit(limit)
            return x + raised

        report("provoke", provoke, torch.ones(2))
        report("afterwards", lambda x: x * len(repr(ValueError("v"))), torch.ones(2))
    """)
    assert lines == ["provoke True 0", "afterwards True 1"]  # provoke: the limit changes mid-frame, it runs as it is
