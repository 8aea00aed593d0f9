"""Instances of user subclasses of int, float, complex, str and bytes, made in the trace.

``class IntSubclass(int): pass``, ``class _str(str): pass``, ``class MyIndex(int)``
with its own ``__index__``: an object of the class (its own identity, type and
``__dict__``) that holds an immutable value of the base. As in CPython, every
slot and method the class inherits from the base is the base's C code, which
reads only that value: ``IntSubclass(7) + 1`` is ``int.__add__(7, 1)``, an exact
int; ``_str('ab').upper()`` an exact str. So those are computed on the value,
a trace-time constant, while a Python method the class defines is inlined
(``UserDefinedObjectVariable``). Conversions follow ``PyNumber_Long`` /
``PyNumber_Float``: the first of ``__int__``, ``__index__``, ``__trunc__`` the
type has, a base's slot or Python code. Rebuilt after the graph as
``base.__new__(cls, value)``, then its attributes.
"""
import types

from ...errors import unsupported
from ...guards.sources import PlainValueSource, plain_value
from ..callables.builtins import BUILTINS
from ..core import space
from ..core.base import BoundMethodVariable, defines_in_python, type_lookup
from ..core.call_shapes import builtin_base
from ..core.constant import ConstantVariable, wrap_constant
from ..core.exceptions import python_operation
from ..core.interpreter_state import guard_digit_limit
from ..core.number_protocol import as_float, as_int
from ..core.ops import dunder_name, plain_operator
from ..core.reprs import user_repr, user_str
from ..objects.user_defined import UserDefinedObjectVariable, _owner, bind_class_attribute

VALUE_BASES = (int, float, complex, str, bytes)
# what the base's C code answers from more than the value: the object's size, its
# pickling (the class and __dict__), attribute access and construction
_OBJECT_STATE = frozenset({
    "__sizeof__", "__reduce__", "__reduce_ex__", "__getnewargs__", "__getstate__", "__getattribute__",
    "__setattr__", "__delattr__", "__init__", "__new__", "__init_subclass__", "__subclasshook__",
    "__dir__", "__class__", "__class_getitem__",
})
_CONVERSIONS = {int: ("__int__", "__index__", "__trunc__"), float: ("__float__", "__index__")}


@space.register
def value_base(cls):
    """The immutable builtin ``cls`` derives from (int, float, complex, str, bytes), or None."""
    base = builtin_base(cls)
    return base if base in VALUE_BASES and cls is not base else None


@space.register
def new_value_instance(tx, cls_var, base, args, kwargs, init=True):
    """``cls(*args)`` (``type_call``) or ``base.__new__(cls, *args)`` where ``cls.__new__`` is
    the base's: the base's value from the arguments (constants), held by a new object."""
    real = [a.as_python_constant() if a.is_python_constant() else _plain(a) for a in args]
    real_kw = {k: v.as_python_constant() if v.is_python_constant() else _plain(v) for k, v in kwargs.items()}
    if base in (int, str) and real:
        guard_digit_limit(tx, real[0])
    with python_operation(f"{cls_var.cls.__name__}()"):  # int('x'): ValueError, raised in the trace
        value = base(*real, **real_kw)
    obj = ValueSubclassVariable(cls_var.cls, value)
    obj.class_var = cls_var
    if init:
        found, user_init = type_lookup(cls_var.cls, "__init__")
        if isinstance(user_init, types.FunctionType):
            bind_class_attribute(tx, obj, user_init, None).call(tx, list(args), kwargs)
        elif user_init is not object.__init__:
            unsupported("unsupported_call", f"creating a {cls_var.cls.__name__} (its __init__ is a "
                                            f"{type(user_init).__name__})")
    return obj


def wrap_value_instance(tx, value, source):
    """An instance from outside the frame: guarded by type and by its value (read by the
    base's own slot), its attributes read through the source as any object's."""
    base = value_base(type(value))
    plain = plain_value(value, base)
    tx.output.add_guard("TYPE_MATCH", source, type(value))
    tx.output.add_guard("CONSTANT_MATCH", PlainValueSource(source, base), plain)
    return ValueSubclassVariable(type(value), plain, value=value, source=source)


