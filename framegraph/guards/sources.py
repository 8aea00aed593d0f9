"""Sources: where a value seen by the tracer came from, so it can be read again.

Every VariableTracker built from a value that exists outside the traced frame
(an argument, a global, a closure cell, an attribute or item of one of those)
carries a Source. A source can do three things:

* ``name()``: a readable expression for diagnostics and guard lines, in
  torch.compile's notation: ``L['x']``, ``G['scale']``, ``L['self'].weight``.
* ``expr()``: the Python expression that re-reads the value inside the
  generated guard function ``__guard(___fn, <arg slots>)``, where ``___G`` is
  the function's globals and ``___fn`` the function itself.
* ``reconstruct(cg)``: emit the bytecode that pushes the value in the
  replacement code object (see ``codegen.PyCodegen``).

Sources are frozen dataclasses: equal sources are the same place, and they
hash, so trackers and guards can be de-duplicated by source.
"""
import dataclasses
from typing import Any

from .. import _C

GLOBALS = "___G"
FUNC = "___fn"


class Source(_C.CachedHash):
    """Base class. Subclasses are frozen dataclasses (``source`` below), hashed once each."""

    _field_hash = object.__hash__  # a plain subclass (expr._Rendered) is hashed by identity, as an object

    def name(self) -> str:
        raise NotImplementedError

    def expr(self) -> str:
        raise NotImplementedError

    def reconstruct(self, cg) -> None:
        raise NotImplementedError

    def root(self) -> "Source":
        """The local/global/closure source this one is read from."""
        base = getattr(self, "base", None)
        return base.root() if base is not None else self

    def uses_globals(self) -> bool:
        return isinstance(self.root(), (GlobalSource, BuiltinSource))

    def __str__(self):
        return self.name()


def source(cls):
    """``@dataclasses.dataclass(frozen=True)`` with the hash (and the name) computed once: sources
    nest (``L['self']._modules['0']._parameters['w']`` is five deep), and hashing
    them again on every dict lookup was a tenth of a first trace on a real model. The hash
    is kept in C (``_C.CachedHash``): a Python ``__hash__`` returning a stored value was
    still a call on every lookup, tens of thousands in one trace. Pickled and copied by
    its fields alone (what is kept on it, the hash included, belongs to this process)."""
    cls = dataclasses.dataclass(frozen=True)(cls)
    cls._field_hash = cls.__hash__
    cls.__hash__ = _C.CachedHash.__hash__
    cls.__reduce__ = lambda self: (type(self), tuple(getattr(self, name) for name in _source_fields(type(self))))
    own_name = cls.__dict__.get("name")
    if own_name is not None:
        def name(self):
            # kept too: written into every placeholder name, guard line and message, and a
            # parameter's name is a dozen f-strings deep
            try:
                return self._name
            except AttributeError:
                cached = own_name(self)
                object.__setattr__(self, "_name", cached)
                return cached

        name.__doc__ = own_name.__doc__
        cls.name = name
    return cls


@source
class LocalSource(Source):
    """An argument slot of the traced frame (a parameter of the guard function)."""

    local_name: str

    def name(self):
        return f"L[{self.local_name!r}]"

    def expr(self):
        return self.local_name

    def reconstruct(self, cg):
        cg.load_fast(self.local_name)


@source
class GlobalSource(Source):
    """A name in the traced function's globals."""

    global_name: str

    def name(self):
        return f"G[{self.global_name!r}]"

    def expr(self):
        return f"{GLOBALS}[{self.global_name!r}]"

    def reconstruct(self, cg):
        cg.load_global(self.global_name)


@source
class BuiltinSource(Source):
    """A builtin reached through LOAD_GLOBAL (not shadowed by a global)."""

    builtin_name: str

    def name(self):
        return f"B[{self.builtin_name!r}]"

    def expr(self):
        return f"{GLOBALS}['__builtins__'][{self.builtin_name!r}]"

    def reconstruct(self, cg):
        cg.load_global(self.builtin_name)


