"""``del obj.name`` on an instance of a user class (PyObject_GenericSetAttr with NULL).

A property's deleter runs (or CPython's "has no deleter" refusal, worded by the real
property), a Python ``__delattr__`` is inlined, an attribute the trace set on an object it
made is dropped, an attribute of a real object's ``__dict__`` is marked DELETED in the
tracker's writes (reads then miss it; the ledger replays ``del obj.name`` after the graph),
and anything else is CPython's AttributeError, worded by a probe class (slots.py).
"""
import types

from ...errors import unsupported
from ..callables.functions import UserFunctionVariable
from ..core import space
from ..core.base import type_lookup
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_in_trace
from ...side_effects import DELETED
from .class_attrs import class_attr
from .instance_dict import instance_attr_source
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
    if obj.value is not None:
        _delete_real_attribute(tx, obj, name)
        return
    raise_in_trace(AttributeError, no_slot_message(obj.cls.__name__, name, in_class=found, deleting=True,
                                                    has_dict=obj.cls.__dictoffset__ != 0))


def _delete_real_attribute(tx, obj, name):
    """``del obj.name`` of an object from outside: PyObject_GenericSetAttr drops the key of
    its ``__dict__`` (AttributeError when absent). The real dict decides whether the name is
    there before the frame's writes (guarded); the trace's writes decide after them."""
    written = obj.attrs.get(name)
    if written is DELETED:
        raise_in_trace(AttributeError, f"'{obj.cls.__name__:.100}' object has no attribute '{name}'")
    real = getattr(obj.value, "__dict__", None)
    if not isinstance(real, dict) or obj.source is None:
        unsupported("side_effect", f"del {obj}.{name} (no __dict__ to re-read)")
    present = name in real
    tx.output.add_guard("DICT_CONTAINS", instance_attr_source(obj.source, obj.cls, "__dict__"), (name, present))
    if written is None and not present:
        raise_in_trace(AttributeError, f"'{obj.cls.__name__:.100}' object has no attribute '{name}'")
    if present:
        obj.attrs[name] = DELETED  # replayed as `del obj.name`
    else:
        del obj.attrs[name]  # written in this trace only: the real object never gets it
