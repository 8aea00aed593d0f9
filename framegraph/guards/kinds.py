"""Guard kinds: what one assumption is, and everything about how it is checked.

``Guard(kind, source, value)`` is one fact a trace relied on. ``KINDS`` holds
one ``GuardKind`` record per kind: its cost rank (cheap kinds are checked
first), its check (an expression over a node reading the value, built of
expr.py's nodes), its readable line in torch.compile's notation
(``L['x'].dtype == torch.float32``), why it rejects a call in words
(explain.py), which sources it reads, and whether a dict version tag or an
unchanged SourceReader walk may skip it (skips.py). compile.py asks these
records and never tests a kind's name.
"""
import dataclasses
import functools
import math
import sys
import types
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

import torch

from .. import _C
from .expr import Const, Node, Py, Read, all_of, joined
from .sources import FUNC, GLOBALS, LocalSource, Source

_dispatch_keys = torch._C._dispatch_keys
_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), torch.dtype)


@dataclasses.dataclass(frozen=True)
class Guard(_C.CachedHash):
    """One assumption. ``value`` is hashable data, never the guarded object."""

    kind: str
    source: Optional[Source]
    value: Any = None

    # hashed once, kept in C: a guard build looks each guard up in several sets and
    # dicts, and a tensor spec's hash is a tuple of seven fields (sources.source)
    __hash__ = _C.CachedHash.__hash__

    def _field_hash(self):
        return hash((self.kind, self.source, self.value))

    def __reduce__(self):  # the fields only: a stored hash is this process's
        return Guard, (self.kind, self.source, self.value)


def sources_of(g: Guard) -> Tuple[Source, ...]:
    """The sources a guard's check reads."""
    return KINDS[g.kind].sources(g)


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
        if fake is not None and fake._has_symbolic_sizes_strides:
            size = tuple(None if _symbolic(f) else n for n, f in zip(size, fake.size()))
            stride = tuple(None if _symbolic(f) else n for n, f in zip(stride, fake.stride()))
        return cls(type(t), t.dtype, t.device, size, stride, t.requires_grad,
                   _dispatch_keys(t).raw_repr())

    def template(self) -> Optional[torch.Tensor]:
        """A tensor that the tensor check accepts exactly when this spec does, or None.
        The check reads sizes and strides from the spec, not from the template: it
        has no elements (nothing is allocated) and is shared by specs alike."""
        return _template(self.cls, self.dtype, self.device, len(self.size), self.requires_grad, self.keys)


@functools.lru_cache(maxsize=256)
def _template(cls, dtype, device, ndim, requires_grad, keys) -> Optional[torch.Tensor]:
    try:
        t = torch.empty((0,) * ndim, dtype=dtype, device=device)
        if cls is torch.nn.Parameter:
            t = torch.nn.Parameter(t, requires_grad=requires_grad)
        else:
            t.requires_grad_(requires_grad)
    except Exception:  # an unusual dtype/device: keep the Python checks
        return None
    same_keys = keys is None or _dispatch_keys(t).raw_repr() == keys
    return t if type(t) is cls and same_keys else None


def _symbolic(n) -> bool:
    return isinstance(n, torch.SymInt) and not n.node.is_constant()


def _qualname(t) -> str:
    return getattr(t, "__qualname__", repr(t))


def _no_sources(g) -> Tuple[Source, ...]:
    return ()


def _never(g) -> bool:
    return False


