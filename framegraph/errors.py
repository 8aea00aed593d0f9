"""Exception classes that framegraph raises to its users.

`Unsupported` means the tracer met something it cannot capture (the frame then
runs unmodified, or, under `fullgraph=True` / `config.strict`, the error
reaches the user). `InternalError` is a bug in framegraph. `BackendError`
wraps an exception raised by a backend compiler.
"""


class FramegraphError(Exception):
    """Base class of every framegraph error."""


class Unsupported(FramegraphError):
    """The tracer cannot capture this code.

    `reason` is a short human-readable reason; graph-break catalogue entries
    (see `graph_breaks.py`) fill `entry` with their structured data.
    """

    def __init__(self, reason, *, entry=None, context=""):
        super().__init__(reason)
        self.reason = reason
        self.entry = entry
        self.context = context


class InternalError(FramegraphError):
    """A bug in framegraph: something that should never happen did."""


class BackendError(FramegraphError):
    """The backend compiler raised while compiling a captured graph."""
