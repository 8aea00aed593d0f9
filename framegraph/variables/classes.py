"""Class statements in traced code: ``class C: ...`` inside a function.

CPython runs a class statement as ``__build_class__(body, name, *bases)``:
the body function fills a namespace and ``type(name, bases, ns)`` makes the
class, a new object on every run. The tracer builds the class for real, at
trace time, when doing so now is indistinguishable from doing it on each
call:

* the body runs nothing but what ``BodyWalk`` proves over an abstract stack
  of kinds: it binds names (STORE_NAME) to constants, functions it makes,
  ``staticmethod``/``classmethod``/``property``/``abstractmethod`` of them
  (with a property's ``setter``/``getter``/``deleter``) and ``dataclasses.field``
  calls (``BODY_CALLS``); it fills ``__annotations__`` (SETUP_ANNOTATIONS) with
  what it reads and typing's subscripts and ``|`` of those (``List[int]``,
  ``int | None``);
* what it reads from outside (``Read``) is one fixed, immutable object, read
  as the frame would read it, so guarded: a global or builtin (LOAD_NAME), an
  attribute of a module, a variable of the enclosing function
  (LOAD_CLASSDEREF; 3.12: LOAD_LOCALS + LOAD_FROM_DICT_OR_DEREF). An
  annotation may also be a marker object such as ``KW_ONLY``, guarded by
  identity;
* every base is a class of metaclass ``type`` with no ``__init_subclass__``
  of its own, and there are no keywords (``metaclass=``).

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
"""
import abc
import builtins
import dataclasses
import dis
import enum
import functools
import types
import typing
import weakref

from .. import pyver
from ..errors import unsupported
from .base import CallableVariable, guard_identity
from .class_attrs import rebuild_writes, share_overlay
from .class_bases import admit
from .constant import is_constant_value
from .exceptions import python_operation
from .trace_time import OpaqueConstantVariable, is_pure_class_getitem
from .user_defined import UserDefinedClassVariable

# What a call in the body makes, by the name it calls (the walk's kind), and the
# real callables allowed under those names: builtin descriptors, and functions
# that only build a new object from their arguments (``dataclasses.field``).
CALL_KINDS = {"staticmethod": "descriptor", "classmethod": "descriptor", "property": "property",
              "abstractmethod": "function"}
BODY_CALLS = {staticmethod: "descriptor", classmethod: "descriptor", property: "property",
              abc.abstractmethod: "function", dataclasses.field: "value", enum.auto: "value"}
_PROPERTY_METHODS = ("setter", "getter", "deleter")
_NO_EFFECT = {"RESUME", "NOP", "MAKE_CELL", "PRECALL", "COPY_FREE_VARS"}
# Classes built at trace time, and the functions in them: one object for every
# call that the trace stands for, so never a constant of the replacement code.
PROTOTYPES = weakref.WeakSet()


def is_prototype(value) -> bool:
    """Is ``value`` (or an item of a constant tuple, an alias of it) a trace-time class or one
    of its functions?"""
    if type(value) in (tuple, frozenset):
        return any(is_prototype(v) for v in value)
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


def _reject(name, why):
    unsupported("unsupported_call", f"class {name}: {why}")


class Read:
    """A value the body reads from outside: a global or builtin (``LOAD_NAME``), a
    variable of the enclosing function (``LOAD_CLASSDEREF``), an attribute of one."""

    def __init__(self, how, name, base=None):
        self.how, self.name, self.base = how, name, base  # how: "global", "deref", "attr"
        # ("call", the kind it was called as), "operand" (of [] or |), "annotation",
        # "stored" (a class attribute), "argument" (of a call)
        self.uses = set()

    def __repr__(self):
        return self.name if self.base is None else f"{self.base}.{self.name}"


class ReadTuple(tuple):
    """A tuple the body builds with reads in it (``(int, str)``): each is used as the tuple is."""


def _use(kind, use):
    for read in kind if isinstance(kind, ReadTuple) else (kind,):
        if isinstance(read, Read):
            read.uses.add(use)


_VALUES = ("constant", "function", "descriptor", "property", "tuple", "annotation")


