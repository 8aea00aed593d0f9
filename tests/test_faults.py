"""Fault injection: whatever stage of the compiler fails, the user gets eager's result.

Each test makes one real stage raise (tracing an instruction, building the
graph, building guards, generating code, the backend) and checks that the
compiled function still returns what eager returns, that one warning names
the reason, and that `config.strict` / `fullgraph=True` raise a framegraph
error instead.
"""
import logging

import pytest
import torch

import framegraph
from framegraph.codegen import pycodegen as codegen
from framegraph.guards import compile as guards
from framegraph.graph import output_graph
from framegraph.errors import FramegraphError
from framegraph.tracer import translator


def work(x, y):
    return torch.relu(x) * 2 + y


def boom(*args, **kwargs):
    raise RuntimeError("injected fault")


STAGES = {
    "tracer": (translator.TranslatorBase, "step"),
    "output graph": (output_graph.OutputGraph, "compile"),
    "guards": (guards.CompiledGuard, "_compile"),
    "codegen": (codegen, "assemble_frame_code"),
}


@pytest.fixture(autouse=True)
def fresh_caches():
    # Load every lazily imported compiler module first, so a module imported
    # while a stage is patched cannot bind the injected fault for good.
    framegraph.compile(lambda t: t + 1, backend="eager")(torch.ones(1))
    framegraph.reset()
    yield
    framegraph.reset()


@pytest.mark.expect_internal_error("RuntimeError")
@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_failing_stage_falls_back_to_eager(stage, monkeypatch, caplog):
    owner, name = STAGES[stage]
    monkeypatch.setattr(owner, name, boom)
    x, y = torch.randn(5), torch.randn(5)
    with caplog.at_level(logging.WARNING, logger="framegraph"):
        compiled = framegraph.compile(work, backend="eager")
        assert torch.equal(compiled(x, y), work(x, y))
        assert torch.equal(compiled(x, y), work(x, y))
    messages = [r.getMessage() for r in caplog.records if "injected fault" in r.getMessage()]
    assert len(messages) == 1 and "work" in messages[0]


@pytest.mark.expect_internal_error("RuntimeError")
@pytest.mark.parametrize("stage", sorted(STAGES))
def test_strict_mode_raises_instead(stage, monkeypatch):
    owner, name = STAGES[stage]
    monkeypatch.setattr(owner, name, boom)
    monkeypatch.setattr(framegraph.config, "strict", True)
    with pytest.raises(FramegraphError, match="injected fault"):
        framegraph.compile(work, backend="eager")(torch.randn(5), torch.randn(5))


@pytest.mark.expect_internal_error("BackendError")
def test_a_raising_backend_falls_back_to_eager(caplog):
    x, y = torch.randn(3), torch.randn(3)
    with caplog.at_level(logging.WARNING, logger="framegraph"):
        assert torch.equal(framegraph.compile(work, backend=boom)(x, y), work(x, y))
    assert "injected fault" in caplog.text
    framegraph.reset()  # the fallback marked `work` SKIP: let fullgraph trace it again
    with pytest.raises(FramegraphError, match="injected fault"):
        framegraph.compile(work, backend=boom, fullgraph=True)(x, y)


@pytest.mark.expect_internal_error("BackendError")
def test_a_backend_failing_midway_leaves_the_grad_mode_alone():
    def half_run(gm, example_inputs):  # as AOTAutograd failing after a set_grad_enabled node
        torch._C._set_grad_enabled(False)
        raise RuntimeError("injected fault")

    x, y = torch.randn(3), torch.randn(3)
    assert torch.equal(framegraph.compile(work, backend=half_run)(x, y), work(x, y))
    assert torch.is_grad_enabled()


@pytest.mark.expect_fallback("exception")  # the raise escapes: divide() runs unmodified
def test_user_exceptions_keep_type_message_and_location():
    def divide(x, n):
        y = x * 2
        if n == 0:
            raise ZeroDivisionError(f"n is {n}")
        return y / n

    compiled = framegraph.compile(divide, backend="eager")
    with pytest.raises(ZeroDivisionError, match="n is 0") as info:
        compiled(torch.ones(2), 0)
    last = info.traceback[-1]
    assert str(last.path) == __file__ and last.name.startswith("divide")


def test_keyboard_interrupt_while_tracing_leaves_the_hook_usable(monkeypatch, framegraph_trace):
    calls = []

    def interrupt_once(self, *args, **kwargs):
        calls.append(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(output_graph.OutputGraph, "compile", interrupt_once)
    compiled = framegraph.compile(work, backend="eager")
    with pytest.raises(KeyboardInterrupt):
        compiled(torch.ones(2), torch.ones(2))
    monkeypatch.undo()
    x, y = torch.randn(2), torch.randn(2)
    assert torch.equal(compiled(x, y), work(x, y)) and calls == [1]
    assert framegraph_trace.graphs == 2  # the fixture's warm-up, then work (traced again after the interrupt)


def test_keyboard_interrupt_during_a_compiled_call_leaves_the_hook_usable(framegraph_trace):
    state = {"interrupt": True}

    def backend(gm, example_inputs):
        def run(*args):
            if state["interrupt"]:
                state["interrupt"] = False
                raise KeyboardInterrupt
            return gm.forward(*args)
        return run

    compiled = framegraph.compile(work, backend=backend)
    x, y = torch.randn(3), torch.randn(3)
    with pytest.raises(KeyboardInterrupt):
        compiled(x, y)
    assert framegraph._C.get_callback() is None
    assert torch.equal(compiled(x, y), work(x, y))
    assert framegraph_trace.graphs == 2  # the fixture's warm-up, then work once: its entry is reused


def test_deep_recursion_in_compiled_code_is_a_recursion_error():
    import subprocess
    import sys

    script = (
        "import torch, framegraph\n"
        "def down(x, n):\n"
        "    return x if n == 0 else down(x + 1, n - 1)\n"
        "try:\n"
        "    framegraph.compile(down, backend='eager')(torch.zeros(1), 100000)\n"
        "except RecursionError:\n"
        "    print('RecursionError')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "RecursionError"
