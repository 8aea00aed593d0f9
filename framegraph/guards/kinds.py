"""Guard kinds: what one assumption is, and how it is checked and read aloud.

``Guard(kind, source, value)`` is one fact a trace relied on; ``KINDS`` maps
each kind to its cost rank and to a function rendering it as Python code (over
an expression that reads the value) plus one readable line, in
torch.compile's notation (``L['x'].dtype == torch.float32``). guards.py
compiles the guards of an entry into one check function; guard_skips.py
groups checks that can be skipped while nothing they read changed.
"""
import builtins
import dataclasses
import itertools
import math
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from .sources import FUNC, GLOBALS, Source

_dispatch_keys = torch._C._dispatch_keys
_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), torch.dtype)


@dataclasses.dataclass(frozen=True)
class Guard:
    """One assumption. ``value`` is hashable data, never the guarded object."""

    kind: str
    source: Optional[Source]
    value: Any = None


def sources_of(g: Guard):
    """The sources a guard's check reads."""
    if g.source is not None:
        yield g.source
    if g.kind == "IS_SAME":
        yield g.value
    elif g.kind == "SHAPE_ENV":
        yield from (src for _, src, _ in g.value.symbols)


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """What TENSOR_MATCH checks of a tensor (the real tensor is not kept).

    A size or stride of None is dynamic: any value, constrained only by the
    SHAPE_ENV guard. ``keys`` is the raw dispatch key set (None: whatever a
    fresh tensor of this spec has).
    """

    cls: type
    dtype: torch.dtype
    device: torch.device
    size: Tuple[Optional[int], ...]
    stride: Tuple[Optional[int], ...]
    requires_grad: bool
    keys: Optional[int] = None

    @classmethod
    def of(cls, t: torch.Tensor, fake=None) -> "TensorSpec":
        """The spec of ``t``; dims symbolic in its FakeTensor ``fake`` become None."""
        size, stride = tuple(t.size()), tuple(t.stride())
        if fake is not None:
            size = tuple(None if _symbolic(f) else n for n, f in zip(size, fake.size()))
            stride = tuple(None if _symbolic(f) else n for n, f in zip(stride, fake.stride()))
        return cls(type(t), t.dtype, t.device, size, stride, t.requires_grad,
                   _dispatch_keys(t).raw_repr())

    @property
    def is_dynamic(self) -> bool:
        return None in self.size or None in self.stride

    def template(self) -> Optional[torch.Tensor]:
        """A tensor that the tensor check accepts exactly when this spec does, or None."""
        size = [2 if n is None else n for n in self.size]
        try:
            t = torch.empty_strided(size, _contiguous_strides(size), dtype=self.dtype, device=self.device)
            if self.cls is torch.nn.Parameter:
                t = torch.nn.Parameter(t, requires_grad=self.requires_grad)
            else:
                t.requires_grad_(self.requires_grad)
        except Exception:  # an unusual dtype/device: keep the Python checks
            return None
        same_keys = self.keys is None or _dispatch_keys(t).raw_repr() == self.keys
        return t if type(t) is self.cls and same_keys else None


def _symbolic(n) -> bool:
    return isinstance(n, torch.SymInt) and not n.node.is_constant()


# The builtins as they were at import: a guard calls type(), len() and id() even
# while the program has replaced one (``builtins.len = lru_cache(4)(len)``).
_BUILTINS = dict(builtins.__dict__)


class _Consts:
    """Names for the non-literal constants a guard function refers to."""

    def __init__(self):
        self.namespace: Dict[str, Any] = {"__builtins__": _BUILTINS}
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


def _set_match(g, e, c):
    """A set or frozenset of constants: value is (type, frozenset of items), hashable."""
    kind, items = g.value
    return (f"(type({e}) is {c(kind)} and {e} == {c(items)})",
            f"{g.source.name()} == {kind.__name__}({sorted(items, key=repr)!r})")


def _length(g, e, c):
    kind, n = g.value
    return (f"(type({e}) is {c(kind)} and len({e}) == {n})",
            f"type({g.source.name()}) is {kind.__name__} and len({g.source.name()}) == {n}")


def _dict_keys(g, e, c):
    kind, keys = g.value
    return (f"(type({e}) is {c(kind)} and list({e}) == {c(list(keys))})",
            f"list({g.source.name()}.keys()) == {list(keys)!r}")


def _dict_contains(g, e, c):
    """Whether a (string) key is in a dict read lazily (variables/lazy_dict.py)."""
    key, present = g.value
    op = "in" if present else "not in"
    return f"{key!r} {op} {e}", f"{key!r} {op} {g.source.name()}"


def _not_in_globals(g, e, c):
    return f"{g.value!r} not in {GLOBALS}", f"{g.value!r} not in G  # builtin {g.value} not shadowed"


def _grad_mode(g, e, c):
    return f"{c(torch._C.is_grad_enabled)}() is {g.value}", f"torch.is_grad_enabled() is {g.value}"


def _is_same(g, e, c):
    other = g.value
    return f"{e} is {other.expr()}", f"{g.source.name()} is {other.name()}"


