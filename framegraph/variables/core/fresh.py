"""Results of a pure builtin run at trace time on constants, as trackers.

A pure function of immutable arguments cannot hand back an object the
program already holds, so a list or dict in its result (``"a b".split()``,
``dict.fromkeys("ab")``, ``sorted(t)``) is a new object made in the trace: a
mutable tracker the program may go on to change, rebuilt after the graph
like any list or dict made there. Sets stay constants-only: a set rebuilt
item by item need not iterate in the real one's order.
"""
from . import space
from .constant import wrap_constant


def wrap_fresh(value):
    """The tracker of ``value``, a new object computed at trace time from constants."""
    kind = type(value)
    if kind is list:
        return space.ListVariable([wrap_fresh(v) for v in value])
    if kind is dict:
        return space.ConstDictVariable([(wrap_constant(k), wrap_fresh(v)) for k, v in value.items()])
    if kind is tuple and any(type(v) in (list, dict) for v in value):
        return space.TupleVariable([wrap_fresh(v) for v in value])
    return wrap_constant(value)
