"""The one runtime configuration object, and the options of one `compile()` call.

Everything global and mutable in framegraph lives here (the C cache lives on
code objects). Attributes can be set directly: `framegraph.config.strict = True`.
"""
import dataclasses
from typing import Any, Callable, Optional


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
    options: Optional[dict] = None
