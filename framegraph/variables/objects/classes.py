"""Class statements in traced code: ``class C: ...`` inside a function.

CPython runs a class statement as ``__build_class__(body, name, *bases)``:
the body function fills a namespace and ``type(name, bases, ns)`` makes the
class, a new object on every run. The tracer builds the class for real, at
trace time, when doing so now is indistinguishable from doing it on each
call:

* the body runs nothing but what ``BodyWalk`` (class_body.py) proves over an
  abstract stack of kinds: it binds names to constants, functions it makes,
  descriptors of them, ``BODY_CALLS`` and containers of constants; it fills
  ``__annotations__`` with what it reads and typing's subscripts;
* what it reads from outside (``Read``) is one fixed, immutable object, read
  as the frame would read it, so guarded: a global or builtin (LOAD_NAME), an
  attribute of a module, a variable of the enclosing function
  (LOAD_CLASSDEREF; 3.12: LOAD_LOCALS + LOAD_FROM_DICT_OR_DEREF). An
  annotation may also be a marker object such as ``KW_ONLY``, guarded by
  identity;
* creating it runs only code that is a function of the new class alone
  (class_bases.py: the bases, the metaclass, the keywords, the hooks);
* a list, dict or set the body builds (``_registry = {}``, ``__slots__ =
  ['obj']``) is a new object on every run: the prototype holds one made now,
  but the trace reads and changes a tracker of its own instead (the class's
  overlay, class_attrs.py), which the rebuilt class gets in place of the one
  its body makes, so each call starts from the body's value and ends with the
  trace's changes to it.

The methods' closures are the enclosing function's cells: each is stood for
by a new real cell that the trace maps to the frame's ``CellVariable``
(``aliases.remember_cell``), so a method called in the trace reads the
variable's value at the call (test_set's ``Bad.__eq__`` reading ``enabled``,
set after the class statement) and its ``nonlocal`` writes go to the frame.
A cell the body reads itself holds the value read. The functions are never
run for real: calls of them are inlined.

The class is then a trace-time prototype: lookups on it and on instances made
in the trace read its dict. Where it outlives the trace (returned, stored, a
graph break with it or an instance of it in a local) the replacement code
builds a fresh class the same way (``BuiltClassVariable.reconstruct``: the
frame's real cells, or for a variable only the body read, a cell with the
value it read), so each call still gets its own class, and instances made in
the trace are rebuilt with it. ``PROTOTYPES`` holds the prototypes and their
functions: codegen refuses to embed one as a constant (``is_prototype``), the
one place that would leak it.

Class decorators (``CLASS_DECORATORS``: ``dataclasses.dataclass``, with or
without options) on a prototype run for real, now, on the prototype, and
again on the class rebuilt. That is what CPython does on each run, and it is
sound here because dataclass is a function of the class alone: it reads the
class's dict and annotations (fixed by the checks above), the options
(constants) and the stdlib modules, and its only effect is on the class it
was given (the methods it generates by ``exec``, ``__dataclass_fields__``,
...; ``slots=True`` returns a new class). Tracing it instead would mean
tracing ``exec`` of generated source. What it raises (``non-default argument
follows default argument``) is raised in the trace where CPython raises it.
The generated methods are ordinary functions of the prototype, inlined when
called.

``dataclasses.fields(obj)`` (``DATACLASS_MODELS``) is modelled over trackers.
Every transformers ``ModelOutput`` calls it in each ``__setattr__`` and in
``__post_init__``; traced, it is a call, a generator expression resumed once
per field and a ``tuple()`` that drains it (a fifth of the instructions of a
CLIP trace). The model does what its three lines do (the same in 3.11 to
3.13) through the same tracker operations, so the guards are the ones a
traced call installs: ``getattr(obj, '__dataclass_fields__')`` (an
AttributeError becomes ``TypeError(...) from None``), then the values whose
``_field_type is _FIELD``. Only a plain ``dict`` of fields is walked (what
``@dataclass`` stores); anything else there is a graph break.
"""
import builtins
import dataclasses
import functools
import types
import typing
import weakref

from ...errors import unsupported
from ..callables.functions import NestedUserFunctionVariable, UserFunctionVariable
from ..containers.dicts import ConstDictVariable
from ..containers.lists import TupleVariable
from ..callables.trace_time import OpaqueConstantVariable, is_pure_class_getitem
from ..core import space
from ..core.aliases import remember_cell
from ..core.base import CallableVariable, guard_identity, is_heap_type
from ..core.constant import ConstantVariable, is_constant_value
from ..core.exceptions import ExceptionVariable, TracedException, python_operation
from ..core.ops import is_op
from .class_attrs import rebuild_writes, share_overlay
from .class_bases import admit
from .class_body import BODY_CALLS, BodyWalk, _reject
from .user_defined import UserDefinedClassVariable

