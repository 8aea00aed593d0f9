"""How dicts merge: ``update()``, ``dict(...)``, ``|`` and ``|=``, OrderedDict's update.

``update`` is dict_merge (a dict's own table, its stored hashes reused, while
its type keeps dict's C iterator; any other mapping through ``keys()`` and
``[key]``) or dict_merge_from_seq2 (pairs). ``dict_or`` is the ``|`` of the
type Python asks (dict_or, odict_or, defdict_or). ``mutablemapping_update`` is
OrderedDict's, storing each item by ``target[k] = v``.
"""
import collections
import types

from ...errors import unsupported
from ..core import space
from ..core.call_shapes import builtin_base
from ..core.constant import ConstantVariable, items_of, wrap_constant
from ..core.exceptions import python_operation, raise_in_trace
from .dicts import ConstDictVariable, MERGEABLE, _DICT_METHODS, hash_key, table_added


@space.register
def dict_or(tx, left, right):
    """``left | right`` between dicts, OrderedDicts and defaultdicts (or subclasses). Python
    asks the right operand first when its type is a proper subclass of the left's (``dict |
    OrderedDict``), else the left. The base of the type asked decides: dict_or copies
    ``left`` into an exact dict; odict_or calls that type with ``left``; defdict_or makes one
    of that type with its factory from ``left``; each then updates it with ``right``."""
    handler = right if right.py_type is not left.py_type and issubclass(right.py_type, left.py_type) else left
    kind, base = handler.py_type, builtin_base(handler.py_type)
    if base is collections.OrderedDict and kind is not base:  # type(left)(left): its own __init__
        merged = space.new_user_dict(tx, kind, [left], {})
        _setitems(tx, merged, right)  # mutablemapping_update_arg: through its __setitem__
        return merged
    if base is collections.defaultdict and (kind is not base or handler.default_factory is None):
        unsupported("unsupported_value", f"{left.py_type.__name__} | {right.py_type.__name__} (a defaultdict "
                                         "subclass, or one whose factory the trace does not know)")
    kind = dict if base is dict else kind
    merged = ConstDictVariable.copied(left, tx, py_type=kind,
                                      default_factory=handler.default_factory if kind is collections.defaultdict else None)
    update(merged, tx, right)
    return merged


def _setitems(tx, target, source):
    """``target[k] = source[k]`` for each key (mutablemapping_update_arg with a mapping)."""
    exact = isinstance(source, ConstDictVariable) and source.py_type is dict
    keys = source.keys_vars() if exact else items_of(tx, source.call_method(tx, "keys", [], {}))
    for k in keys:
        target.setitem(tx, k, source.getitem(tx, k))


def mutablemapping_update(tx, target, args, kwargs):
    """OrderedDict's ``update(other=(), **kw)`` and ``__init__`` (mutablemapping_update): each
    item stored by ``target[k] = v``, so a subclass's ``__setitem__`` sees it. ``other``: an
    exact dict's items, a mapping's keys() and [key], an ``items()``, or pairs."""
    if len(args) > 1:
        raise_in_trace(TypeError, f"update expected at most 1 argument, got {len(args)}")
    if args:
        other = args[0]
        if isinstance(other, ConstDictVariable) and other.py_type is dict or _is_mapping(other):
            _setitems(tx, target, other)
        else:
            if hasattr(other.python_type(), "items"):
                other = other.call_method(tx, "items", [], {})
            for i, pair in enumerate(items_of(tx, other)):
                target.setitem(tx, *_pair(tx, i, pair))
    for k, v in kwargs.items():
        target.setitem(tx, ConstantVariable(k), v)


def update(d, tx, /, *args, **kwargs):
    """``d.update(other=(), **kwargs)`` (the keywords may be any names: ``update(d=1)``)."""
    if args:
        other = args[0]
        if isinstance(other, space.MappingProxyVariable):  # dict(E.__members__): its mapping's items
            other = other.mapping
        # dict_merge reads a dict's own table while its type keeps dict's C iterator; a
        # subclass's __iter__, or a mapping of another type, goes through keys() and [key]
        if isinstance(other, ConstDictVariable) and not isinstance(other.py_type.__iter__, types.FunctionType):
            # the stored hashes are reused, as dict_merge does (no key is hashed again)
            for h, (k, v) in list(other.items.items()):
                store(d, h, k, v)
            pairs = ()
        elif _is_mapping(other):  # PyDict_Merge: list(other.keys()), then other[key] for each, stored
            if issubclass(other.python_type(), types.MappingProxyType) or (
                    issubclass(other.python_type(), dict) and not isinstance(other, ConstDictVariable)):
                pairs = [(k, other.getitem(tx, k)) for k in other.unpack(tx)]
            else:  # any object with keys() and __getitem__ (a Mapping of the user's)
                keys = items_of(tx, other.call_method(tx, "keys", [], {}))
                pairs = ((k, other.getitem(tx, k)) for k in keys)
        else:  # a sequence of pairs (dict_merge_from_seq2)
            pairs = (_pair(tx, i, p) for i, p in enumerate(space.items_one_by_one(tx, other)))
        for k, v in pairs:
            store(d, hash_key(k, tx), k, v)
    for k, v in kwargs.items():
        store(d, k, ConstantVariable(k), v)


def _is_mapping(var) -> bool:
    """Does ``dict.update`` treat ``var`` as a mapping (its type has ``keys``)?"""
    try:
        return hasattr(var.python_type(), "keys")
    except Exception:  # a tracker that does not know its type: an iterable of pairs
        return False


def _pair(tx, i, element):
    """Element ``i`` of the sequence ``dict.update`` was given, as (key, value). One that
    is not a sequence of two raises what dict_merge_from_seq2 raises: the real
    ``dict()`` of ``i`` good pairs then a stand-in of the element (the constant
    itself, or as many Nones as it has items) raises the same TypeError/ValueError."""
    if element.is_python_constant() and not isinstance(element.as_python_constant(), (tuple, frozenset)):
        stand_in = element.as_python_constant()  # an int, a str of two characters...
    else:
        items = element.unpack(tx)
        if len(items) == 2:
            return items
        stand_in = [None] * len(items)
    with python_operation("dict.update"):
        dict([(None, None)] * i + [stand_in])
    return [wrap_constant(x) for x in stand_in]  # a constant of two items (``"ab"``)


def store(d, h, key, value):
    """``d[key] = value`` on the items table: an existing key keeps its first object."""
    pair = d.items.get(h)
    d.items[h] = (pair[0] if pair is not None else key, value)
    d.od_state += pair is None
    if pair is None:
        table_added(d, h)


_DICT_METHODS["update"] = update  # dict.update, looked up by ConstDictVariable.call_method