class BodyWalk:
    """The class body run over an abstract stack of kinds ("constant",
    "function", a ``Read``, ...): proves that running it now runs nothing but
    the reads it lists, ``BODY_CALLS`` and typing's subscripts and ``|``."""

    def __init__(self, code, name):
        self.code, self.name = code, name
        self.stack, self.bound, self.reads = [], {}, []
        self.closed_over = set()  # the cells the body passes on to its functions

    def run(self):
        for inst in dis.get_instructions(self.code):
            op = inst.opname
            if op in _NO_EFFECT:
                continue
            if op in ("RETURN_VALUE", "RETURN_CONST"):  # RETURN_CONST: 3.12's `return None`
                return self.reads
            step = getattr(self, op, None)
            if step is None:
                _reject(self.name, f"its body runs {op}")
            step(inst)
        return self.reads

    def _read(self, how, name, base=None):
        read = Read(how, name, base)
        self.reads.append(read)
        self.stack.append(read)

    def LOAD_CONST(self, inst):
        self.stack.append("constant")

    def LOAD_NAME(self, inst):
        if inst.argval in self.bound:
            self.stack.append(self.bound[inst.argval])
        elif inst.argval == "__name__":  # __module__ = __name__, in every class body
            self.stack.append("constant")
        else:
            self._read("global", inst.argval)

    def LOAD_CLASSDEREF(self, inst):  # 3.11: the namespace, else the enclosing function's cell
        if inst.argval in self.bound:
            self.stack.append(self.bound[inst.argval])
        else:
            self._read("deref", inst.argval)

    def LOAD_LOCALS(self, inst):  # 3.12: pushes the namespace for LOAD_FROM_DICT_OR_DEREF
        self.stack.append("locals")

    def LOAD_FROM_DICT_OR_DEREF(self, inst):
        self.stack.pop()
        self.LOAD_CLASSDEREF(inst)

    def STORE_NAME(self, inst):
        kind = self.stack.pop()
        if kind in ("locals", "null", "annotations", "property method"):
            _reject(self.name, f"its body binds {inst.argval} to {kind}")
        _use(kind, "stored")
        self.bound[inst.argval] = kind

    def SETUP_ANNOTATIONS(self, inst):
        self.bound["__annotations__"] = "annotations"

    def STORE_SUBSCR(self, inst):  # (value container key -- ): only __annotations__[name] = ...
        key, container, value = self.stack.pop(), self.stack.pop(), self.stack.pop()
        if container != "annotations" or key != "constant":
            _reject(self.name, "its body stores an item")
        if isinstance(value, Read):
            value.uses.add("annotation")

    def _operand(self, kind):
        if isinstance(kind, Read):
            kind.uses.add("operand")
        elif kind not in ("constant", "annotation", "tuple") and not isinstance(kind, ReadTuple):
            _reject(self.name, f"its body subscripts or combines a {kind}")

    def BINARY_SUBSCR(self, inst):  # List[int], ClassVar[int]: typing's subscripts
        key, base = self.stack.pop(), self.stack.pop()
        if not isinstance(base, Read) and base != "annotation":
            _reject(self.name, f"its body subscripts a {base}")
        self._operand(base)
        self._operand(key)
        self.stack.append("annotation")

    def BINARY_OP(self, inst):  # int | None
        if inst.argrepr != "|":
            _reject(self.name, f"its body runs the operator {inst.argrepr}")
        self._operand(self.stack.pop())
        self._operand(self.stack.pop())
        self.stack.append("annotation")

    def MAKE_FUNCTION(self, inst):  # 3.13 has no flags: SET_FUNCTION_ATTRIBUTE adds each
        del self.stack[-1 - bin((inst.arg or 0) & 0x0F).count("1"):]
        self.stack.append("function")

    def SET_FUNCTION_ATTRIBUTE(self, inst):  # (attribute function -- function)
        function = self.stack.pop()
        self.stack[-1] = function

    def LOAD_CLOSURE(self, inst):
        self.closed_over.add(inst.argval)
        self.stack.append("cell")

    def LOAD_FAST(self, inst):  # 3.13's LOAD_CLOSURE
        if inst.argval not in self.code.co_cellvars + self.code.co_freevars:
            _reject(self.name, f"its body reads the local {inst.argval}")
        self.LOAD_CLOSURE(inst)

    def BUILD_TUPLE(self, inst):
        items = self.stack[len(self.stack) - inst.arg:]
        for kind in items:
            if kind not in ("constant", "cell", "annotation") and not isinstance(kind, Read):
                _reject(self.name, f"its body puts a {kind} in a tuple")
        del self.stack[len(self.stack) - inst.arg:]
        reads = ReadTuple(kind for kind in items if isinstance(kind, Read))
        self.stack.append(reads if reads else "tuple")

    def _attribute(self, inst):
        base, name, method_form = self.stack.pop(), inst.argval, inst.opname == "LOAD_METHOD"
        method_form = method_form or pyver.attr_is_method(inst.arg)  # 3.12: LOAD_ATTR's bit
        if base == "property" and name in _PROPERTY_METHODS:
            kind = "property method"
        elif isinstance(base, Read):  # typing.ClassVar, dataclasses.field: a module's attribute
            read = Read("attr", name, base)
            self.reads.append(read)
            kind = read
        else:
            _reject(self.name, f"its body reads the attribute {name} of a {base}")
        self.stack.extend(["null", kind] if method_form else [kind])

    LOAD_ATTR = LOAD_METHOD = _attribute

    def PUSH_NULL(self, inst):
        self.stack.append("null")

    def KW_NAMES(self, inst):  # 3.11, 3.12: the next CALL's last arguments are keywords
        pass

    def CALL_KW(self, inst):  # 3.13: the keyword names are on the stack
        self.stack.pop()
        self.CALL(inst)

    def CALL(self, inst):
        """The callee is a decorator, a ``BODY_CALLS`` function or a property method."""
        argc, stack = inst.arg, self.stack
        below, callee = stack[-argc - 2], stack[-argc - 1]
        if below != "null":
            callee = below
        args = stack[len(stack) - argc:]
        del stack[-argc - 2:]
        for arg in args:
            _use(arg, "argument")
            if arg not in _VALUES and not isinstance(arg, (Read, ReadTuple)):
                _reject(self.name, f"its body passes a {arg} to a call")
        if callee == "property method":
            stack.append("property")
        elif isinstance(callee, Read):
            kind = CALL_KINDS.get(callee.name, "value")
            callee.uses.add(("call", kind))
            stack.append(kind)
        else:
            _reject(self.name, f"its body calls a {callee}")

    def COPY(self, inst):
        self.stack.append(self.stack[-inst.arg])

    def POP_TOP(self, inst):
        self.stack.pop()


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


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class whose attributes can be set


