"""`options={"guard_filter_fn": fn}`: the user drops guards of a compiled entry, as torch allows.

torch.compile hands `fn` the list of its guards as entries (`name`,
`guard_type`, `is_global`, ...) and keeps those `fn` answers True for; the
`torch.compiler.skip_guard_on_globals_unsafe` family are such functions. The
entries here carry the same fields, so torch's own filters work on them, and
the framegraph versions of the family (runtime/policy.py) read only these
fields. Dropping a guard is the user's promise that what it checked never
changes: the cached code then runs whatever the inputs, with eager's result
only while the promise holds.
"""
import dataclasses
from typing import Any, Callable, List, Tuple

import torch

from ..errors import FramegraphError
from .kinds import Guard
from .sources import BuiltinSource, GlobalSource

# framegraph's kinds that torch files under one of its own guard types
_TORCH_TYPES = {"GRAD_MODE": "GLOBAL_STATE", "INTERPRETER_STATE": "GLOBAL_STATE"}


@dataclasses.dataclass(frozen=True)
class GuardFilterEntry:
    """One guard as a filter sees it (the fields of torch's entry of the same name)."""

    name: str                      # the source it reads (L['x'].weight), "" for global state
    has_value: bool                # framegraph keeps data about values, never the values
    value: Any
    guard_type: str                # TENSOR_MATCH, ID_MATCH, CONSTANT_MATCH, GLOBAL_STATE, SHAPE_ENV...
    derived_guard_types: Tuple[str, ...]
    is_global: bool                # reads the function's globals (or builtins)
    orig_guard: Guard


def entry_of(g: Guard) -> GuardFilterEntry:
    """The filter's view of guard ``g``."""
    root = g.source.root() if g.source is not None else None
    torch_type = _TORCH_TYPES.get(g.kind, g.kind)
    return GuardFilterEntry(
        name=g.source.name() if g.source is not None else "",
        has_value=False, value=None, guard_type=torch_type,
        derived_guard_types=(g.kind,) if torch_type != g.kind else (),
        is_global=isinstance(root, (GlobalSource, BuiltinSource)) or g.kind == "SAME_GLOBALS",
        orig_guard=g)


def apply_filter(guards: List[Guard], fn: Callable) -> List[Guard]:
    """The guards ``fn`` keeps: it gets every entry, returns one bool per entry."""
    entries = [entry_of(g) for g in guards]
    try:
        keep = list(fn(entries))
    except Exception as e:
        raise FramegraphError(
            f"guard_filter_fn {getattr(fn, '__qualname__', fn)!r} failed on framegraph's guard entries: "
            f"{type(e).__name__}: {e}. It may read only the fields of GuardFilterEntry "
            f"({', '.join(f.name for f in dataclasses.fields(GuardFilterEntry))})") from e
    if len(keep) != len(entries):
        raise FramegraphError(f"guard_filter_fn returned {len(keep)} answers for {len(entries)} guards")
    return [g for g, k in zip(guards, keep) if k]


# ---- torch.compiler's filters, on these entries (pass one as options={"guard_filter_fn": ...})

def skip_guard_on_globals_unsafe(guard_entries) -> List[bool]:
    """Drop every guard on the function's globals: a global that changes later is
    not seen. Unsafe: only for globals that never change."""
    return [not entry.is_global for entry in guard_entries]


def skip_all_guards_unsafe(guard_entries) -> List[bool]:
    """Drop every guard: the first cached code runs for every later call. Unsafe."""
    return [False for _ in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters=False) -> List[bool]:
    """Keep only the tensor guards (dtype, device, sizes, strides, requires_grad).
    framegraph's entries carry no values, so parameters' guards stay either way
    (`keep_parameters` is accepted for torch's signature)."""
    return [entry.guard_type == "TENSOR_MATCH" for entry in guard_entries]


def keep_portable_guards_unsafe(guard_entries) -> List[bool]:
    """Keep the global-state, shape and non-global tensor guards, as torch's does."""
    return [entry.guard_type in ("GLOBAL_STATE", "SHAPE_ENV")
            or (entry.guard_type == "TENSOR_MATCH" and not entry.is_global) for entry in guard_entries]


def _nn_module_filters_unavailable(name):
    message = (f"{name}: framegraph's guard entries do not say which guards read an nn.Module's "
               "attributes; keep_tensor_guards_unsafe or skip_guard_on_globals_unsafe drop guards "
               "framegraph can name")

    def refuse(guard_entries):
        raise FramegraphError(message)
    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"torch's {name}: not available here; compile() refuses it, naming the filters that are."
    refuse.unavailable = message
    return refuse


def unavailable_filter(fn):
    """Why ``fn`` cannot filter framegraph's guards (torch's or framegraph's nn.Module
    filters), or None."""
    for name in ("skip_guard_on_inbuilt_nn_modules_unsafe", "skip_guard_on_all_nn_modules_unsafe"):
        if fn is getattr(torch.compiler, name, None) or fn is globals()[name]:
            return globals()[name].unavailable
    return None


skip_guard_on_inbuilt_nn_modules_unsafe = _nn_module_filters_unavailable("skip_guard_on_inbuilt_nn_modules_unsafe")
skip_guard_on_all_nn_modules_unsafe = _nn_module_filters_unavailable("skip_guard_on_all_nn_modules_unsafe")
