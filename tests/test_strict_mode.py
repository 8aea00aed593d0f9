"""The strict mode (framegraph's pytest plugin) catches what comparing with eager cannot.

The tests here that make framegraph fall back on purpose declare it
themselves: the suite's own watch sees the same trace attempts. The plugin's
options, assertions and summary are tested in test_pytest_plugin.py.
"""
import textwrap

import pytest
import torch

import framegraph
from framegraph import config
from framegraph_pytest import TraceWatch


def raises(x):
    raise ValueError("no")  # an escaping exception: the frame runs unmodified


def adds(x):
    return x + 1


def run(fn, *args):
    try:
        return framegraph.compile(fn, backend="eager")(*args)
    except ValueError:
        return None


@pytest.mark.expect_fallback("exception")
def test_an_undeclared_fallback_is_a_problem_and_a_declared_one_is_not():
    for expected, problems in (((), ["unexpected fallback [exception] of raises"]), (("exception",), [])):
        framegraph.reset()
        watch = TraceWatch(fallbacks=expected)
        with watch.observing():
            run(raises, torch.ones(1))
        assert [p.split(" (")[0] for p in watch.problems()] == problems


def test_a_declared_fallback_that_does_not_happen_is_a_problem():
    watch = TraceWatch(fallbacks=["exception"])
    with watch.observing():
        run(adds, torch.ones(1))
    assert watch.problems() == ["expect_fallback('exception') declared, but no such fallback happened"]
    assert (watch.frames, watch.graphs) == (1, 1)


@pytest.mark.expect_internal_error("RuntimeError")
def test_an_internal_error_is_a_problem_even_when_the_result_is_right(monkeypatch):
    from framegraph.codegen import pycodegen as codegen

    def boom(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(codegen, "assemble_frame_code", boom)
    watch = TraceWatch()
    with watch.observing():
        assert torch.equal(framegraph.compile(adds, backend="eager")(torch.ones(1)), torch.ones(1) + 1)
    assert [p.split(" (")[0] for p in watch.problems()] == ["unexpected internal error RuntimeError in adds"]
    assert TraceWatch(internal_errors=["RuntimeError"]).problems() != []  # declared, not seen


@pytest.mark.expect_fallback("recompile_limit")
def test_reaching_the_recompile_limit_is_a_fallback():
    watch = TraceWatch()
    config.recompile_limit = 1
    try:
        with watch.observing():
            compiled = framegraph.compile(lambda x, n: x * n, backend="eager")
            for n in (1.5, 2.5):
                assert torch.equal(compiled(torch.ones(1), n), torch.ones(1) * n)
    finally:
        config.recompile_limit = 8
    assert [p.split(" (")[0] for p in watch.problems()] == ["unexpected fallback [recompile_limit] of <lambda>"]


def test_the_suite_runs_strict_with_the_stack_effect_check(framegraph_trace, pytestconfig):
    assert config.debug_stack_effect and isinstance(framegraph_trace, TraceWatch)
    assert framegraph_trace.active and pytestconfig.getini("framegraph_strict") is True


@pytest.mark.expect_fallback("exception")  # the inner session's two tests fall back here too
def test_a_test_with_an_undeclared_fallback_fails_and_one_that_declares_it_passes(pytester):
    pytester.makepyfile(textwrap.dedent("""
        import pytest, torch, framegraph

        def raises(x):
            raise ValueError("no")

        def run():
            framegraph.reset()
            with pytest.raises(ValueError):
                framegraph.compile(raises, backend="eager")(torch.ones(1))

        def test_hides_a_fallback():
            run()  # the result is eager's: only the strict mode sees the fallback

        @pytest.mark.expect_fallback("exception")
        def test_declares_it():
            run()
    """))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:randomly", "--framegraph-strict")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*unexpected fallback [[]exception[]] of raises*",
                                 "FAILED *test_hides_a_fallback*"])