def _held_as_is(value) -> bool:
    """May the class hold ``value`` (a class attribute, a field's default) for every call?
    Its reads through the class are not guarded, so it must not change: a constant, a
    function (by identity), a builtin type, a typing form, a class made in this trace."""
    if is_constant_value(value) or is_prototype(value) or isinstance(value, (
            types.FunctionType, types.BuiltinFunctionType, types.GenericAlias, types.UnionType,
            getattr(typing, "_Final", ()))):
        return True
    return isinstance(value, type) and not value.__flags__ & _HEAPTYPE


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
        from .functions import NestedUserFunctionVariable

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
    from .aliases import remember_cell

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
        from .functions import UserFunctionVariable

        constant = all(v.is_python_constant() for v in kwargs.values())
        options = {**(self.options or {}), **{k: v.as_python_constant() for k, v in kwargs.items()}} \
            if constant else None
        if not args and constant:
            return ClassDecoratorVariable(self.fn, options)
        if len(args) == 1 and isinstance(args[0], BuiltClassVariable) and constant:
            return _decorate(args[0], self.fn, options)
        if self.options is not None:
            unsupported("unsupported_call", f"{self} on {args}")
        return UserFunctionVariable(self.fn, source=self.source).call(tx, args, kwargs)

    def __repr__(self):
        return f"ClassDecoratorVariable({self.fn.__qualname__}, {self.options})"


def _decorate(var, fn, options):
    with python_operation(fn.__qualname__):  # its TypeErrors ("non-default argument ...") are CPython's
        cls = fn(var.cls, **options)
    _remember(cls)
    if cls is var.cls:  # changed in place: every tracker of the class sees it
        var.decorators.append((fn, options))
        return var
    return BuiltClassVariable(cls, var.body, var.name_and_bases, var.derefs, var.shared,
                              var.decorators + [(fn, options)], var.keywords)


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

