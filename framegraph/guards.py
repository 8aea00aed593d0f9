"""Guards: the assumptions a captured graph relies on, as data, compiled once.

While tracing, every fact the tracer relies on about a value from outside the
frame is recorded as a ``Guard(kind, source, value)``: "``L['x']`` is a float32
CPU tensor of size [8]", "``G['scale']`` == 2", "``G['torch']`` is that module",
"grad mode is on". At the end of a trace the set of guards is compiled into
one Python function with the frame's argument slots as parameters::

    def __guard(___fn, x, y, args, kwargs):
        try:
            ___G = ___fn.__globals__
            return (___grad_enabled() is True and type(x) is ___c0 and ...)
        except Exception:
            return False

The C hook calls it before every run of the cached code. Guards are sorted so
the cheap checks run first, a source read by several guards is evaluated once
(walrus), and constants live in the function's own globals, so it holds no
reference to any argument value (identity is checked by ``id``).

Each guard also renders one readable line (``L['x'].dtype == torch.float32``
style) for logs and for ``CompiledGuard.failure``, which names the first
guard that rejects a given call: the reason of a recompile.
"""
import dataclasses
import itertools
import math
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from .sources import FUNC, GLOBALS, Source


@dataclasses.dataclass(frozen=True)
class Guard:
    """One assumption. ``value`` is hashable data, never the guarded object."""

    kind: str
    source: Optional[Source]
    value: Any = None


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """What TENSOR_MATCH checks of a tensor (the real tensor is not kept)."""

    cls: type
    dtype: torch.dtype
    device: torch.device
    size: Tuple[int, ...]
    stride: Tuple[int, ...]
    requires_grad: bool

    @classmethod
    def of(cls, t: torch.Tensor) -> "TensorSpec":
        return cls(type(t), t.dtype, t.device, tuple(t.size()), tuple(t.stride()), t.requires_grad)


class _Consts:
    """Names for the non-literal constants a guard function refers to."""

    def __init__(self):
        self.namespace: Dict[str, Any] = {"__builtins__": __builtins__}
        self._by_id: Dict[int, str] = {}
        self._count = itertools.count()

    def __call__(self, value) -> str:
        literal = type(value) in (bool, int, str, bytes, type(None))
        if literal or type(value) is float and math.isfinite(value):
            return repr(value)
        key = id(value)
        if key not in self._by_id:
            name = f"___c{next(self._count)}"
            self.namespace[name] = value
            self._by_id[key] = name
        return self._by_id[key]


def _qualname(t) -> str:
    return getattr(t, "__qualname__", repr(t))


# ---- one function per guard kind: (guard, E, consts) -> (code, readable line)
# E is the Python expression that reads the guarded value; readable lines use
# the source's name. Codes are combined with `and`.

def _type_match(g, e, c):
    return f"type({e}) is {c(g.value)}", f"type({g.source.name()}) is {_qualname(g.value)}"


def _id_match(g, e, c):
    ident, label = g.value
    return f"id({e}) == {ident}", f"id({g.source.name()}) == {ident}  # {label}"


def _constant_match(g, e, c):
    value = g.value
    name = g.source.name()
    if value is None or isinstance(value, (bool, torch.dtype, type(Ellipsis))):
        return f"{e} is {c(value)}", f"{name} is {value!r}"
    return (f"(type({e}) is {c(type(value))} and {e} == {c(value)})", f"{name} == {value!r}")


def _length(g, e, c):
    kind, n = g.value
    return (f"(type({e}) is {c(kind)} and len({e}) == {n})",
            f"type({g.source.name()}) is {kind.__name__} and len({g.source.name()}) == {n}")


def _dict_keys(g, e, c):
    kind, keys = g.value
    return (f"(type({e}) is {c(kind)} and list({e}) == {c(list(keys))})",
            f"list({g.source.name()}.keys()) == {list(keys)!r}")


def _not_in_globals(g, e, c):
    return f"{g.value!r} not in {GLOBALS}", f"{g.value!r} not in G  # builtin {g.value} not shadowed"


def _grad_mode(g, e, c):
    return f"{c(torch._C.is_grad_enabled)}() is {g.value}", f"torch.is_grad_enabled() is {g.value}"


def _is_same(g, e, c):
    other = g.value
    return f"{e} is {other.expr()}", f"{g.source.name()} is {other.name()}"


def _tensor_parts(spec: TensorSpec, e: str, c) -> List[Tuple[str, str]]:
    """TENSOR_MATCH split into checks, each with the fact it verifies."""
    if spec.device.type == "cpu":
        device = f"{e}.is_cpu"
    else:
        device = f"{e}.device == {c(spec.device)}"
    if spec.stride == _contiguous_strides(spec.size):
        # same sizes + contiguous => same strides (up to size-1 dims, which index nothing)
        stride = f"{e}.is_contiguous()"
    else:
        stride = f"{e}.stride() == {spec.stride!r}"
    return [
        (f"type({e}) is {c(spec.cls)}", f"type is {_qualname(spec.cls)}"),
        (f"{e}.dtype is {c(spec.dtype)}", f"dtype == {spec.dtype}"),
        (device, f"device == {spec.device}"),
        (f"{e}.size() == {spec.size!r}", f"size == {list(spec.size)}"),
        (stride, f"stride == {list(spec.stride)}"),
        (f"{e}.requires_grad is {spec.requires_grad}", f"requires_grad == {spec.requires_grad}"),
    ]


