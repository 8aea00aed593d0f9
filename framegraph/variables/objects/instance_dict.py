"""``obj.__dict__``: the instance dict of a user object or an nn.Module, as a live view.

What CPython's ``obj.__dict__`` holds at a point of the trace is two things:

    the real dict      for an object from outside the frame, read through its
                       source (``L['self'].__dict__``); each question asked of it
                       is guarded on its own: ``'k' in d`` by DICT_CONTAINS,
                       ``len(d)``, iteration and ``keys()`` by DICT_KEYS, and an
                       item is wrapped from ``L['self'].__dict__['k']`` like any input;
    the trace's writes the attributes assigned so far in the trace (the tracker's
                       ``attrs``: all of them for an object made in the trace, the
                       ones replayed after the graph for one from outside).

``InstanceDictVariable`` answers every read from both, so ``self.foo = 1;
'foo' in self.__dict__`` is True before the write has been replayed. Writing
through it (``obj.__dict__['k'] = v``, ``update``) is an attribute write, seen
by ``obj.k`` later in the trace; for an object from outside it is replayed as
``obj.k = v``, so it is a graph break where that would differ (a class with its
own ``__setattr__`` or a descriptor at ``k``).
"""
import types

from ...errors import unsupported
from ...guards.sources import AttrSource, GenericAttrSource, GetItemSource
from ...side_effects import DELETED
from ..containers.dicts import ConstDictVariable
from ..core.base import BoundMethodVariable, VariableTracker, type_lookup
from ..core.constant import ConstantVariable
from ..iteration.iterators import ListIteratorVariable


def instance_attr_source(source, cls, name):
    """Where an instance attribute is re-read from: ``obj.name``, or, when the class
    overrides ``__getattribute__``, ``object.__getattribute__(obj, name)``."""
    if source is None:
        return None
    if isinstance(type_lookup(cls, "__getattribute__")[1], types.FunctionType):
        return GenericAttrSource(source, name)
    return AttrSource(source, name)


def real_dict(value):
    """``value``'s instance dict as ``PyObject_GenericGetAttr`` finds it, or None. Never
    through the class's own ``__getattribute__``: that is user code, which the trace runs
    itself (a real call here would do its side effects a second time, at trace time)."""
    try:
        return object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None


def generic_hasattr(value, name) -> bool:
    """``hasattr`` as ``PyObject_GenericGetAttr`` answers it (a ``__slots__`` member set or not)."""
    try:
        object.__getattribute__(value, name)
    except AttributeError:
        return False
    return True


# dict methods answered from a snapshot of the current contents
_SNAPSHOT_METHODS = frozenset({"get", "keys", "values", "items", "copy", "__getitem__", "__contains__",
                               "__len__", "__iter__"})
_WRITE_METHODS = frozenset({"__setitem__", "update", "pop", "__delitem__"})


