"""Instances of user subclasses of dict / OrderedDict (Hugging Face ``ModelOutput``,
registries keyed by class name, config-like mappings).

Such an object is two things at once, as in CPython: a dict (its items) and
an object (its ``__dict__`` attributes, its class's methods and properties).
``UserDictVariable`` keeps both: the items in the ``ConstDictVariable`` it
extends, the attributes in ``attrs``.

Every slot and method is looked up on the class first, like
``PyObject_GenericGetAttr`` and the type slots do:

* a Python function defined by the subclass (``ModelOutput.__getitem__``,
  ``__setattr__``, ``to_tuple``) is inlined with ``self`` bound to this tracker;
* a method the class inherits from dict/OrderedDict/object runs the builtin
  model (``ConstDictVariable.call_method``, attribute storage); so does
  ``super().__setitem__(k, v)`` from inside an override (``builtin_method``).

Creating one in the trace (``Output(logits=x)``) allocates the tracker and
inlines ``__init__`` (for a dataclass: the generated ``__init__`` and
``__post_init__``). After the graph the real object is rebuilt from its final
state, without re-running user code: ``cls.__new__(cls)``, the builtin base's
``__setitem__`` for each item, ``object.__setattr__`` for each attribute.
"""
import collections
import enum
import types

from ...errors import unsupported
from ...guards.sources import DictItemSource
from ..containers.dict_merge import mutablemapping_update
from ..containers.dicts import ConstDictVariable, _key_error, hash_key
from ..core import space
from ..core.base import VariableTracker
from ..core.base import type_lookup
from ..core.call_shapes import check_method_shape, fits
from ..core.constant import ConstantVariable, items_of
from ..iteration.iterators import ListIteratorVariable
from ..objects.instance_dict import instance_attr_source, real_dict
from .builtin_subclass import BuiltinSubclassMixin

# The builtin mapping bases a user class may extend, most derived first.
BUILTIN_DICTS = (collections.OrderedDict, collections.defaultdict, dict)
PLAIN_DICTS = frozenset(BUILTIN_DICTS)


def builtin_dict_base(cls) -> type:
    return next(base for base in cls.__mro__ if base in PLAIN_DICTS)


@space.register
def is_user_dict_class(cls) -> bool:
    """A Python subclass of a builtin dict whose instances ``cls.__new__`` makes plainly."""
    return (isinstance(cls, type) and issubclass(cls, dict) and cls not in PLAIN_DICTS
            and cls.__new__ is builtin_dict_base(cls).__new__)


def _python_override(cls, name):
    """The function ``cls`` defines for ``name`` above the builtin dict base, or None."""
    for klass in cls.__mro__:
        if klass in PLAIN_DICTS or klass is object:
            return None
        if name in klass.__dict__:
            attr = klass.__dict__[name]
            return attr if isinstance(attr, types.FunctionType) else None
    return None


@space.register
class UserDictVariable(BuiltinSubclassMixin, ConstDictVariable):
    """A dict-subclass instance: items (the dict part) plus attributes."""

    def __init__(self, pairs, cls, value=None, **kwargs):
        super().__init__(pairs, py_type=cls, **kwargs)
        self.value = value  # the real object, for one from outside the frame
        self.attrs = {}
        self.identity = value if value is not None else self

    @property
    def mutable(self):
        return self.value is None

    def check_mutable(self, what, tx=None):
        """A dict subclass from outside the frame is not replayed: its ``clear``,
        ``update`` and ``__setattr__`` may be overridden (ModelOutput forbids update)."""
        if not self.mutable:
            unsupported("side_effect", f"{what} on a {self.py_type.__name__} from outside the frame")

    # ---- attributes: the generic lookup, with the dict's methods as builtins
    def _instance_attr(self, tx, name):
        if name in self.attrs or self.value is None:
            return self.attrs.get(name)
        d = real_dict(self.value) or {}
        if name not in d:
            return None

        return tx.wrap(d[name], instance_attr_source(self.source, self.py_type, name))  # past an override

    def hasattr(self, tx, name):
        if self.value is not None and name not in self.attrs:
            return hasattr(self.value, name)
        return name in self.attrs or type_lookup(self.py_type, name)[0]

    def _override(self, name):
        return _python_override(self.py_type, name)

    def builtin_method(self, tx, name, args, kwargs):
        """The method of the builtin base (``super().name(...)``, or not overridden)."""
        if name == "__setattr__":
            self.check_mutable(f"setting .{args[0].as_python_constant()}", tx)
            self.attrs[args[0].as_python_constant()] = args[1]
            return ConstantVariable(None)
        check_method_shape(self.py_type, name, args, kwargs)  # `super().__getitem__()`: CPython's TypeError
        if name in ("__init__", "update") and self._override("__setitem__") is not None \
                and issubclass(self.py_type, collections.OrderedDict):
            # odict_init and update (mutablemapping_update) store through PyObject_SetItem: the
            # subclass's __setitem__ (dict's own merge does not)
            mutablemapping_update(tx, self, args, kwargs)
            return ConstantVariable(None)
        if name == "__init__":
            return ConstDictVariable.call_method(self, tx, "update", args, kwargs)
        slot = _DICT_SLOTS.get(name)
        if slot is not None and not fits(slot, 2, args, kwargs):
            unsupported("unsupported_call", f"{self.py_type.__name__}.{name} with these arguments")
        if slot is not None:  # the dict's own slot, never the subclass's override
            result = slot(self, tx, *args)
            return result if isinstance(result, VariableTracker) else ConstantVariable(result)
        return ConstDictVariable.call_method(self, tx, name, args, kwargs)

    def missing_key(self, tx, key):
        """dict.__getitem__ of a missing key: the class's ``__missing__`` (``Counter``'s
        returns 0), as dict_subscript calls it; else KeyError."""
        user = self._override("__missing__")
        if user is None:
            _key_error(key)
        return self._inline(tx, user, [key])

    def getitem(self, tx, key):
        return self.call_method(tx, "__getitem__", [key], {})

    def setitem(self, tx, key, value):
        self.call_method(tx, "__setitem__", [key, value], {})

    def delitem(self, tx, key):
        self.call_method(tx, "__delitem__", [key], {})

    def contains(self, tx, item):
        return self.call_method(tx, "__contains__", [item], {}).truth(tx)

    def unpack(self, tx):
        if _python_override(self.py_type, "__iter__") is not None:
            return self.call_method(tx, "__iter__", [], {}).unpack(tx)
        return self.keys_vars()

    def length(self, tx):
        if _python_override(self.py_type, "__len__") is not None:
            return self.call_method(tx, "__len__", [], {}).as_python_constant()
        return len(self.items)

    # ---- rebuilding after the graph
    def reconstruct(self, cg):
        if self.source is not None:
            cg.load_source(self.source)
            return
        if not all(k.is_python_constant() for k in self.keys_vars()):
            unsupported("graph_output", f"rebuilding a {self.py_type.__name__} with non-constant keys")
        keys = tuple(k.as_python_constant() for k in self.keys_vars())
        values = [v for _, v in self.items.values()] + list(self.attrs.values())
        cg.call_const(rebuild_user_dict, [ConstantVariable(self.py_type), ConstantVariable(keys),
                                          ConstantVariable(tuple(self.attrs))] + values)

    def __repr__(self):
        return f"UserDictVariable({self.py_type.__name__}, {list(self.items)!r})"


