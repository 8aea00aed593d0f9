"""The core: the tracker protocol and what every family stands on.

``base`` (the slot-shaped protocol every tracker implements), ``constant``,
``exceptions`` (raising and catching in the trace), ``binding`` (arguments to
parameters), ``call_shapes`` (CPython's own TypeErrors for builtins), the
generic protocols that dispatch through tracker methods (``ops``: operators;
``iterator``: ``tp_iter``/``tp_iternext``; ``number_protocol``; ``reprs``),
``aliases`` (one tracker per real object), ``interpreter_state``, ``fresh``
(results of pure builtins as trackers) and ``space``, through which the core
reaches the kinds the families define. The core imports no family.
"""
# Every module is loaded with its family, so that what it registers in the space is there
# before any trace runs.
from . import (aliases, base, binding, call_shapes, constant, exceptions,
               fresh, interpreter_state, iterator, number_protocol, ops, reprs,
               space)  # noqa: F401
