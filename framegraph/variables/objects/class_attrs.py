"""Class attribute writes in the trace: ``Cls.z = 3``, ``del Cls.z``, ``cls.count += 1``.

``type.__setattr__`` (type_setattro) stores into the class's own ``__dict__``
(a class's own descriptors are not consulted, only its metaclass's), and every
later lookup through the class, a subclass or an instance sees it. The trace
does the same without touching the real class: writes go to a per-trace
overlay, ``{name: tracker or DELETED}`` for each class written
(``SideEffects.class_attrs``, keyed by the class object), and ``class_attr``
reads the overlay before each class's ``__dict__`` along the MRO, so the rest
of the trace reads back what it wrote.

* A class from outside the frame (it has a source) is replayed after the graph,
  in ledger order, as ``type.__setattr__(cls, name, value)`` or
  ``type.__delattr__(cls, name)``: its metaclass's Python ``__setattr__``, if
  any, ran in the trace already (``EnumType`` refusing to reassign a member),
  so only its final store is replayed. A read of the attribute before the write
  guarded its old value, so the next call, which finds the new one, makes a new
  trace; a write with no read before it needs no guard, since the replay
  overwrites whatever the class held.
* A class the trace made (``BuiltClassVariable``, classes.py) shares its overlay
  with its tracker, and the writes are applied to the class built anew where it
  is rebuilt: the prototype itself is never changed, so it is still the class
  the body alone makes.

Deleting a name the class's own ``__dict__`` does not hold (written in the
trace only, or not at all) drops the write or raises ``AttributeError`` as
type_setattro does, guarded on the real dict not holding it.

Special names (``__eq__``, ``__init__``, ``__doc__``...) are not written in
the overlay: the slots CPython derives from them, and the tracker's fast paths
that read them from the real class, would not see the write; those break.
"""
import types

from ...errors import unsupported
from ...guards.sources import AttrSource, GetItemSource
from ...guards.sources import GetItemSource
from ...side_effects import DELETED
from ...side_effects import ledger
from ..callables.functions import BaseUserFunctionVariable
from ..core import space
from ..core.base import BoundMethodVariable, STABLE_MODULES, VariableTracker, is_heap_type
from ..core.constant import ConstantVariable, is_constant_value
from ..core.exceptions import raise_in_trace
from .metaclasses import call_meta, meta_attribute


def _overlay(tx, cls, create=False):
    se = getattr(getattr(tx, "output", None), "side_effects", None)
    if se is None:
        return None
    found = se.class_attrs.get(id(cls))
    if found is None and create:
        found = se.class_attrs[id(cls)] = (cls, {})
    return found[1] if found is not None else None


def share_overlay(tx, cls, writes: dict):
    """The overlay of a class made in the trace is its tracker's ``writes``."""
    se = getattr(getattr(tx, "output", None), "side_effects", None)
    if se is not None:
        se.class_attrs[id(cls)] = (cls, writes)


@space.register
def class_attr(tx, cls, name):
    """(found, value) of ``name`` along ``cls.__mro__`` without running descriptors, as
    ``_PyType_Lookup`` finds it now: a write of this trace (a tracker) before the
    class's real ``__dict__``; a name deleted in the trace is not found in that class."""
    se = getattr(getattr(tx, "output", None), "side_effects", None)
    overlays = se.class_attrs if se is not None else {}
    mro = getattr(cls, "__mro__", ())
    if mro is None:  # inside its own creation (a metaclass's mro()): not modelled
        unsupported("unsupported_attribute", f"{cls.__name__}.{name}: the class has no MRO yet")
    for klass in mro:
        writes = overlays.get(id(klass))
        if writes is not None and name in writes[1]:
            value = writes[1][name]
            if value is DELETED:
                continue
            return True, value
        if name in klass.__dict__:
            return True, klass.__dict__[name]
    return False, None


def _special(name) -> bool:
    return name.startswith("__") and name.endswith("__")


