"""Another compiler inside compiled code: it ends, and gives eager's answer.

In eager mode ``torch.cond`` (``while_loop``, ``scan``) calls ``torch.compile``
itself, which imports torch._dynamo on first use and installs its own frame
evaluator. When framegraph cannot capture such a call (its body breaks), the
call runs in CPython inside a framegraph-compiled frame: framegraph must not
trace the import system nor the frames that torch's evaluator owns. Each case
runs in a fresh process (torch._dynamo not yet imported), with a limit that
fails the test on a hang.
"""
import json
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import json, torch, framegraph
graphs = []
def counting(gm, example_inputs):
    graphs.append(gm)
    return gm.forward
def report(compiled, eager):
    same = all(torch.equal(a, b) for a, b in zip(torch.utils._pytree.tree_leaves(compiled),
                                                  torch.utils._pytree.tree_leaves(eager)))
    print(json.dumps({"same": same, "graphs": len(graphs)}))
"""

CASES = {
    "cond whose branch breaks runs torch.cond in CPython": ("""
        def f(x):
            def true_fn(x):
                return x * x.sum().item()
            return torch.cond(x.sum() > 0, true_fn, lambda x: x - 1, (x,)) + 1
        x = torch.ones(4)
        report(framegraph.compile(f, backend=counting)(x), f(x))
        """, 2),  # the predicate before the break, the `+ 1` after it
    "a torch.compile'd function is traced as the function it wraps": ("""
        @torch.compile(backend="eager")
        def inner(x):
            return x.cos() + 1
        def f(x):
            return inner(x.sin()) * 2
        x = torch.randn(4)
        report(framegraph.compile(f, backend=counting, fullgraph=True)(x), f(x))
        """, 1),
    "a cond torch.compile failed on before framegraph ran fails again, as in eager": ("""
        # torch leaves its frame evaluator installed after the failed compile; the next
        # one installs itself over framegraph's with framegraph's as the one it chains to
        def f(x, out):
            def write(x, out):
                out.add_(1)  # torch.cond refuses a branch that writes to an operand
                return x.clone()
            return torch.cond(x.sum() > 0, write, lambda x, out: x.clone(), (x, out))
        x = torch.ones(3)
        def error_of(fn):
            try:
                fn(x, torch.zeros(3))
            except Exception as e:
                return type(e).__name__
        eager = error_of(f)
        compiled = error_of(framegraph.compile(f, backend=counting))
        # and framegraph's next compiled call, which chains to torch's evaluator left behind
        doubled = framegraph.compile(lambda x: x * 2, backend=counting)(x)
        same = eager == compiled and eager is not None and torch.equal(doubled, x * 2)
        print(json.dumps({"same": same, "graphs": len(graphs)}))
        """, 2),  # the predicate, before the break at the call; the lambda
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_nested_compiler_ends_with_eagers_answer(case):
    body, graphs = CASES[case]
    script = PRELUDE + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["same"], result
    assert "partially initialized module" not in proc.stderr, proc.stderr[-3000:]
    assert result["graphs"] == graphs, (result, proc.stderr[-3000:])
