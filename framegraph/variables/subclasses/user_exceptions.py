"""Instances of user exception classes made in the trace, as libraries write them::

    class ConfigError(ValueError):
        def __init__(self, key, hint=""):
            super().__init__(f"bad key {key!r}")
            self.key, self.hint = key, hint

Such an object is an exception (``args``, the chaining fields, what ``except``
matches: the ``ExceptionVariable`` it extends) and an object (attributes in
``attrs``, the class's methods and properties: ``BuiltinSubclassMixin``). As in
CPython, ``BaseException.__new__`` stores the call's arguments in ``args``
before the class's ``__init__`` runs; a Python ``__init__`` is inlined with
``self`` bound to this tracker, and ``super().__init__(msg)`` is BaseException's,
which stores ``args`` again. ``str()``/``repr()`` inline the class's Python
``__str__``/``__repr__`` or read ``args`` as BaseException's do. After the
graph the real object is rebuilt from its final state without running user
code: ``cls.__new__(cls)``, ``args``, ``object.__setattr__`` for each attribute.
"""
import types

from ...errors import unsupported
from ..core import space
from ..core.base import type_lookup
from ..core.constant import ConstantVariable
from ..core.exceptions import ExceptionVariable, UNKNOWN_CONTEXT, raise_in_trace
from .builtin_subclass import BuiltinSubclassMixin

# BaseException's data descriptors: found on the type before the instance's __dict__
_BASE_FIELDS = ("args", "__cause__", "__context__", "__suppress_context__", "__traceback__")


def _user_classes(cls):
    """The classes of ``cls``'s MRO written in Python (above the builtin exception bases)."""
    return [klass for klass in cls.__mro__ if klass.__module__ != "builtins"]


@space.register
def is_user_exception_class(cls) -> bool:
    """A Python subclass of a builtin exception whose instances BaseException's C ``__new__``
    makes with a plain ``__dict__`` (no Python ``__new__``, no ``__slots__``, no metaclass)."""
    user = _user_classes(cls)
    return bool(user) and type(cls) is type and not any(
        "__new__" in klass.__dict__ or "__slots__" in klass.__dict__ for klass in user)


class UserExceptionVariable(BuiltinSubclassMixin, ExceptionVariable):
    """An instance of a user exception class, made in the trace."""

    def __init__(self, cls, args, **kwargs):
        ExceptionVariable.__init__(self, cls, args, **kwargs)
        self.attrs = {}

    def _override(self, name):
        for klass in _user_classes(self.cls):
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                return attr if isinstance(attr, types.FunctionType) else None
        return None

    def _user_defines(self, name) -> bool:
        return any(name in klass.__dict__ for klass in _user_classes(self.cls))

    def _check_plain(self, slot, what):
        if self._override(slot) is not None and slot != "__init__":  # args are kept here, whatever __init__ did
            unsupported("unsupported_attribute", f"{what} of a {self.cls.__name__} ({slot} is written in Python)")

    def real_copy(self) -> BaseException:
        """A real instance with the same ``args``, made without running the class's ``__init__``."""
        values = []
        for arg in self.args:
            if not arg.is_python_constant():
                unsupported("unsupported_value", f"str() of a {self.cls.__name__} with argument {arg}")
            values.append(arg.as_python_constant())
        copy = self.cls.__new__(self.cls)
        copy.args = tuple(values)
        return copy

    def getattr(self, tx, name):
        if name in _BASE_FIELDS and not self._user_defines(name):
            return ExceptionVariable.getattr(self, tx, name)
        if name in self.attrs or self._user_defines(name) or self._override("__getattr__"):
            return BuiltinSubclassMixin.getattr(self, tx, name)
        return ExceptionVariable.getattr(self, tx, name)

    def hasattr(self, tx, name):
        if name in self.attrs:
            return True
        if self._override("__getattr__") or self._override("__getattribute__"):
            return None  # the class's Python code decides: traced by getattr
        return type_lookup(self.cls, name)[0]  # the rest of the instance is its class's (not its metatype's)

    def builtin_method(self, tx, name, args, kwargs):
        """BaseException's own methods, reached past the class's (``super().__init__(msg)``)."""
        if name == "__init__":  # BaseException_init: args is what it was called with
            if kwargs:
                raise_in_trace(TypeError, f"{self.cls.__name__}() takes no keyword arguments")
            self.args = list(args)
            return ConstantVariable(None)
        if name == "__setattr__":
            attr, value = args[0].as_python_constant(), args[1]
            if attr == "args":  # BaseException_set_args: any sequence, stored as a tuple
                self.args = list(value.unpack(tx))
            elif attr in _BASE_FIELDS:
                ExceptionVariable.setattr(self, tx, attr, value)
            else:
                self.attrs[attr] = value
            return ConstantVariable(None)
        if name == "__str__" and not args and not kwargs:
            return ConstantVariable(BaseException.__str__(self.real_copy()))
        if name == "__repr__" and not args and not kwargs:
            return ConstantVariable(BaseException.__repr__(self.real_copy()))
        if name == "with_traceback":
            return ExceptionVariable.call_method(self, tx, name, args, kwargs)
        unsupported("unsupported_call", f"{self.cls.__name__}.{name}: BaseException's method")

    def setattr(self, tx, name, value):
        if self.source is not None:
            unsupported("unsupported_attribute", f"setting {self.cls.__name__}.{name}")
        BuiltinSubclassMixin.setattr(self, tx, name, value)

    def str(self, tx):
        user = self._override("__str__")
        return self._inline(tx, user, []) if user is not None else self.builtin_method(tx, "__str__", [], {})

    def repr(self, tx):
        user = self._override("__repr__")
        return self._inline(tx, user, []) if user is not None else self.builtin_method(tx, "__repr__", [], {})

    def truth(self, tx):
        user = self._override("__bool__")
        return self._inline(tx, user, []).truth(tx) if user is not None else True

    def reconstruct(self, cg):
        if self.source is not None:
            return cg.load_source(self.source)
        if self.tb_frames:
            unsupported("graph_output", f"rebuilding a {self.cls.__name__} with its traceback")
        if self.cause is not None or self.context not in (None, UNKNOWN_CONTEXT) or self.suppress_context:
            unsupported("graph_output", f"rebuilding a {self.cls.__name__} with its chained exceptions")
        cg.call_const(rebuild_user_exception, [ConstantVariable(self.cls), ConstantVariable(len(self.args)),
                                               ConstantVariable(tuple(self.attrs))] + self.args
                      + list(self.attrs.values()))

    def __repr__(self):
        return f"UserExceptionVariable({self.cls.__name__})"


@space.register
def new_user_exception(tx, cls, args, kwargs):
    """``cls(*args, **kwargs)``: BaseException_new stores ``args``, then ``__init__`` runs."""
    exc = UserExceptionVariable(cls, args)
    return exc.initialise(tx, args, kwargs)


def rebuild_user_exception(cls, nargs, names, *values):
    """The real object of a UserExceptionVariable made in the trace, from its final state."""
    exc = cls.__new__(cls)
    exc.args = values[:nargs]
    for name, value in zip(names, values[nargs:]):
        object.__setattr__(exc, name, value)
    return exc
