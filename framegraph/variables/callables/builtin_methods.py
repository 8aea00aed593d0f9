"""Methods of builtin types called through the class: ``dict.get(d, k)``, ``list.__iadd__(l, m)``.

``T.name`` of a builtin type ``T`` is a ``method_descriptor`` (``dict.get``)
or a ``wrapper_descriptor`` (``list.__iadd__``, a slot). Called with an
instance first, CPython runs the type's own C function on it, bypassing any
override a subclass has. So the call is the tracker's own method when the
instance's type does not override ``name`` (then ``obj.name(...)`` would run
the same C function), and the slot's operator for the dunder slots. On
trace-time constants of immutable types (``str.upper("ab")``,
``int.__add__(1, 2.0)``) the descriptor itself runs now: it is pure, and what
it returns (``NotImplemented`` too) is exactly what CPython returns.

Class methods and constructors of builtin types are small models in
``BUILTINS`` too: ``dict.fromkeys``, ``list.__new__``.
"""
import collections
import operator
import types

from ...errors import unsupported
from ..containers.dicts import ConstDictVariable
from ..containers.lists import ListVariable
from ..containers.sets import SetVariable
from ..core import space
from ..core.call_shapes import builtin_base, check_function_shape, real_stand_in
from ..core.base import VariableTracker
from ..core.constant import ConstantVariable, items_of, wrap_constant
from ..core.exceptions import python_operation, raise_in_trace
from ..core.ops import COMPARE_OPS, _dicts_equal, binary_op, compare

DESCRIPTOR_TYPES = (types.MethodDescriptorType, types.WrapperDescriptorType)
# instances of these have no identity or state a call could change: fold on constants
_IMMUTABLE = (int, float, complex, str, bytes, tuple, frozenset, bool, type(None), range)

# A binary slot reached through the descriptor: the operator, when both operands
# are of the slot's own type (where the C function would return NotImplemented
# for another type, the operator would try the other operand instead).
_BINARY_SLOTS = {
    "__add__": operator.add, "__iadd__": operator.iadd, "__mul__": operator.mul, "__imul__": operator.imul,
    "__or__": operator.or_, "__ior__": operator.ior, "__and__": operator.and_, "__iand__": operator.iand,
    "__sub__": operator.sub, "__isub__": operator.isub, "__xor__": operator.xor, "__ixor__": operator.ixor,
    "__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le,
    "__gt__": operator.gt, "__ge__": operator.ge,
}
_REPEAT_SLOTS = {"__mul__", "__imul__"}  # the other operand is an int
_SYMBOLS = {fn: symbol for symbol, fn in COMPARE_OPS.items()}


def is_unbound_builtin_method(fn) -> bool:
    """``dict.get``, ``list.__iadd__``: a method of a builtin type, not bound to an instance."""
    return type(fn) in DESCRIPTOR_TYPES and isinstance(getattr(fn, "__objclass__", None), type)


def joined_items(tx, iterable):
    """The argument of ``str.join`` as it reads it: PySequence_Fast takes every item first
    (``"".join(chain(a, b))``, ``"-".join(map(str, xs))``)."""
    return iterable if space.is_constant_arg(iterable) else ListVariable(items_of(tx, iterable))


def _refused_slot(fn, obj, other):
    """``dict.__or__(d, [])``: a binary slot given an operand it does not take. Run on real
    stand-ins of the two types, it answers NotImplemented (dict_or) or raises (list_concat's
    TypeError) as it would on the values; an operand without a stand-in is not modelled."""
    stand_ins = [real_stand_in(obj), real_stand_in(other)]
    if stand_ins[0] is None or stand_ins[1] is None and not isinstance(other, ConstantVariable):
        unsupported("unsupported_call", f"{fn.__objclass__.__name__}.{fn.__name__} with a "
                                        f"{other.python_type().__name__}")
    with python_operation(f"{fn.__objclass__.__name__}.{fn.__name__}"):
        result = fn(*stand_ins)
    if result is not NotImplemented:
        unsupported("unsupported_call", f"{fn.__objclass__.__name__}.{fn.__name__} with a "
                                        f"{other.python_type().__name__}")
    return ConstantVariable(NotImplemented)


