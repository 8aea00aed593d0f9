"""Operations on a class that its metaclass defines: ``E(1)``, ``E['A']``, ``len(E)``.

A class is an instance of its metaclass, so CPython runs an operator on a
class through the metaclass's slots: ``E(1)`` is ``type(E).__call__(E, 1)``,
``E['A']`` is ``type(E).__getitem__(E, 'A')`` (before any
``__class_getitem__``), ``for m in E`` is ``type(E).__iter__(E)``, and
``E.name`` is ``type.__getattribute__`` (a data descriptor of the metaclass,
then the class's MRO, then the metaclass's other attributes, then its
``__getattr__``). A metaclass written in Python (``enum.EnumType``, a user's
singleton or registry metaclass) fills those slots with Python functions, and
the tracer inlines them with the class as ``self``, which is all CPython does;
``EnumType`` needs nothing of its own beyond that.

Only the Python layers of the metaclass's MRO are searched (``meta_attribute``
stops at ``type``): ``type``'s own C slots are the tracker's models (its
default ``call``, ``getattr``...). ``super().__call__(*args)`` in a metaclass
reaches ``type.__call__``, which is ``builtin_method`` of the class tracker.

A user metaclass's method is guarded by identity through ``type(cls).name``
(``Meta.__call__ = other`` later must not reuse the graph); the standard
library's (``enum``, ``abc``) are taken as fixed, as their functions are
elsewhere (``STABLE_MODULES``).
"""
import types

from ...errors import unsupported
from ...guards.sources import AttrSource, TypeSource
from ..callables.functions import UserFunctionVariable
from ..core import space
from ..core.base import VariableTracker, guard_identity, user_code
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_in_trace
from ..iteration.object_iteration import iterator_of


def meta_attribute(cls, name, tx=None):
    """(True, attribute) from the metaclass layers written in Python (those before
    ``type`` in ``type(cls).__mro__``), without running descriptors, or (False, None).
    With ``tx``, this trace's writes to those layers come first (a tracker)."""
    layers = []
    for klass in type(cls).__mro__:
        if klass is type or klass is object:
            break
        layers.append(klass)
    if tx is not None and layers:
        found, attr = space.class_attr(tx, type(cls), name)
        owner = next((k for k in type(cls).__mro__ if name in k.__dict__), None)
        if found and (isinstance(attr, VariableTracker) or owner in layers):
            return True, attr
        return False, None
    for klass in layers:
        if name in klass.__dict__:
            return True, klass.__dict__[name]
    return False, None


def _stable(meta) -> bool:
    return not user_code(meta)


def _guard(tx, class_var, name, attr):
    """``type(cls).name`` is still this function, for a user metaclass."""
    if class_var.source is not None and not _stable(type(class_var.cls)):
        guard_identity(tx, attr, AttrSource(TypeSource(class_var.source), name))


def call_meta(tx, class_var, name, args, kwargs=None):
    """``type(cls).name(cls, *args)`` with the metaclass's Python function, inlined;
    NotImplemented when the metaclass has none (``type``'s own slot applies)."""
    found, attr = meta_attribute(class_var.cls, name, tx)
    if not found:
        return NotImplemented
    if isinstance(attr, VariableTracker):  # written in this trace (class_attrs.py)
        return attr.call(tx, [class_var] + list(args), kwargs or {})
    if not isinstance(attr, types.FunctionType):
        unsupported("unsupported_call", f"{type(class_var.cls).__name__}.{name} of {class_var.cls.__name__} "
                                        f"(a {type(attr).__name__})")
    _guard(tx, class_var, name, attr)
    return space.bind_class_attribute(tx, class_var, attr, None).call(tx, list(args), kwargs or {})


def meta_data_descriptor(tx, class_var, name):
    """``type.__getattribute__``'s first step: a data descriptor of the metaclass
    (``EnumType.__members__``, a property) wins over the class's own attributes.
    Its result, or None when there is none."""
    found, attr = meta_attribute(class_var.cls, name, tx)
    if not found or isinstance(attr, VariableTracker) or not hasattr(type(attr), "__set__") \
            and not hasattr(type(attr), "__delete__"):
        return None
    if type(attr) is not property or not isinstance(attr.fget, types.FunctionType):
        unsupported("unsupported_attribute", f"{class_var.cls.__name__}.{name}: a {type(attr).__name__} "
                                             "of its metaclass")
    _guard(tx, class_var, name, attr)
    return UserFunctionVariable(attr.fget).call(tx, [class_var], {})


def meta_fallback(tx, class_var, name):
    """``type.__getattribute__``'s last steps, after the class's MRO has no ``name``:
    the metaclass's attribute (a method bound to the class), else its Python
    ``__getattr__``. None when the metaclass has neither."""
    found, attr = meta_attribute(class_var.cls, name, tx)
    if found:
        if isinstance(attr, VariableTracker):  # written in this trace: a value, or a method of the class
            return space.bound_written(attr, class_var)
        if isinstance(attr, types.FunctionType):
            _guard(tx, class_var, name, attr)
            return space.bind_class_attribute(tx, class_var, attr, None)
        if isinstance(attr, (staticmethod, classmethod)) or hasattr(type(attr), "__get__"):
            unsupported("unsupported_attribute", f"{class_var.cls.__name__}.{name}: a {type(attr).__name__} "
                                                 "of its metaclass")
        source = AttrSource(TypeSource(class_var.source), name) if class_var.source is not None else None
        return tx.wrap(attr, source, guard=not _stable(type(class_var.cls)))
    result = call_meta(tx, class_var, "__getattr__", [_name(name)])
    return None if result is NotImplemented else result


def _name(name):
    return ConstantVariable(name)


class MetaclassSlots:
    """The operators of a class tracker (``UserDefinedClassVariable``) that go
    through its metaclass: a Python method of the metaclass is inlined with the
    class as ``self``; without one, ``type``'s behaviour (``type`` is neither
    subscriptable by instances, iterable nor sized: those break as before)."""

    def length(self, tx):
        result = call_meta(tx, self, "__len__", [])
        if result is NotImplemented:
            unsupported("operator_error", f"object of type {type(self.cls).__name__} has no len()")
        return space.checked_len(result)

    def iter(self, tx):
        result = call_meta(tx, self, "__iter__", [])
        if result is NotImplemented:
            unsupported("operator_error", f"{type(self.cls).__name__} object is not iterable")
        return iterator_of(tx, result)

    def unpack(self, tx):
        return self.iter(tx).unpack(tx)

    def contains(self, tx, item):
        result = call_meta(tx, self, "__contains__", [item])
        if result is NotImplemented:  # sq_contains falls back to iteration
            return super().contains(tx, item)
        return result.truth(tx)

    def truth(self, tx):
        result = call_meta(tx, self, "__bool__", [])
        if result is not NotImplemented:
            if result.python_type() is not bool:
                raise_in_trace(TypeError, f"__bool__ should return bool, returned {result.python_type().__name__}")
            return result.truth(tx)
        result = call_meta(tx, self, "__len__", [])
        return True if result is NotImplemented else space.checked_len(result) > 0

    def meta_getitem(self, tx, key):
        """``type(cls).__getitem__(cls, key)``, which CPython tries before ``__class_getitem__``;
        NotImplemented when the metaclass has none."""
        return call_meta(tx, self, "__getitem__", [key])