def _storable(value):
    """A value the overlay can hand back as a class attribute: anything whose
    lookup through the class is the value itself or binds like a function."""
    if isinstance(value, BaseUserFunctionVariable):
        return True
    try:
        kind = value.python_type()
    except Exception:
        return False
    return not (hasattr(kind, "__get__") or hasattr(kind, "__set__"))


def type_setattr(tx, class_var, name, value):
    """``type.__setattr__(cls, name, value)``, recorded in the overlay."""
    cls = class_var.cls
    if _special(name):
        unsupported("unsupported_attribute", f"setting {cls.__name__}.{name} (a special name)")
    found, attr = meta_attribute(cls, name)
    if found and (hasattr(type(attr), "__set__") or hasattr(type(attr), "__delete__")):
        unsupported("unsupported_attribute", f"setting {cls.__name__}.{name}: a {type(attr).__name__} "
                                             "of its metaclass")
    if value is not DELETED and not _storable(value):
        unsupported("unsupported_attribute", f"setting {cls.__name__}.{name} to a {value}")
    writes = getattr(class_var, "writes", None)  # a class made in the trace: its tracker's
    if writes is not None and _overlay(tx, cls) is not writes:
        share_overlay(tx, cls, writes)
    if writes is None:  # a class from outside: replayed after the graph
        if class_var.source is None:
            unsupported("side_effect", f"setting {cls.__name__}.{name}: the class cannot be re-read")
        if not is_heap_type(cls):  # CPython's TypeError, not modelled
            unsupported("unsupported_attribute", f"setting {cls.__name__}.{name} of an immutable type")
        se = ledger(tx)
        if se is None:
            unsupported("side_effect", f"setting {cls.__name__}.{name}")
        writes = _overlay(tx, cls, create=True)
        se.track_class(class_var, writes)
    if value is DELETED and not _delete(tx, class_var, name, writes):
        return
    writes[name] = value


def _delete(tx, class_var, name, writes) -> bool:
    """``del cls.name``: True when the real class holds it (the deletion is recorded);
    a name only this trace wrote is dropped from the overlay; else AttributeError."""
    cls = class_var.cls
    present = name in cls.__dict__
    if class_var.source is not None:
        tx.output.add_guard("DICT_CONTAINS", AttrSource(class_var.source, "__dict__"), (name, present))
    if name in writes and writes[name] is not DELETED:
        if not present:
            del writes[name]
            return False
        return True
    if present and name not in writes:
        return True
    raise_in_trace(AttributeError, f"type object '{cls.__name__}' has no attribute '{name}'")


def class_setattr(tx, class_var, name, value):
    """``cls.name = value`` (``value`` DELETED: ``del cls.name``): the metaclass's Python
    ``__setattr__``/``__delattr__`` inlined, else ``type``'s."""
    args = [ConstantVariable(name)] if value is DELETED else [ConstantVariable(name), value]
    result = call_meta(tx, class_var, "__delattr__" if value is DELETED else "__setattr__", args)
    if result is NotImplemented:
        type_setattr(tx, class_var, name, value)


def rebuild_writes(cg, temp, writes):
    """After a class made in the trace is rebuilt into ``temp``: its writes, in order."""
    for name, value in writes.items():
        cg.emit_op("PUSH_NULL")
        cg.load_const(type.__delattr__ if value is DELETED else type.__setattr__)
        cg.load_fast(temp)
        cg.load_const(name)
        if value is not DELETED:
            cg(value)
        cg.call(2 if value is DELETED else 3)
        cg.emit_op("POP_TOP")


def written(tx, cls, name) -> bool:
    """Has this trace written or deleted ``name`` on a class of ``cls.__mro__``?"""
    se = getattr(getattr(tx, "output", None), "side_effects", None)
    overlays = se.class_attrs if se is not None else {}
    return any(name in overlays[id(klass)][1] for klass in getattr(cls, "__mro__", None) or () if id(klass) in overlays)