# Classes built at trace time, and the functions in them: one object for every
# call that the trace stands for, so never a constant of the replacement code.
PROTOTYPES = weakref.WeakSet()
_NEVER_PROTOTYPES = (int, float, str, bytes, bool, type(None), complex)


@space.register
def is_prototype(value) -> bool:
    """Is ``value`` (or an item of a constant tuple, an alias of it) a trace-time class or one
    of its functions?"""
    if type(value) in _NEVER_PROTOTYPES:
        return False
    if type(value) in (tuple, frozenset):
        return any(is_prototype(v) for v in value if type(v) not in _NEVER_PROTOTYPES)
    if isinstance(value, (types.GenericAlias, getattr(typing, "_GenericAlias", ()))):  # Parent[int]
        return is_prototype(value.__origin__) or is_prototype(tuple(getattr(value, "__args__", ())))
    try:
        return value in PROTOTYPES
    except TypeError:  # not weak-referenceable (or unhashable): not ours
        return False


def _remember(cls, functions=True):
    """``cls`` and what was made with it (``functions``: the functions in its dict were
    made by its body, not read from outside) are prototypes."""
    PROTOTYPES.add(cls)
    for value in vars(cls).values():
        if cls in type(value).__mro__:  # made with the class (an enum's members): as much its own
            PROTOTYPES.add(value)
        if not functions:
            continue
        for fn in (value, getattr(value, "__func__", None), getattr(value, "fget", None),
                   getattr(value, "fset", None), getattr(value, "fdel", None)):
            if isinstance(fn, types.FunctionType):
                PROTOTYPES.add(fn)


