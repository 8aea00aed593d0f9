"""``copy.copy`` and ``copy.deepcopy`` of trackers.

The ``copy`` module cannot be inlined usefully (it dispatches through
``__reduce_ex__``, a C method, and keys its memo on ``id()``), so it is
modelled the way CPython's copy behaves for the values traced code copies:

* constants (and tuples of them) are returned as is;
* lists, tuples and dicts are rebuilt from (deep copies of) their items;
* a plain object (no ``__deepcopy__``/``__copy__``, ``__reduce_ex__``,
  ``__getstate__``/``__setstate__`` or ``__slots__`` of its own) becomes a
  new object of the same class made in the trace, whose attributes are
  (deep copies of) the original's. For an object from outside the frame
  every attribute is read through its source, so guards cover all of them:
  a config copied in the trace is copied again, correctly, on the next call.

Anything else (tensors, modules, objects with custom copy protocols) is a
graph break. The memo keeps shared references shared, as ``deepcopy`` does.
"""
import copy

from ...errors import unsupported
from ...guards.sources import DictItemSource, GenericAttrSource
from ...side_effects import DELETED
from ..containers.dicts import ConstDictVariable
from ..containers.lazy_dict import LazyDictVariable
from ..containers.lists import ListVariable, TupleVariable
from ..containers.sets import SetVariable
from ..core.base import VariableTracker
from .instance_dict import InstanceDictVariable
from .user_defined import UserDefinedObjectVariable

_COPY_HOOKS = ("__deepcopy__", "__copy__", "__reduce_ex__", "__reduce__", "__getstate__",
               "__setstate__", "__slots__")


def _plain_class(cls) -> bool:
    """Copied by CPython through object.__reduce_ex__ and a plain __dict__ update."""
    for name in _COPY_HOOKS:
        for klass in cls.__mro__[:-1]:  # every class but object
            if name in klass.__dict__:
                return False
    return True


def copy_value(tx, var: VariableTracker, deep: bool, memo=None) -> VariableTracker:
    memo = {} if memo is None else memo
    key = id(getattr(var, "identity", var))
    if key in memo:
        return memo[key]
    if var.is_python_constant() and not isinstance(var, (ListVariable, ConstDictVariable)):
        return var
    result = _copy(tx, var, deep, memo)
    memo[key] = result
    return result


def _item(tx, var, deep, memo):
    return copy_value(tx, var, deep, memo) if deep else var


def _copy(tx, var, deep, memo):
    if type(var) in (ListVariable, TupleVariable):
        return type(var)([_item(tx, v, deep, memo) for v in var.items])
    if type(var) is ConstDictVariable or type(var) is LazyDictVariable:  # a lazy one reads all items
        return ConstDictVariable([(k, _item(tx, v, deep, memo)) for k, v in var.items.values()],
                                 py_type=var.py_type)
    if type(var) is SetVariable and var.py_type in (set, frozenset):
        if not deep:  # copy.copy: set.copy (set_merge copies the table); a frozenset is itself
            if var.py_type is frozenset:
                return var
            copied = SetVariable(members=set(var.members))
            copied.table_known = var.table_known
            return copied
        # deepcopy: __reduce_ex__ gives (type, (list of the items,)): rebuilt item by item
        return SetVariable([_item(tx, item, deep, memo) for item in var.unpack(tx)], py_type=var.py_type)
    if isinstance(var, InstanceDictVariable):
        return ConstDictVariable([(k, _item(tx, v, deep, memo)) for k, v in var._snapshot(tx).items.values()])
    if type(var) is UserDefinedObjectVariable and _plain_class(var.cls):
        new = UserDefinedObjectVariable(None, var.cls)
        memo[id(var.identity)] = new
        for name, value in _attributes(tx, var).items():
            new.attrs[name] = _item(tx, value, deep, memo)
        return new
    unsupported("unsupported_call", f"copy.{'deep' if deep else ''}copy of {var}")


def _attributes(tx, obj):
    """Every instance attribute of ``obj``, as trackers (read through sources)."""
    if obj.value is None:
        return dict(obj.attrs)

    if any(v is DELETED for v in obj.attrs.values()):  # `del obj.name` in this trace: vars(obj.value) has it
        unsupported("unsupported_call", f"copying {obj} after a del of one of its attributes")
    attrs = {}
    # what vars(obj)[name] is, even for a class overriding __getattribute__ or
    # shadowing an instance attribute with a class descriptor
    instance_dict = GenericAttrSource(obj.source, "__dict__") if obj.source is not None else None
    for name, value in vars(obj.value).items():
        source = DictItemSource(instance_dict, name) if instance_dict is not None else None
        attrs[name] = obj.attrs[name] if name in obj.attrs else tx.wrap(value, source)
    return attrs


def _deepcopy(tx, x, memo=None):
    if memo is not None and not (memo.is_python_constant() and memo.as_python_constant() is None):
        unsupported("unsupported_call", "copy.deepcopy with a memo")
    return copy_value(tx, x, True)


def _shallow(tx, x):
    return copy_value(tx, x, False)


COPY_MODELS = {copy.deepcopy: _deepcopy, copy.copy: _shallow}
