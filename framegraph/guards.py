"""Guards: the assumptions a captured graph relies on, as data, compiled once.

While tracing, every fact the tracer relies on about a value from outside the
frame is recorded as a ``Guard(kind, source, value)``: "``L['x']`` is a float32
CPU tensor of size [8]", "``G['scale']`` == 2", "``G['torch']`` is that module",
"grad mode is on". At the end of a trace the set of guards is compiled into
one Python function with the frame's argument slots as parameters::

    def __guard(___fn, x, y, args, kwargs):
        try:
            ___G = ___fn.__globals__
            return (___c0() is True and (___c1() is torch.float32 and ...)  # grad mode, global state
                    and id(___G['torch']) == 1403... and y == 2 and ___c5(x))   # ___c5: TensorCheck
        except Exception:
            return False

The C hook calls it before every run of the cached code. Guards are sorted so
the cheap checks run first, a source read by several guards is evaluated once
(walrus), and constants live in the function's own globals, so it holds no
reference to any argument value (identity is checked by ``id``).

Each guard also renders one readable line (``L['x'].dtype == torch.float32``
style) for logs and for ``CompiledGuard.failure``, which names the first
guard that rejects a given call in words (guard_explain.py): the reason of a
recompile.

Tensor checks are the per-call cost users notice, so all TENSOR_MATCH guards
of an entry are checked by one C++ call (type, dispatch keys, dtype, device,
sizes, strides, requires_grad; no reference to the tensors), built from a
template tensor of each spec: framegraph's ``TensorCheck``
(``_C/tensor_check.cpp``, about 20 ns a tensor) or, if that extension was not
built, torch's ``TensorGuards`` (about 110 ns a tensor). A tensor whose spec
no template reproduces (an unusual subclass or dispatch key) keeps the
Python checks. Dynamic dimensions (dynamic.py) are None in a spec; the shape
relations the trace relied on are one SHAPE_ENV guard checked last.

Three more savings, none of which drops a fact: values under one root
(``L['self']._modules['0']._parameters['weight']`` and its siblings) are read
by one C ``SourceReader`` call that skips its walk while every dict on the way
is unchanged (source_reader.py), and the identity/constant checks of those
values run only when it walked (``_ReaderGroup``); a source prefix several
guards read is bound once (``_ExprCache``); and the identity/constant checks
of items of one dict (module globals) sit behind the dict's version tag
(``_VersionGroup``): skipped while the dict is unchanged, run again when it
changed.
"""
import dataclasses
import itertools
import math
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from . import _C

try:
    from ._tensor_check import TensorCheck
except ImportError:  # built without torch's headers: tensor_check() uses torch's TensorGuards
    TensorCheck = None
from .source_reader import Reader, chain, group
from .sources import FUNC, GLOBALS, GetItemSource, GlobalSource, Source

_dispatch_keys = torch._C._dispatch_keys


@dataclasses.dataclass(frozen=True)
class Guard:
    """One assumption. ``value`` is hashable data, never the guarded object."""

    kind: str
    source: Optional[Source]
    value: Any = None


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


_HOLE = "\x00E\x00"


class _Text(Source):
    """A source already rendered as Python text (a name bound earlier in the guard)."""

    def __init__(self, text: str):
        self.text = text

    def expr(self) -> str:
        return self.text


class _ExprCache:
    """Reads each guarded source, and each prefix several guards share, once.

    ``uses`` counts, for every source, how many rendered reads go through it
    (``L['self']._modules`` is under every submodule and parameter): one read
    by two or more is bound with a walrus at its first evaluation and reused
    by name afterwards. Parts are rendered in the order they run (and are
    joined by ``and``), so a name is always bound before it is read.
    """

    def __init__(self, roots: List[Source], leaves: Optional[Dict[Source, str]] = None):
        self._names: Dict[Source, str] = dict(leaves or {})  # values a SourceReader returns
        self._count = itertools.count()
        self._uses: Dict[Source, int] = {}
        for source in roots:
            while isinstance(source, Source):
                self._uses[source] = self._uses.get(source, 0) + 1
                source = getattr(source, "base", None)

    def expr(self, source: Source, bind: bool = False) -> str:
        """An expression reading ``source``, binding it (or reusing its binding);
        ``bind``: bind it even if no other guard reads it (read twice by one check)."""
        if source in self._names:
            return self._names[source]
        base = getattr(source, "base", None)
        if isinstance(base, Source) and dataclasses.is_dataclass(source):
            text = dataclasses.replace(source, base=_Text(self.expr(base))).expr()
        else:
            text = source.expr()
        if text.isidentifier() or self._uses.get(source, 0) < 2 and not bind:
            return text
        name = self._names[source] = f"___t{next(self._count)}"
        return f"({name} := {text})"

    def fill(self, source: Source, code: str) -> str:
        """Replace the value placeholders in ``code`` with reads of ``source``."""
        first, _, rest = code.partition(_HOLE)
        if not _:
            return code
        return first + self.expr(source, bind=_HOLE in rest) + rest.replace(_HOLE, self.expr(source))


