"""Log channels: names, levels, the environment variable, and clear errors."""
import logging
import subprocess
import sys

import pytest

import framegraph
from framegraph import pyver
from framegraph.diagnostics import logs


def test_spec_parsing():
    assert logs.parse_spec("bytecode, +graph") == {"bytecode": logging.INFO, "graph": logging.DEBUG}
    assert set(logs.parse_spec("all")) == set(logs.CHANNELS)


def test_unknown_channel_lists_the_valid_ones():
    with pytest.raises(ValueError, match="channels: bytecode, graph, guards"):
        framegraph.set_logs(bytecod=True)
    with pytest.raises(ValueError, match="unknown framegraph log channel 'nope'"):
        logs.parse_spec("graph,nope")


def test_set_logs_turns_channels_on_and_off():
    framegraph.set_logs(guards=True, trace=logging.DEBUG)
    try:
        assert logs.enabled("guards") and logs.enabled("trace", logging.DEBUG)
        assert not logs.enabled("graph")
    finally:
        framegraph.set_logs(all=False)
    assert not logs.enabled("guards") and not logs.enabled("trace", logging.DEBUG)


def test_bad_environment_variable_is_a_clear_error():
    proc = subprocess.run([sys.executable, "-c", "import framegraph"], capture_output=True, text=True,
                          env={"FRAMEGRAPH_LOGS": "graph,bogus", "PATH": ""})
    assert proc.returncode != 0 and "unknown framegraph log channel 'bogus'" in proc.stderr


class Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)

    def text(self, channel):
        return "\n".join(r.getMessage() for r in self.records if r.name == f"framegraph.{channel}")


@pytest.fixture
def captured():
    handler = Capture()
    root = logging.getLogger("framegraph")
    root.addHandler(handler)
    framegraph.set_logs(bytecode=True, graph=True, guards=True, recompiles=True, trace=True)
    yield handler
    framegraph.set_logs(all=False)
    root.removeHandler(handler)


def test_channels_show_what_the_compiler_did(captured, framegraph_trace):
    import torch

    def f(x):
        return torch.sin(x) + 1

    compiled = framegraph.compile(f, backend="eager")
    compiled(torch.randn(8))
    compiled(torch.randn(16))
    assert framegraph_trace.graphs == 2

    bytecode = captured.text("bytecode")
    assert "ORIGINAL BYTECODE f" in bytecode and "MODIFIED BYTECODE f" in bytecode
    # dis writes the NULL where the Python pushes it (3.13: after the global)
    assert "LOAD_GLOBAL" in bytecode and ("(__compiled_fn_" if pyver.NULL_ABOVE_CALLABLE else "(NULL + __compiled_fn_") in bytecode
    assert "graph_out_0 = __compiled_fn_" in bytecode and "return graph_out_0[0]" in bytecode
    graph = captured.text("graph")
    assert "sin = torch.sin(l_x)  # f32[8]" in graph and "return torch.sin(x) + 1" in graph
    assert "L['x']" in captured.text("guards")
    assert "Recompiling f" in captured.text("recompiles") and "L['x']" in captured.text("recompiles")
    # torch is a closure cell here; 3.12 loads a method with LOAD_ATTR
    assert f"{pyver.LOAD_METHOD_FORM[0]} 'sin'" in captured.text("trace")


def test_logging_off_prints_nothing(capsys, framegraph_trace):
    import torch

    def h(x):
        return x * 2

    framegraph.compile(h, backend="eager")(torch.ones(2))
    assert framegraph_trace.graphs == 1
    assert capsys.readouterr().err == ""