@dataclasses.dataclass(frozen=True)
class GuardKind:
    """Everything about one kind of guard.

    ``check(g, v)`` is the check as an expression node, over ``v``, a node
    reading the guarded value (None for a kind without a source); ``line(g)``
    the readable line; ``explain(g, now)`` why it rejects a call, from ``now``,
    the value the source holds in that call (for a kind without a source: the
    call's scope, names -> values); None says "guard failed: <line>".
    """

    name: str
    cost: int  # checked in this order, cheaper first
    check: Callable[[Guard, Optional[Node]], Node]
    line: Callable[[Guard], str]
    explain: Optional[Callable[[Guard, Any], str]] = None
    # "item": checks one item of a dict (a global, ``d['key']``), so an unchanged
    # dict version implies it when ``same_object`` does; "dict": checks the keys of
    # the dict its source is (the frame's globals without one), implied by an
    # unchanged version; None: neither
    versioned: Optional[str] = None
    # passes for an object whenever it passed for the same object(s) before: a
    # check an unchanged dict version or SourceReader walk (skips.py) may skip
    same_object: Callable[[Guard], bool] = _never
    second_source: bool = False  # ``value`` is a Source the check reads too (``x is y``)
    batched: bool = False  # checked by the entry's one C++ tensor check when a template reproduces it
    reads_globals: bool = False  # reads the frame's globals dict itself
    more_sources: Callable[[Guard], Iterable[Source]] = _no_sources  # read inside its own code
    names: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # its code refers to these

    def reads(self, g: Guard) -> Tuple[Source, ...]:
        """The sources its check reads as nodes (through readers and bindings)."""
        first = () if g.source is None else (g.source,)
        return first + (g.value,) if self.second_source else first

    def sources(self, g: Guard) -> Tuple[Source, ...]:
        """Every source its check reads."""
        return self.reads(g) + tuple(self.more_sources(g))

    def uses_globals(self, g: Guard) -> bool:
        """Whether its check needs the frame's globals (``___G``) bound."""
        return self.reads_globals or any(s.uses_globals() for s in self.sources(g))


# ---- values: type, identity, constants, containers

def _identity_line(g):
    ident, label = g.value
    return f"id({g.source.name()}) == {ident}  # {label}"


def _identity_explain(g, value) -> str:
    ident, label = g.value
    if isinstance(value, types.ModuleType):
        what = "module"
    elif isinstance(value, type):
        what = "class"
    elif callable(value):
        what = "function"
    else:
        what = "object"
    short = getattr(value, "__qualname__", None) or f"a {type(value).__name__}"
    return f"id of {g.source.name()} changed (the {what} {label} was replaced by {short})"


def _constant_check(g, v):
    value = g.value
    if value is None or isinstance(value, (bool, torch.dtype, type(Ellipsis))):
        return Py(v, " is ", Const(value))
    if type(value) is tuple and all(_equal_is_exact(item) and type(item) is not tuple for item in value):
        # flat: the items' types, then == on the items, in C (so == only ever compares the
        # plain values it was built from)
        return Py("(type(", v, ") is tuple and tuple(map(type, ", v, ")) == ", Const(tuple(map(type, value))),
                  " and ", v, " == ", Const(value), ")")
    if not _equal_is_exact(value):
        return Py(Const(same_constant), "(", v, ", ", Const(value), ")")
    return Py("(type(", v, ") is ", Const(type(value)), " and ", v, " == ", Const(value), ")")


def plain_constant(value) -> bool:
    """Is CONSTANT_MATCH of ``value`` exactly ``type(x) is type(value) and x == value``? So for
    None and bools (the only instances of their types), ints, strs, bytes and the floats whose
    ``==`` is exact: many such checks can be one comparison of tuples (skips.py)."""
    return value is None or type(value) in (bool, int, str, bytes) or type(value) is float and _equal_is_exact(value)


def plain_tuple(value) -> bool:
    """Is ``value`` a tuple of plain constants (``padding=(1, 1)``)? Its CONSTANT_MATCH is exactly
    its type, its items' types, then ``==``, and can join the comparisons of tuples too."""
    return type(value) is tuple and all(map(plain_constant, value))


def _equal_is_exact(value) -> bool:
    """Does ``type(x) is type(value) and x == value`` mean that ``x`` is ``value`` to every
    program? Not for a zero float (``-0.0 == 0.0``), a NaN (never equal), a complex,
    nor a container whose items need more than == (``(1,) == (True,)``)."""
    kind = type(value)
    if kind is float:
        return value != 0 and value == value
    return kind not in (complex, tuple, frozenset)


def same_constant(x, value) -> bool:
    """``x`` stands for ``value`` exactly: the same type, and the same value where ``==``
    is looser (a float's sign of zero and its NaN, the items' types of a tuple or frozenset)."""
    if type(x) is not type(value):
        return False
    if type(value) in (float, complex):
        return repr(x) == repr(value)  # repr tells -0.0 from 0.0, and a NaN from any number
    if type(value) is tuple:
        return len(x) == len(value) and all(map(same_constant, x, value))
    if type(value) is frozenset:
        return x == value and sorted(map(_typed_repr, x)) == sorted(map(_typed_repr, value))
    return x == value