def call_unbound(tx, fn, args, kwargs):
    """``T.name(obj, *args, **kwargs)`` for a builtin type ``T``, as CPython runs it."""
    owner, name = fn.__objclass__, fn.__name__
    if not args:
        check_function_shape(fn, args, kwargs)  # CPython's "unbound method dict.get() needs an argument"
        unsupported("operator_error", f"descriptor '{name}' of '{owner.__name__}' object needs an argument")
    obj, rest = args[0], list(args[1:])
    obj_type = obj.python_type()
    if not issubclass(obj_type, owner):
        unsupported("operator_error", f"descriptor '{name}' for '{owner.__name__}' objects "
                                      f"doesn't apply to a '{obj_type.__name__}' object")
    if owner is dict and isinstance(obj, ConstDictVariable) and getattr(obj_type, name, None) is not fn:
        result = _dict_own_read(tx, obj, name, rest, kwargs)
        if result is not None:
            return result
    if hasattr(obj, "builtin_method"):  # a subclass instance: its builtin part, not its overrides
        base = builtin_base(obj_type)
        if base is not None and getattr(base, name, None) is not fn:
            # `dict.pop(an_ordered_dict, k)`: dict's own function, which leaves the
            # OrderedDict's order list behind (its repr raises then): not modelled
            unsupported("unsupported_call", f"{owner.__name__}.{name} on a {base.__name__}, which overrides it")
        return obj.builtin_method(tx, name, rest, kwargs)
    if owner is object:  # object.__setattr__ is supers.ObjectSlotVariable; the rest is not modelled
        unsupported("unsupported_call", f"object.{name}")
    if name == "join" and owner in (str, bytes) and len(rest) == 1 and not kwargs:
        args = [obj, joined_items(tx, rest[0])]
    values = list(args) + list(kwargs.values())
    if issubclass(owner, _IMMUTABLE) and all(space.is_constant_arg(v) for v in values):
        with python_operation(f"{owner.__name__}.{name}"):
            result = fn(*[space.constant_arg(a) for a in args],
                        **{k: space.constant_arg(v) for k, v in kwargs.items()})
        return wrap_constant(result)
    if getattr(obj_type, name, None) is not fn:
        # the instance's class overrides it: obj.name(...) would run the override, not T's
        unsupported("unsupported_call", f"{owner.__name__}.{name} on a {obj_type.__name__} that overrides it")
    slot = _BINARY_SLOTS.get(name)
    if slot is not None:
        if kwargs or len(rest) != 1:
            unsupported("operator_error", f"{owner.__name__}.{name} takes exactly one argument")
        other = rest[0]
        fits = other.python_type() is int if name in _REPEAT_SLOTS else issubclass(other.python_type(), owner)
        if not fits:  # the C function returns NotImplemented, or raises: its types decide, as on stand-ins
            return _refused_slot(fn, obj, other)
        symbol = _SYMBOLS.get(slot)
        return compare(tx, symbol, obj, other) if symbol else binary_op(tx, slot, obj, other)
    return obj.call_method(tx, name, rest, kwargs)


def _dict_own_read(tx, d, name, rest, kwargs):
    """dict's own ``keys``/``values``/``items``/``__eq__``/``__ne__`` called unbound on a dict
    subclass that overrides them (an OrderedDict), or None where not modelled. The views
    iterate the table (``ConstDictVariable.table_view``); dict_richcompare compares as dicts,
    whatever the order of either (NotImplemented for an operand that is not a dict)."""
    if name in ("keys", "values", "items") and not rest and not kwargs:
        return d.table_view(tx, name)
    if name in ("__eq__", "__ne__") and len(rest) == 1 and not kwargs:
        other = rest[0]
        if not issubclass(other.python_type(), dict):
            return ConstantVariable(NotImplemented)
        if isinstance(other, ConstDictVariable):
            return ConstantVariable(_dicts_equal(tx, d, other, ordered=False) == (name == "__eq__"))
    return None


def _is_none(var) -> bool:
    return var.is_python_constant() and var.as_python_constant() is None


class DescriptorGetVariable(VariableTracker):
    """``list.append.__get__``: the descriptor protocol of a method_descriptor or
    wrapper_descriptor (descrobject.c's method_get, wrapperdescr_get, behind wrap_descr_get)."""

    def __init__(self, fn, **kwargs):
        super().__init__(**kwargs)
        self.fn = fn

    def python_type(self):
        return types.MethodWrapperType

    def call(self, tx, args, kwargs):
        """``__get__(obj, type=None)``: None for both is a TypeError; no instance gives the
        descriptor itself (descr_check); an instance of another type is descr_check's TypeError;
        an instance of its type binds it (``BoundDescriptorVariable``)."""
        fn = self.fn
        if kwargs or not 1 <= len(args) <= 2:
            check_function_shape(fn.__get__, args, kwargs)
            unsupported("operator_error", f"{fn.__name__}.__get__ with these arguments")
        obj, owner = args[0], args[1] if len(args) == 2 else ConstantVariable(None)
        if _is_none(obj):
            if _is_none(owner):
                raise_in_trace(TypeError, "__get__(None, None) is invalid")
            return tx.wrap(fn)
        kind = obj.python_type()
        if not issubclass(kind, fn.__objclass__):
            raise_in_trace(TypeError, f"descriptor '{fn.__name__}' for '{fn.__objclass__.__name__}' objects "
                                      f"doesn't apply to a '{kind.__name__}' object")
        return BoundDescriptorVariable(fn, obj)

    def reconstruct(self, cg):
        cg.load_const(self.fn.__get__)


