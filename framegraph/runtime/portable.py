"""What a trace relied on, written so that another process can check it again.

The persistent trace cache (trace_cache.py) stores an entry's guards, graph and
replacement code on disk. Most of what they hold is plain data (constants,
sources, tensor specs). Three kinds of object are not:

* objects named by where they live (modules, classes, functions, builtins):
  written as (module, qualified name) and found again in ``sys.modules`` (a load
  never imports: a module not imported yet is a miss). A Python function also
  carries a fingerprint of its code and defaults, so an edited function is a
  miss, never a stale hit.
* objects an ID_MATCH guard pinned: an id means nothing in another process.
  Each is described by what its identity stood for (``describe``): a module by
  its name, a named class or function as above, a module's globals by the
  module, a code object by its content, a function without an importable name
  by its code, defaults and module, a property by its functions, an
  ``nn.Module`` instance by its class (a trace guards every attribute it reads
  of a module on its own: the identity only said which module). Loading reads
  the same source in the new frame, compares the descriptions, and guards the
  new object's id.
* framegraph's own objects in replacement code and guards: a ``SourceReader``
  is rebuilt from its program (the steps its sources compiled to).

Anything else (an object without a name, an id-pinned instance of a plain
class, a dynamic-shape guard) raises ``NotPortable``: the entry is not stored.
"""
import enum
import functools
import hashlib
import io
import marshal
import operator
import pickle
import sys
import types

import torch

from .. import _C
from ..guards.kinds import Guard, HookDicts, TensorSpec
from ..guards.sources import (FUNC, GLOBALS, AttrSource, DictItemSource, GenericAttrSource, GetItemSource,
                              GlobalSource, ListItemSource, LocalSource, Source, TupleItemSource, TypeSource,
                              _source_fields, held_objects)
from .stored_graph import NodeRef


class NotPortable(Exception):
    """An entry holds something another process cannot find again: it is not stored."""


class Stale(Exception):
    """A stored entry does not apply to this process (an edited function, a module
    not imported, another object where the trace saw a module): a miss."""


# ---- fingerprints

def code_fingerprint(code: types.CodeType) -> str:
    """A digest of everything a code object runs and reports (nested code included),
    the same in every process for the same source."""
    h = hashlib.sha256()
    _feed_code(h, code)
    return h.hexdigest()


_CODE_FIELDS = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_name",
                "co_qualname", "co_filename", "co_firstlineno", "co_flags", "co_argcount",
                "co_posonlyargcount", "co_kwonlyargcount", "co_exceptiontable", "co_linetable")


