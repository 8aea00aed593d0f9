"""framegraph: a just-in-time graph capture frontend for PyTorch (PEP 523).

Public API only; see README.md and the design map in shared/design.md.
"""
from . import _C  # noqa: F401  (the frame hook; fails loudly on unsupported Pythons)
from .backends import list_backends, register_backend
from .config import config
from .graph.dynamic import mark_dynamic
from .errors import BackendError, FramegraphError, InternalError, Unsupported
from .diagnostics.explain import ExplainOutput
from .runtime.explain import explain
from .breaks.api import graph_break
from .runtime.hook import OptimizedModule, compile, disable, is_compiling, reset
from .diagnostics.logs import configure_from_env as _configure_logs
from .diagnostics.logs import set_logs

__version__ = "0.1.0"

_configure_logs()

from .diagnostics import trace_log as _trace_log  # noqa: E402

_trace_log.configure_from_env()

__all__ = [
    "compile", "disable", "reset", "explain", "ExplainOutput", "is_compiling", "set_logs", "list_backends", "register_backend", "config",
    "Unsupported", "FramegraphError", "InternalError", "BackendError", "OptimizedModule",
    "graph_break", "mark_dynamic",
]
