"""framegraph's pytest plugin (framegraph_pytest.py), run as a user's suite would.

Each test writes a small test module, runs pytest on it in this process
(``pytester``), and reads the outcomes and the terminal output. The inner
runs do not read this suite's ini file, so strict mode is off there unless a
test turns it on. The trace attempts of an inner run are seen by this
suite's own watch too, so a test whose inner run falls back declares it.
"""
import ast
import pathlib
import sys
import textwrap

import pytest
import torch

import framegraph
import framegraph_pytest as pytest_plugin
from framegraph_pytest import assert_same

MODEL = """
import pytest, torch, framegraph


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.lin(x)), {"sum": x.sum()}


def breaks(x):
    x = x + 1
    framegraph.graph_break()
    return x * 2


def raises(x):
    raise ValueError("no")  # escapes the frame: it runs unmodified


def run(fn, *args):
    framegraph.reset()
    return framegraph.compile(fn, backend="eager")(*args)


def falls_back():
    with pytest.raises(ValueError):
        run(raises, torch.ones(1))
"""


@pytest.fixture(scope="module", autouse=True)
def _torch_modules_imported_once():
    """Runs MODEL's code here before any inner run. An in-process run drops the
    modules it imported, and some of torch's (those that register an operator
    library) cannot be imported a second time: the inner runs find them imported."""
    namespace = {}
    exec(compile(MODEL, "<model>", "exec"), namespace)
    net, x = namespace["Net"](), torch.randn(2, 4)
    assert_same(namespace["run"](net, x), net(x))
    namespace["run"](namespace["breaks"], torch.ones(3))
    namespace["falls_back"]()
    framegraph.reset()


def run_inner(pytester, body, *args):
    """Run pytest on MODEL + ``body`` in this process."""
    pytester.makepyfile(MODEL + textwrap.dedent(body))
    return pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider", *args)


def test_a_model_that_is_one_graph_passes_assert_compiles_and_the_marker(pytester):
    result = run_inner(pytester, """
        def test_assert_compiles(framegraph_trace):
            out = framegraph_trace.assert_compiles(Net(), torch.randn(2, 4), graphs=1)
            assert out[0].shape == (2, 3) and set(out[1]) == {"sum"}
            assert (framegraph_trace.graphs, framegraph_trace.breaks) == (1, 0)

        @pytest.mark.framegraph_graphs(1)
        def test_marker():
            net, x = Net(), torch.randn(2, 4)
            torch.testing.assert_close(run(net, x), net(x))
    """)
    result.assert_outcomes(passed=2)


def test_a_graph_break_fails_assert_compiles_with_its_reason_and_a_wrong_marker(pytester):
    result = run_inner(pytester, """
        def test_assert_compiles(framegraph_trace):
            framegraph_trace.assert_compiles(breaks, torch.ones(3), graphs=1)

        @pytest.mark.framegraph_graphs(1)
        def test_wrong_marker():
            run(breaks, torch.ones(3))

        @pytest.mark.framegraph_graphs(2, breaks=1)
        def test_right_marker():
            run(breaks, torch.ones(3))
    """)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        "*breaks compiled to 2 graph(s) with 1 graph break(s); expected 1 graph(s) and no break",
        "*Break Reason 1:", "*Reason: Explicit graph break*", "*User Stack: *test_a_graph_break*.py:* in breaks",
    ])
    result.stdout.fnmatch_lines(["*framegraph_graphs(1, breaks=0) declared, but the test compiled "
                                 "2 graph(s) with 1 graph break(s)",
                                 "*break: Explicit graph break (test_a_graph_break_*.py:* in breaks)"])


def test_a_wrong_result_fails_assert_same_at_its_place():
    one = torch.ones(2)
    assert_same((one, [1], {"a": one}), (one, [1], {"a": one}))
    with pytest.raises(AssertionError, match=r"result\[2\]\['a'\]: Tensor-likes are not close"):
        assert_same((one, [1], {"a": one}), (one, [1], {"a": one + 1}))
    with pytest.raises(AssertionError, match=r"result\[1\]: list of 2, expected list of 1"):
        assert_same((one, [1, 2]), (one, [1]))


@pytest.mark.expect_fallback("exception")  # the inner runs' fallbacks
def test_only_strict_mode_fails_a_test_on_an_undeclared_fallback(pytester):
    body = """
        def test_hides_a_fallback():
            falls_back()

        @pytest.mark.expect_fallback("exception")
        def test_declares_it():
            falls_back()
    """
    run_inner(pytester, body).assert_outcomes(passed=2)
    for strict in (["--framegraph-strict"], ["-o", "framegraph_strict=true"]):
        result = run_inner(pytester, body, *strict)
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines(["*framegraph strict mode*", "*unexpected fallback [[]exception[]] of raises*",
                                     "FAILED *test_hides_a_fallback*"])


@pytest.mark.expect_fallback("exception")  # the inner runs' fallback
def test_the_summary_lists_totals_then_the_tests_with_a_break_or_a_fallback(pytester):
    body = """
        def test_clean(framegraph_trace):
            framegraph_trace.assert_compiles(Net(), torch.randn(2, 4))

        @pytest.mark.parametrize("i", range(21))
        def test_breaks(i):
            run(breaks, torch.ones(3))

        def test_falls_back():
            falls_back()
    """
    result = run_inner(pytester, body)
    result.assert_outcomes(passed=23)
    result.stdout.fnmatch_lines([
        "*- framegraph -*", "22 tests compiled 43 graphs, 21 graph breaks, 1 fallback",
        "*::test_breaks[[]0[]]: 2 graphs, 1 break: Explicit graph break (*.py:* in breaks)",
        "*::test_breaks[[]19[]]: 2 graphs, 1 break*", "... 2 more (--framegraph-summary=all *)"])
    assert "test_clean" not in result.stdout.str()
    result = run_inner(pytester, body, "--framegraph-summary=all")
    result.stdout.fnmatch_lines(["*::test_clean: 1 graph, 0 breaks", "*::test_breaks[[]20[]]: *",
                                 "*::test_falls_back: 0 graphs, 0 breaks, 1 fallback: "
                                 "fallback [[]exception[]] of raises (skip)"])
    assert "more (--framegraph-summary" not in result.stdout.str()
    result = run_inner(pytester, body, "--framegraph-summary=no")
    assert "- framegraph -" not in result.stdout.str()


def test_the_plugin_imports_only_pytest_and_the_stdlib_at_its_top():
    tree = ast.parse(pathlib.Path(pytest_plugin.__file__).read_text())
    names = {alias.name.split(".")[0] for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module.split(".")[0] for node in tree.body if isinstance(node, ast.ImportFrom)}
    assert names - set(sys.stdlib_module_names) == {"pytest"}


def test_a_suite_that_never_imports_framegraph_gets_an_idle_watch_and_no_torch(pytester):
    # the installed plugin, loaded by its entry point as in any project of the environment
    pytester.makepyfile(test_plain="""
        import sys

        def test_plain(framegraph_trace):
            assert not framegraph_trace.active and framegraph_trace.graphs == 0
            assert "torch" not in sys.modules and "framegraph" not in sys.modules
    """)
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", "test_plain.py")
    result.assert_outcomes(passed=1)
    assert "- framegraph -" not in result.stdout.str()
