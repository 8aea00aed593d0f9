"""User classes and their instances: attribute lookup the way CPython does it.

``lookup_attribute`` follows ``PyObject_GenericGetAttr``: a data descriptor on
the type (a ``property``) wins, then the instance ``__dict__``, then other
class attributes (functions bind to the instance, ``staticmethod`` and
``classmethod`` unwrap), then ``__getattr__``. Methods and property getters
are inlined.

``UserDefinedObjectVariable`` is either an object from outside the frame
(guarded by type; its attributes are read through sources) or a new object
created during the trace (``Point(1, 2)``: ``__init__`` is inlined and the
attributes live in ``attrs``). ``SuperVariable`` models ``super()``.
Namedtuple classes build ``NamedTupleVariable``s; dataclasses are ordinary
classes whose generated ``__init__`` is inlined like any other.
"""
import inspect
import types

from torch import nn

from ..graph_breaks import unsupported
from ..sources import AttrSource, TypeSource
from .base import VariableTracker
from .constant import ConstantVariable
from .ops import dunder_name


def _static(cls, name):
    """(True, attribute) from the MRO without running descriptors, or (False, None)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return True, klass.__dict__[name]
    return False, None


def bind_class_attribute(tx, obj, attr, source, guard=False):
    """The value of class attribute ``attr`` read through instance ``obj``.

    Plain class-level values (``factor = 2.0``) are guarded by value when
    ``guard`` (user classes); functions are covered by the instance's type guard.
    """
    from .builder import wrap_value
    from .functions import UserFunctionVariable, UserMethodVariable

    if isinstance(attr, property):
        if attr.fget is None:
            unsupported("unsupported_attribute", "property without a getter")
        return UserFunctionVariable(attr.fget).call(tx, [obj], {})
    if isinstance(attr, staticmethod):
        return wrap_value(tx, attr.__func__)
    if isinstance(attr, classmethod):
        return UserMethodVariable(UserFunctionVariable(attr.__func__), wrap_value(tx, obj.python_type()))
    if isinstance(attr, types.FunctionType):
        return UserMethodVariable(UserFunctionVariable(attr, source=source), obj)
    if hasattr(type(attr), "__get__") and not isinstance(attr, type):
        unsupported("unsupported_attribute", f"descriptor {type(attr).__name__}")
    return wrap_value(tx, attr, source, guard=guard)


def _user_class(cls) -> bool:
    from .builder import STABLE_MODULES

    return (cls.__module__ or "").split(".")[0] not in STABLE_MODULES


def lookup_attribute(tx, obj, name, instance_dict_lookup):
    """Generic attribute lookup; ``instance_dict_lookup(name)`` -> tracker or None."""
    cls = obj.python_type()
    found, attr = _static(cls, name)
    source = AttrSource(TypeSource(obj.source), name) if obj.source is not None and found else None
    if found and isinstance(attr, property):
        return bind_class_attribute(tx, obj, attr, source)
    value = instance_dict_lookup(name)
    if value is not None:
        return value
    if found:
        return bind_class_attribute(tx, obj, attr, source, guard=_user_class(cls))
    if name == "__class__":
        from .builder import wrap_value

        return wrap_value(tx, cls)
    found, getattr_fn = _static(cls, "__getattr__")
    if found and getattr_fn is not nn.Module.__getattr__:
        return bind_class_attribute(tx, obj, getattr_fn, None).call(tx, [ConstantVariable(name)], {})
    unsupported("unsupported_attribute", f"{cls.__name__!s} object has no attribute {name!r}")


class UserDefinedClassVariable(VariableTracker):
    def __init__(self, cls, **kwargs):
        super().__init__(**kwargs)
        self.cls = cls
        self.identity = cls

    def python_type(self):
        return type(self.cls)

    def as_python_constant(self):
        return self.cls

    def getattr(self, tx, name):
        from .builder import wrap_value

        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.cls, name))
        found, attr = _static(self.cls, name)
        if not found:
            unsupported("unsupported_attribute", f"{self.cls.__name__}.{name}")
        if isinstance(attr, classmethod):
            from .functions import UserFunctionVariable, UserMethodVariable

            return UserMethodVariable(UserFunctionVariable(attr.__func__), self)
        if isinstance(attr, staticmethod):
            attr = attr.__func__
        source = AttrSource(self.source, name) if self.source is not None else None
        return wrap_value(tx, attr, source, guard=False)

    def hasattr(self, tx, name):
        return hasattr(self.cls, name)

    def call(self, tx, args, kwargs):
        cls = self.cls
        if _is_namedtuple(cls):
            from .lists import NamedTupleVariable
            from .builder import wrap_value

            bound = inspect.signature(cls).bind(*args, **kwargs)
            bound.apply_defaults()
            items = [v if isinstance(v, VariableTracker) else wrap_value(tx, v)
                     for v in bound.arguments.values()]
            return NamedTupleVariable(items, cls)
        if issubclass(cls, nn.Module) or issubclass(cls, BaseException):
            unsupported("unsupported_call", f"creating a {cls.__name__} inside compiled code")
        if cls.__new__ is not object.__new__ or type(cls) is not type or "__slots__" in cls.__dict__:
            unsupported("unsupported_call", f"creating a {cls.__name__} (custom __new__/metaclass/slots)")
        obj = UserDefinedObjectVariable(None, cls)
        found, init = _static(cls, "__init__")
        if init is object.__init__:
            if args or kwargs:
                unsupported("operator_error", f"{cls.__name__}() takes no arguments")
        else:
            bind_class_attribute(tx, obj, init, None).call(tx, args, kwargs)
        return obj

    def __repr__(self):
        return f"UserDefinedClassVariable({self.cls.__qualname__})"


def _is_namedtuple(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


class UserDefinedObjectVariable(VariableTracker):
    def __init__(self, value, cls=None, **kwargs):
        super().__init__(**kwargs)
        self.value = value
        self.cls = cls if cls is not None else type(value)
        self.attrs = {}
        self.identity = value if value is not None else self

    def python_type(self):
        return self.cls

    @property
    def mutable(self):
        return self.value is None

    def _instance_attr(self, tx, name):
        if self.value is None or name in self.attrs:  # attrs: written in this trace
            return self.attrs.get(name)
        d = getattr(self.value, "__dict__", None)
        if d is None or name not in d:
            return None
        from .builder import wrap_value

        return wrap_value(tx, d[name], AttrSource(self.source, name) if self.source else None)

    def getattr(self, tx, name):
        return lookup_attribute(tx, self, name, lambda n: self._instance_attr(tx, n))

    def hasattr(self, tx, name):
        if self.value is not None:
            return hasattr(self.value, name)
        return name in self.attrs or _static(self.cls, name)[0]

    def setattr(self, tx, name, value):
        self.check_mutable(f"setting .{name}", tx)
        found, attr = _static(self.cls, name)
        if found and isinstance(attr, property):
            if attr.fset is None:
                unsupported("operator_error", f"can't set attribute {name!r}")
            from .functions import UserFunctionVariable

            UserFunctionVariable(attr.fset).call(tx, [self, value], {})
            return
        if _static(self.cls, "__setattr__")[1] is not object.__setattr__:
            unsupported("unsupported_attribute", f"{self.cls.__name__} overrides __setattr__")
        self.attrs[name] = value

    def call(self, tx, args, kwargs):
        return self.call_method(tx, "__call__", args, kwargs)

    def _dunder(self, tx, name, args):
        found, attr = _static(self.cls, name)
        if not found or not isinstance(attr, types.FunctionType):
            return NotImplemented
        return bind_class_attribute(tx, self, attr, None).call(tx, args, {})

    def binop(self, tx, fn, other, reflected):
        return self._dunder(tx, dunder_name(fn, reflected), [other])

    def truth(self, tx):
        for name in ("__bool__", "__len__"):
            result = self._dunder(tx, name, [])
            if result is not NotImplemented:
                return result.truth(tx)
        return True

    def length(self, tx):
        result = self._dunder(tx, "__len__", [])
        if result is NotImplemented:
            unsupported("operator_error", f"object of type {self.cls.__name__} has no len()")
        return result.as_python_constant()

    def getitem(self, tx, key):
        result = self._dunder(tx, "__getitem__", [key])
        if result is NotImplemented:
            unsupported("operator_error", f"{self.cls.__name__} is not subscriptable")
        return result

    def unpack(self, tx):
        result = self._dunder(tx, "__iter__", [])
        if result is NotImplemented:
            unsupported("operator_error", f"{self.cls.__name__} is not iterable")
        return result.unpack(tx)

    def reconstruct(self, cg):
        if self.source is not None:
            return super().reconstruct(cg)
        unsupported("graph_output", f"returning a {self.cls.__name__} created inside compiled code")

    def __repr__(self):
        return f"UserDefinedObjectVariable({self.cls.__name__})"


class SuperVariable(VariableTracker):
    """``super(cls, obj)``: attribute lookup starting after ``cls`` in obj's MRO."""

    def __init__(self, cls, obj, **kwargs):
        super().__init__(**kwargs)
        self.cls, self.obj = cls, obj

    @classmethod
    def create(cls, tx, args):
        if args:
            return cls(args[0].as_python_constant(), args[1])
        klass, obj = tx.zero_arg_super()
        return cls(klass, obj)

    def getattr(self, tx, name):
        obj_type = self.obj.python_type()
        if isinstance(self.obj, UserDefinedClassVariable):
            obj_type = self.obj.cls
        mro = obj_type.__mro__
        for klass in mro[mro.index(self.cls) + 1:]:
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                if attr is object.__init__ or attr is nn.Module.__init__ and name == "__init__":
                    return _NoOp()
                return bind_class_attribute(tx, self.obj, attr, None)
        unsupported("unsupported_attribute", f"super().{name}")


class _NoOp(VariableTracker):
    """``object.__init__`` reached through super(): nothing to do."""

    def call(self, tx, args, kwargs):
        return ConstantVariable(None)
