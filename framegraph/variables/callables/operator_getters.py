"""``operator.itemgetter``, ``attrgetter`` and ``methodcaller``: callables made of a recipe.

Each holds what it was made with (keys, dotted attribute names, a method name
and its arguments) and, called on an object, does what CPython's C code does:
``obj[k]`` for each key, ``getattr`` along each dotted path, ``getattr(obj,
name)(*args, **kwargs)``; with several keys or names the results come as a
tuple. Rebuilt after the graph as a call to the constructor with the same
recipe.
"""
import operator

from ...errors import unsupported
from ..containers.dicts import ConstDictVariable
from ..containers.lists import TupleVariable
from ..core.base import VariableTracker


class _Getter(VariableTracker):
    maker = None  # the operator class this tracker models

    def __init__(self, args, kwargs=None, **kw):
        super().__init__(**kw)
        self.args, self.kwargs = list(args), dict(kwargs or {})

    def python_type(self):
        return self.maker

    def call(self, tx, args, kwargs):
        if len(args) != 1 or kwargs:
            unsupported("operator_error", f"{self.maker.__name__} expected 1 argument, got {len(args)}")
        return self.apply(tx, args[0])

    def reconstruct(self, cg):
        cg.emit_op("PUSH_NULL")
        cg.load_const(_make)
        cg.load_const(self.maker)
        cg(TupleVariable(self.args))
        cg(ConstDictVariable.from_kwargs(self.kwargs))
        cg.call(3)

    def __repr__(self):
        return f"{type(self).__name__}({self.args})"


def _make(maker, args, kwargs):
    """``maker(*args, **kwargs)``: the rebuilt getter."""
    return maker(*args, **kwargs)


class ItemGetterVariable(_Getter):
    maker = operator.itemgetter

    def apply(self, tx, obj):
        items = [obj.getitem(tx, key) for key in self.args]
        return items[0] if len(items) == 1 else TupleVariable(items)


class AttrGetterVariable(_Getter):
    maker = operator.attrgetter

    def apply(self, tx, obj):
        results = []
        for name in self.args:
            value = obj
            for part in name.as_python_constant().split("."):
                value = value.getattr(tx, part)
            results.append(value)
        return results[0] if len(results) == 1 else TupleVariable(results)


class MethodCallerVariable(_Getter):
    maker = operator.methodcaller

    def apply(self, tx, obj):
        name, args = self.args[0].as_python_constant(), self.args[1:]
        return obj.getattr(tx, name).call(tx, args, self.kwargs)


def _constant_strs(args, what):
    if not all(a.is_python_constant() and type(a.as_python_constant()) is str for a in args):
        unsupported("operator_error", f"{what} must be str constants")


def _itemgetter(tx, *keys):
    if not keys:
        unsupported("operator_error", "itemgetter expected 1 argument, got 0")
    return ItemGetterVariable(keys)


def _attrgetter(tx, *names):
    if not names:
        unsupported("operator_error", "attrgetter expected 1 argument, got 0")
    _constant_strs(names, "attribute names")
    return AttrGetterVariable(names)


def _methodcaller(tx, name, *args, **kwargs):
    _constant_strs([name], "method name")
    return MethodCallerVariable([name, *args], kwargs)


MODELS = {operator.itemgetter: _itemgetter, operator.attrgetter: _attrgetter, operator.methodcaller: _methodcaller}