class CompiledGuard:
    """The check function plus the readable lines it was built from."""

    def __init__(self, guards: List[Guard], argnames: Tuple[str, ...]):
        self.guards = sorted(
            dict.fromkeys(guards), key=lambda g: (KINDS[g.kind][0], _depth(g.source))
        )
        self.argnames = tuple(argnames)
        self.consts = _Consts()
        batch = _TensorBatch()
        batched = {g for g in self.guards if g.kind == "TENSOR_MATCH" and batch.accepts(g)}
        readers, leaves, groups = _readers(self.guards, batched)
        self.readers = [call.reader for call in readers]
        groups.update(_version_groups([g for g in self.guards if g not in batched and g not in groups]))
        plan = self._plan(batched, groups, readers)
        roots = [s for step in plan for s in _step_sources(step, batched, groups)]
        cache = _ExprCache(roots, leaves)
        self.parts: List[Tuple[str, str]] = []
        for step in plan:
            if step == "BATCH":
                # one C++ call checks every batched tensor; it runs where the first
                # tensor check would have (after cheaper guards, before SHAPE_ENV)
                for g in sorted((g for g in self.guards if g in batched), key=lambda g: _leaf_order(g, leaves)):
                    batch.add(g, cache.expr(g.source))
                batch.exprs = _star_leaves(batch.exprs, readers)
                self.parts.append((batch.code(self.consts), "tensors: " + ", ".join(batch.names)))
            elif isinstance(step, _ReaderCall):
                self.parts.append(step.render(cache, self.consts))
            elif isinstance(step, (_VersionGroup, _ReaderGroup)):
                self.parts.append(step.render(cache, self.consts))
            elif step in batched:
                self.parts.extend(batch.extra_parts(step, cache, self.consts))
            else:
                code, line = KINDS[step.kind][1](step, _HOLE, self.consts)
                if step.kind == "IS_SAME":  # both sides may be values a reader returns
                    code = f"{cache.expr(step.source)} is {cache.expr(step.value)}"
                elif step.source is not None:
                    code = cache.fill(step.source, code)
                self.parts.append((code, line))
        self.lines = [_line(g) for g in self.guards]
        self.source_code = self._render()
        self.fn = self._compile()

    def _plan(self, batched, groups, readers):
        """The checks in the order they run: guards, the reader calls before the
        first guard that reads a source, "BATCH" at the first batched tensor, and
        each dict-version or reader group at its first member."""
        plan, placed = [], set()
        for g in self.guards:
            if readers and "READERS" not in placed and KINDS[g.kind][0] >= 2:
                plan.extend(readers)
                placed.add("READERS")
            if g in batched and "BATCH" not in placed:
                plan.append("BATCH")
                placed.add("BATCH")
            group = groups.get(g)
            if group is None:
                plan.append(g)
            elif id(group) not in placed:
                plan.append(group)
                placed.add(id(group))
        if readers and "READERS" not in placed:
            plan.extend(readers)
        return plan

    def _render(self) -> str:
        params = ", ".join((FUNC,) + self.argnames)
        body = " and ".join(code for code, _ in self.parts) or "True"
        uses_globals = any(g.source is not None and g.source.uses_globals() or g.kind == "NOT_IN_GLOBALS"
                           or g.kind == "SHAPE_ENV" and g.value.uses_globals() for g in self.guards)
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
        """Why the first guard that rejects this call does so, in words; None if all pass."""
        from .guard_explain import explain

        for g in self.guards:
            if not CompiledGuard([g], self.argnames).fn(fn, *slots):
                return explain(g, self.argnames, fn, slots)
        return None

    def __repr__(self):
        return "CompiledGuard(\n  " + "\n  ".join(self.lines) + "\n)"


