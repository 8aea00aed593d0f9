"""Class statements in traced code: ``class C: ...`` inside a function.

CPython runs a class statement as ``__build_class__(body, name, *bases)``:
the body function fills a namespace and ``type(name, bases, ns)`` makes the
class, a new object on every run. The tracer builds the class for real, at
trace time, when doing so now is indistinguishable from doing it on each
call:

* the body only binds names (STORE_NAME) to constants, functions it makes,
  and ``staticmethod``/``classmethod``/``property`` of them (with a
  property's ``setter``/``getter``/``deleter``); it reads no name but its own,
  ``__name__`` and those three builtins (each read as the frame reads a global,
  so guarded). ``check_body`` proves it by walking the body's bytecode over an
  abstract stack: no call can reach anything else;
* the body has no free variables (a method reading the enclosing function's
  locals would need that frame's real cells);
* every base is a class of metaclass ``type`` with no ``__init_subclass__``
  of its own, and there are no keywords (``metaclass=``).

The class is then a trace-time prototype: lookups on it and on instances made
in the trace read its dict. Where it outlives the trace (returned, stored, a
graph break with it in a local) the replacement code builds a fresh class the
same way (``BuiltClassVariable.reconstruct``), so each call still gets its own
class. ``PROTOTYPES`` holds the prototypes and their functions: codegen refuses
to embed one as a constant (``is_prototype``), the one place that would leak it.
"""
import builtins
import dis
import types
import weakref

from .. import pyver
from ..errors import unsupported
from .base import CallableVariable
from .exceptions import python_operation
from .user_defined import UserDefinedClassVariable

DECORATORS = {"staticmethod": "descriptor", "classmethod": "descriptor", "property": "property"}
_PROPERTY_METHODS = ("setter", "getter", "deleter")
_NO_EFFECT = {"RESUME", "NOP", "MAKE_CELL", "PRECALL"}
# Classes built at trace time, and the functions in them: one object for every
# call that the trace stands for, so never a constant of the replacement code.
PROTOTYPES = weakref.WeakSet()


def is_prototype(value) -> bool:
    """Is ``value`` (or an item of a constant tuple) a trace-time class or one of its functions?"""
    if type(value) in (tuple, frozenset):
        return any(is_prototype(v) for v in value)
    try:
        return value in PROTOTYPES
    except TypeError:  # not weak-referenceable (or unhashable): not ours
        return False


def _remember(cls):
    PROTOTYPES.add(cls)
    for value in vars(cls).values():
        for fn in (value, getattr(value, "__func__", None), getattr(value, "fget", None),
                   getattr(value, "fset", None), getattr(value, "fdel", None)):
            if isinstance(fn, types.FunctionType):
                PROTOTYPES.add(fn)


def _reject(name, why):
    unsupported("unsupported_call", f"class {name}: {why}")


def _call(stack, argc, name):
    """CALL argc over the abstract stack: the callee is a decorator or a property method."""
    below, callee = stack[-argc - 2], stack[-argc - 1]
    if below != "null":
        callee = below
    del stack[-argc - 2:]
    if callee in DECORATORS:
        stack.append(DECORATORS[callee])
    elif callee == "property method":
        stack.append("property")
    else:
        _reject(name, f"its body calls a {callee}")


