"""Log channels: names, levels, the environment variable, and clear errors."""
import logging
import subprocess
import sys

import pytest

import framegraph
from framegraph import logs


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
