"""What a tracker of a user subclass of a builtin container adds to the builtin's tracker.

``UserDictVariable`` (dict, OrderedDict, defaultdict subclasses) and the list
and set subclass trackers of ``user_containers.py`` are two things at once,
as in CPython: the container (the builtin tracker they extend) and an object
(attributes in ``attrs``, the class's functions and properties). This mixin
is the object half, looked up the way ``PyObject_GenericGetAttr`` and the
type slots do: a Python function the subclass defines (``_override(name)``)
is inlined with ``self`` bound to the tracker; a method it inherits from the
builtin runs the builtin model (``builtin_method``, defined by each tracker).
"""
import types

from ..callables.functions import UserFunctionVariable
from ..core.base import BoundMethodVariable
from ..core.base import type_lookup
from ..core.constant import ConstantVariable
from ..core.ops import dunder_name
from ..objects.user_defined import lookup_attribute


class BuiltinSubclassMixin:
    """Mixed in before the builtin tracker: ``class UserXVariable(BuiltinSubclassMixin, XVariable)``."""

    def _override(self, name):
        """The Python function the class defines for ``name`` above its builtin base, or None."""
        raise NotImplementedError

    def _instance_attr(self, tx, name):
        """The instance attribute ``name`` (a tracker), or None."""
        return self.attrs.get(name)

    def user_slot(self, name):
        """The Python function the class defines for slot ``name`` (ops.py asks for ``__eq__``)."""
        return self._override(name)

    def initialise(self, tx, args, kwargs):
        """The ``__init__`` of ``cls(*args, **kwargs)`` on this fresh instance: the class's, or the builtin's."""
        init = self._override("__init__")
        if init is not None:
            self._inline(tx, init, args, kwargs)
        else:
            self.builtin_method(tx, "__init__", args, kwargs)
        return self

    def _inline(self, tx, fn, args, kwargs=None):
        return UserFunctionVariable(fn).call(tx, [self] + list(args), kwargs or {})

    def getattr(self, tx, name):
        user = self._override("__getattribute__")
        if user is not None:  # slot_tp_getattr_hook: the subclass's Python override runs on every read
            return self._inline(tx, user, [ConstantVariable(name)])
        return self.generic_getattr(tx, name)

    def generic_getattr(self, tx, name):
        """``object.__getattribute__(self, name)``: the lookup without an override."""
        found, attr = type_lookup(self.python_type(), name)
        if found and not isinstance(attr, (types.FunctionType, property, staticmethod, classmethod)) \
                and callable(attr) and name not in self.attrs:
            return BoundMethodVariable(self, name)  # a builtin method of the base
        return lookup_attribute(tx, self, name, lambda n: self._instance_attr(tx, n))

    def setattr(self, tx, name, value):
        user = self._override("__setattr__")
        if user is not None:
            self._inline(tx, user, [ConstantVariable(name), value])
            return
        self.builtin_method(tx, "__setattr__", [ConstantVariable(name), value], {})

    def call_method(self, tx, name, args, kwargs):
        user = self._override(name)
        if user is not None:
            return self._inline(tx, user, args, kwargs)
        return self.builtin_method(tx, name, args, kwargs)

    def binop(self, tx, fn, other, reflected):
        """A dunder the subclass defines (``__eq__``, ``__or__``) runs; else the builtin's operator."""
        user = self._override(dunder_name(fn, reflected) or "")
        if user is not None:
            return self._inline(tx, user, [other])
        return super().binop(tx, fn, other, reflected)

    def truth(self, tx):
        if self._override("__bool__") or self._override("__len__"):
            return self.length(tx) > 0
        return bool(self.items)