@source
class ClosureSource(Source):
    """The contents of free variable number ``index`` of the traced function."""

    var_name: str
    index: int

    def name(self):
        return f"L[{self.var_name!r}]"

    def expr(self):
        return f"{FUNC}.__closure__[{self.index}].cell_contents"

    def reconstruct(self, cg):
        cg.load_deref(self.var_name)


@source
class ClosureCellSource(Source):
    """Free variable number ``index`` of the traced function: the cell itself, not its
    contents. A nested function rebuilt after the graph shares it (``LOAD_CLOSURE``)."""

    var_name: str
    index: int

    def name(self):
        return f"L[{self.var_name!r}].cell"

    def expr(self):
        return f"{FUNC}.__closure__[{self.index}]"

    def reconstruct(self, cg):
        from ..bytecode import create_instruction

        cg.emit(create_instruction("LOAD_CLOSURE", argval=self.var_name))


@source
class AttrSource(Source):
    """``base.member``."""

    base: Source
    member: str

    def name(self):
        if self.member.isidentifier():
            return f"{self.base.name()}.{self.member}"
        return f"getattr({self.base.name()}, {self.member!r})"

    def expr(self):
        if self.member.isidentifier():
            return f"{self.base.expr()}.{self.member}"
        return f"getattr({self.base.expr()}, {self.member!r})"

    def reconstruct(self, cg):
        self.base.reconstruct(cg)
        cg.load_attr(self.member)


@source
class GetItemSource(Source):
    """``base[index]`` for a constant index (int or str)."""

    base: Source
    index: Any

    def name(self):
        return f"{self.base.name()}[{self.index!r}]"

    def expr(self):
        return f"{self.base.expr()}[{self.index!r}]"

    def reconstruct(self, cg):
        self.base.reconstruct(cg)
        cg.load_const(self.index)
        cg.binary_subscr()


@source
class DictItemSource(Source):
    """``dict.__getitem__(base, key)``: an item of a dict subclass, read without
    the subclass's own ``__getitem__`` (which may compute, or recurse)."""

    base: Source
    index: Any
    owner = dict  # whose __getitem__ reads the item (a class attribute, not a field)

    def name(self):
        return f"{self.owner.__name__}.__getitem__({self.base.name()}, {self.index!r})"

    def expr(self):
        return f"{self.owner.__name__}.__getitem__({self.base.expr()}, {self.index!r})"

    def reconstruct(self, cg):
        from ..bytecode import create_instruction

        cg.emit(create_instruction("PUSH_NULL"))
        cg.load_const(self.owner.__getitem__)
        self.base.reconstruct(cg)
        cg.load_const(self.index)
        cg.call(2)


@source
class TupleItemSource(DictItemSource):
    """``tuple.__getitem__(base, i)``: an item of a tuple subclass (a namedtuple with
    its own ``__getitem__``), read as the tuple holds it."""

    owner = tuple


@source
class ListItemSource(DictItemSource):
    """``list.__getitem__(base, i)``: an item of a list subclass with its own ``__getitem__``."""

    owner = list


@source
class GenericAttrSource(Source):
    """``object.__getattribute__(base, member)``: an instance attribute of an object
    whose class overrides ``__getattribute__``, read without running the override
    (in guards, and in the replacement code, where the override may be a compiled frame)."""

    base: Source
    member: str

    def name(self):
        return f"object.__getattribute__({self.base.name()}, {self.member!r})"

    def expr(self):
        return f"object.__getattribute__({self.base.expr()}, {self.member!r})"

    def reconstruct(self, cg):
        from ..bytecode import create_instruction

        cg.emit(create_instruction("PUSH_NULL"))
        cg.load_const(object.__getattribute__)
        self.base.reconstruct(cg)
        cg.load_const(self.member)
        cg.call(2)


# the C slot of each immutable builtin that returns an exact copy of an instance's value
_PLAIN_COPY = {int: "__int__", float: "__float__", str: "__str__", bytes: "__bytes__", complex: "__complex__"}