def check_body(code, name):
    """The builtins the class body reads (a subset of ``DECORATORS``); ``Unsupported``
    unless the body only binds constants, functions and their descriptors."""
    stack, bound, used = [], {}, set()
    for inst in _instructions(code):
        op, arg = inst.opname, inst.argval
        if op in _NO_EFFECT:
            continue
        if op == "LOAD_CONST":
            stack.append("constant")
        elif op == "LOAD_NAME":
            if arg in bound:
                stack.append(bound[arg])
            elif arg in DECORATORS:
                used.add(arg)
                stack.append(arg)
            elif arg == "__name__":  # __module__ = __name__, in every class body
                stack.append("constant")
            else:
                _reject(name, f"its body reads {arg}")
        elif op == "STORE_NAME":
            bound[arg] = stack.pop()
        elif op == "MAKE_FUNCTION":  # 3.13 has no flags: SET_FUNCTION_ATTRIBUTE adds each
            del stack[-1 - bin((inst.arg or 0) & 0x0F).count("1"):]
            stack.append("function")
        elif op == "SET_FUNCTION_ATTRIBUTE":  # (attribute function -- function)
            function = stack.pop()
            stack[-1] = function
        elif op == "LOAD_CLOSURE":
            stack.append("cell")
        elif op == "BUILD_TUPLE":
            del stack[len(stack) - inst.arg:]
            stack.append("tuple")
        elif op in ("LOAD_ATTR", "LOAD_METHOD") and stack[-1] == "property" and arg in _PROPERTY_METHODS:
            stack.pop()
            method_form = op == "LOAD_METHOD" or pyver.attr_is_method(inst.arg)  # 3.12: LOAD_ATTR's bit
            stack.extend(["null", "property method"] if method_form else ["property method"])
        elif op == "PUSH_NULL":
            stack.append("null")
        elif op == "CALL":
            _call(stack, inst.arg, name)
        elif op == "COPY":
            stack.append(stack[-inst.arg])
        elif op == "POP_TOP":
            stack.pop()
        elif op in ("RETURN_VALUE", "RETURN_CONST"):  # RETURN_CONST: 3.12's `return None`
            return used
        else:
            _reject(name, f"its body runs {op}")
    return used


def _instructions(code):
    return dis.get_instructions(code)


def _plain_base(cls) -> bool:
    if not isinstance(cls, type) or type(cls) is not type:
        return False
    return all("__init_subclass__" not in klass.__dict__ for klass in cls.__mro__ if klass is not object)


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
        if kwargs:
            _reject(name, "keywords (a metaclass) in the class statement")
        if body.code.co_freevars:
            _reject(name, f"its body reads variables of the enclosing function {body.code.co_freevars}")
        bases = []
        for base in args[2:]:
            real = base.as_python_constant() if base.is_python_constant() else None
            if not _plain_base(real):
                _reject(name, f"base {base}: not a class of metaclass type without __init_subclass__")
            bases.append(real)
        for builtin in check_body(body.code, name):
            seen = tx.load_global(builtin)  # guarded as the frame reads it
            if not (seen.is_python_constant() and seen.as_python_constant() is getattr(builtins, builtin)):
                _reject(name, f"{builtin} is not the builtin")
        if "__name__" in body.code.co_names:
            tx.load_global("__name__")
        with python_operation(f"class {name}"):  # `class A(bool)` raises TypeError, as CPython does
            cls = builtins.__build_class__(types.FunctionType(body.code, body.f_globals), name, *bases)
        _remember(cls)
        return BuiltClassVariable(cls, body.code, body.f_globals, args[1:])

    def __repr__(self):
        return "BuildClassVariable()"


class BuiltClassVariable(UserDefinedClassVariable):
    """A class a class statement in the trace made (the prototype; see the module docstring)."""

    def __init__(self, cls, body_code, f_globals, name_and_bases, **kwargs):
        super().__init__(cls, **kwargs)
        self.body_code, self.f_globals, self.name_and_bases = body_code, f_globals, name_and_bases

    def reconstruct(self, cg):
        """``__build_class__(FunctionType(body, globals), name, *bases)``, as the statement does."""
        cg.emit_op("PUSH_NULL")
        cg.load_const(builtins.__build_class__)
        cg.emit_op("PUSH_NULL")
        cg.load_const(types.FunctionType)
        cg.load_const(self.body_code)
        cg.load_const(self.f_globals)
        cg.call(2)
        for item in self.name_and_bases:
            cg(item)
        cg.call(1 + len(self.name_and_bases))

    def __repr__(self):
        return f"BuiltClassVariable({self.cls.__qualname__})"
