"""The one runtime configuration object, the options of one `compile()` call,
and the register of framegraph's runtime state.

Settings live here: `framegraph.config.strict = True`. The C cache lives on
code objects (`_C`, cleared per code by `reset()`). Every other piece of state
that outlives one call is kept by the module that uses it and is listed below;
each module registers with `on_reset` what `framegraph.reset()` must clear, so
a module that was never imported has nothing to clear:

  cleared by reset()
    runtime/convert_frame.py  touched_codes (codes with entries or marks), retries,
                              the last recompile reasons per code, codes whose first
                              call ran unmodified under the "eager_then_compile" stance
    runtime/skip.py           the quick filter's answer per file
    graph/dynamic.py          sizes seen per code (automatic dynamic shapes)
  kept by reset(), on purpose
    runtime/stance.py         the stance set_stance() set (torch.compiler.reset keeps it too)
    variables/tensors/torch_fn.py, variables/builder.py   what the user said about
                              callables: allow_in_graph, disallow_in_graph, substitute_in_graph
    runtime/install.py        torch's originals while install()ed
    runtime/skip.py           user roots: codes the user compiled explicitly (the
                              compile() wrappers outlive a reset)
    runtime/hook.py           disable() marks
    runtime/convert_frame.py, breaks/split.py   messages said once per process (a
                              frame run unmodified, a graph-break site)
    diagnostics/records.py    observers (owned by the `observing` blocks that add them)
    backends/distributed.py   observers of DDP bucket splits (the same, its own `observing`)
    backends/, errors.py, tracer/registry.py   registries filled at import
    caches that only remember a pure function of their key (resume codes per
    (code, offset, stack shape), decoded instructions, signatures, classes made at
    trace time), and the counters that keep generated global names unique
"""
import dataclasses
import os
from typing import Any, Callable, List, Optional

_RESETTERS: List[Callable[[], None]] = []


def on_reset(fn: Callable[[], None]) -> Callable[[], None]:
    """Register ``fn`` (a decorator): ``framegraph.reset()`` calls it to clear its module's state."""
    _RESETTERS.append(fn)
    return fn


def reset_state() -> None:
    """Clear the state every registered module keeps (part of ``framegraph.reset()``)."""
    for fn in list(_RESETTERS):
        fn()


class _Config:
    """Process-wide settings. Set attributes to change them."""

    _fields = {
        # Raise on compiler errors instead of falling back to eager.
        "strict": (bool, False),
        # Traces per code object before the frame only runs unmodified.
        "recompile_limit": (int, 8),
        # Instructions one trace of a frame may step (its inlined calls included)
        # before the frame runs unmodified: a loop of thousands of iterations is
        # unrolled, and tracing it would cost far more than running it.
        "max_trace_steps": (int, 200_000),
        # Check every opcode handler's stack effect against dis.stack_effect.
        "debug_stack_effect": (bool, False),
        # Run each op that meta_ops propagates directly also through FakeTensorMode,
        # and raise if the two results' metadata differ.
        "check_meta_ops": (bool, False),
        # Inside a DistributedDataParallel forward, split graphs for AOTAutograd
        # backends at DDP's bucket boundaries (backends/distributed.py).
        "optimize_ddp": (bool, True),
        # `t.item()` in a trace is a graph node whose value the trace does not know (an
        # unbacked SymInt/SymFloat): arithmetic and tensor ops on it stay in the graph, a
        # branch on it is a break. Off: `.item()` is a break. (torch._dynamo's option of
        # the same name; off by default there too.)
        "capture_scalar_outputs": (bool, False),
        # Ops whose result's size depends on the data (`nonzero`, `masked_select`, boolean
        # indexing, `unique`) are traced with unbacked sizes. Off: such an op is a break.
        "capture_dynamic_output_shape_ops": (bool, False),
        # A directory for the persistent trace cache (runtime/trace_cache.py): traced frames
        # are stored there and a later process checks their guards instead of tracing.
        # Empty: off. The default is the environment variable FRAMEGRAPH_CACHE_DIR.
        "cache_dir": (str, os.environ.get("FRAMEGRAPH_CACHE_DIR", "")),
    }

    def __init__(self):
        for name, (_, default) in self._fields.items():
            object.__setattr__(self, name, default)

    def __setattr__(self, name, value):
        if name not in self._fields:
            raise AttributeError(
                f"framegraph.config has no option {name!r}; options: {sorted(self._fields)}"
            )
        kind, _ = self._fields[name]
        if type(value) is not kind:
            raise TypeError(f"framegraph.config.{name} must be {kind.__name__}, got {type(value).__name__}")
        if name == "recompile_limit":
            if value < 1:
                raise ValueError("framegraph.config.recompile_limit must be at least 1")
            from . import _C

            _C.set_cache_limit(value)
        object.__setattr__(self, name, value)

    def __repr__(self):
        body = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._fields)
        return f"framegraph.config({body})"


config = _Config()

MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """What one `framegraph.compile(...)` call asked for, validated."""

    backend: Callable[..., Any]
    backend_name: str
    fullgraph: bool = False
    dynamic: Optional[bool] = None
    mode: Optional[str] = None
    options: Optional[dict] = None  # the backend's; guard_filter_fn taken out
    guard_filter_fn: Optional[Callable[..., Any]] = None
    requested: Any = None  # the backend as given, before mode and options were bound to it
