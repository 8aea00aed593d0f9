"""``super()``, and ``object``'s own slots called directly: lookups that skip an override.

``SuperVariable`` follows ``super(cls, obj)``: the attribute is looked up in
``obj``'s MRO after ``cls`` and bound to ``obj``. Reached that way, a builtin
base's method (``super().__setitem__`` in a dict subclass) is the tracker's
own builtin model, and ``object.__setattr__`` / ``object.__getattribute__`` set
or read past the class's override, as ``ObjectSlotVariable`` does when they
are called unbound (``object.__setattr__(self, name, value)``).
"""
import types

from torch import nn

from ... import pyver
from ...errors import FramegraphError, unsupported
from ..callables.functions import UserFunctionVariable, UserMethodVariable
from ..core import space
from ..core.base import VariableTracker
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_in_trace
from .user_defined import UserDefinedClassVariable, UserDefinedObjectVariable, bind_class_attribute


@space.register
class SuperVariable(VariableTracker):
    """``super(cls, obj)``: attribute lookup starting after ``cls`` in obj's MRO."""

    def __init__(self, cls, obj, **kwargs):
        super().__init__(**kwargs)
        self.cls, self.obj = cls, obj

    @classmethod
    def create(cls, tx, args):
        """``super(...)`` as ``super_init`` checks it: at most two arguments, a type first."""
        if len(args) > 2:
            raise_in_trace(TypeError, f"super() expected at most 2 arguments, got {len(args)}")
        if len(args) == 1:
            unsupported("unsupported_call", "super() with one argument (an unbound super object)")
        if args:
            klass = args[0].as_python_constant() if args[0].is_python_constant() else None
            if not isinstance(klass, type):
                raise_in_trace(TypeError, f"super() argument 1 must be a type, not {args[0].python_type().__name__}")
            return cls(klass, _checked(klass, args[1]))
        klass, obj = tx.zero_arg_super()
        return cls(klass, _checked(klass, obj))

    def getattr(self, tx, name):
        obj_type = self.obj.python_type()
        if isinstance(self.obj, UserDefinedClassVariable):
            obj_type = self.obj.cls
        elif issubclass(obj_type, type) and self.obj.is_python_constant():
            obj_type = self.obj.as_python_constant()  # super().__new__(cls) with cls a class of any tracker
        mro, meta = obj_type.__mro__, False
        if mro is None:  # a class inside its own creation (its metaclass's mro() runs now)
            unsupported("unsupported_call", f"super() on {obj_type.__name__}, whose MRO is not made yet")
        if self.cls not in mro and isinstance(self.obj, UserDefinedClassVariable) \
                and self.cls in type(obj_type).__mro__:  # super(Meta, cls) in a metaclass: type(cls)'s MRO
            mro, meta = type(obj_type).__mro__, True
        if self.cls not in mro:  # CPython: TypeError, obj must be an instance or subtype of type
            unsupported("unsupported_call", f"super({self.cls.__name__}, {self.obj}): not in its MRO")
        for klass in mro[mro.index(self.cls) + 1:]:
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                if attr is object.__init__ or attr is nn.Module.__init__ and name == "__init__":
                    return _NoOp()
                if attr is _OBJECT_INIT_SUBCLASS:  # the end of a chain of __init_subclass__ hooks
                    owner = getattr(self.obj, "cls", None)
                    return _NoOp(f"{getattr(owner, '__name__', klass.__name__)}.__init_subclass__()")
                if _is_builtin_method(attr) and hasattr(self.obj, "builtin_method") \
                        and (meta or not isinstance(self.obj, UserDefinedClassVariable)):
                    return _BuiltinMethod(self.obj, name)  # super().__setitem__ in a dict subclass
                if attr in OBJECT_SLOTS and isinstance(self.obj, UserDefinedObjectVariable):
                    return _BuiltinMethod(self.obj, name)
                if isinstance(self.obj, UserDefinedClassVariable) and not meta:
                    return _through_class(tx, self.obj, attr)
                return bind_class_attribute(tx, self.obj, attr, None)
        unsupported("unsupported_attribute", f"super().{name}")


