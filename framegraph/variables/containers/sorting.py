"""Sorting and picking among trackers of constants: ``sorted``, ``list.sort``, ``min``, ``max``.

The real algorithm runs on the real keys (``_Keyed`` stands for an item), so
the result, the stability, which of equal items ``min``/``max`` return, and
the TypeError of keys that do not compare are all CPython's own. The key
function is inlined once per item, before any comparison (as ``list.sort``
does; ``min``/``max`` interleave the calls with the comparisons, which only
shows where a comparison fails midway).
"""
import types

from ...errors import Unsupported, unsupported
from ..core import space
from ..core.constant import items_of, wrap_constant
from ..core.exceptions import TracedException, python_operation, raise_in_trace, raise_python_error
from ..core.ops import compare

def _is_none(v):
    return v.is_python_constant() and v.as_python_constant() is None


class _Keyed:
    """An item's index and its key: a real constant, or a tracker (a user object with
    ``__lt__``) compared in the trace. Sorting (or ``min``/``max`` of) these runs the
    keys' comparisons exactly as CPython's list.sort, min and max run them on the
    items: the same calls in the same order, and the same ``'<' not supported`` TypeError."""

    __slots__ = ("key", "index", "tx")

    def __init__(self, key, index, tx=None):
        self.key, self.index, self.tx = key, index, tx

    def _traced(self, op, other):
        tx = self.tx or other.tx
        a, b = (k if k_tx is not None else wrap_constant(k) for k, k_tx in ((self.key, self.tx), (other.key, other.tx)))
        return compare(tx, op, a, b).truth(tx)

    def __lt__(self, other):
        if self.tx is None and other.tx is None:
            return self.key < other.key
        return self._traced("<", other)

    def __gt__(self, other):
        if self.tx is None and other.tx is None:
            return self.key > other.key
        return self._traced(">", other)


def _keyed(tx, items, key):
    keys = [key.call(tx, [x], {}) if key is not None and not _is_none(key) else x for x in items]
    if any(isinstance(k, space.TensorVariable) for k in keys):
        unsupported("data_dependent_value", "sorting by tensors")
    return [_Keyed(k.as_python_constant(), i) if k.is_python_constant() else _Keyed(k, i, tx)
            for i, k in enumerate(keys)]


def sorted_items(tx, items, key=None, reverse=None, into=None):
    """Sort trackers of constants (optionally by an inlined key function). A comparison
    that fails raises CPython's TypeError in the trace; ``into`` (list.sort's list) is
    then left partly sorted, as CPython leaves it."""
    slots = _keyed(tx, items, key)
    try:
        slots.sort(reverse=bool(reverse and reverse.as_python_constant()))
    except Exception as error:  # noqa: BLE001 - the comparison's own error
        if into is not None:
            into.items = [items[s.index] for s in slots]
        if isinstance(error, (TracedException, Unsupported)):  # raised by a traced __lt__
            raise
        raise_python_error(error, "sort")
    return [items[s.index] for s in slots]


def _pick_item(tx, pick, items, key):
    """``min``/``max`` of trackers of constants: the item CPython's picks (the first of equals)."""
    slots = _keyed(tx, items, key)
    with python_operation(pick.__name__):
        chosen = pick(slots)
    return items[chosen.index]


def _empty_message(pick):
    """CPython's own message for min()/max() of nothing (it changed in 3.12)."""
    try:
        pick(())
    except ValueError as e:
        return str(e)


def minmax(pick):
    def model(tx, *args, key=None, default=None):
        """``min``/``max``: of one iterable, or of the arguments."""
        items = items_of(tx, args[0]) if len(args) == 1 else list(args)
        if not items:
            if default is None:
                raise_in_trace(ValueError, _empty_message(pick))
            return default
        keyless = key is None or _is_none(key)  # with a key function, its results are compared
        if keyless and any(isinstance(x, space.TensorVariable) for x in items):
            unsupported("data_dependent_value", f"{pick.__name__}() compares tensors")
        return _pick_item(tx, pick, items, key)
    return model


class _Sorting(list):
    """The items of a list while it sorts: empty, and noting any change (CPython
    notes any reallocation, ``allocated != -1``, which every change makes)."""

    touched = False


def _touching(name):
    def method(self, *args):
        self.touched = True
        return getattr(list, name)(self, *args)
    return method


for _name in ("append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort",
              "__setitem__", "__delitem__", "__iadd__", "__imul__"):
    setattr(_Sorting, _name, _touching(_name))


def list_sort(lst, tx, key=None, reverse=None):
    """list_sort_impl: the list is empty while the keys are computed and compared (a key
    function sees ``[]``); its items come back sorted (partly, when a comparison
    raises), and a change made meanwhile is undone and raises ValueError."""
    saved, lst.items = lst.items, _Sorting()
    sorting, partial = lst.items, types.SimpleNamespace(items=saved)
    try:
        ordered = sorted_items(tx, saved, key, reverse, into=partial)
    except BaseException:
        lst.items = partial.items
        raise
    modified = lst.items is not sorting or sorting.touched
    lst.items = ordered
    if modified:
        raise_in_trace(ValueError, "list modified during sort")
