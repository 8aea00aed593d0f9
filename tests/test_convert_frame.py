"""The callback's policy: skip rules, eager fallback on compiler errors, strict mode.

The tracer is replaced by a stand-in here, so these tests pin the policy of
convert_frame alone: whatever the tracer does, the user gets eager's result
(or, when asked for, a clear framegraph error).
"""
import logging
import sys
import types

import pytest
import torch

import framegraph
from framegraph import _C
from framegraph.runtime import skip
from framegraph.errors import InternalError, Unsupported


@pytest.fixture
def fake_tracer(monkeypatch):
    """Install a stand-in `framegraph.runtime.pipeline` whose trace_frame the test sets."""
    module = types.ModuleType("framegraph.runtime.pipeline")
    calls = []

    def trace_frame(func, code, f_locals, options):
        calls.append(code.co_name)
        return module.behaviour(func, code, f_locals, options)

    module.trace_frame = trace_frame
    module.calls = calls
    monkeypatch.setitem(sys.modules, "framegraph.runtime.pipeline", module)
    yield module
    framegraph.reset()


def user_fn(x):
    return x * 3


@pytest.mark.expect_internal_error("RuntimeError")
def test_compiler_crash_runs_eager_and_warns_once(fake_tracer, caplog):
    def crash(*args):
        raise RuntimeError("tracer bug")

    fake_tracer.behaviour = crash
    compiled = framegraph.compile(user_fn, backend="eager")
    x = torch.arange(3.0)
    with caplog.at_level(logging.WARNING, logger="framegraph"):
        assert torch.equal(compiled(x), x * 3)
        assert torch.equal(compiled(x), x * 3)
    assert fake_tracer.calls == ["user_fn"]  # marked SKIP: never traced again
    assert _C.cache_state(user_fn.__code__) == "skip"
    warnings = [r.getMessage() for r in caplog.records if "user_fn" in r.getMessage()]
    assert len(warnings) == 1 and "tracer bug" in warnings[0] and "running it unmodified" in warnings[0]


@pytest.mark.expect_internal_error("ZeroDivisionError")
def test_strict_config_raises_a_framegraph_error(fake_tracer, monkeypatch):
    fake_tracer.behaviour = lambda *a: 1 / 0
    monkeypatch.setattr(framegraph.config, "strict", True)
    with pytest.raises(InternalError, match="ZeroDivisionError") as info:
        framegraph.compile(user_fn, backend="eager")(torch.ones(1))
    assert isinstance(info.value.__cause__, ZeroDivisionError)


@pytest.mark.expect_fallback("unsupported")  # a bare Unsupported, no catalogue entry
def test_unsupported_falls_back_unless_fullgraph(fake_tracer, caplog):
    def refuse(*args):
        raise Unsupported("Data-dependent branching: attempted to jump with TensorVariable()")

    fake_tracer.behaviour = refuse
    x = torch.ones(2)
    with caplog.at_level(logging.WARNING, logger="framegraph"):
        assert torch.equal(framegraph.compile(user_fn, backend="eager")(x), x * 3)
    assert "Data-dependent branching" in caplog.text
    framegraph.reset()
    with pytest.raises(Unsupported, match="attempted to jump"):
        framegraph.compile(user_fn, backend="eager", fullgraph=True)(x)


def test_traced_code_is_cached_and_run(fake_tracer):
    def replacement(x):
        return ("replaced", x)

    fake_tracer.behaviour = lambda func, code, f_locals, options: types.SimpleNamespace(
        guard=lambda fn, x: isinstance(x, int), code=replacement.__code__)
    compiled = framegraph.compile(user_fn, backend="eager")
    assert compiled(2) == ("replaced", 2)
    assert compiled(3) == ("replaced", 3)
    assert fake_tracer.calls == ["user_fn"]


def test_quick_filter_skips_libraries_but_not_user_roots():
    import json

    assert skip.skip_reason(json.dumps.__code__) == "the standard library"
    assert skip.skip_reason(torch.nn.functional.relu.__code__) == "torch internals"
    assert skip.skip_reason(framegraph.compile.__code__) == "framegraph itself"
    assert skip.skip_reason(user_fn.__code__) is None
    framegraph.compile(torch.nn.Linear(2, 2), backend="eager")  # the user compiled it: trace it
    assert skip.skip_reason(torch.nn.Linear.forward.__code__) is None
