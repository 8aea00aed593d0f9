"""A descriptor whose class writes ``__get__`` in Python, read through a class.

``type.__getattribute__`` finds ``attr`` on the class's MRO and returns
``type(attr).__get__(attr, None, cls)``: ``enum.property`` hands back the
member of that name, a user's descriptor whatever it computes. The tracer
inlines that ``__get__`` with the descriptor object itself, read from the
``__dict__`` of the class that holds it (``cls.__mro__[i].__dict__[name]``:
reading ``cls.name`` again would run ``__get__`` instead), so it is guarded
and its attributes are read like any object's from outside.
"""
import types

from ...guards.sources import AttrSource, GetItemSource


def _raw_source(class_var, name):
    """Where the descriptor itself is re-read: the ``__dict__`` of its class on the MRO."""
    if class_var.source is None:
        return None
    for i, klass in enumerate(class_var.cls.__mro__):
        if name in klass.__dict__:
            owner = GetItemSource(AttrSource(class_var.source, "__mro__"), i) if i else class_var.source
            return GetItemSource(AttrSource(owner, "__dict__"), name)
    return None


def python_get_through_class(tx, class_var, name, attr):
    """``type(attr).__get__(attr, None, cls)`` inlined, or None where ``__get__`` is not a
    Python function or the descriptor cannot be re-read."""
    from ..core.constant import ConstantVariable
    from ..callables.functions import UserFunctionVariable

    getter = next((k.__dict__["__get__"] for k in type(attr).__mro__ if "__get__" in k.__dict__), None)
    source = _raw_source(class_var, name)
    if not isinstance(getter, types.FunctionType) or source is None:
        return None
    return UserFunctionVariable(getter).call(tx, [tx.wrap(attr, source), ConstantVariable(None), class_var], {})
