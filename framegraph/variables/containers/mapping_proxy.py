"""``types.MappingProxyType(d)``: a read-only, live view of a dict made in the trace.

Reads go to the dict tracker (so they see later writes to ``d``, as the real
proxy does); writes raise ``TypeError`` as CPython's do; ``copy()`` and ``|``
give plain dicts. Rebuilt as ``MappingProxyType(d)`` over the rebuilt dict.
"""
import operator
import types

from ...errors import unsupported
from ..core import space
from ..core.base import BoundMethodVariable, VariableTracker
from ..core.exceptions import raise_in_trace
from ..core.ops import compare
from .dicts import ConstDictVariable

_COMPARISONS = {operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=", operator.gt: ">",
                operator.ge: ">="}
_READS = ("get", "keys", "values", "items", "copy", "__getitem__", "__contains__", "__len__")


@space.register
class MappingProxyVariable(VariableTracker):
    def __init__(self, mapping, **kwargs):
        super().__init__(**kwargs)
        self.mapping = mapping

    def python_type(self):
        return types.MappingProxyType

    def getitem(self, tx, key):
        return self.mapping.getitem(tx, key)

    def setitem(self, tx, key, value):
        raise_in_trace(TypeError, "'mappingproxy' object does not support item assignment")

    def delitem(self, tx, key):
        raise_in_trace(TypeError, "'mappingproxy' object does not support item deletion")

    def contains(self, tx, item):
        return self.mapping.contains(tx, item)

    def length(self, tx):
        return self.mapping.length(tx)

    def truth(self, tx):
        return self.mapping.truth(tx)

    def iter(self, tx):
        return self.mapping.iter(tx)

    def unpack(self, tx):
        return self.mapping.unpack(tx)

    def getattr(self, tx, name):
        if name in _READS:
            return BoundMethodVariable(self, name)
        return super().getattr(tx, name)

    def call_method(self, tx, name, args, kwargs):
        if name not in _READS:
            unsupported("unsupported_call", f"mappingproxy.{name}")
        return self.mapping.call_method(tx, name, args, kwargs)

    def binop(self, tx, fn, other, reflected):
        symbol = _COMPARISONS.get(fn)
        if symbol is not None:  # mappingproxy_richcompare: the mapping's own comparison
            other = other.mapping if isinstance(other, MappingProxyVariable) else other
            return compare(tx, symbol, other, self.mapping) if reflected else compare(tx, symbol, self.mapping, other)
        if fn not in (operator.or_,):
            return NotImplemented
        other = other.mapping if isinstance(other, MappingProxyVariable) else other
        mine = self.mapping.call_method(tx, "copy", [], {})
        return other.binop(tx, fn, mine, True) if reflected else mine.binop(tx, fn, other, False)

    def reconstruct(self, cg):
        cg.emit_op("PUSH_NULL")
        cg.load_const(types.MappingProxyType)
        cg(self.mapping)
        cg.call(1)


def make_mapping_proxy(tx, mapping):
    """``MappingProxyType(mapping)`` over a dict tracker."""
    if not isinstance(mapping, ConstDictVariable):
        unsupported("unsupported_call", f"mappingproxy of {mapping}")
    return MappingProxyVariable(mapping)