def _line(g: Guard) -> str:
    return KINDS[g.kind][1](g, "_", _Consts())[1]


class _TensorBatch:
    """TENSOR_MATCH guards checked together by one C++ call (``tensor_check``)."""

    def __init__(self):
        self.guards: Dict[Guard, None] = {}
        self.exprs: List[str] = []
        self.names: List[str] = []
        self.templates: List[torch.Tensor] = []
        self.extras: Dict[Guard, List[Tuple[str, str]]] = {}

    def accepts(self, g: Guard) -> bool:
        """Whether a template tensor reproduces ``g``'s spec (kept for ``add``)."""
        self._templates = getattr(self, "_templates", {})
        self._templates[g] = g.value.template()
        return self._templates[g] is not None

    def add(self, g: Guard, expr: str) -> None:
        self.guards[g] = None
        self.exprs.append(expr)
        self.names.append(g.source.name())
        self.templates.append(self._templates.pop(g))

    def extra_parts(self, g: Guard, cache, consts) -> List[Tuple[str, str]]:
        """Checks the C++ call does not make: contiguity of dynamic tensors."""
        spec = g.value
        extra = []
        if None in spec.stride:
            extra = [(cache.fill(g.source, f"{_HOLE}.is_contiguous()"), f"{g.source.name()} is contiguous")]
        self.extras[g] = extra
        return extra

    def code(self, consts) -> str:
        specs = [g.value for g in self.guards]
        check = tensor_check(self.templates, [list(s.size) for s in specs], [list(s.stride) for s in specs])
        self.templates.clear()  # the check keeps metadata only
        return f"{consts(check)}({', '.join(self.exprs)})"


def tensor_check(templates, sizes, strides):
    """One callable checking tensors against ``templates`` (sizes/strides: None = dynamic):
    framegraph's C++ TensorCheck (_C/tensor_check.cpp), or torch's TensorGuards when
    that extension was not built. Both check the same facts."""
    if TensorCheck is None:
        from torch._C._dynamo.guards import TensorGuards  # torch's C++ check, not the Python frontend

        return TensorGuards(*templates, dynamic_dims_sizes=sizes, dynamic_dims_strides=strides).check
    return TensorCheck(templates, sizes, strides)


# ---- dict-version groups: many item checks of one dict, skipped while it is unchanged
_VERSIONED_KINDS = ("ID_MATCH", "CONSTANT_MATCH", "DICT_CONTAINS", "NOT_IN_GLOBALS")
_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), torch.dtype)
MIN_GROUP = 2  # below this a version check costs as much as the checks it skips


def _versioned_dict(g: Guard):
    """(True, source of the dict) when ``g`` only checks one item (or key) of a dict
    by identity or immutable value, so an unchanged dict version implies ``g``;
    the source is None for the frame's globals. (False, None) otherwise."""
    if g.kind not in _VERSIONED_KINDS:
        return False, None
    if g.kind == "NOT_IN_GLOBALS":
        return True, None
    if g.kind == "DICT_CONTAINS":
        return True, g.source
    if g.kind == "CONSTANT_MATCH" and type(g.value) not in _IMMUTABLE:
        return False, None
    if isinstance(g.source, GlobalSource):
        return True, None
    if isinstance(g.source, GetItemSource) and type(g.source.index) is str:
        return True, g.source.base
    return False, None


class _VersionGroup:
    """Checks of items of one dict, behind a check of the dict's version tag.

    CPython 3.11 gives every dict a version (``ma_version_tag``, PEP 509) from
    a global counter, renewed by every change to the dict: an equal version
    means the same dict with the same key -> value identities. The group runs
    its member checks (the slow path) until they pass once, then remembers the
    version it read *before* running them; later calls that find the same
    version skip the members. A dict that changes (a module global rebound, a
    submodule replaced) gets a version never seen before, so the members run
    again and decide. ``_C.dict_version`` is None for anything but an exact
    dict (a subclass may override ``__getitem__``), which never matches.
    """

    def __init__(self, base: Optional[Source], members: List[Guard]):
        self.base, self.members = base, members

    def render(self, cache, consts) -> Tuple[str, str]:
        if self.base is None:
            header = name = GLOBALS
        else:
            header = cache.expr(self.base, bind=True)
            name = cache.expr(self.base)
        checks = []
        for g in self.members:
            if g.kind in ("DICT_CONTAINS", "NOT_IN_GLOBALS"):
                hole = name  # the check is about the dict itself
            elif isinstance(g.source, GlobalSource):
                hole = g.source.expr()
            else:
                hole = f"{name}[{g.source.index!r}]"
            checks.append(KINDS[g.kind][1](g, hole, consts)[0])
        seen = consts([-1])  # the version the members last passed on (-1: none yet)
        version = f"{seen}_v"
        code = (f"({seen}[0] == ({version} := {consts(_C.dict_version)}({header})) or "
                f"({' and '.join(checks)} and ({version} is None or {seen}.__setitem__(0, {version}) is None)))")
        where = "G" if self.base is None else self.base.name()
        return code, f"{where} unchanged (dict version), else its {len(checks)} item checks"


