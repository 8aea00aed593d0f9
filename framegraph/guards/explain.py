"""Why a guard rejects a call, in words the user can act on.

``CompiledGuard.failure`` finds the first guard that rejects the inputs of a
call; ``explain`` turns it into one sentence for the ``recompiles`` log and
the recompile-limit warning. It re-reads the guarded value from the same
source the guard reads and says what changed, from what, to what, and when
there is one, what to do about it::

    size of L['x'] dim 0 changed from 8 to 16 (...mark_dynamic(x, 0)...)
    L['scale'] changed from 2.0 to 3.0 (a Python float: pass a tensor to avoid recompiling)
    id of G['fn'] changed (the function was replaced)

This runs only on a recompile, never on the per-call path.
"""
import types

import torch

from .kinds import sources_of
from .sources import FUNC, GLOBALS, LocalSource, held_objects

_SIZE_HINT = ("unless compiled with dynamic=False, this recompile makes the dimension dynamic, so "
              "later sizes reuse one graph; framegraph.mark_dynamic({arg}, {dim}) makes it dynamic "
              "from the first call")
_SMALL_SIZE_HINT = "sizes 0 and 1 are specialised: each gets its own graph"


def explain(g, argnames, fn, slots) -> str:
    """One sentence on why guard ``g`` rejects ``slots`` (the frame's argument values)."""
    scope = dict(zip(argnames, slots), **{GLOBALS: fn.__globals__, FUNC: fn}, **held_objects(sources_of(g)))
    if g.kind == "SHAPE_ENV":
        return g.value.explain(scope)
    if g.source is None:
        return _WITHOUT_SOURCE.get(g.kind, _generic)(g, fn)
    try:
        value = eval(g.source.expr(), {}, scope)  # noqa: S307  (our own generated expression)
    except Exception as e:
        return f"{g.source.name()} cannot be read any more ({type(e).__name__}: {e})"
    return _WITH_SOURCE.get(g.kind, lambda g, v: _generic(g, fn))(g, value)


def _generic(g, fn=None):
    from .compile import _line

    return f"guard failed: {_line(g)}"


def _tensor(g, value) -> str:
    name, spec = g.source.name(), g.value
    if not isinstance(value, torch.Tensor):
        return f"{name} is now a {type(value).__name__}, not a tensor"
    if type(value) is not spec.cls:
        return f"type of {name} changed from {spec.cls.__name__} to {type(value).__name__}"
    for label, old, new in (("dtype", spec.dtype, value.dtype), ("device", spec.device, value.device),
                            ("requires_grad", spec.requires_grad, value.requires_grad)):
        if old != new:
            return f"{label} of {name} changed from {old} to {new}"
    if value.dim() != len(spec.size):
        return f"{name} now has {value.dim()} dimensions, not {len(spec.size)}"
    for dim, (old, new) in enumerate(zip(spec.size, value.size())):
        if old is not None and old != new:
            arg = g.source.local_name if isinstance(g.source, LocalSource) else name
            hint = _SMALL_SIZE_HINT if new in (0, 1) else _SIZE_HINT.format(arg=arg, dim=dim)
            return f"size of {name} dim {dim} changed from {old} to {new} ({hint})"
    return _tensor_layout(name, spec, value)


def _tensor_layout(name, spec, value) -> str:
    from .kinds import _stride_parts

    for code, _ in _stride_parts(spec, "v"):
        if not eval(code, {"v": value}):  # noqa: S307
            now = "contiguous" if value.is_contiguous() else "not contiguous"
            return (f"stride of {name} changed from {_brackets(spec.stride)} to {list(value.stride())} "
                    f"(it is now {now})")
    if spec.keys is not None and torch._C._dispatch_keys(value).raw_repr() != spec.keys:
        return f"dispatch keys of {name} changed (now {torch._C._dispatch_keys(value)})"
    return f"{name} no longer matches {spec}"


def _brackets(values):
    return "[" + ", ".join("*" if v is None else str(v) for v in values) + "]"


def _constant(g, value) -> str:
    name, old = g.source.name(), g.value
    if type(value) is not type(old):
        return f"{name} changed from {old!r} ({type(old).__name__}) to {value!r} ({type(value).__name__})"
    return f"{name} changed from {old!r} to {value!r}{_CONSTANT_HINTS.get(type(old), '')}"


_CONSTANT_HINTS = {
    float: " (a Python float: pass a tensor to avoid recompiling)",
    int: " (a Python int: unless compiled with dynamic=False, this recompile makes it a symbolic graph "
         "input; where Python needs its value, as in range(n), each value still gets its own graph)",
    bool: " (a Python bool: each value compiles its own graph)",
    str: " (a Python str: each value compiles its own graph)",
}


def _identity(g, value) -> str:
    ident, label = g.value
    if isinstance(value, types.ModuleType):
        what = "module"
    elif isinstance(value, type):
        what = "class"
    elif callable(value):
        what = "function"
    else:
        what = "object"
    return f"id of {g.source.name()} changed (the {what} {label} was replaced by {_short(value)})"


def _short(value) -> str:
    return getattr(value, "__qualname__", None) or f"a {type(value).__name__}"


def _type(g, value) -> str:
    return f"type of {g.source.name()} changed from {g.value.__qualname__} to {type(value).__qualname__}"


def _length(g, value) -> str:
    kind, n = g.value
    name = g.source.name()
    if type(value) is not kind:
        return f"{name} is now a {type(value).__name__}, not a {kind.__name__}"
    return f"length of {name} changed from {n} to {len(value)} (the trace unrolled it)"


def _keys(g, value) -> str:
    kind, keys = g.value
    name = g.source.name()
    if type(value) is not kind:
        return f"{name} is now a {type(value).__name__}, not a {kind.__name__}"
    return f"keys of {name} changed from {list(keys)} to {list(value)}"


def _contains(g, value) -> str:
    key, present = g.value
    now = "added to" if not present else "removed from"
    return f"key {key!r} was {now} {g.source.name()}"


def _is_same(g, value) -> str:
    return f"{g.source.name()} is no longer the same object as {g.value.name()}"


def _grad_mode(g, fn) -> str:
    words = {True: "enabled", False: "disabled"}
    return f"grad mode changed from {words[g.value]} to {words[torch.is_grad_enabled()]}"


def _global_state(g, fn) -> str:
    from .kinds import GLOBAL_STATE_LABELS, global_state

    for label, old, new in zip(GLOBAL_STATE_LABELS, g.value, global_state()):
        if old is not new:
            return f"{label} changed from {old} to {new}"
    return _generic(g)


def _same_globals(g, fn) -> str:
    return "the same code runs with other globals (its module was loaded again, or it was exec'd again)"


def _no_hooks(g, fn) -> str:
    return "a hook was registered on a module the graph calls (or a global module hook)"


def _not_in_globals(g, fn) -> str:
    return f"global {g.value!r} now shadows the builtin the trace used"


_WITH_SOURCE = {
    "TENSOR_MATCH": _tensor, "CONSTANT_MATCH": _constant, "ID_MATCH": _identity, "TYPE_MATCH": _type,
    "LENGTH": _length, "DICT_KEYS": _keys, "IS_SAME": _is_same,
    "DICT_CONTAINS": _contains,
}
_WITHOUT_SOURCE = {
    "GRAD_MODE": _grad_mode, "GLOBAL_STATE": _global_state, "NOT_IN_GLOBALS": _not_in_globals,
    "NO_HOOKS": _no_hooks, "SAME_GLOBALS": _same_globals,
}