_DICT_SLOTS = {
    "__getitem__": ConstDictVariable.getitem, "__setitem__": ConstDictVariable.setitem,
    "__delitem__": ConstDictVariable.delitem, "__contains__": ConstDictVariable.contains,
    "__len__": ConstDictVariable.length,
    "__iter__": lambda d, tx: ListIteratorVariable(d.keys_vars()),
}


def rebuild_user_dict(cls, keys, names, *values):
    """The real object of a UserDictVariable made in the trace, from its final state."""
    obj = cls.__new__(cls)
    setitem = builtin_dict_base(cls).__setitem__
    for key, value in zip(keys, values):
        setitem(obj, key, value)
    for name, value in zip(names, values[len(keys):]):
        object.__setattr__(obj, name, value)
    return obj


_WRAPPING = set()  # ids of the dicts being wrapped


def wrap_user_dict(tx, value, source):
    """builder rule: a dict-subclass instance from outside the frame."""

    # the items in the order of the builtin base: an OrderedDict keeps its own order
    # (move_to_end), which dict.keys() on it does not see
    base = builtin_dict_base(type(value))
    try:
        keys = tuple(base.keys(value))
        items = list(base.items(value))
    except Exception as e:  # noqa: BLE001 - `dict.pop(od, k)` left an OrderedDict unreadable
        unsupported("unsupported_value", f"a {type(value).__name__} whose items cannot be read ({e!r})")
    if not all(isinstance(k, (str, int, float, bool, type(None), enum.Enum)) for k in keys):
        unsupported("unsupported_value", "dict with keys that are not constants")
    if source is not None:
        tx.output.add_guard("TYPE_MATCH", source, type(value))
        tx.output.add_guard("DICT_KEYS", source, (type(value), keys))
    if id(value) in _WRAPPING:  # `od["self"] = od`: each wrap would wrap it again
        unsupported("unsupported_value", f"a {type(value).__name__} that contains itself")
    _WRAPPING.add(id(value))
    try:
        pairs = [(ConstantVariable(k), tx.wrap(v, _dict_item_source(source, k))) for k, v in items]
    finally:
        _WRAPPING.discard(id(value))
    return UserDictVariable(pairs, type(value), value, source=source)


def _dict_item_source(source, key):
    """The item read without the subclass's ``__getitem__`` (``dict.__getitem__(obj, k)``)."""
    if source is None:
        return None
    return DictItemSource(source, key)


@space.register
def new_user_dict(tx, cls, args, kwargs):
    """``cls(*args, **kwargs)`` for a user dict class: allocate, then inline ``__init__``."""
    return UserDictVariable([], cls).initialise(tx, args, kwargs)


__all__ = ["UserDictVariable", "wrap_user_dict", "new_user_dict", "is_user_dict_class", "hash_key"]


@space.register
class FromkeysVariable(VariableTracker):
    """``Sub.fromkeys(keys, value=None)`` for a dict subclass (dict_fromkeys): ``Sub()``, then
    ``d[key] = value`` for each key, through the subclass's own ``__setitem__`` if it has one."""

    def __init__(self, class_var, **kwargs):
        super().__init__(**kwargs)
        self.class_var = class_var

    def call(self, tx, args, kwargs):
        if kwargs or not 1 <= len(args) <= 2:
            unsupported("unsupported_call", f"{self.class_var.cls.__name__}.fromkeys with these arguments")
        value = args[1] if len(args) == 2 else ConstantVariable(None)
        made = self.class_var.call(tx, [], {})
        for key in items_of(tx, args[0]):
            made.setitem(tx, key, value)
        return made

    def __repr__(self):
        return f"FromkeysVariable({self.class_var.cls.__name__})"
