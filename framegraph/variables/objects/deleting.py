"""``del obj.name`` on an instance of a user class (PyObject_GenericSetAttr with NULL).

A property's deleter runs (or CPython's "has no deleter" refusal, worded by the real
property), a Python ``__delattr__`` is inlined, an attribute the trace set on an object it
made is dropped, and anything else is CPython's AttributeError, worded by a probe class
(slots.py); deleting a real object's own attribute would need replaying: a break.
"""
import types

from ...errors import unsupported
from ..callables.functions import UserFunctionVariable
from ..core import space
from ..core.base import type_lookup
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_in_trace
from .class_attrs import class_attr
from .slots import no_slot_message, property_refusal


def delete_object_attribute(tx, obj, name):
    """``del obj.name`` (PyObject_GenericSetAttr with NULL): a property's deleter, the
    class's Python ``__delattr__``, else the instance's own attribute."""
    obj.check_mutable(f"del .{name}", tx)
    found, attr = class_attr(tx, obj.cls, name)
    if found and isinstance(attr, property):
        if attr.fdel is None:
            property_refusal(attr, obj.cls, deleting=True)
        UserFunctionVariable(attr.fdel).call(tx, [obj], {})
        return
    if found and hasattr(type(attr), "__delete__"):  # another data descriptor's __delete__ decides
        unsupported("unsupported_attribute", f"deleting {obj.cls.__name__}.{name} ({type(attr).__name__})")
    user_delattr = type_lookup(obj.cls, "__delattr__")[1]
    if user_delattr is not object.__delattr__:
        if not isinstance(user_delattr, types.FunctionType):
            unsupported("unsupported_attribute", f"{obj.cls.__name__} overrides __delattr__")
        space.bind_class_attribute(tx, obj, user_delattr, None).call(tx, [ConstantVariable(name)], {})
        return
    if name in obj.attrs and obj.source is None:
        del obj.attrs[name]
        return
    if obj.source is not None or obj.value is not None:  # the real object's own: not replayed
        unsupported("side_effect", f"del {obj}.{name}")
    raise_in_trace(AttributeError, no_slot_message(obj.cls.__name__, name, in_class=found, deleting=True,
                                                    has_dict=obj.cls.__dictoffset__ != 0))