def _checked(klass, obj):
    """``obj`` as ``supercheck`` accepts it: an instance of ``klass``, or a subclass of it;
    anything else is its TypeError (``X.meth(cell)`` calling ``super()``)."""
    try:
        kind = obj.python_type()
    except FramegraphError:
        return obj  # a tracker that does not know its type: the attribute lookup decides
    if isinstance(obj, UserDefinedClassVariable) or issubclass(kind, type) and obj.is_python_constant():
        as_class = obj.cls if isinstance(obj, UserDefinedClassVariable) else obj.as_python_constant()
        if isinstance(as_class, type) and issubclass(as_class, klass):
            return obj
    if isinstance(kind, type) and issubclass(kind, klass):
        return obj
    if "__class__" in getattr(kind, "__dict__", {}) or not isinstance(kind, type):
        return obj  # a __class__ the class overrides: supercheck reads it (not modelled here)
    as_class = obj.cls if isinstance(obj, UserDefinedClassVariable) else (
        obj.as_python_constant() if issubclass(kind, type) and obj.is_python_constant() else None)
    if isinstance(as_class, type):
        raise_in_trace(TypeError, pyver.super_check_message(True, as_class.__name__, klass))
    raise_in_trace(TypeError, pyver.super_check_message(False, kind.__name__, klass))


def _through_class(tx, class_var, attr):
    """``super(C, cls).name`` with ``cls`` a class: ``attr.__get__(None, cls)`` (super_getattro
    passes no instance when the object is the start type): a classmethod binds the class, a
    function stays a plain function."""
    if isinstance(attr, classmethod) and isinstance(attr.__func__, types.FunctionType):
        return UserMethodVariable(UserFunctionVariable(attr.__func__), class_var)
    if isinstance(attr, staticmethod):
        attr = attr.__func__
    if isinstance(attr, types.FunctionType) or not hasattr(type(attr), "__get__"):
        return tx.wrap(attr)
    unsupported("unsupported_attribute", f"super().{getattr(attr, '__name__', attr)} of a class: "
                                         f"a {type(attr).__name__}")


def _is_builtin_method(attr) -> bool:
    return isinstance(attr, (types.MethodDescriptorType, types.WrapperDescriptorType,
                             types.ClassMethodDescriptorType, types.BuiltinFunctionType))


class _BuiltinMethod(VariableTracker):
    """A builtin base's method reached through ``super()``: the tracker's builtin model."""

    def __init__(self, obj, name, **kwargs):
        super().__init__(**kwargs)
        self.obj, self.name = obj, name

    def call(self, tx, args, kwargs):
        if self.name == "__getattribute__" and hasattr(self.obj, "generic_getattr"):
            return self.obj.generic_getattr(tx, args[0].as_python_constant())
        if hasattr(self.obj, "builtin_method"):
            return self.obj.builtin_method(tx, self.name, args, kwargs)
        return self.obj.object_setattr(tx, args[0].as_python_constant(), args[1])


OBJECT_SLOTS = (object.__setattr__, object.__getattribute__)
space.register(OBJECT_SLOTS, 'OBJECT_SLOTS')


@space.register
class ObjectSlotVariable(VariableTracker):
    """``object.__setattr__`` or ``object.__getattribute__`` called unbound, as
    ``original_setattr(self, name, value)`` in a ``__setattr__`` override that
    saved the class's previous one (huggingface_hub's strict dataclasses): the
    same as ``super().__setattr__(name, value)`` on the object passed first."""

    def __init__(self, slot, **kwargs):
        super().__init__(**kwargs)
        self.slot = slot

    def call(self, tx, args, kwargs):
        obj = args[0] if args else None
        if kwargs or not (isinstance(obj, UserDefinedObjectVariable) or hasattr(obj, "builtin_method")):
            unsupported("unsupported_call", f"object.{self.slot.__name__} on {obj}")
        return _BuiltinMethod(obj, self.slot.__name__).call(tx, list(args[1:]), {})

    def python_type(self):
        return type(self.slot)

    def is_python_constant(self):
        return True

    def as_python_constant(self):
        return self.slot


_OBJECT_INIT_SUBCLASS = object.__dict__["__init_subclass__"]


class _NoOp(VariableTracker):
    """``object.__init__`` (or ``object.__init_subclass__``) reached through super():
    nothing to do; ``noargs``: the name of a METH_NOARGS method, which refuses arguments."""

    def __init__(self, noargs=None, **kwargs):
        super().__init__(**kwargs)
        self.noargs = noargs

    def call(self, tx, args, kwargs):
        if self.noargs is not None and (args or kwargs):
            raise_in_trace(TypeError, f"{self.noargs} takes no keyword arguments" if kwargs
                           else f"{self.noargs} takes no arguments ({len(args)} given)")
        return ConstantVariable(None)