# ---- source readers: the values under one root read in C, walk skipped while unchanged
class _ReaderCall:
    """``(___rK := reader(root))``: binds the values a SourceReader (source_reader.py)
    returns on every call; ``all_name`` (``___aK``) is bound to all its values only
    where its group's checks run."""

    def __init__(self, reader: Reader, name: str, all_name: str):
        self.reader, self.name, self.all_name = reader, name, all_name

    def render(self, cache, consts) -> Tuple[str, str]:
        code = f"({self.name} := {consts(self.reader.c)}({cache.expr(self.reader.root)})) is not None"
        return code, self.reader.describe()


class _ReaderGroup:
    """Identity and immutable-constant checks of values a reader returns, skipped
    while the reader has not walked since they last passed: an unchanged walk
    means the same objects (``SourceReader.walks`` counts walks). Values only
    these checks read are not returned by the reader's call (fewer objects
    touched each call) but by ``reader.all(root)``, here."""

    def __init__(self, call: _ReaderCall, members: List[Guard]):
        self.call, self.members = call, members

    def render(self, cache, consts) -> Tuple[str, str]:
        checks = [f"{cache.expr(g.source)} is {cache.expr(g.value)}" if g.kind == "IS_SAME"
                  else KINDS[g.kind][1](g, cache.expr(g.source), consts)[0] for g in self.members]
        reader = self.call.reader
        if reader.nhot < len(reader.leaves):
            checks.insert(0, f"({self.call.all_name} := {consts(reader.c)}.all({cache.expr(reader.root)})) is not None")
        seen, walks = consts([-1]), f"{consts(reader.c)}.walks"
        code = f"({seen}[0] == {walks} or ({' and '.join(checks)} and {seen}.__setitem__(0, {walks}) is None))"
        return code, f"{reader.root.name()}: {len(self.members)} identity checks, run when the reader walked"


_SKIPPABLE = ("ID_MATCH", "CONSTANT_MATCH", "IS_SAME")


def _readers(guards: List[Guard], batched):
    """The reader calls of a guard, the expression of each value they return, and
    the reader group of each guard that needs checking only after a walk.

    A guarded source that is a chain of reads (source_reader.chain) is read by
    its root's reader; one that is not (``L['self'].layers[0]`` with a list)
    through its nearest ancestor that is. Values some check reads every call
    are "hot" and come first (batched tensors first, in batch order, so the
    tensor check can take them as ``*___rK``); the rest are only read by the
    reader's group."""
    def readable(source):
        while source is not None and chain(source) is None:
            source = getattr(source, "base", None)
        return source

    first: List[Source] = []
    rest: List[Source] = []
    for g in guards:
        for read in (g.source, g.value) if g.kind == "IS_SAME" else (g.source,):
            source = readable(read)
            if source is not None:
                (first if g in batched and source == read else rest).append(source)
    by_root = group(first + rest)
    owner = {s: root for root, sources in by_root.items() for s in sources}

    def skippable(g):
        if g.source not in owner or g.source != readable(g.source):
            return False
        if g.kind == "IS_SAME":
            return owner.get(g.value) == owner[g.source] and g.value == readable(g.value)
        return g.kind == "ID_MATCH" or g.kind == "CONSTANT_MATCH" and type(g.value) in _IMMUTABLE

    members = {g for g in guards if skippable(g)}
    hot = set()
    for g in guards:
        if g not in members:
            hot.update(readable(r) for r in ((g.source, g.value) if g.kind == "IS_SAME" else (g.source,)))
    for root in by_root:
        hot.update(part for part in _parts(root) if part in owner)
    calls, leaves, by_call = [], {}, {}
    for k, root in enumerate(_roots_in_order(by_root, owner)):
        sources = by_root[root]
        ordered = [s for s in sources if s in hot] + [s for s in sources if s not in hot]
        nhot = sum(1 for s in sources if s in hot)
        watched = {r for g in members if owner[g.source] == root
                   for r in ((g.source, g.value) if g.kind == "IS_SAME" else (g.source,))}
        call = _ReaderCall(Reader(root, ordered, nhot, watched), f"___r{k}", f"___a{k}")
        calls.append(call)
        by_call[root] = call
        leaves.update((s, f"{call.name if i < nhot else call.all_name}[{i}]") for i, s in enumerate(ordered))
    groups: Dict[Guard, _ReaderGroup] = {}
    for root, call in by_call.items():
        mine = [g for g in guards if g in members and owner[g.source] == root]
        if mine:
            grp = _ReaderGroup(call, mine)
            groups.update((g, grp) for g in mine)
    return calls, leaves, groups


