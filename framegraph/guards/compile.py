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

The function is built as data and written once: ``_plan`` lists its parts
in the order they run (each guard's check as its kind builds it, kinds.py;
the reader calls, groups and tensor batch below), each an expression node
whose reads are Source objects (expr.py), and ``_render`` writes them all
through one ``expr.Render``, which decides how each read is written. No text
is filled in or parsed back.

Each guard also has one readable line (``L['x'].dtype == torch.float32``
style) for logs and for ``CompiledGuard.failure``, which names the first
guard that rejects a given call in words (explain.py): the reason of a
recompile.

Tensor checks are the per-call cost users notice, so all TENSOR_MATCH guards
of an entry are checked by one C++ call (type, dispatch keys, dtype, device,
sizes, strides, requires_grad; no reference to the tensors), built from a
template tensor of each spec: framegraph's ``TensorCheck``
(``_C/tensor_check.cpp``, about 20 ns a tensor) or, if that extension was not
built, torch's ``TensorGuards`` (about 110 ns a tensor). A tensor whose spec
no template reproduces (an unusual subclass or dispatch key) keeps the
Python checks. Dynamic dimensions (graph/dynamic.py) are None in a spec; the shape
relations the trace relied on are one SHAPE_ENV guard checked last.

Three more savings, none of which drops a fact: values under one root
(``L['self']._modules['0']._parameters['weight']`` and its siblings) are read
by one C ``SourceReader`` call that skips its walk while every dict on the way
is unchanged (reader.py), and the identity/constant checks of those values
run only when it walked (``_ReaderGroup``); a source prefix several guards
read is bound once (``expr.Render``); and the identity/constant checks of
items of one dict (module globals) sit behind the dict's version tag
(``_VersionGroup``): skipped while the dict is unchanged, run again when it
changed. The groups are in skips.py; which guards may join one, each kind's
record says.
"""
import functools
from typing import Dict, List, Optional, Tuple

import torch

try:
    from .._tensor_check import TensorCheck
except ImportError:  # built without torch's headers: tensor_check() uses torch's TensorGuards
    TensorCheck = None
from .explain import explain
from .expr import Consts, Leaf, Node, Py, Read, Render, Star
from .kinds import KINDS, Guard, sources_of
from .skips import reader_calls, version_groups
from .sources import FUNC, GLOBALS, Source, held_objects

READS_VALUES = 2  # kinds from this cost on read guarded values: the reader calls go before the first


class CompiledGuard:
    """The check function plus the readable lines it was built from."""

    def __init__(self, guards: List[Guard], argnames: Tuple[str, ...]):
        self.guards = sorted(
            dict.fromkeys(guards), key=lambda g: (KINDS[g.kind].cost, _depth(g.source))
        )
        self.argnames = tuple(argnames)
        self.consts = Consts()
        batch = _TensorBatch()
        batched = {g for g in self.guards if KINDS[g.kind].batched and batch.accepts(g)}
        readers, leaves, groups = reader_calls(self.guards, batched)
        self.readers = [call.reader for call in readers]
        groups.update(version_groups([g for g in self.guards if g not in batched and g not in groups]))
        if batched:
            batch.seal(sorted((g for g in self.guards if g in batched), key=lambda g: _leaf_order(g, leaves)),
                       leaves, readers)
        self.batch = batch if batched else None
        self.plan = self._plan(batch, batched, groups, readers)
        self.source_code = self._render(leaves)
        self.fn = self._compile()

    @classmethod
    def restored(cls, guards: List[Guard], argnames: Tuple[str, ...], fn, source_code: str) -> "CompiledGuard":
        """The check of ``guards`` (sorted as the build sorts them) from a function
        compiled before: a trace-cache load (runtime/stored_guard.py) skips the build."""
        self = cls.__new__(cls)
        self.guards, self.argnames, self.fn, self.source_code = list(guards), tuple(argnames), fn, source_code
        self.consts = self.batch = self.plan = None
        self.readers = []
        fn.compiled_guard = self
        return self

    @functools.cached_property
    def lines(self) -> List[str]:
        """One readable line per guard, in check order (for logs and diagnostics only)."""
        return [KINDS[g.kind].line(g) for g in self.guards]

    def _plan(self, batch, batched, groups, readers) -> List[Node]:
        """The parts of the check in the order they run: each guard's check, the
        reader calls before the first guard that reads a value, the tensor batch
        at the first batched tensor, and each dict-version or reader group at
        its first member."""
        plan, placed = [], set()
        for g in self.guards:
            kind = KINDS[g.kind]
            if readers and "READERS" not in placed and kind.cost >= READS_VALUES:
                plan.extend(readers)
                placed.add("READERS")
            group = groups.get(g)
            if g in batched:
                if "BATCH" not in placed:
                    # one C++ call checks every batched tensor; it runs where the first
                    # tensor check would have (after cheaper guards, before SHAPE_ENV)
                    plan.append(batch)
                    placed.add("BATCH")
                plan.extend(batch.rest(g))
            elif group is None:
                plan.append(_Check(g, kind.check(g, None if g.source is None else Read(g.source))))
            elif id(group) not in placed:
                plan.append(group)
                placed.add(id(group))
        if readers and "READERS" not in placed:
            plan.extend(readers)
        return plan

    def _render(self, leaves) -> str:
        r = Render(self.consts, leaves, (s for node in self.plan for s in node.counted()))
        params = ", ".join((FUNC,) + self.argnames)
        body = " and ".join(r.part(node) for node in self.plan) or "True"
        uses_globals = any(KINDS[g.kind].uses_globals(g) for g in self.guards)
        glob = f"        {GLOBALS} = {FUNC}.__globals__\n" if uses_globals else ""
        return (f"def __guard({params}):\n    try:\n{glob}"
                f"        return {body}\n    except Exception:\n        return False\n")

    def _compile(self):
        ns = self.consts.namespace
        for g in self.guards:
            ns.update(KINDS[g.kind].names)
        ns.update(held_objects(s for g in self.guards for s in sources_of(g)))
        exec(compile(self.source_code, "<framegraph guard>", "exec"), ns)  # noqa: S102
        fn = ns["__guard"]
        fn.compiled_guard = self  # lines and failure() for diagnostics, from the bare function
        return fn

    def __call__(self, fn, *slots) -> bool:
        return self.fn(fn, *slots)

    def failure(self, fn, *slots) -> Optional[str]:
        """Why the first guard that rejects this call does so, in words; None if all pass."""
        for g in self.guards:
            if not CompiledGuard([g], self.argnames).fn(fn, *slots):
                return explain(g, self.argnames, fn, slots)
        return None

    def __repr__(self):
        return "CompiledGuard(\n  " + "\n  ".join(self.lines) + "\n)"


class _Check(Node):
    """The check of one guard. For the shared-prefix count it reads its own source
    (IS_SAME's second source is not counted: it is bound only where others read it)."""

    def __init__(self, g: Guard, node: Node):
        self.source, self.node = g.source, node

    def render(self, r: Render) -> str:
        return self.node.render(r)

    def reads(self):
        return self.node.reads()

    def counted(self):
        return [] if self.source is None else [self.source]


class _TensorBatch(Node):
    """TENSOR_MATCH guards checked together by one C++ call (``tensor_check``)."""

    def __init__(self):
        self._templates: Dict[Guard, Optional[torch.Tensor]] = {}
        self.guards: List[Guard] = []
        self.args: List[Node] = []

    def accepts(self, g: Guard) -> bool:
        """Whether a template tensor reproduces ``g``'s spec (kept for ``seal``)."""
        self._templates[g] = g.value.template()
        return self._templates[g] is not None

    def seal(self, guards: List[Guard], leaves, readers) -> None:
        """Check ``guards`` in this order: each tensor read directly or as a value
        a reader returns, runs of a reader's values passed as ``*___rK``."""
        self.guards = guards
        self.args = _star_leaves([leaves.get(g.source) or Read(g.source) for g in guards], readers)
        self.check = batch_check([g.value for g in guards], [self._templates.pop(g) for g in guards])
        self._templates.clear()  # the check keeps metadata only

    @staticmethod
    def rest(g: Guard) -> List[Node]:
        """Checks the C++ call does not make: contiguity of a dynamic tensor."""
        return [Py(Read(g.source), ".is_contiguous()")] if None in g.value.stride else []

    def counted(self):
        return [g.source for g in self.guards]

    def render(self, r: Render) -> str:
        args = ", ".join(a.render(r) for a in self.args)
        return f"{r.consts(self.check)}({args})"


def _leaf_order(g: Guard, leaves) -> Tuple[int, int, int]:
    """Batch order: tensors read directly first, then each reader's, by index."""
    leaf = leaves.get(g.source)
    if leaf is None:
        return (0, 0, 0)
    return (1, leaf.call.k, leaf.index)


def _star_leaves(args: List[Node], readers) -> List[Node]:
    """``___r0[0], ___r0[1], ...`` -> ``*___r0`` (or ``*___r0[:n]``)."""
    out = list(args)
    for call in readers:
        run = [Leaf(call, i) for i in range(call.reader.nhot)]
        present = {a for a in out if type(a) is Leaf}  # a model's hundreds of tensors: no scan per leaf
        n = 0
        while n < len(run) and run[n] in present:
            n += 1
        if n >= 2:
            at = out.index(run[0])
            if out[at:at + n] == run[:n]:
                out[at:at + n] = [Star(call, n)]
    return out


def _depth(source: Optional[Source]) -> int:
    """How many sources ``source`` is read through (itself included); kept on the source:
    a model's guards share long bases, and every guard is sorted by it."""
    if source is None:
        return 0
    depth = source.__dict__.get("_depth")
    if depth is None:
        depth = 1 + _depth(getattr(source, "base", None))
        object.__setattr__(source, "_depth", depth)
    return depth


def batch_check(specs, templates=None):
    """The one call checking tensors of ``specs`` (TensorSpecs), from their templates."""
    if templates is None:
        templates = [s.template() for s in specs]
    return tensor_check(templates, [list(s.size) for s in specs], [list(s.stride) for s in specs])


def tensor_check(templates, sizes, strides):
    """One callable checking tensors against ``templates`` (sizes/strides: None = dynamic):
    framegraph's C++ TensorCheck (_C/tensor_check.cpp), or torch's TensorGuards when
    that extension was not built. Both check the same facts."""
    if TensorCheck is None:
        from torch._C._dynamo.guards import TensorGuards  # torch's C++ check, not the Python frontend

        return TensorGuards(*templates, dynamic_dims_sizes=sizes, dynamic_dims_strides=strides).check
    return TensorCheck(templates, sizes, strides)
