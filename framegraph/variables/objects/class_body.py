"""The body of a class statement, walked over an abstract stack of kinds.

``BodyWalk`` proves that running a class body now runs nothing but the reads
it lists: it binds names (STORE_NAME) to constants, functions it makes,
``staticmethod``/``classmethod``/``property``/``abstractmethod`` of them (with
a property's ``setter``/``getter``/``deleter``), ``dataclasses.field`` and
``enum.auto`` calls (``BODY_CALLS``), and lists, dicts and sets of constants
and fixed reads (``Container``); it fills ``__annotations__`` with what it
reads and typing's subscripts and ``|`` of those. classes.py checks what the
reads find and builds the class (see its docstring).
"""
import abc
import dataclasses
import dis
import enum

from ... import pyver
from ...errors import unsupported

# What a call in the body makes, by the name it calls (the walk's kind), and the
# real callables allowed under those names: builtin descriptors, and functions
# that only build a new object from their arguments (``dataclasses.field``).
CALL_KINDS = {"staticmethod": "descriptor", "classmethod": "descriptor", "property": "property",
              "abstractmethod": "function"}
BODY_CALLS = {staticmethod: "descriptor", classmethod: "descriptor", property: "property",
              abc.abstractmethod: "function", dataclasses.field: "value", enum.auto: "value"}
_PROPERTY_METHODS = ("setter", "getter", "deleter")
_NO_EFFECT = {"RESUME", "NOP", "MAKE_CELL", "PRECALL", "COPY_FREE_VARS"}


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


class Container:
    """A list, dict or set the body builds of constants and fixed reads (``_registry = {}``,
    ``__slots__ = ['obj']``): a new object on every run of the statement, so it is a
    tracker made in the trace, not the prototype's own (see ``BuildClassVariable``)."""

    def __init__(self):
        self.names = []  # what the body binds it to: one name, or it is shared (refused)

    def __repr__(self):
        return "container"


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

    @property
    def containers(self):
        return [kind for kind in self.bound.values() if isinstance(kind, Container)]

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
        if isinstance(kind, Container):
            kind.names.append(inst.argval)
            if len(kind.names) > 1:
                _reject(self.name, f"its body binds one container to {kind.names}")
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

    def _container(self, count):
        """Pop ``count`` items of a container being built: constants and fixed reads."""
        items = self.stack[len(self.stack) - count:] if count else []
        del self.stack[len(self.stack) - count:]
        for kind in items:
            if kind not in ("constant", "tuple") and not isinstance(kind, (Read, ReadTuple)):
                _reject(self.name, f"its body puts a {kind} in a container")
            _use(kind, "stored")
        return Container()

    def BUILD_LIST(self, inst):
        self.stack.append(self._container(inst.arg))

    BUILD_SET = BUILD_LIST

    def BUILD_MAP(self, inst):
        self.stack.append(self._container(2 * inst.arg))

    def BUILD_CONST_KEY_MAP(self, inst):  # (values... keys -- dict)
        self.stack.append(self._container(inst.arg + 1))

    def LIST_EXTEND(self, inst):  # [1, 2, 3]: BUILD_LIST 0, LOAD_CONST (1, 2, 3), LIST_EXTEND 1
        if self.stack.pop() not in ("constant", "tuple") or not isinstance(self.stack[-inst.arg], Container):
            _reject(self.name, "its body extends a container with a value")

    SET_UPDATE = LIST_EXTEND

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