@source
class PlainValueSource(Source):
    """``int.__int__(base)``, ``str.__str__(base)``: the value an instance of a user subclass
    of an immutable builtin holds, read by the base's own slot (no override of the class runs)."""

    base: Source
    kind: type

    def name(self):
        return f"{self.kind.__name__}.{_PLAIN_COPY[self.kind]}({self.base.name()})"

    def expr(self):
        return f"{self.kind.__name__}.{_PLAIN_COPY[self.kind]}({self.base.expr()})"

    def reconstruct(self, cg):
        from ..bytecode import create_instruction

        cg.emit(create_instruction("PUSH_NULL"))
        cg.load_const(getattr(self.kind, _PLAIN_COPY[self.kind]))
        self.base.reconstruct(cg)
        cg.call(1)


@source
class PartialDictSource(Source):
    """The ``__dict__`` of a ``functools.partial``, or None while it has none, read without
    making one (``p.__dict__`` would): ``partial.__reduce__(p)[2][3]``, with the C base's
    own ``__reduce__`` (``reduce``, a ConstSource), which no subclass override runs."""

    base: Source
    reduce: Source

    def name(self):
        return f"{self.base.name()}.__dict__ (None if none)"

    def expr(self):
        return f"{self.reduce.expr()}({self.base.expr()})[2][3]"

    def reconstruct(self, cg):
        from ..bytecode import create_instruction

        cg.emit(create_instruction("PUSH_NULL"))
        self.reduce.reconstruct(cg)
        self.base.reconstruct(cg)
        cg.call(1)
        for index in (2, 3):
            cg.load_const(index)
            cg.binary_subscr()


def plain_value(value, kind):
    """What ``PlainValueSource(source, kind)`` reads of ``value``."""
    return getattr(kind, _PLAIN_COPY[kind])(value)


@source
class CallSource(Source):
    """``base()`` with no arguments: a ``weakref.ref``'s referent (or None), or a bound
    method's answer (a tensor input's ``storage_offset()``)."""

    base: Source

    def name(self):
        return f"{self.base.name()}()"

    def expr(self):
        return f"{self.base.expr()}()"

    def reconstruct(self, cg):
        from ..bytecode import create_instruction

        cg.emit(create_instruction("PUSH_NULL"))
        self.base.reconstruct(cg)
        cg.call(0)


@source
class NumpyTensorSource(Source):
    """``torch.from_numpy(base)``: the tensor over an ndarray's memory (a NumPy input of
    the graph); ``convert`` holds ``torch.from_numpy`` for the guards and the call."""

    base: Source
    convert: "ConstSource"

    def name(self):
        return f"torch.from_numpy({self.base.name()})"

    def expr(self):
        return f"{self.convert.expr()}({self.base.expr()})"

    def reconstruct(self, cg):
        from ..bytecode import create_instruction

        cg.emit(create_instruction("PUSH_NULL"))
        self.convert.reconstruct(cg)
        self.base.reconstruct(cg)
        cg.call(1)


def numpy_tensor_source(base: Source) -> NumpyTensorSource:
    """The source of the tensor over the ndarray read from ``base``."""
    import torch

    return NumpyTensorSource(base, ConstSource.of(torch.from_numpy))


@source
class TypeSource(Source):
    """``type(base)``: where class attributes of an instance come from."""

    base: Source

    def name(self):
        return f"type({self.base.name()})"

    def expr(self):
        return f"type({self.base.expr()})"

    def reconstruct(self, cg):
        cg.call_builtin("type", [self.base])