def _typed_repr(item):
    return type(item).__qualname__, repr(item)


def _constant_line(g):
    value = g.value
    if value is None or isinstance(value, (bool, torch.dtype, type(Ellipsis))):
        return f"{g.source.name()} is {value!r}"
    return f"{g.source.name()} == {value!r}"


_CONSTANT_HINTS = {
    float: " (a Python float: pass a tensor to avoid recompiling)",
    int: " (a Python int: unless compiled with dynamic=False, this recompile makes it a symbolic graph "
         "input; where Python needs its value, as in range(n), each value still gets its own graph)",
    bool: " (a Python bool: each value compiles its own graph)",
    str: " (a Python str: each value compiles its own graph)",
}


def _constant_explain(g, value) -> str:
    name, old = g.source.name(), g.value
    if type(value) is not type(old):
        return f"{name} changed from {old!r} ({type(old).__name__}) to {value!r} ({type(value).__name__})"
    return f"{name} changed from {old!r} to {value!r}{_CONSTANT_HINTS.get(type(old), '')}"


def _set_line(g):
    kind, items, _ = g.value
    return f"{g.source.name()} == {kind.__name__}({list(items)!r})  # in this iteration order"


def _container_explain(what):
    """LENGTH and DICT_KEYS: the type changed, or ``what`` (length, keys) did."""
    def explain(g, value) -> str:
        kind, old = g.value
        name = g.source.name()
        if type(value) is not kind:
            return f"{name} is now a {type(value).__name__}, not a {kind.__name__}"
        if what == "length":
            return f"length of {name} changed from {old} to {len(value)} (the trace unrolled it)"
        return f"keys of {name} changed from {list(old)} to {list(value)}"
    return explain


def _length_line(g):
    kind, n = g.value
    return f"type({g.source.name()}) is {kind.__name__} and len({g.source.name()}) == {n}"


def _contains_check(g, v):
    """Whether a (string) key is in a dict read lazily (variables/lazy_dict.py)."""
    key, present = g.value
    return Py(f"{key!r} {'in' if present else 'not in'} ", v)


def _contains_line(g):
    key, present = g.value
    return f"{key!r} {'in' if present else 'not in'} {g.source.name()}"


def _contains_explain(g, value) -> str:
    key, present = g.value
    now = "added to" if not present else "removed from"
    return f"key {key!r} was {now} {g.source.name()}"


# ---- tensors

def _tensor_parts(spec: TensorSpec, v: Node) -> List[Node]:
    """TENSOR_MATCH as Python checks (a tensor whose spec no template reproduces)."""
    device = Py(v, ".is_cpu") if spec.device.type == "cpu" else Py(v, ".device == ", Const(spec.device))
    parts = [Py("type(", v, ") is ", Const(spec.cls)), Py(v, ".dtype is ", Const(spec.dtype)), device,
             Py(v, f".dim() == {len(spec.size)}")]
    if None not in spec.size:
        parts.append(Py(v, f".size() == {spec.size!r}"))
    else:
        parts += [Py(v, f".size({i}) == {n}") for i, n in enumerate(spec.size) if n is not None]
    parts.append(Py(v, ".is_contiguous()") if _contiguous_suffices(spec) else Py(v, f".stride() == {spec.stride!r}"))
    parts.append(Py(v, f".requires_grad is {spec.requires_grad}"))
    if spec.keys is not None:
        parts.append(Py(Const(_dispatch_keys), "(", v, f").raw_repr() == {spec.keys}"))
    return parts


def _contiguous_suffices(spec: TensorSpec) -> bool:
    """Whether ``is_contiguous()`` checks the strides: dynamic strides are those of a
    contiguous tensor (only those get dynamic dims, dynamic.py), and same sizes +
    contiguous => same strides (up to size-1 dims, which index nothing)."""
    return None in spec.stride or None not in spec.size and spec.stride == _contiguous_strides(spec.size)


def _contiguous_strides(size):
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _dims(values) -> str:
    return "[" + ", ".join("*" if v is None else str(v) for v in values) + "]"


