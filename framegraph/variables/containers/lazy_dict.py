"""Dicts from outside the frame, whose items are wrapped (and guarded) when read.

A config object's ``__dict__`` holds sixty settings, an attention registry
maps ten names to functions; a traced program reads one or two of them
(``d.get('_heterogeneity_spec')``, ``registry['sdpa']``). Wrapping every item
up front guards every key and every value, and each of those guards runs on
every call. ``LazyDictVariable`` is a ``ConstDictVariable`` that starts empty
and reads the real dict one string key at a time:

    d['k'], d.get('k')   present: the item, wrapped from ``d['k']`` like any
                         input (its own guards), plus ``'k' in d``;
                         absent: guard ``'k' not in d`` (``d['k']`` raises
                         KeyError in the trace, ``get`` gives the default).
    'k' in d             the answer, guarded the same way.

Anything else (iteration, ``len``, ``items()``, a non-string key, writing)
touches ``items``, which materialises the whole dict the eager way: one
DICT_KEYS guard and every value wrapped, exactly what ``ConstDictVariable``
would have done up front. Only exact ``dict`` and ``OrderedDict`` are read
lazily: a subclass's ``__getitem__``/``__contains__`` could run code.
"""
from ...guards.sources import GetItemSource
from ..core.constant import ConstantVariable
from .dicts import ConstDictVariable, _key_error

LAZY_TYPES = (dict,)


class LazyDictVariable(ConstDictVariable):
    def __init__(self, tx, value, *, source):
        self._tx, self._value, self._items = tx, value, None
        super().__init__([], py_type=type(value), source=source)
        self._items = None  # the base class assigned {}: nothing read yet
        tx.output.add_guard("TYPE_MATCH", source, type(value))

    @property
    def items(self):
        if self._items is None:
            self._materialize()
        return self._items

    @items.setter
    def items(self, pairs):
        self._items = pairs

    def _materialize(self):

        tx, value, source = self._tx, self._value, self.source
        tx.output.add_guard("DICT_KEYS", source, (type(value), tuple(value)))
        self._items = {k: (ConstantVariable(k), tx.wrap(v, GetItemSource(source, k)))
                       for k, v in value.items()}

    def _lazy_key(self, key):
        """The string key of a lazy lookup, or None (then the dict is materialised)."""
        if self._items is not None or not key.is_python_constant():
            return None
        k = key.as_python_constant()
        return k if type(k) is str else None

    def _read(self, k):
        """(present, value tracker or None) of key ``k``, guarded."""

        present = k in self._value
        self._tx.output.add_guard("DICT_CONTAINS", self.source, (k, present))
        if not present:
            return False, None
        return True, self._tx.wrap(self._value[k], GetItemSource(self.source, k))

    def getitem(self, tx, key):
        k = self._lazy_key(key)
        if k is not None:  # a missing key raises KeyError (a plain dict has no __missing__)
            present, value = self._read(k)
            if not present:
                _key_error(key)
            return value
        return super().getitem(tx, key)

    def contains(self, tx, item):
        k = self._lazy_key(item)
        if k is None:
            return super().contains(tx, item)
        return self._read(k)[0]

    def call_method(self, tx, name, args, kwargs):
        if name == "get" and not kwargs and 1 <= len(args) <= 2:
            k = self._lazy_key(args[0])
            if k is not None:
                present, value = self._read(k)
                return value if present else (args[1] if len(args) == 2 else ConstantVariable(None))
        if name == "__getitem__" and len(args) == 1:
            return self.getitem(tx, args[0])
        if name == "__contains__" and len(args) == 1:
            return ConstantVariable(self.contains(tx, args[0]))
        return super().call_method(tx, name, args, kwargs)

    def __repr__(self):
        if self._items is None:
            return f"LazyDictVariable(<{len(self._value)} items, unread>)"
        return super().__repr__()


def wrap_lazy_dict(tx, value, source):
    """A LazyDictVariable for ``value``, or None when it must be wrapped eagerly."""
    if source is None or type(value) not in LAZY_TYPES:
        return None
    return LazyDictVariable(tx, value, source=source)
