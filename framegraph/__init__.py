"""framegraph: a just-in-time graph capture frontend for PyTorch (PEP 523).

Public API only; see README.md and the design map in shared/design.md.
"""
from . import _C  # noqa: F401  (the frame hook; fails loudly on unsupported Pythons)
from .backends import (get_default_backend, list_backends, load_cache_artifacts, register_backend,
                       save_cache_artifacts, set_default_backend)
from .breaks.api import graph_break, is_compiling
from .config import config
from .diagnostics.explain import ExplainOutput
from .diagnostics.logs import configure_from_env as _configure_logs
from .diagnostics.logs import set_logs
from .errors import BackendError, FramegraphError, InternalError, Unsupported
from .graph.dynamic import mark_dynamic, mark_static, mark_static_address, mark_unbacked, maybe_mark_dynamic
from .guards.filter import (GuardFilterEntry, keep_portable_guards_unsafe, keep_tensor_guards_unsafe,
                            skip_all_guards_unsafe, skip_guard_on_all_nn_modules_unsafe, skip_guard_on_globals_unsafe,
                            skip_guard_on_inbuilt_nn_modules_unsafe)
from .runtime.explain import explain
from .runtime.hook import OptimizedModule, compile, disable, reset
from .runtime.install import install, uninstall
from .runtime.policy import (allow_in_graph, assume_constant_result, disallow_in_graph, is_exporting,
                             nested_compile_region, nonstrict_trace, substitute_in_graph, wrap_numpy)
from .runtime.stance import RecompileError, set_stance

__version__ = "0.1.0"

_configure_logs()

from .diagnostics import trace_log as _trace_log  # noqa: E402

_trace_log.configure_from_env()

__all__ = [
    "compile", "disable", "reset", "explain", "ExplainOutput", "is_compiling", "set_logs", "list_backends", "register_backend", "config",
    "Unsupported", "FramegraphError", "InternalError", "BackendError", "OptimizedModule",
    "graph_break", "mark_dynamic", "install", "uninstall",
    "allow_in_graph", "disallow_in_graph", "nonstrict_trace", "substitute_in_graph", "assume_constant_result",
    "nested_compile_region", "wrap_numpy", "is_exporting", "set_stance", "RecompileError",
    "mark_static", "maybe_mark_dynamic", "mark_unbacked", "mark_static_address",
    "set_default_backend", "get_default_backend", "GuardFilterEntry",
    "skip_guard_on_globals_unsafe", "skip_all_guards_unsafe", "keep_tensor_guards_unsafe",
    "keep_portable_guards_unsafe", "skip_guard_on_inbuilt_nn_modules_unsafe", "skip_guard_on_all_nn_modules_unsafe",
    "save_cache_artifacts", "load_cache_artifacts",
]