def _tensor_line(g):
    spec = g.value
    return (f"{g.source.name()}: {_qualname(spec.cls)}(dtype={spec.dtype}, device={spec.device}, "
            f"size={_dims(spec.size)}, stride={_dims(spec.stride)}, requires_grad={spec.requires_grad})")


_SIZE_HINT = ("unless compiled with dynamic=False, this recompile makes the dimension dynamic, so "
              "later sizes reuse one graph; framegraph.mark_dynamic({arg}, {dim}) makes it dynamic "
              "from the first call")
_SMALL_SIZE_HINT = "sizes 0 and 1 are specialised: each gets its own graph"


def _tensor_explain(g, value) -> str:
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
    if not (value.is_contiguous() if _contiguous_suffices(spec) else value.stride() == spec.stride):
        now = "contiguous" if value.is_contiguous() else "not contiguous"
        return (f"stride of {name} changed from {_dims(spec.stride)} to {list(value.stride())} "
                f"(it is now {now})")
    if spec.keys is not None and _dispatch_keys(value).raw_repr() != spec.keys:
        return f"dispatch keys of {name} changed (now {_dispatch_keys(value)})"
    return f"{name} no longer matches {spec}"


# ---- global state, hooks, globals

GLOBAL_STATE_LABELS = ("torch.get_default_dtype()", "torch.are_deterministic_algorithms_enabled()",
                       "autocast enabled")
GLOBAL_STATE_GETTERS = (torch.get_default_dtype, torch._C._get_deterministic_algorithms,
                        torch._C._is_any_autocast_enabled)


def global_state() -> Tuple[Any, ...]:
    """The values GLOBAL_STATE guards, now."""
    return tuple(getter() for getter in GLOBAL_STATE_GETTERS)


def _global_state_explain(g, scope) -> str:
    for label, old, new in zip(GLOBAL_STATE_LABELS, g.value, global_state()):
        if old is not new:
            return f"{label} changed from {old} to {new}"
    return f"guard failed: {KINDS[g.kind].line(g)}"


_ON = {True: "enabled", False: "disabled"}


class HookDicts:
    """The hook dicts of the modules a trace called and nn.Module's global ones, each
    with what it held then (hook objects, compared by identity). The dicts and hooks
    are held, not the modules."""

    def __init__(self, dicts):
        self.dicts = tuple(dicts)
        self.contents = tuple(tuple(d.items()) for d in self.dicts)
        self.empty = not any(self.contents)

    def unchanged(self) -> bool:
        """Does every dict hold the same keys and the same hooks, in the same order?"""
        for d, contents in zip(self.dicts, self.contents):
            if len(d) != len(contents):
                return False
            for (key, hook), (was_key, was_hook) in zip(d.items(), contents):
                if key != was_key or hook is not was_hook:
                    return False
        return True

    def __repr__(self):
        return f"HookDicts({len(self.dicts)})"


def _hooks_check(g, v):
    if g.value.empty:  # the common case, one C call: no hooks anywhere
        return Py("not any(", Const(g.value.dicts), ")")
    return Py(Const(g.value.unchanged), "()")


def _hooks_line(g):
    if g.value.empty:
        return f"no hooks registered on the modules called ({len(g.value.dicts)} dicts)"
    held = sum(map(len, g.value.contents))
    return f"the hooks of the modules called are the {held} the trace ran ({len(g.value.dicts)} dicts)"