def _roots_in_order(groups, owner) -> List[Source]:
    """Reader roots, each after the readers whose values its root is read from
    (``dict.get(___r0[1], ...)``)."""
    done: Dict[Source, None] = {}

    visiting = set()

    def visit(root):
        if root in done or root in visiting:  # a cycle cannot occur: a root is below its own leaves
            return
        visiting.add(root)
        for part in _parts(root):
            if part in owner and owner[part] != root:
                visit(owner[part])
        done[root] = None

    for root in groups:
        visit(root)
    return list(done)


def _parts(source) -> List[Source]:
    """Every source ``source`` is read from (bases, and the key of a DictGetSource)."""
    out = []
    for field in dataclasses.fields(source) if dataclasses.is_dataclass(source) else ():
        value = getattr(source, field.name)
        if isinstance(value, Source):
            out.append(value)
            out.extend(_parts(value))
    return out


def _leaf_order(g: Guard, leaves) -> Tuple[int, int, int]:
    """Batch order: tensors read directly first, then each reader's, by index."""
    name = leaves.get(g.source)
    if name is None:
        return (0, 0, 0)
    k, _, i = name[len("___r"):].rstrip("]").partition("[")
    return (1, int(k), int(i))


def _star_leaves(exprs: List[str], readers: List[_ReaderCall]) -> List[str]:
    """``___r0[0], ___r0[1], ...`` -> ``*___r0`` (or ``*___r0[:n]``)."""
    out = list(exprs)
    for call in readers:
        run = [f"{call.name}[{i}]" for i in range(call.reader.nhot)]
        n = 0
        while n < len(run) and run[n] in out:
            n += 1
        if n >= 2 and out[out.index(run[0]):out.index(run[0]) + n] == run[:n]:
            at = out.index(run[0])
            star = f"*{call.name}" if n == len(run) else f"*{call.name}[:{n}]"
            out[at:at + n] = [star]
    return out


def _version_groups(guards: List[Guard]) -> Dict[Guard, _VersionGroup]:
    """Guard -> its group, for dicts with at least MIN_GROUP versioned checks."""
    if getattr(_C, "dict_version", None) is None:
        return {}
    by_dict: Dict[Optional[Source], List[Guard]] = {}
    for g in guards:
        ok, base = _versioned_dict(g)
        if ok:
            by_dict.setdefault(base, []).append(g)
    groups = {}
    for base, members in by_dict.items():
        if len(members) >= MIN_GROUP:
            group = _VersionGroup(base, members)
            groups.update((g, group) for g in members)
    return groups


def _step_sources(step, batched, groups) -> List[Source]:
    """The sources one step of the plan reads (for the shared-prefix count)."""
    if step == "BATCH":
        return []  # counted with each batched guard below
    if isinstance(step, _VersionGroup):
        return [step.base] if step.base is not None else []
    if isinstance(step, _ReaderCall):
        return [step.reader.root]
    if isinstance(step, _ReaderGroup):
        return [step.call.reader.root] if step.call.reader.nhot < len(step.call.reader.leaves) else []
    if step.source is None:
        return []
    if step in batched:
        return [step.source] * (1 + (None in step.value.stride))
    return [step.source]


def function_guard_values(obj) -> Tuple[int, str]:
    """The (id, label) pair of an ID_MATCH guard on ``obj``."""
    label = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    if isinstance(obj, types.ModuleType):
        label = f"module {obj.__name__}"
    return id(obj), str(label)