def _fixed_object(var):
    """The real object a tracker stands for when it is one fixed, immutable object (a
    constant, a class, a function or module guarded by identity, a typing form);
    else None. Such a value may go into a class built now, for every call."""
    try:
        real = var.as_python_constant()
    except Exception:
        return None
    if isinstance(var, OpaqueConstantVariable) or is_constant_value(real) or isinstance(
            real, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
        return real
    return None


def _held_as_is(value) -> bool:
    """May the class hold ``value`` (a class attribute, a field's default) for every call?
    Its reads through the class are not guarded, so it must not change: a constant, a
    function (by identity), a builtin type, a typing form, a class made in this trace."""
    if is_constant_value(value) or is_prototype(value) or isinstance(value, (
            types.FunctionType, types.BuiltinFunctionType, types.GenericAlias, types.UnionType,
            getattr(typing, "_Final", ()))):
        return True
    return isinstance(value, type) and not is_heap_type(value)


def _pure_operand(value) -> bool:
    """May ``value[...]`` and ``value | other`` run now? typing's forms and aliases,
    the builtin types, and classes whose subscript only builds an alias."""
    if value is None or isinstance(value, (str, types.GenericAlias, getattr(typing, "_Final", ()))):
        return True
    if not isinstance(value, type) or getattr(type(value), "__getitem__", None) is not None:
        return False
    if type(value).__or__ is not type.__or__:
        return False
    return is_pure_class_getitem(value) or "__class_getitem__" not in dir(value) or \
        value.__module__ in ("dataclasses", "typing", "collections.abc", "builtins")


class BuildClassVariable(CallableVariable):
    """``__build_class__`` as LOAD_BUILD_CLASS pushes it."""

    def __init__(self, **kwargs):
        super().__init__(builtins.__build_class__, **kwargs)

    def call(self, tx, args, kwargs):
        if len(args) < 2 or not isinstance(args[0], NestedUserFunctionVariable) \
                or not args[1].is_python_constant():
            unsupported("unsupported_call", "__build_class__ with these arguments")
        body, name = args[0], args[1].as_python_constant()
        bases, keywords = [], {}
        for key, base in [(None, base) for base in args[2:]] + list(kwargs.items()):
            if not base.is_python_constant():
                _reject(name, f"{'base' if key is None else key} {base} is not a fixed object")
            if key is None:
                bases.append(base.as_python_constant())
            else:
                keywords[key] = base.as_python_constant()
        walk = BodyWalk(body.code, name)
        reads = walk.run()
        admit(name, bases, keywords, walk.bound)  # what creating it runs: see class_bases.py
        cells, derefs = _closure(tx, body, name, reads)
        shared = {body.code.co_freevars.index(n) for n in walk.closed_over if n in body.code.co_freevars}
        with python_operation(f"class {name}"):  # `class A(bool)` raises TypeError, as CPython does
            fn = types.FunctionType(body.code, body.f_globals, body.code.co_name, None, cells)
            cls = builtins.__build_class__(fn, name, *bases, **keywords)
        _remember(cls)
        var = BuiltClassVariable(cls, body, args[1:], derefs, shared, keywords=kwargs)
        for kind in walk.containers:  # the trace's own copy, put in the class where it is rebuilt
            name = kind.names[0] if kind.names else None
            if name is not None and name in vars(cls):
                var.writes[name] = tx.wrap(vars(cls)[name])
        share_overlay(tx, cls, var.writes)
        return var

    def __repr__(self):
        return "BuildClassVariable()"


def _resolve(tx, body, name, read, done):
    """The tracker of what ``read`` reads, guarded as the frame would read it."""
    if read.how == "global":
        return tx.load_global(read.name)
    if read.how == "attr":
        base = done[id(read.base)]
        if not isinstance(base.as_python_constant(), types.ModuleType):
            _reject(name, f"its body reads an attribute of {read.base}, not of a module")
        return base.getattr(tx, read.name)
    cell = body.closure[body.code.co_freevars.index(read.name)]
    if cell.contents is None:
        _reject(name, f"its body reads {read.name} before the enclosing function assigns it")
    return cell.load(read.name)


def _closure(tx, body, name, reads):
    """The body's real closure, and the values its free variables held as it read them.

    Each cell of the enclosing function is stood for by a new real cell that the
    trace maps to the function's own ``CellVariable`` (``remember_cell``): a method
    of the class, called in the trace, reads and writes the frame's cell, as in
    CPython. A cell the body reads itself holds the value read, now."""
    done, derefs = {}, {}
    cells = tuple(types.CellType() for _ in body.code.co_freevars)
    for read in reads:
        var = done[id(read)] = _resolve(tx, body, name, read, done)
        real = _fixed_object(var)
        if real is None and read.uses == {"annotation"} and var.source is not None \
                and hasattr(var, "value"):  # `_: KW_ONLY`: a marker object, only looked at by identity
            real = var.value
            guard_identity(tx, real, var.source)
        if real is None:
            _reject(name, f"its body reads {read}, which is not a fixed object ({var})")
        if read.uses & {"stored", "argument"} and not _held_as_is(real):
            _reject(name, f"its class would hold {read} ({type(real).__name__}), which may change")
        for use in read.uses:
            if use == "operand" and not _pure_operand(real):
                _reject(name, f"its body subscripts or combines {read}")
            if isinstance(use, tuple):
                try:
                    kind = BODY_CALLS.get(real)
                except TypeError:
                    kind = None
                if kind != use[1]:
                    _reject(name, f"its body calls {read}")
        if read.how == "deref":
            index = body.code.co_freevars.index(read.name)
            cells[index].cell_contents = derefs[index] = real
    for cell, var in zip(cells, body.closure or ()):
        remember_cell(tx, cell, var)
    return cells, derefs


class BuiltClassVariable(UserDefinedClassVariable):
    """A class a class statement in the trace made (the prototype; see the module docstring).

    ``decorators``: the class decorators applied to it at trace time
    (``ClassDecoratorVariable``), applied again when it is rebuilt."""

    rebuilt = True  # its instances made in the trace are rebuilt with the class rebuilt
    def __init__(self, cls, body, name_and_bases, derefs, shared, decorators=(), keywords=None, **kwargs):
        super().__init__(cls, **kwargs)
        self.keywords = keywords or {}  # metaclass=..., as trackers
        self.body, self.name_and_bases, self.derefs = body, name_and_bases, derefs
        self.shared = shared  # free variables its functions close over (by index)
        self.decorators = list(decorators)
        self.writes = {}  # this trace's attribute writes to it (class_attrs.py), redone when rebuilt

    def reconstruct(self, cg):
        """``deco(__build_class__(FunctionType(body, globals, name, None, closure), name, *bases))``,
        as the statement does; the closure is the frame's real cells."""
        for fn, options in reversed(self.decorators):
            cg.emit_op("PUSH_NULL")
            cg.load_const(functools.partial(fn, **options) if options else fn)
        cg.emit_op("PUSH_NULL")
        cg.load_const(builtins.__build_class__)
        cg.emit_op("PUSH_NULL")
        cg.load_const(types.FunctionType)
        cg.load_const(self.body.code)
        cg.load_const(self.body.f_globals)
        closure = self.body.closure or ()
        if closure:
            cg.load_const(self.body.code.co_name)
            cg.load_const(None)
            for index, cell in enumerate(closure):
                self._cell(cg, index, cell)
            cg.build(tuple, len(closure))
        cg.call(5 if closure else 2)
        for item in list(self.name_and_bases) + list(self.keywords.values()):
            cg(item)
        if self.keywords:
            cg.call_kw(1 + len(self.name_and_bases) + len(self.keywords), tuple(self.keywords))
        else:
            cg.call(1 + len(self.name_and_bases))
        for _ in self.decorators:
            cg.call(1)
        temp = cg.remember(self)  # one class for the class and its instances
        rebuild_writes(cg, temp, self.writes)
        cg.load_fast(temp)

    def _cell(self, cg, index, cell):
        """The frame's cell; for a variable the body read and no function of it keeps,
        a new cell with the value read (the variable may have changed since)."""
        if index in self.derefs and index not in self.shared:
            cg.emit_op("PUSH_NULL")
            cg.load_const(types.CellType)
            cg.load_const(self.derefs[index])
            cg.call(1)
            return
        if index in self.derefs and (cell.pre_existing or _fixed_object(cell.contents) is not self.derefs[index]):
            unsupported("graph_output", f"class {self.cls.__name__}: a variable its body read and its "
                                        "functions keep has changed, or lives outside the frame")
        cg(cell)

    def __repr__(self):
        return f"BuiltClassVariable({self.cls.__qualname__})"


# Class decorators that only change the class they are given, from what it
# holds, and return it (or, for ``slots=True``, a copy of it): run now on the
# prototype, as CPython runs them on each new class (see the module docstring).
CLASS_DECORATORS = frozenset({dataclasses.dataclass})


class ClassDecoratorVariable(CallableVariable):
    """``dataclasses.dataclass``, and ``dataclass(frozen=True)`` waiting for its class."""

    def __init__(self, fn, options=None, **kwargs):
        super().__init__(fn, **kwargs)
        self.options = options

    def as_python_constant(self):
        if self.options is not None:  # the decorator dataclass() returns: not rebuilt
            unsupported("unsupported_value", f"{self}: a decorator with options")
        return self.fn

    def call(self, tx, args, kwargs):
        constant = all(v.is_python_constant() for v in kwargs.values())
        options = {**(self.options or {}), **{k: v.as_python_constant() for k, v in kwargs.items()}} \
            if constant else None
        if not args and constant:
            return ClassDecoratorVariable(self.fn, options)
        if len(args) == 1 and isinstance(args[0], BuiltClassVariable) and constant:
            return _decorate(tx, args[0], self.fn, options)
        if self.options is not None:
            unsupported("unsupported_call", f"{self} on {args}")
        return UserFunctionVariable(self.fn, source=self.source).call(tx, args, kwargs)

    def __repr__(self):
        return f"ClassDecoratorVariable({self.fn.__qualname__}, {self.options})"


def _decorate(tx, var, fn, options):
    with python_operation(fn.__qualname__):  # its TypeErrors ("non-default argument ...") are CPython's
        cls = fn(var.cls, **options)
    _remember(cls)
    if cls is var.cls:  # changed in place: every tracker of the class sees it
        var.decorators.append((fn, options))
        return var
    new = BuiltClassVariable(cls, var.body, var.name_and_bases, var.derefs, var.shared,
                             var.decorators + [(fn, options)], var.keywords)
    new.writes.update(var.writes)  # its containers: the trace's copies (see BuildClassVariable)
    share_overlay(tx, cls, new.writes)
    return new


@space.register
class RebuiltAliasVariable(OpaqueConstantVariable):
    """``Box[int]`` of a class made in the trace: computed now on the prototype, rebuilt as
    ``Box[int]`` of the class rebuilt (never the prototype's alias, see ``is_prototype``)."""

    def __init__(self, value, class_var, key, **kwargs):
        super().__init__(value, **kwargs)
        self.class_var, self.key = class_var, key

    def reconstruct(self, cg):
        cg(self.class_var)
        cg(self.key)
        cg.binary_subscr()


# ---- dataclasses.fields
_FIELDS = "__dataclass_fields__"


def _fields(tx, *args, **kwargs):
    """``dataclasses.fields(class_or_instance)``."""
    if len(args) != 1 or kwargs:
        unsupported("unsupported_call", "dataclasses.fields() takes one argument, class_or_instance")
    try:
        table = args[0].getattr(tx, _FIELDS)
    except TracedException as error:
        if not issubclass(error.value.cls, AttributeError):
            raise
        converted = ExceptionVariable(TypeError, [ConstantVariable("must be called with a dataclass type or instance")])
        converted.context, converted.suppress_context = error.value, True  # `from None`
        leaked = TracedException(converted)
        leaked.chained = True  # its __context__ is the AttributeError, not what the caller handles
        raise leaked from None
    if not (isinstance(table, ConstDictVariable) and table.python_type() is dict):
        unsupported("unsupported_value", f"dataclasses.fields(): {_FIELDS} is a {table.python_type().__name__}")
    field_marker = tx.wrap(dataclasses._FIELD)  # a global of a stable module, as the traced call reads it
    return TupleVariable([field for _, field in table.items.values()
                          if is_op(tx, field.getattr(tx, "_field_type"), field_marker)])


DATACLASS_MODELS = {dataclasses.fields: _fields}