def _contiguous_strides(size):
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _tensor_match(g, e, c):
    parts = _tensor_parts(g.value, e, c)
    code = "(" + " and ".join(p for p, _ in parts) + ")"
    spec = g.value
    line = (f"{g.source.name()}: {_qualname(spec.cls)}(dtype={spec.dtype}, device={spec.device}, "
            f"size={list(spec.size)}, stride={list(spec.stride)}, requires_grad={spec.requires_grad})")
    return code, line


# kind -> (priority: cheaper first, render function)
KINDS: Dict[str, Tuple[int, Callable]] = {
    "GRAD_MODE": (0, _grad_mode),
    "NOT_IN_GLOBALS": (1, _not_in_globals),
    "TYPE_MATCH": (2, _type_match),
    "ID_MATCH": (2, _id_match),
    "CONSTANT_MATCH": (3, _constant_match),
    "LENGTH": (3, _length),
    "DICT_KEYS": (4, _dict_keys),
    "IS_SAME": (4, _is_same),
    "TENSOR_MATCH": (5, _tensor_match),
}


def _depth(source: Optional[Source]) -> int:
    depth = 0
    while source is not None:
        depth += 1
        source = getattr(source, "base", None)
    return depth


_HOLE = "\x00E\x00"


class _ExprCache:
    """Reads each guarded source once: its first use binds it with a walrus."""

    def __init__(self):
        self._names: Dict[Source, str] = {}
        self._count = itertools.count()

    def fill(self, source: Source, code: str) -> str:
        """Replace the value placeholder in ``code`` with a read of ``source``."""
        if source.expr().isidentifier():
            return code.replace(_HOLE, source.expr())
        if source in self._names:
            return code.replace(_HOLE, self._names[source])
        name = self._names[source] = f"___t{next(self._count)}"
        return code.replace(_HOLE, f"({name} := {source.expr()})", 1).replace(_HOLE, name)


class CompiledGuard:
    """The check function plus the readable lines it was built from."""

    def __init__(self, guards: List[Guard], argnames: Tuple[str, ...]):
        self.guards = sorted(
            dict.fromkeys(guards), key=lambda g: (KINDS[g.kind][0], _depth(g.source))
        )
        self.argnames = tuple(argnames)
        self.consts = _Consts()
        self.parts: List[Tuple[str, str]] = []
        cache = _ExprCache()
        for g in self.guards:
            code, line = KINDS[g.kind][1](g, _HOLE, self.consts)
            if g.source is not None:
                code = cache.fill(g.source, code)
            self.parts.append((code, line))
        self.lines = [line for _, line in self.parts]
        self.source_code = self._render()
        self.fn = self._compile()

    def _render(self) -> str:
        params = ", ".join((FUNC,) + self.argnames)
        body = " and ".join(code for code, _ in self.parts) or "True"
        uses_globals = any(g.source is not None and g.source.uses_globals() or g.kind == "NOT_IN_GLOBALS"
                           for g in self.guards)
        glob = f"        {GLOBALS} = {FUNC}.__globals__\n" if uses_globals else ""
        return (f"def __guard({params}):\n    try:\n{glob}"
                f"        return {body}\n    except Exception:\n        return False\n")

    def _compile(self):
        ns = self.consts.namespace
        exec(compile(self.source_code, "<framegraph guard>", "exec"), ns)  # noqa: S102
        fn = ns["__guard"]
        fn.compiled_guard = self  # lines and failure() for diagnostics, from the bare function
        return fn

    def __call__(self, fn, *slots) -> bool:
        return self.fn(fn, *slots)

    def failure(self, fn, *slots) -> Optional[str]:
        """The readable line of the first guard that rejects this call, or None."""
        for g in self.guards:
            if not CompiledGuard([g], self.argnames).fn(fn, *slots):
                return _explain(g, self.argnames, fn, slots)
        return None

    def __repr__(self):
        return "CompiledGuard(\n  " + "\n  ".join(self.lines) + "\n)"


def _explain(g: Guard, argnames, fn, slots) -> str:
    """Name the failing guard; for a tensor, name the property that changed."""
    line = KINDS[g.kind][1](g, "_", _Consts())[1]
    if g.kind != "TENSOR_MATCH":
        return f"{g.kind}: {line}"
    scope = dict(zip(argnames, slots), **{GLOBALS: fn.__globals__, FUNC: fn})
    try:
        value = eval(g.source.expr(), {}, scope)  # noqa: S307  (our own generated expression)
    except Exception as e:
        return f"TENSOR_MATCH: {g.source.name()} cannot be read ({type(e).__name__}: {e})"
    consts = _Consts()
    for part, fact in _tensor_parts(g.value, "___v", consts):
        if not eval(part, dict(consts.namespace, ___v=value)):  # noqa: S307
            return f"TENSOR_MATCH: {g.source.name()}: expected {fact}"
    return f"TENSOR_MATCH: {line}"


def function_guard_values(obj) -> Tuple[int, str]:
    """The (id, label) pair of an ID_MATCH guard on ``obj``."""
    label = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    if isinstance(obj, types.ModuleType):
        label = f"module {obj.__name__}"
    return id(obj), str(label)