@source
class ConstSource(Source):
    """An object fixed at trace time that stands where a lookup needs a source: the
    key of a dict keyed by classes (``self._type_equality_funcs.get(type(first))``
    in unittest's ``assertEqual``, where ``type(first)`` is ``int`` whatever the
    inputs). Guards and replacement code refer to the object itself: a guard
    function binds it by the name ``expr()`` gives (``held_objects``), codegen
    loads it as a constant. Compared and hashed by identity (``1 == True``
    must not make two keys one source)."""

    ident: int
    value: Any = dataclasses.field(compare=False, hash=False)

    @classmethod
    def of(cls, value) -> "ConstSource":
        return cls(id(value), value)

    def name(self):
        return getattr(self.value, "__qualname__", None) or repr(self.value)

    def expr(self):
        return f"___k{self.ident}"

    def reconstruct(self, cg):
        cg.load_const(self.value)


def held_objects(sources) -> dict:
    """{name: object} of the ConstSources in and under ``sources``: what a function
    evaluating their ``expr()`` must have bound."""
    out = {}
    for src in sources:
        out.update(_held(src))
    return out


def _held(source) -> tuple:
    """The (name, object) pairs of the ConstSources in and under ``source``; kept on the
    source, found from its parts' (a model's guards share their bases, and hold none)."""
    found = source.__dict__.get("_held")
    if found is None:
        if isinstance(source, ConstSource):
            found = ((source.expr(), source.value),)
        else:
            found = tuple(pair for part in parts_of(source) for pair in _held(part))
        object.__setattr__(source, "_held", found)
    return found


def parts_of(source) -> list:
    """The sources ``source`` is read from directly: its base, a DictGetSource's key."""
    return [part for part in (getattr(source, name) for name in _source_fields(type(source)))
            if isinstance(part, Source)]


_FIELDS: dict = {}


def _source_fields(cls) -> tuple:
    """The field names of a source class (``dataclasses.fields`` is slow to ask per source)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = (tuple(f.name for f in dataclasses.fields(cls))
                                if dataclasses.is_dataclass(cls) else ())
    return names


def closure_cell_source(fn_source: Source, index: int) -> Source:
    """``fn.__closure__[index].cell_contents`` for a function read from ``fn_source``."""
    return AttrSource(GetItemSource(AttrSource(fn_source, "__closure__"), index), "cell_contents")


def module_member_source(module_source: Source, table: str, name: str) -> Source:
    """A submodule/parameter/buffer of an nn.Module, read from its dict.

    ``L['self']._modules['linear']`` is a plain dict lookup, much cheaper than
    ``nn.Module.__getattr__``, both in guards and in the generated code.
    """
    return GetItemSource(AttrSource(module_source, table), name)


@source
class DictGetSource(Source):
    """``dict.get(base, key)``: the value of a dict keyed by an object (a tensor, a
    module) that is itself re-read from ``key``. ``dict.get`` never runs a
    defaultdict's ``__missing__``, so a guard reading it inserts nothing."""

    base: Source
    key: Source

    def name(self):
        return f"{self.base.name()}[{self.key.name()}]"

    def expr(self):
        return f"dict.get({self.base.expr()}, {self.key.expr()})"

    def uses_globals(self):
        return self.base.uses_globals() or self.key.uses_globals()

    def reconstruct(self, cg):
        from ..bytecode import create_instruction

        cg.emit(create_instruction("PUSH_NULL"))
        cg.load_const(dict.get)
        self.base.reconstruct(cg)
        self.key.reconstruct(cg)
        cg.call(2)


@source
class DictContainsSource(Source):
    """``dict.__contains__(base, key)``: whether an object key is in a dict (a bool,
    guarded with CONSTANT_MATCH like any other constant)."""

    base: Source
    key: Source

    def name(self):
        return f"({self.key.name()} in {self.base.name()})"

    def expr(self):
        return f"dict.__contains__({self.base.expr()}, {self.key.expr()})"

    def uses_globals(self):
        return self.base.uses_globals() or self.key.uses_globals()

    def reconstruct(self, cg):
        from ..bytecode import create_instruction

        cg.emit(create_instruction("PUSH_NULL"))
        cg.load_const(dict.__contains__)
        self.base.reconstruct(cg)
        self.key.reconstruct(cg)
        cg.call(2)
