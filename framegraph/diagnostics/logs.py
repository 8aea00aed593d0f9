"""Named log channels, switched on by `FRAMEGRAPH_LOGS` or `framegraph.set_logs()`.

Each channel is a standard `logging` logger under `framegraph.` (so users can
route them like any other logger):

    bytecode      ORIGINAL / MODIFIED BYTECODE listings of each compiled frame
    graph         each captured graph as readable code
    guards        the guard lines of each new cache entry
    graph_breaks  why the tracer stopped, where, and what to do about it
    recompiles    which guard failed and what the user could change
    trace         (debug) one line per symbolically executed instruction

`FRAMEGRAPH_LOGS="bytecode,+graph"` turns channels on; a `+` prefix asks for
debug detail; `all` is every channel. Nothing here runs on the per-call path:
the compiler checks `enabled(channel)` only while tracing.
"""
import logging
import os
import sys

CHANNELS = ("bytecode", "graph", "guards", "graph_breaks", "recompiles", "trace")

_handler = None


def getLogger(channel):  # noqa: N802  (mirrors logging.getLogger)
    """The logger of `channel` (an error for unknown names)."""
    _check(channel)
    return logging.getLogger(f"framegraph.{channel}")


def enabled(channel, level=logging.INFO):
    """Whether `channel` would print a record at `level` now."""
    return logging.getLogger(f"framegraph.{channel}").isEnabledFor(level)


def _check(channel):
    if channel not in CHANNELS:
        raise ValueError(f"unknown framegraph log channel {channel!r}; channels: {', '.join(CHANNELS)}, all")


def _ensure_handler():
    global _handler
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("[framegraph.%(channel)s] %(message)s"))
        _handler.addFilter(_add_channel)
        root = logging.getLogger("framegraph")
        root.addHandler(_handler)
        root.propagate = False


def _add_channel(record):
    record.channel = record.name.split(".", 1)[-1]
    return True


def set_logs(**channels):
    """Turn channels on or off: `set_logs(bytecode=True, graph=logging.DEBUG, all=False)`.

    True means INFO, False or None means off, an int is a `logging` level.
    """
    if "all" in channels:
        value = channels.pop("all")
        channels = {**{c: value for c in CHANNELS}, **channels}
    for channel, value in channels.items():
        _check(channel)
        if value is True:
            level = logging.INFO
        elif value in (False, None):
            level = logging.WARNING  # off: only real warnings get through
        elif isinstance(value, int):
            level = value
        else:
            raise TypeError(f"set_logs({channel}=...) takes a bool or a logging level, got {value!r}")
        logging.getLogger(f"framegraph.{channel}").setLevel(level)
        if level < logging.WARNING:
            _ensure_handler()


def parse_spec(spec):
    """`"bytecode,+graph"` -> {"bytecode": INFO, "graph": DEBUG}."""
    out = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        level = logging.INFO
        if item.startswith("+"):
            level, item = logging.DEBUG, item[1:]
        if item == "all":
            out.update({c: level for c in CHANNELS})
        else:
            _check(item)
            out[item] = level
    return out


def configure_from_env(environ=os.environ):
    """Apply `FRAMEGRAPH_LOGS` (called once at import)."""
    spec = environ.get("FRAMEGRAPH_LOGS", "")
    if spec:
        set_logs(**parse_spec(spec))