class BoundDescriptorVariable(VariableTracker):
    """``list.append.__get__(obj)``: the C function bound to ``obj`` (a builtin method, or a
    method-wrapper for a slot); calling it is ``list.append(obj, ...)``, which runs the
    type's own function whatever ``obj``'s class overrides (``call_unbound``)."""

    def __init__(self, fn, obj, **kwargs):
        super().__init__(**kwargs)
        self.fn, self.obj = fn, obj

    def python_type(self):
        if type(self.fn) is types.MethodDescriptorType:
            return types.BuiltinMethodType
        return types.MethodWrapperType

    def call(self, tx, args, kwargs):
        return call_unbound(tx, self.fn, [self.obj] + list(args), kwargs)

    def getattr(self, tx, name):
        if name == "__self__":
            return self.obj
        if name in ("__name__", "__qualname__"):  # the descriptor's (meth_get__qualname__)
            return ConstantVariable(getattr(self.fn, name))
        return super().getattr(tx, name)

    def reconstruct(self, cg):
        cg.call_const(self.fn.__get__, [self.obj])


def _fromkeys(cls):
    def model(tx, iterable, value=None):
        """``dict.fromkeys(iterable, value=None)``: a new dict, each key mapped to the one ``value``."""
        value = value if value is not None else ConstantVariable(None)
        result = ConstDictVariable([], py_type=cls)
        if cls is collections.defaultdict:  # defaultdict.fromkeys: no default_factory
            result.default_factory = ConstantVariable(None)
        for key in items_of(tx, iterable):
            result.setitem(tx, key, value)
        return result
    return model


def _empty(kind):
    def model(tx, cls, *args, **kwargs):
        """``list.__new__(list)``: an empty instance (``__init__`` fills it, not ``__new__``);
        of a Python subclass too (``list.__new__(Tags)``, a ``__new__`` calling its base's):
        the subclass's tracker, as ``Tags()`` makes it, without its ``__init__``."""
        target = cls.as_python_constant() if cls.is_python_constant() else None
        if target is kind:
            return {list: ListVariable, dict: ConstDictVariable, set: SetVariable}[kind]([])
        if isinstance(target, type) and issubclass(target, kind) and not space.is_prototype(target):
            if kind is dict and space.is_user_dict_class(target):
                return space.UserDictVariable([], target)
            if kind is not dict and space.is_user_container_class(target):
                return space.new_user_container_instance(target)
        unsupported("unsupported_call", f"{kind.__name__}.__new__ of a subclass")
    return model


def _frozenset_new(tx, cls, *args, **kwargs):
    """``frozenset.__new__(cls, iterable)``: what ``super().__new__(cls, members)`` in a
    frozenset subclass's own ``__new__`` returns (frozenset_new)."""
    target = cls.as_python_constant() if cls.is_python_constant() else None
    if target is frozenset:
        if kwargs or len(args) > 1:
            raise_in_trace(TypeError, "frozenset() takes no keyword arguments" if kwargs
                           else f"frozenset expected at most 1 argument, got {len(args)}")
        return SetVariable(items_of(tx, args[0]) if args else [], py_type=frozenset, tx=tx)
    if space.is_user_frozenset_class(target) and not space.is_prototype(target):
        return space.new_user_frozenset(tx, target, args, kwargs)
    unsupported("unsupported_call", "frozenset.__new__ of this class")


MODELS = {
    dict.fromkeys: _fromkeys(dict),
    collections.OrderedDict.fromkeys: _fromkeys(collections.OrderedDict),
    collections.defaultdict.fromkeys: _fromkeys(collections.defaultdict),
    list.__new__: _empty(list),
    dict.__new__: _empty(dict),
    set.__new__: _empty(set),
    frozenset.__new__: _frozenset_new,
}
