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
changed. The guard kinds and their renderers are in guard_kinds.py, the
groups in guard_skips.py.
"""
import dataclasses
import itertools
from typing import Dict, List, Optional, Tuple

import torch

try:
    from .._tensor_check import TensorCheck
except ImportError:  # built without torch's headers: tensor_check() uses torch's TensorGuards
    TensorCheck = None
from .kinds import KINDS, Guard, _Consts, _depth, sources_of
from .skips import (_leaf_order, _ReaderCall, _ReaderGroup, _readers, _star_leaves,
                          _version_groups, _VersionGroup)
from .sources import FUNC, GLOBALS, Source, held_objects


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
        ns.update(held_objects(s for g in self.guards for s in sources_of(g)))
        exec(compile(self.source_code, "<framegraph guard>", "exec"), ns)  # noqa: S102
        fn = ns["__guard"]
        fn.compiled_guard = self  # lines and failure() for diagnostics, from the bare function
        return fn

    def __call__(self, fn, *slots) -> bool:
        return self.fn(fn, *slots)

    def failure(self, fn, *slots) -> Optional[str]:
        """Why the first guard that rejects this call does so, in words; None if all pass."""
        from .explain import explain

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
