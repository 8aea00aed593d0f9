"""A guard's compiled check, kept for another process: a load skips the guard build.

Building the check of a model's guards (guards/compile.py: sorting, grouping
reads into SourceReaders, rendering, ``compile()``) was half of what a
trace-cache load cost. Everything it decides follows from the guards as data,
and a load's guards (portable.import_guards) are the stored ones except where an
identity lives: the ids of ID_MATCH and SAME_GLOBALS guards, which the check
holds as literal ints in its code's constants, and the hook dicts of a
MODULE_HOOKS guard, which it holds in its globals. So an entry keeps the
compiled function:

* its code, through marshal; a load puts, in place of each id among the code's
  constants (an int, or an item of a tuple of ints: a run of identity checks
  compared as one tuple), the id its guard holds in this process. An int is an id's literal
  only where that id's guard wrote it: the store refuses a check where another
  int the function may hold (of a guard's value or source) equals an id, and a
  load whose guards disagree on one id (two sources, one object in the tracing
  process, two here) builds the check afresh;
* its globals, through the portable pickler (named objects by name, data by
  value, SourceReaders by their programs), except what lives in this process
  only: the tensor batch's check is rebuilt from its guards' specs, the groups'
  state cells start fresh, the hook dicts are the rebound guard's.

What cannot be placed this way raises NotPortable at the store: the entry is
kept without its check and a load builds it, as a trace does.
"""
import marshal
import types
from typing import List, Optional, Tuple

from ..guards.compile import CompiledGuard, batch_check
from ..guards.expr import _BUILTINS
from ..guards.kinds import Guard, HookDicts, TensorSpec
from ..guards.skips import NEVER
from ..guards.sources import Source, _source_fields
from .portable import NotPortable, dumps, loads

_SELF = ("__builtins__", "__guard")  # written by the build itself


def _identity(g: Guard) -> Optional[int]:
    """The id a guard's check holds as a literal, if any."""
    if g.kind == "ID_MATCH":
        return g.value[0]
    if g.kind == "SAME_GLOBALS":
        return g.value
    return None


def export_check(guard: CompiledGuard) -> bytes:
    """The stored form of ``guard``'s compiled function (see the module docstring).
    Raises NotPortable."""
    if guard.plan is None:
        raise NotPortable("a check restored from the cache")
    code = guard.fn.__code__
    if any(isinstance(c, types.CodeType) for c in code.co_consts):
        raise NotPortable("a check with nested functions")
    ids = {}
    for i, g in enumerate(guard.guards):
        ident = _identity(g)
        if ident is not None:
            ids.setdefault(ident, []).append(i)
    others = set()
    for g in guard.guards:
        _ints(g.source, others)
        if _identity(g) is None:
            _ints(g.value, others)
    # besides guard values and sources, a check writes small ints only (a reader's
    # value index, a slice length); no object's address is that small
    if others & ids.keys() or any(ident < 1 << 16 for ident in ids) or any(len(r.leaves) >= 1 << 16
                                                                         for r in guard.readers):
        raise NotPortable("an id of the check equals another of its constants")
    namespace = {k: v for k, v in guard.consts.namespace.items() if k not in _SELF}
    cells = {id(c) for node in guard.plan for c in node.cells()}
    hooks, refuse = {}, set(cells)
    for i, g in enumerate(guard.guards):
        if g.kind == "MODULE_HOOKS":
            refuse.update(map(id, g.value.dicts))
            refuse.add(id(g.value.dicts))
            for name, value in namespace.items():
                if value is g.value.dicts:
                    hooks[name] = ("dicts", i)
                elif getattr(value, "__self__", None) is g.value:
                    hooks[name] = ("unchanged", i)
    batch = None
    if guard.batch is not None:
        position = {g: i for i, g in enumerate(guard.guards)}
        name = next(k for k, v in namespace.items() if v is guard.batch.check)
        batch = (name, [position[g] for g in guard.batch.guards])
    cell_names = [k for k, v in namespace.items() if id(v) in cells]
    placed = set(cell_names) | set(hooks) | ({batch[0]} if batch else set())
    rest = {k: v for k, v in namespace.items() if k not in placed}
    readers = {id(r.c): r for r in guard.readers}
    return dumps({"code": marshal.dumps(code), "ids": ids, "argnames": guard.argnames, "cells": cell_names,
                  "hooks": hooks, "batch": batch, "namespace": rest, "text": guard.source_code}, readers, refuse)


def import_check(blob: bytes, guards: List[Guard], argnames: Tuple[str, ...]) -> Optional[CompiledGuard]:
    """``guards``' check (the stored guards bound to this process, in stored order) from
    its stored form, or None where it must be built afresh."""
    data = loads(blob)
    if tuple(argnames) != data["argnames"]:
        return None
    new_ids = {}
    for old, positions in data["ids"].items():
        now = {_identity(guards[i]) for i in positions}
        if len(now) != 1:
            return None
        new_ids[old] = now.pop()
    code = marshal.loads(data["code"])
    code = code.replace(co_consts=tuple(_rebound(c, new_ids) for c in code.co_consts))
    namespace = {"__builtins__": _BUILTINS, **data["namespace"]}
    for name in data["cells"]:
        namespace[name] = [NEVER]
    for name, (attr, i) in data["hooks"].items():
        hooks: HookDicts = guards[i].value
        namespace[name] = hooks.dicts if attr == "dicts" else hooks.unchanged
    if data["batch"] is not None:
        name, positions = data["batch"]
        specs = [guards[i].value for i in positions]
        templates = [s.template() for s in specs]
        if any(t is None for t in templates):
            return None
        namespace[name] = batch_check(specs, templates)
    fn = types.FunctionType(code, namespace, "__guard")
    namespace["__guard"] = fn
    return CompiledGuard.restored(guards, argnames, fn, data["text"])


def _rebound(const, new_ids):
    """A constant of the check with this process's ids: an id's literal, or a tuple of
    them (the identity checks of consecutive values, guards/skips.py ``_IdentityRun``)."""
    if type(const) is int:
        return new_ids.get(const, const)
    if type(const) is tuple and const and all(type(c) is int for c in const):
        return tuple(new_ids.get(c, c) for c in const)
    return const


def _ints(value, out: set, depth: int = 0) -> None:
    """Every int in ``value`` that a check could write as a literal: in containers,
    tensor specs and sources, at any depth."""
    if depth > 50:
        raise NotPortable("a guard value nested too deeply")
    kind = type(value)
    if kind is int:
        out.add(value)
    elif kind in (tuple, list, set, frozenset):
        for item in value:
            _ints(item, out, depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            _ints(k, out, depth + 1)
            _ints(v, out, depth + 1)
    elif isinstance(value, TensorSpec):
        _ints((value.size, value.stride, value.keys), out, depth + 1)
    elif isinstance(value, Source):
        for field in _source_fields(type(value)):
            _ints(getattr(value, field), out, depth + 1)
    elif isinstance(value, int) and not isinstance(value, bool):  # an IntEnum, an int subclass
        out.add(int(value))