class InstanceDictVariable(VariableTracker):
    """``obj.__dict__``; ``real`` is the object's real dict (None for an object made in
    the trace), read through ``source``."""

    def __init__(self, obj, real=None, **kwargs):
        super().__init__(**kwargs)
        self.obj, self.real = obj, real

    def python_type(self):
        return dict

    @property
    def mutable(self):
        return self.obj.mutable

    def _written(self) -> dict:
        """{name: tracker} of the attributes the trace wrote that live in ``__dict__``."""
        writes = getattr(self.obj, "instance_dict_writes", None)
        written = writes() if writes is not None else self.obj.attrs
        if any(v is DELETED for v in written.values()):  # `del obj.name` in this trace: the view would show it
            unsupported("side_effect", f"the __dict__ of {self.obj} after a del of one of its attributes")
        return written

    def _has(self, tx, name) -> bool:
        if name in self._written():
            return True
        if self.real is None:
            return False
        present = name in self.real
        tx.output.add_guard("DICT_CONTAINS", self.source, (name, present))
        return present

    def _read(self, tx, name):

        written = self._written()
        if name in written:
            return written[name]
        return tx.wrap(self.real[name], GetItemSource(self.source, name))

    def _keys(self, tx) -> list:
        keys = []
        if self.real is not None:
            tx.output.add_guard("DICT_KEYS", self.source, (dict, tuple(self.real)))
            keys = list(self.real)
        return keys + [k for k in self._written() if k not in keys]  # a new attribute goes last

    def _snapshot(self, tx):
        return ConstDictVariable([(ConstantVariable(k), self._read(tx, k)) for k in self._keys(tx)])

    # ---- the slots
    def getitem(self, tx, key):
        name = key.as_python_constant() if key.is_python_constant() else None
        if type(name) is str and self._has(tx, name):
            return self._read(tx, name)
        return self._snapshot(tx).getitem(tx, key)  # a missing key: the dict's own KeyError

    def contains(self, tx, item):
        name = item.as_python_constant() if item.is_python_constant() else None
        if type(name) is str:
            return self._has(tx, name)
        return self._snapshot(tx).contains(tx, item)

    def length(self, tx):
        return len(self._keys(tx))

    def truth(self, tx):
        return self.length(tx) > 0

    def unpack(self, tx):
        return [ConstantVariable(k) for k in self._keys(tx)]

    def setitem(self, tx, key, value):
        """``obj.__dict__[k] = v``: an attribute write that skips ``__setattr__`` and
        descriptors. The replay after the graph (and the rebuild of an object made in
        the trace) is ``obj.k = v``, the same thing only where the class has neither
        (``object_setattr`` is the tracker's plain store; an object made in the trace is
        rebuilt through ``object.__setattr__``, past an override but not a data descriptor)."""
        name = key.as_python_constant() if key.is_python_constant() else None
        cls = self.obj.python_type()
        descriptor = hasattr(type(type_lookup(cls, name)[1]), "__set__")  # a property would run its setter
        plain = type_lookup(cls, "__setattr__")[1] is object.__setattr__
        if (type(name) is not str or not hasattr(self.obj, "object_setattr") or descriptor
                or not (self.obj.mutable or plain)):
            unsupported("side_effect", f"writing {self}[{key}] (which skips __setattr__)")
        self.obj.object_setattr(tx, name, value)

    def delitem(self, tx, key):
        """``del obj.__dict__[k]``: the attribute goes, skipping ``__delattr__`` and descriptors;
        for an object made in the trace (one from outside would need the real dict's delete replayed)."""
        name = key.as_python_constant() if key.is_python_constant() else None
        if self.real is not None or self.obj.source is not None or not hasattr(self.obj, "check_mutable"):
            unsupported("side_effect", f"deleting {self}[{key}] (which skips __delattr__)")
        if type(name) is not str or name not in self.obj.attrs:
            self._snapshot(tx).getitem(tx, key)  # the dict's own KeyError
        self.obj.check_mutable("del __dict__[k]", tx)
        del self.obj.attrs[name]

    def _pop(self, tx, key, default=None):
        """``obj.__dict__.pop(k[, default])``."""
        name = key.as_python_constant() if key.is_python_constant() else None
        if type(name) is str and self._has(tx, name):
            value = self._read(tx, name)
            self.delitem(tx, key)
            return value
        if default is not None:
            return default
        return self._snapshot(tx).getitem(tx, key)  # KeyError

    def getattr(self, tx, name):
        if name in _SNAPSHOT_METHODS or name in _WRITE_METHODS:
            return BoundMethodVariable(self, name)
        unsupported("unsupported_attribute", f"__dict__.{name}")

    def call_method(self, tx, name, args, kwargs):
        if name == "get" and args and not kwargs and args[0].is_python_constant():
            if self._has(tx, args[0].as_python_constant()):
                return self._read(tx, args[0].as_python_constant())
            return args[1] if len(args) == 2 else ConstantVariable(None)
        if name == "__setitem__" and len(args) == 2:
            self.setitem(tx, *args)
            return ConstantVariable(None)
        if name == "update" and len(args) <= 1:
            pairs = [p.unpack(tx) for p in args[0].call_method(tx, "items", [], {}).unpack(tx)] if args else []
            for key, value in pairs + [(ConstantVariable(k), v) for k, v in kwargs.items()]:
                self.setitem(tx, key, value)
            return ConstantVariable(None)
        if name == "pop" and 1 <= len(args) <= 2 and not kwargs:
            return self._pop(tx, *args)
        if name == "__delitem__" and len(args) == 1 and not kwargs:
            self.delitem(tx, args[0])
            return ConstantVariable(None)
        if name == "__iter__" and not args:
            return ListIteratorVariable(self.unpack(tx))
        if name in _SNAPSHOT_METHODS:
            return self._snapshot(tx).call_method(tx, name, args, kwargs)
        unsupported("unsupported_call", f"__dict__.{name}")

    def reconstruct(self, cg):
        if self.source is not None:  # the writes are replayed before this is read
            return super().reconstruct(cg)
        cg(self.obj)
        cg.load_attr("__dict__")

    def __repr__(self):
        return f"InstanceDictVariable({self.obj!r})"


def instance_dict(tx, obj, real, dict_source):
    """The tracker of ``obj.__dict__``: ``real`` is the object's real instance dict
    (None for an object made in the trace), ``dict_source`` where it is re-read from."""
    if not hasattr(obj, "attrs"):
        unsupported("unsupported_attribute", f"__dict__ of {obj}")
    if real is not None and dict_source is None:
        unsupported("unsupported_attribute", f"__dict__ of {obj}, which cannot be re-read")
    if real is not None:
        tx.output.add_guard("TYPE_MATCH", dict_source, dict)
    return InstanceDictVariable(obj, real, source=dict_source)
