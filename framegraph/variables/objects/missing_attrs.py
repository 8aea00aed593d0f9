"""The guards that make a missing attribute of a user object a trace-time fact.

``obj.name`` with no ``name`` anywhere raises AttributeError in the trace
(``UserDefinedObjectVariable.missing_attribute``) only where every place the
lookup searched can be re-read on the next call: the instance's ``__dict__``
and the ``__dict__`` of each user class of its MRO (``Class.name = 1`` later
must make a new trace). A class that a class statement in the trace made
(``unittest.TestCase`` subclasses of a test body, local helper classes) is
made anew by each call from the same body, so only its bases need guards.
"""
from ...guards.sources import AttrSource, GetItemSource
from ..core import space
from ..core.base import user_code


@space.register
def guard_absent(tx, cls, cls_source, class_var, name) -> bool:
    """Guard that ``name`` stays out of the ``__dict__`` of each user class of ``cls``'s
    MRO, re-read from ``cls_source`` (or, for a class the trace made, through the
    trackers of its bases); False where a class cannot be re-read."""
    if cls_source is None:
        if not getattr(class_var, "rebuilt", False):
            return False
        for base in class_var.name_and_bases[1:]:
            base_cls = getattr(base, "cls", None)
            if base_cls is None:
                if not base.is_python_constant() or user_code(base.as_python_constant()):
                    return False  # a base the tracer cannot re-read
                continue  # a builtin base (object, dict): nothing a program sets
            if user_code(base_cls) and not guard_absent(tx, base_cls, base.source, base, name):
                return False
        return True
    for i, klass in enumerate(cls.__mro__):
        if user_code(klass):
            klass_source = GetItemSource(AttrSource(cls_source, "__mro__"), i) if i else cls_source
            tx.output.add_guard("DICT_CONTAINS", AttrSource(klass_source, "__dict__"), (name, False))
    return True