class ClassDictVariable(VariableTracker):
    """``cls.__dict__``: the read-only view of a class's own namespace, with this
    trace's writes to it. Single keys are read (``get``, ``[]``, ``in``): from
    the overlay, else from the real dict, guarded as read; anything that needs
    every key (iteration, ``len``) breaks."""

    def __init__(self, class_var, **kwargs):
        super().__init__(**kwargs)
        self.class_var = class_var

    def python_type(self):
        return types.MappingProxyType

    def _lookup(self, tx, key):
        """The tracker of ``cls.__dict__[key]``, or None where the class has no ``key``."""
        if not key.is_python_constant() or type(key.as_python_constant()) is not str:
            unsupported("unsupported_value", f"{self.class_var.cls.__name__}.__dict__[{key}]")
        name, cls = key.as_python_constant(), self.class_var.cls
        writes = _overlay(tx, cls) or {}
        if name in writes:
            return None if writes[name] is DELETED else writes[name]
        present = name in cls.__dict__
        if self.source is not None:
            tx.output.add_guard("DICT_CONTAINS", self.source, (name, present))
        if not present:
            return None
        if self.source is None and not _held(cls.__dict__[name]):
            unsupported("unsupported_value", f"{cls.__name__}.__dict__[{name!r}]")
        return tx.wrap(cls.__dict__[name], GetItemSource(self.source, name) if self.source is not None else None)

    def getitem(self, tx, key):
        value = self._lookup(tx, key)
        if value is None:
            raise_in_trace(KeyError, key.as_python_constant())
        return value

    def contains(self, tx, item):
        return self._lookup(tx, item) is not None

    def call_method(self, tx, name, args, kwargs):
        if name in ("get", "__getitem__", "__contains__") and args and len(args) <= 2 and not kwargs:
            if name == "__getitem__":
                return self.getitem(tx, args[0])
            value = self._lookup(tx, args[0])
            if name == "__contains__":
                return ConstantVariable(value is not None)
            return value if value is not None else (args[1] if len(args) == 2 else ConstantVariable(None))
        unsupported("unsupported_call", f"{self.class_var.cls.__name__}.__dict__.{name}")

    def getattr(self, tx, name):
        return BoundMethodVariable(self, name)

    def reconstruct(self, cg):
        cg(self.class_var)
        cg.load_attr("__dict__")

    def __repr__(self):
        return f"ClassDictVariable({self.class_var.cls.__name__})"


def _held(value) -> bool:
    """Is ``value`` a constant or a function, fixed with the class made in the trace?"""
    return is_constant_value(value) or isinstance(value, (types.FunctionType, type))


def missing_class_attribute(tx, class_var, name):
    """No ``name`` on the class's MRO nor its metaclass: ``type.__getattribute__``'s
    AttributeError, raised in the trace, guarded on each user class of the MRO still
    not holding ``name`` (``Cls.name = 1`` later makes a new trace). Returns (no raise)
    where that cannot be guarded: a class without a source, a user metaclass, or a name
    ``type`` itself has (``mro``)."""
    cls = class_var.cls
    if hasattr(type, name) or type(cls) is not type and not _stable_module(type(cls), STABLE_MODULES):
        return
    for i, klass in enumerate(cls.__mro__):
        if _stable_module(klass, STABLE_MODULES) or space.is_prototype(klass):
            continue  # fixed: the standard library's, or made in this trace
        if class_var.source is None:
            return
        source = GetItemSource(AttrSource(class_var.source, "__mro__"), i) if i else class_var.source
        tx.output.add_guard("DICT_CONTAINS", AttrSource(source, "__dict__"), (name, False))
    raise_in_trace(AttributeError, f"type object '{cls.__name__}' has no attribute '{name}'")


def _stable_module(cls, modules) -> bool:
    return (cls.__module__ or "").split(".")[0] in modules