# ---- the records, cheap kinds first. A kind without a source gets v=None.
_KINDS = [
    GuardKind(
        "GRAD_MODE", 0,
        check=lambda g, v: Py(Const(torch._C.is_grad_enabled), f"() is {g.value}"),
        line=lambda g: f"torch.is_grad_enabled() is {g.value}",
        explain=lambda g, scope: f"grad mode changed from {_ON[g.value]} to {_ON[torch.is_grad_enabled()]}"),
    GuardKind(  # sys.exc_info() read in a trace that handles no exception is the caller's:
        # (None, None, None) stays true while the frame is not called from an except block
        "NO_HANDLED_EXCEPTION", 0,
        check=lambda g, v: Py(Const(sys.exc_info), "()[1] is None"),
        line=lambda g: "sys.exc_info()[1] is None  # the caller handles no exception",
        explain=lambda g, scope: "the frame is now called while an exception is being handled"),
    GuardKind(  # interpreter state a trace read (variables/interpreter_state.py): value is
        # (the getter, what it returned), e.g. (sys.get_int_max_str_digits, 4300)
        "INTERPRETER_STATE", 0,
        check=lambda g, v: Py(Const(g.value[0]), "() == ", Const(g.value[1])),
        line=lambda g: f"sys.{g.value[0].__name__}() == {g.value[1]!r}",
        explain=lambda g, scope: f"sys.{g.value[0].__name__}() changed from {g.value[1]!r} to "
                                 f"{g.value[0]()!r}"),
    GuardKind(  # global torch state a graph depends on, besides grad mode: one call each
        "GLOBAL_STATE", 0,
        check=lambda g, v: all_of(Py(Const(getter), "() is ", Const(value))
                                  for getter, value in zip(GLOBAL_STATE_GETTERS, g.value)),
        line=lambda g: "; ".join(f"{label} is {value}" for label, value in zip(GLOBAL_STATE_LABELS, g.value)),
        explain=_global_state_explain),
    GuardKind(  # the code reads the compiled graph (and resume functions) from the globals it
        # was traced with; the same code object can run with other globals (a module loaded
        # twice). Compared by id: holding the dict would keep its module alive through the
        # cache on the code object.
        "SAME_GLOBALS", 0,
        check=lambda g, v: Py(f"id({FUNC}.__globals__) == {g.value}"),
        line=lambda g: "G is the globals dict the code was traced with",
        explain=lambda g, scope: "the same code runs with other globals (its module was loaded again, "
                                 "or it was exec'd again)"),
    GuardKind(
        "NOT_IN_GLOBALS", 1,
        check=lambda g, v: Py(f"{g.value!r} not in {GLOBALS}"),
        line=lambda g: f"{g.value!r} not in G  # builtin {g.value} not shadowed",
        explain=lambda g, scope: f"global {g.value!r} now shadows the builtin the trace used",
        versioned="dict", reads_globals=True),
    GuardKind(  # nn.Module hooks added or removed after the trace: the graph would run the old ones
        "MODULE_HOOKS", 1,
        check=_hooks_check, line=_hooks_line,
        explain=lambda g, scope: "a hook was added to or removed from a module the graph calls "
                                 "(or a global module hook)"),
    GuardKind(
        "TYPE_MATCH", 2,
        check=lambda g, v: Py("type(", v, ") is ", Const(g.value)),
        line=lambda g: f"type({g.source.name()}) is {_qualname(g.value)}",
        explain=lambda g, value: (f"type of {g.source.name()} changed from {g.value.__qualname__} "
                                  f"to {type(value).__qualname__}")),
    GuardKind(  # value: (id, label), see function_guard_values
        "ID_MATCH", 2,
        check=lambda g, v: Py("id(", v, f") == {g.value[0]}"),
        line=_identity_line, explain=_identity_explain,
        versioned="item", same_object=lambda g: True),
    GuardKind(
        "CONSTANT_MATCH", 3,
        check=_constant_check, line=_constant_line, explain=_constant_explain,
        # a tuple of plain items passes again when it is the same object: it holds the same items
        versioned="item", same_object=lambda g: type(g.value) in _IMMUTABLE or plain_tuple(g.value)),
    GuardKind(  # a set or frozenset of constants: value is (type, its items in iteration order,
        # its size in bytes). The order is the trace's too (a loop over it unrolled), and with
        # the table's size it fixes where later inserts go: equal sets can iterate otherwise
        "SET_MATCH", 3,
        check=lambda g, v: Py("(type(", v, ") is ", Const(g.value[0]), " and ", v, f".__sizeof__() == {g.value[2]}"
                              " and tuple(", v, ") == ", Const(g.value[1]), ")"),
        line=_set_line),
    GuardKind(  # value: (type, length)
        "LENGTH", 3,
        check=lambda g, v: Py("(type(", v, ") is ", Const(g.value[0]), " and len(", v, f") == {g.value[1]})"),
        line=_length_line, explain=_container_explain("length")),
    GuardKind(  # value: (key, whether it is in)
        "DICT_CONTAINS", 3,
        check=_contains_check, line=_contains_line, explain=_contains_explain, versioned="dict"),
    GuardKind(  # value: (type, keys in order)
        "DICT_KEYS", 4,
        # len() too: an OrderedDict that `dict.__setitem__(od, ...)` wrote iterates its order list,
        # which then holds fewer keys than its table (the builder refuses such a dict)
        check=lambda g, v: Py("(type(", v, ") is ", Const(g.value[0]), " and len(", v, f") == {len(g.value[1])}"
                              " and list(", v, ") == ", Const(list(g.value[1])), ")"),
        line=lambda g: f"list({g.source.name()}.keys()) == {list(g.value[1])!r}",
        explain=_container_explain("keys")),
    GuardKind(  # no value: an OrderedDict's table holds its keys in its order list's order.
        # dict's own keys()/values()/items() iterate the table (dictiter_iternextkey), which
        # move_to_end leaves as it is: a trace that read them in the list's order needs this
        "ODICT_TABLE_ORDER", 4,
        check=lambda g, v: Py("list(", Const(dict.keys), "(", v, ")) == list(", v, ")"),
        line=lambda g: f"list(dict.keys({g.source.name()})) == list({g.source.name()})"),
    GuardKind(  # value: the keys in the table's order, for an OrderedDict whose table differs from
        # its order list (move_to_end before the frame) and whose final state the trace replays
        "ODICT_TABLE_KEYS", 4,
        check=lambda g, v: Py("list(", Const(dict.keys), "(", v, ")) == ", Const(list(g.value))),
        line=lambda g: f"list(dict.keys({g.source.name()})) == {list(g.value)!r}"),
    GuardKind(  # value: the other Source, holding the same object
        "IS_SAME", 4,
        check=lambda g, v: Py(v, " is ", Read(g.value)),
        line=lambda g: f"{g.source.name()} is {g.value.name()}",
        explain=lambda g, value: f"{g.source.name()} is no longer the same object as {g.value.name()}",
        same_object=lambda g: True, second_source=True),
    GuardKind(  # value: the other Source, holding another object (``x is y`` was False)
        "IS_NOT_SAME", 4,
        check=lambda g, v: Py(v, " is not ", Read(g.value)),
        line=lambda g: f"{g.source.name()} is not {g.value.name()}",
        explain=lambda g, value: f"{g.source.name()} is now the same object as {g.value.name()}",
        same_object=lambda g: True, second_source=True),
    GuardKind(  # value: a TensorSpec
        "TENSOR_MATCH", 5,
        check=lambda g, v: all_of(_tensor_parts(g.value, v)),
        line=_tensor_line, explain=_tensor_explain, batched=True),
    GuardKind(  # value: (sources of tensors, storage_groups of them): which share a storage
        "STORAGE_GROUPS", 5,
        check=lambda g, v: Py(Const(storage_groups), "((", *joined((Read(s) for s in g.value[0]), ", "),
                              f",)) == {g.value[1]!r}"),
        line=lambda g: f"storage groups of {', '.join(s.name() for s in g.value[0])} are {g.value[1]!r}",
        more_sources=lambda g: g.value[0]),
    GuardKind(  # the shape relations of a dynamic-shape trace (value: dynamic.ShapeGuards), written
        # by its own printer over the sources' expressions (which refer to math.inf, torch.sym_float)
        "SHAPE_ENV", 6,
        check=lambda g, v: Py(g.value.code()),
        line=lambda g: g.value.readable(),
        explain=lambda g, scope: g.value.explain(scope),
        more_sources=lambda g: (src for _, src, _ in g.value.symbols),
        names={"math": math, "torch": torch}),
]
KINDS: Dict[str, GuardKind] = {kind.name: kind for kind in _KINDS}


def storage_groups(tensors) -> tuple:
    """For each tensor, the index of the first of ``tensors`` sharing its storage."""
    first = {}
    return tuple(first.setdefault(t.untyped_storage().data_ptr(), i) for i, t in enumerate(tensors))


def function_guard_values(obj) -> Tuple[int, str]:
    """The (id, label) pair of an ID_MATCH guard on ``obj``."""
    label = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    if isinstance(obj, types.ModuleType):
        label = f"module {obj.__name__}"
    return id(obj), str(label)