def _tensor_parts(spec: TensorSpec, e: str, c) -> List[Tuple[str, str]]:
    """TENSOR_MATCH split into Python checks, each with the fact it verifies."""
    if spec.device.type == "cpu":
        device = f"{e}.is_cpu"
    else:
        device = f"{e}.device == {c(spec.device)}"
    parts = [
        (f"type({e}) is {c(spec.cls)}", f"type is {_qualname(spec.cls)}"),
        (f"{e}.dtype is {c(spec.dtype)}", f"dtype == {spec.dtype}"),
        (device, f"device == {spec.device}"),
        (f"{e}.dim() == {len(spec.size)}", f"dim == {len(spec.size)}"),
    ]
    if None not in spec.size:
        parts.append((f"{e}.size() == {spec.size!r}", f"size == {list(spec.size)}"))
    else:
        parts += [(f"{e}.size({i}) == {n}", f"size({i}) == {n}") for i, n in enumerate(spec.size) if n is not None]
    parts += _stride_parts(spec, e)
    parts.append((f"{e}.requires_grad is {spec.requires_grad}", f"requires_grad == {spec.requires_grad}"))
    if spec.keys is not None:
        parts.append((f"{c(_dispatch_keys)}({e}).raw_repr() == {spec.keys}", "dispatch keys unchanged"))
    return parts


def _stride_parts(spec: TensorSpec, e: str) -> List[Tuple[str, str]]:
    if None in spec.stride:  # only contiguous tensors get dynamic dims (dynamic.py)
        return [(f"{e}.is_contiguous()", "contiguous")]
    if None not in spec.size and spec.stride == _contiguous_strides(spec.size):
        # same sizes + contiguous => same strides (up to size-1 dims, which index nothing)
        return [(f"{e}.is_contiguous()", f"stride == {list(spec.stride)}")]
    return [(f"{e}.stride() == {spec.stride!r}", f"stride == {list(spec.stride)}")]


def _contiguous_strides(size):
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _dims(values) -> str:
    return "[" + ", ".join("*" if v is None else str(v) for v in values) + "]"


def _tensor_match(g, e, c):
    parts = _tensor_parts(g.value, e, c)
    code = "(" + " and ".join(p for p, _ in parts) + ")"
    spec = g.value
    line = (f"{g.source.name()}: {_qualname(spec.cls)}(dtype={spec.dtype}, device={spec.device}, "
            f"size={_dims(spec.size)}, stride={_dims(spec.stride)}, requires_grad={spec.requires_grad})")
    return code, line


def _global_state(g, e, c):
    """Global torch state a graph depends on, besides grad mode: one call each."""
    state = g.value
    parts = [(f"{c(getter)}() is {c(value)}", f"{label} is {value}")
             for label, getter, value in zip(GLOBAL_STATE_LABELS, GLOBAL_STATE_GETTERS, state)]
    return "(" + " and ".join(p for p, _ in parts) + ")", "; ".join(line for _, line in parts)


class HookDicts:
    """The hook dicts of the modules a trace called, held (not the modules), compared by identity."""

    def __init__(self, dicts):
        self.dicts = tuple(dicts)

    def __repr__(self):
        return f"HookDicts({len(self.dicts)})"


def _no_hooks(g, e, c):
    """nn.Module hooks registered after the trace would not run: all those dicts stay empty."""
    return f"not any({c(g.value.dicts)})", f"no hooks registered on the modules called ({len(g.value.dicts)} dicts)"


def _same_globals(g, e, c):
    """The code reads the compiled graph (and resume functions) from the globals it was
    traced with; the same code object can run with other globals (a module loaded
    twice). Compared by id: holding the dict would keep its module alive through
    the cache on the code object."""
    return f"id({FUNC}.__globals__) == {g.value}", "G is the globals dict the code was traced with"


def _shape_env(g, e, c):
    """The shape relations of a dynamic-shape trace (see dynamic.ShapeGuards)."""
    c.namespace.update(math=math, torch=torch)  # the printer writes math.inf, torch.sym_float
    return g.value.code(), g.value.readable()


GLOBAL_STATE_LABELS = ("torch.get_default_dtype()", "torch.are_deterministic_algorithms_enabled()",
                       "autocast enabled")
GLOBAL_STATE_GETTERS = (torch.get_default_dtype, torch._C._get_deterministic_algorithms,
                        torch._C._is_any_autocast_enabled)


def global_state() -> Tuple[Any, ...]:
    """The values GLOBAL_STATE guards, now."""
    return tuple(getter() for getter in GLOBAL_STATE_GETTERS)


# kind -> (priority: cheaper first, render function)
KINDS: Dict[str, Tuple[int, Callable]] = {
    "GRAD_MODE": (0, _grad_mode),
    "GLOBAL_STATE": (0, _global_state),
    "NOT_IN_GLOBALS": (1, _not_in_globals),
    "NO_HOOKS": (1, _no_hooks),
    "SAME_GLOBALS": (0, _same_globals),
    "TYPE_MATCH": (2, _type_match),
    "ID_MATCH": (2, _id_match),
    "CONSTANT_MATCH": (3, _constant_match),
    "SET_MATCH": (3, _set_match),
    "LENGTH": (3, _length),
    "DICT_KEYS": (4, _dict_keys),
    "DICT_CONTAINS": (3, _dict_contains),
    "IS_SAME": (4, _is_same),
    "TENSOR_MATCH": (5, _tensor_match),
    "SHAPE_ENV": (6, _shape_env),
}


def _depth(source: Optional[Source]) -> int:
    depth = 0
    while source is not None:
        depth += 1
        source = getattr(source, "base", None)
    return depth


def function_guard_values(obj) -> Tuple[int, str]:
    """The (id, label) pair of an ID_MATCH guard on ``obj``."""
    label = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    if isinstance(obj, types.ModuleType):
        label = f"module {obj.__name__}"
    return id(obj), str(label)