def _plain(var):
    """The base value of an argument that is itself such an instance (``int(IntSubclass(3))``)."""
    if isinstance(var, ValueSubclassVariable):
        return var.plain
    unsupported("unsupported_value", f"{var} is not a Python constant")


@space.register
class ValueSubclassVariable(UserDefinedObjectVariable):
    """An instance of a user subclass of an immutable builtin, made in the trace."""

    slots_on_value = True  # hash_of: the base's __hash__ is computed on the value
    compares_by_binop = True  # ==: the base's __eq__ on the value (ops._has_binop)

    def __init__(self, cls, plain, value=None, **kwargs):
        super().__init__(value, cls, **kwargs)
        self.plain = plain
        self.base = value_base(cls)

    def _inherited(self, name) -> bool:
        """Whether ``name`` comes from the base's C code (not a Python override, not object's)."""
        found, attr = type_lookup(self.cls, name)
        return found and not isinstance(attr, types.FunctionType) and name not in _OBJECT_STATE \
            and _owner(self.cls, name) in VALUE_BASES

    def _on_value(self, tx, name, args, kwargs=None):
        """``base.name(value, *args)``: the base's C method, on the value."""
        plain = [ConstantVariable(a.plain) if isinstance(a, ValueSubclassVariable) else a for a in args]
        return ConstantVariable(self.plain).call_method(tx, name, plain, kwargs or {})

    def _dunder(self, tx, name, args):
        if self._inherited(name):
            return self._on_value(tx, name, args)
        return super()._dunder(tx, name, args)

    def binop(self, tx, fn, other, reflected):
        """Facing a plain constant, where no class of the MRO has a Python slot for the
        operator, only C code answers: the operator runs now on a real instance holding
        the value, with CPython's answer and message (``MyStr('ab') * [1]``: "can't
        multiply sequence by non-int of type 'list'"; ``r = MyInt(2); r *= 'ab'``: a
        TypeError, as the instance's empty sequence slots block the str's repeat)."""
        names = {dunder_name(op, side) for op in (fn, plain_operator(fn)) for side in (False, True)} - {None}
        constant = other.is_python_constant() and not space.has_symbols(other)
        probed = type(other) is space.ListVariable and self.base is not int  # MyInt(n) * [...] would repeat it
        if isinstance(other, ValueSubclassVariable) or not (constant or probed) \
                or defines_in_python(self.cls, names):
            return super().binop(tx, fn, other, reflected)
        # a list's items are not constants: a list as long, of None, learns whether it raises
        operand = other.as_python_constant() if constant else [None] * len(other.items)
        real = self.base.__new__(self.cls, self.plain)
        with python_operation("%s(%r, %r)", fn.__name__, self.plain, operand):
            result = fn(operand, real) if reflected else fn(real, operand)
        if not constant or type(result) not in (int, float, complex, str, bytes, bool, tuple, type(NotImplemented)):
            return super().binop(tx, fn, other, reflected)  # the instance itself, or what C made of it
        return NotImplemented if result is NotImplemented else wrap_constant(result)

    def generic_getattr(self, tx, name):
        if name == "__format__" and name not in self.attrs and self._inherited(name):
            return BoundMethodVariable(self, name)  # the instance's str() answers an empty spec
        if name not in self.attrs and self._inherited(name):  # `n.bit_length`, `s.upper`, `n.real`
            return ConstantVariable(self.plain).getattr(tx, name)
        return super().generic_getattr(tx, name)

    def call_method(self, tx, name, args, kwargs):
        if (name == "__format__" and name not in self.attrs and self._inherited(name) and len(args) == 1
                and not kwargs and args[0].is_python_constant() and isinstance(args[0].as_python_constant(), str)):
            return self.formatted(tx, args[0].as_python_constant())  # '' is str(obj), a __str__ shows
        if name not in self.attrs and self._inherited(name):
            return self._on_value(tx, name, args, kwargs)
        return super().call_method(tx, name, args, kwargs)

    def key_value(self):
        """As a dict key or set member: its value, when hashing and comparing are the base's
        (CPython finds ``_str('msg')`` where ``'msg'`` was stored); None when Python code does."""
        inherited = self._inherited("__hash__") and self._inherited("__eq__")
        return self.plain if inherited and not isinstance(self.plain, float) else None

    def contains(self, tx, item):
        if self._inherited("__contains__"):  # 'ms' in _str('msg'): a substring test on the value
            return self._on_value(tx, "__contains__", [item]).truth(tx)
        return super().contains(tx, item)

    def iter(self, tx):
        if self._inherited("__iter__"):  # a str or bytes subclass: the value's items
            return ConstantVariable(self.plain).iter(tx)
        return super().iter(tx)

    def unpack(self, tx):
        if self._inherited("__iter__"):
            return ConstantVariable(self.plain).unpack(tx)
        return super().unpack(tx)

    def repr(self, tx):
        """``repr(obj)``: a Python ``__repr__``, else the base's, on the value."""
        return user_repr(tx, self) or self._text(tx, repr)

    def str(self, tx):
        """``str(obj)``: a Python ``__str__`` (int and float have none of their own: object's
        calls the repr), else the base's, on the value."""
        return user_str(tx, self) or self._text(tx, str)

    def formatted(self, tx, spec):
        """``format(obj, spec)``: a Python ``__format__``; else the base's, which for an empty
        spec is ``str(obj)`` (int_format: a Python ``__repr__`` shows), else the value's."""
        if not self._inherited("__format__"):
            return self.call_method(tx, "__format__", [ConstantVariable(spec)], {})
        if not spec:
            return self.str(tx)
        with python_operation("format()"):
            return ConstantVariable(format(self.plain, spec))

    def _text(self, tx, how):
        guard_digit_limit(tx, self.plain)  # str(10 ** 5000): ValueError under the digit limit
        with python_operation(f"{how.__name__}()"):
            return ConstantVariable(how(self.plain))

    def convert(self, tx, kind):
        """``int(obj)`` / ``float(obj)``: the first conversion slot the type has (a Python
        dunder inlined and checked, as number_protocol does, or the base's on the value);
        a str or bytes subclass without one is parsed, as its value would be."""
        for name in _CONVERSIONS[kind]:
            found, attr = type_lookup(self.cls, name)
            if not found:
                continue
            if isinstance(attr, types.FunctionType):
                return ConstantVariable(as_int(tx, self) if kind is int else as_float(tx, self))
            if name == "__trunc__":  # deprecated since 3.11: CPython warns
                unsupported("unsupported_call", f"int() through {self.cls.__name__}.__trunc__ (deprecated)")
            break
        with python_operation(f"{kind.__name__}()"):  # "abc" -> ValueError; a complex -> TypeError
            return wrap_constant(kind(self.plain))

    def reconstruct(self, cg):
        """From outside: its source. Made here: ``base.__new__(cls, value)``, then its attributes."""
        if self.source is not None:
            return super().reconstruct(cg)
        if getattr(getattr(self, "class_var", None), "rebuilt", False):
            unsupported("graph_output", f"returning a {self.cls.__name__} of a class created inside compiled code")
        cg.call_constant(self.base.__new__, self.cls, self.plain)
        self.rebuild_attributes(cg)

    def __repr__(self):
        return f"ValueSubclassVariable({self.cls.__name__}, {self.plain!r})"


def base_new(base):
    """``int.__new__(cls, *args)`` (a Python ``__new__``'s ``super().__new__(cls, x)``): for a
    user subclass, a new instance (its ``__init__`` is type_call's to run); else folded."""
    def model(tx, cls_var, *args, **kwargs):
        cls = cls_var.as_python_constant()
        if isinstance(cls, type) and value_base(cls) is base and hasattr(cls_var, "cls"):
            return new_value_instance(tx, cls_var, base, args, kwargs, init=False)
        real = [a.as_python_constant() for a in args]
        with python_operation(f"{base.__name__}.__new__()"):  # int.__new__(list): CPython's TypeError
            return wrap_constant(base.__new__(cls, *real, **{k: v.as_python_constant() for k, v in kwargs.items()}))
    return model


# int.__new__(cls, x) from a subclass's __new__: models among the builtins' own
BUILTINS.update({base.__new__: base_new(base) for base in VALUE_BASES})