def _feed_code(h, code):
    for field in _CODE_FIELDS:
        h.update(repr(getattr(code, field)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _feed_code(h, const)
        elif isinstance(const, frozenset):  # its order is the hash seed's
            h.update(repr(sorted(map(repr, const))).encode())
        else:
            h.update(repr((type(const).__name__, const)).encode())


def _function_fingerprint(fn: types.FunctionType) -> tuple:
    """(code digest, defaults digest): what a function runs, as a def statement made it."""
    defaults = hashlib.sha256(dumps((fn.__defaults__, fn.__kwdefaults__))).hexdigest()
    return code_fingerprint(fn.__code__), defaults


# ---- objects named by where they live

_MISSING = object()


def _resolve(module: str, qualname: str):
    obj = sys.modules.get(module, _MISSING)
    for part in qualname.split("."):
        if obj is _MISSING or part == "<locals>":
            return _MISSING
        try:
            obj = obj.__dict__[part] if isinstance(obj, type) and part in obj.__dict__ else getattr(obj, part)
        except Exception:  # a module's __getattr__ may raise anything
            return _MISSING
    return obj


_MAX_WRAPS = 4  # decorators stacked on one function


def name_of(obj):
    """(module, qualified name) that finds ``obj`` again, or None."""
    module = getattr(obj, "__module__", None)
    if module is None:  # a method descriptor (dict.keys) or a class's builtin (object.__new__)
        owner = getattr(obj, "__objclass__", None) or getattr(obj, "__self__", None)
        module = getattr(owner, "__module__", None) if isinstance(owner, type) else None
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        found = _resolve(module, qualname)
        # a decorator's wrapper (functools.wraps) takes the name and keeps the function as
        # __wrapped__ (transformers' ModelOutput classes wrap their dataclass __init__)
        for hops in range(_MAX_WRAPS + 1):
            if found is obj:
                return module, qualname + ".__wrapped__" * hops
            found = getattr(found, "__wrapped__", _MISSING) if isinstance(found, types.FunctionType) else _MISSING
    # builtins' own types (types.FunctionType), torch's C functions (torch.arange is a
    # static method of torch._C._VariableFunctionsClass), functions made by a factory
    # (F.max_pool2d is boolean_dispatch's closure): found in the namespaces users reach
    where = _namespace_name(obj)
    # the table was read once: the name must still hold this object (ids are reused)
    return where if where is not None and _resolve(*where) is obj else None


# modules whose attributes name callables that carry no usable __module__ and __qualname__
_NAMESPACES = ("types", "torch", "torch.nn.functional", "torch._C._nn", "torch._C._linalg", "torch._C._fft",
               "torch._C._special", "torch.linalg", "torch.fft", "torch.special")


_TABLED = (type, types.BuiltinFunctionType, types.FunctionType)


def _namespace_name(obj):
    """(namespace, name) of ``obj`` in the first of ``_NAMESPACES`` that holds it: under
    its own ``__name__`` (asked of each namespace's dict, no table to build), else as
    the table of every callable the namespaces hold says."""
    if not isinstance(obj, _TABLED):
        return None  # an instance (a model's layers): in no table
    if isinstance(obj, types.FunctionType) and str(obj.__module__).partition(".")[0] not in ("torch", "types"):
        return None  # a Python function of the program's own (a decorated method): no namespace made it
    name = getattr(obj, "__name__", None)
    if isinstance(name, str):
        for module in _NAMESPACES:
            namespace = sys.modules.get(module)
            if namespace is not None and vars(namespace).get(name) is obj:
                return module, name
    return _namespace_names().get(id(obj))


@functools.lru_cache(maxsize=1)
def _namespace_names() -> dict:
    names = {}
    for module in reversed(_NAMESPACES):  # the first namespace's name wins
        for name, value in vars(sys.modules.get(module, types)).items():
            if isinstance(value, _TABLED):
                names[id(value)] = (module, name)
    return names


def _named(obj):
    """The description of a module, class, function or builtin found by name, or None."""
    if isinstance(obj, types.ModuleType):
        name = getattr(obj, "__name__", None)
        return ("module", name) if isinstance(name, str) and sys.modules.get(name) is obj else None
    where = name_of(obj)
    if where is None:
        return None
    try:
        fingerprint = _function_fingerprint(obj) if isinstance(obj, types.FunctionType) else None
    except NotPortable:  # defaults another process cannot compare
        return None
    return ("named",) + where + (fingerprint,)


def _find(description):
    """The object a ``_named`` description names in this process; Stale when gone or changed."""
    if description[0] == "module":
        obj = sys.modules.get(description[1], _MISSING)
    else:
        _, module, qualname, fingerprint = description
        obj = _resolve(module, qualname)
        if obj is not _MISSING and fingerprint is not None and _named(obj) != description:
            raise Stale(f"{module}.{qualname} changed")
    if obj is _MISSING:
        raise Stale(f"{description[1:3]} is not in this process")
    return obj


# ---- objects an ID_MATCH guard pinned

def describe(obj):
    """What an identity guard on ``obj`` stood for, as data equal in another process
    exactly when the object there can stand in for it; None when nothing can."""
    named = _named(obj)
    if named is not None:
        return named
    if type(obj) is dict:
        module = sys.modules.get(obj.get("__name__") if isinstance(obj.get("__name__"), str) else "")
        if module is not None and getattr(module, "__dict__", None) is obj:
            return ("globals", module.__name__)
        return None
    if isinstance(obj, types.CodeType):
        return ("code", code_fingerprint(obj))
    if isinstance(obj, types.FunctionType):
        module = describe(obj.__globals__)
        try:
            return None if module is None else ("function",) + _function_fingerprint(obj) + (module,)
        except NotPortable:
            return None
    if isinstance(obj, property):
        parts = tuple(None if f is None else describe(f) for f in (obj.fget, obj.fset, obj.fdel))
        return None if any(p is None and f is not None for p, f in zip(parts, (obj.fget, obj.fset, obj.fdel))) \
            else ("property",) + parts
    if isinstance(obj, (classmethod, staticmethod)):
        inner = describe(obj.__func__)
        return None if inner is None else (type(obj).__name__, inner)
    if isinstance(obj, enum.Enum):
        cls = _named(type(obj))
        return None if cls is None or type(obj).__members__.get(obj.name) is not obj else ("enum", cls, obj.name)
    if isinstance(obj, torch.nn.Module):
        cls = _named(type(obj))
        return None if cls is None else ("nn.Module", cls)
    if type(obj) in (types.UnionType, types.GenericAlias):  # `int | None`, `list[int]` (annotations): values
        parts = (getattr(obj, "__origin__", None),) + obj.__args__
        described = tuple(None if part is None else describe(part) for part in parts)
        return None if any(d is None and p is not None for d, p in zip(described, parts)) \
            else (type(obj).__name__,) + described
    return None


# ---- guards

THIS_GLOBALS = "the globals of the function whose frame loads the entry"


def frame_scope(func, argnames, slots, sources=()) -> dict:
    """The names a source's ``expr()`` reads, bound for one frame."""
    return dict(zip(argnames, slots), **{GLOBALS: func.__globals__, FUNC: func}, **held_objects(sources))


# how a source reads its value from its base's, for the kinds that sit under a
# model's identity guards (each read as its expr() does); others are evaluated
_STEPS = {
    AttrSource: lambda s, base: getattr(base, s.member),
    GenericAttrSource: lambda s, base: object.__getattribute__(base, s.member),
    GetItemSource: lambda s, base: base[s.index],
    DictItemSource: lambda s, base: s.owner.__getitem__(base, s.index),
    TupleItemSource: lambda s, base: s.owner.__getitem__(base, s.index),
    ListItemSource: lambda s, base: s.owner.__getitem__(base, s.index),
    TypeSource: lambda s, base: type(base),
}
_ROOTS = {
    LocalSource: lambda s, scope: scope[s.local_name],
    GlobalSource: lambda s, scope: scope[GLOBALS][s.global_name],
}


def read(source: Source, scope: dict, memo=None):
    """The value ``source`` reads in the frame ``scope`` was made for; ``memo`` keeps
    the values read (a model's sources share their bases)."""
    if memo is not None and source in memo:
        return memo[source]
    step = _STEPS.get(type(source))
    if step is not None:
        value = step(source, read(source.base, scope, memo))
    elif type(source) in _ROOTS:
        value = _ROOTS[type(source)](source, scope)
    else:
        value = eval(source.expr(), {}, scope)  # noqa: S307  (our own generated expression)
    if memo is not None:
        memo[source] = value
    return value


def _described(obj, seen: dict):
    """``describe(obj)``, once per object of one entry (a model's layers share their
    classes' functions, and a function's description digests its code)."""
    key = id(obj)
    if key not in seen:
        seen[key] = describe(obj)
    return seen[key]


def export_guards(guards, scope) -> list:
    """``guards`` as another process can check them, read against the frame that was traced."""
    described = {}  # ID_MATCH guard -> (description, the object)
    seen, memo = {}, {}
    for g in guards:
        if g.kind == "ID_MATCH":
            obj = read(g.source, scope, memo)
            if id(obj) != g.value[0]:
                raise NotPortable(f"{g.source.name()} no longer holds the object the trace saw")
            description = _described(obj, seen)
            if description is None:
                raise NotPortable(f"{g.source.name()} ({type(obj).__qualname__}) is pinned by identity")
            described[g] = description, obj
    modules = [(g.source, obj) for g, (_, obj) in described.items() if isinstance(obj, torch.nn.Module)]
    out = []
    for g in guards:
        if g.kind == "ID_MATCH":
            out.append(Guard(g.kind, g.source, (described[g][0], g.value[1])))
        elif g.kind == "SAME_GLOBALS":
            out.append(Guard(g.kind, None, THIS_GLOBALS))
        elif g.kind == "MODULE_HOOKS":
            out.append(Guard(g.kind, None, _hook_places(g.value, modules)))
        else:
            out.append(g)
    return out


def import_guards(guards, scope) -> list:
    """Stored guards bound to this process: each identity guard's source read in the
    loading frame, its object compared with the description and its id guarded.
    Raises Stale when an object does not fit."""
    bound = {}  # ID_MATCH guard -> the object its source holds here
    seen, memo = {}, {}
    for g in guards:
        if g.kind == "ID_MATCH":
            try:
                obj = read(g.source, scope, memo)
            except Exception as e:
                raise Stale(f"{g.source.name()} cannot be read: {e!r}") from None
            if _described(obj, seen) != g.value[0]:
                raise Stale(f"{g.source.name()} holds another object")
            bound[g] = obj
    modules = {g.source: obj for g, obj in bound.items() if isinstance(obj, torch.nn.Module)}
    out = []
    for g in guards:
        if g.kind == "ID_MATCH":
            out.append(Guard(g.kind, g.source, (id(bound[g]), g.value[1])))
        elif g.kind == "SAME_GLOBALS":
            out.append(Guard(g.kind, None, id(scope[GLOBALS])))
        elif g.kind == "MODULE_HOOKS":
            out.append(Guard(g.kind, None, _hook_dicts(g.value, modules)))
        else:
            out.append(g)
    return out


def _module_globals():
    return vars(sys.modules["torch.nn.modules.module"])


def _hook_places(hooks: HookDicts, modules) -> tuple:
    """Where each hook dict of a MODULE_HOOKS guard lives: (module source or None for
    nn.Module's global ones, attribute name). Only dicts that were empty travel."""
    if not hooks.empty:
        raise NotPortable("modules have hooks (functions held by identity)")
    places = []
    for d in hooks.dicts:
        place = next(((None, name) for name, v in _module_globals().items() if v is d), None)
        for source, module in modules:
            if place is not None:
                break
            place = next(((source, name) for name, v in vars(module).items() if v is d), None)
        if place is None:
            raise NotPortable("a hook dict of a module no identity guard names")
        places.append(place)
    return tuple(places)


def _hook_dicts(places, modules) -> HookDicts:
    dicts = []
    for source, name in places:
        owner = _module_globals() if source is None else vars(modules[source])
        d = owner.get(name)
        if not isinstance(d, dict) or d:
            raise Stale(f"hooks were registered ({name})")
        dicts.append(d)
    return HookDicts(dicts)


# ---- pickling with names instead of objects

_BY_VALUE = (Guard, TensorSpec, NodeRef, torch.fx.immutable_collections.immutable_list,
             torch.fx.immutable_collections.immutable_dict, torch.dtype, torch.device, torch.Size, torch.layout, torch.memory_format,
             enum.Enum, tuple, list, dict, set, frozenset, slice, range, complex, type(Ellipsis),
             type(NotImplemented), operator.itemgetter)
_BY_NAME = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType,
            types.WrapperDescriptorType, types.ClassMethodDescriptorType, types.MethodWrapperType,
            types.GetSetDescriptorType, types.MemberDescriptorType)
_OPS = (torch._ops.OpOverload, torch._ops.OpOverloadPacket)


def _rebuild_op(name: str):
    """``torch.ops`` operator ``aten::add.Tensor`` (an overload) or ``aten::add`` (a packet)."""
    namespace, rest = name.split("::")
    op, _, overload = rest.partition(".")
    packet = getattr(getattr(torch.ops, namespace), op)
    return getattr(packet, overload) if overload else packet


def _op_name(op) -> str:
    if isinstance(op, torch._ops.OpOverload):
        return op.name() if "." in op.name() else op.name() + ".default"
    return op._qualified_op_name


def _rebuild_code(body: bytes, consts: tuple) -> types.CodeType:
    return marshal.loads(body).replace(co_consts=consts)


def _rebuild_source(cls, fields):
    return cls(*fields)


def _rebuild_reader(steps, nleaves, nhot, watched):
    return _C.SourceReader(steps, nleaves, nhot, watched)


_REBUILDERS = (_find, _rebuild_code, _rebuild_source, _rebuild_reader, _rebuild_op)


class _Pickler(pickle.Pickler):
    def __init__(self, file, readers, refuse):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.readers, self.refuse = readers, refuse

    def reducer_override(self, obj):
        if id(obj) in self.refuse:
            raise NotPortable(f"a {type(obj).__qualname__} of this process")
        if obj in _REBUILDERS:  # by reference, as pickle writes any function
            return NotImplemented
        if isinstance(obj, types.CodeType):
            return _rebuild_code, (marshal.dumps(obj.replace(co_consts=())), obj.co_consts)
        if isinstance(obj, Source):
            return _rebuild_source, (type(obj), tuple(getattr(obj, f) for f in _source_fields(type(obj))))
        if isinstance(obj, _C.SourceReader):
            reader = self.readers.get(id(obj))
            if reader is None:
                raise NotPortable("a SourceReader of unknown origin")
            return _rebuild_reader, (reader.steps, len(reader.leaves), reader.nhot, reader.watched)
        if isinstance(obj, _OPS):
            return _rebuild_op, (_op_name(obj),)
        if isinstance(obj, _BY_NAME):
            named = _named(obj)
            if named is None:
                raise NotPortable(f"{obj!r} has no name another process finds")
            return _find, (named,)
        if isinstance(obj, _BY_VALUE):
            return NotImplemented
        raise NotPortable(f"a {type(obj).__qualname__} cannot be stored")


def dumps(obj, readers=None, refuse=()) -> bytes:
    """Pickle ``obj``: named objects by name, code through marshal, readers by their
    programs (``readers``: id of a reader's C object -> its ``Reader``). Raises NotPortable,
    also for an object whose id is in ``refuse`` (one that means something only here)."""
    buf = io.BytesIO()
    try:
        _Pickler(buf, readers or {}, refuse).dump(obj)
    except NotPortable:
        raise
    except Exception as e:  # RecursionError, a __reduce__ that refuses
        raise NotPortable(f"{type(e).__name__}: {e}") from None
    return buf.getvalue()


def loads(data: bytes):
    """The object ``dumps`` wrote; Stale when what it names is not in this process as it was."""
    return pickle.loads(data)  # noqa: S301  (the user's own cache directory)
