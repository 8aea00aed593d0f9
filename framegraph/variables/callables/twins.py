"""C accelerators traced through the standard library's own Python twin.

``heapq``, ``bisect`` and ``collections`` are written in Python, and each
ends with ``from _heapq import *`` (``_bisect``, ``_collections``) inside a
``try``: the C functions replace the Python ones when the accelerator loads.
The Python definitions are the reference the C code is tested against
(CPython's own tests run both), so the tracer loads a private copy of the
module with the accelerator blocked and traces the Python function where the
program calls the C one. The program still sees the C function: loading,
passing and rebuilding it is the original object (``reconstruct``).

Where the two can differ, the twin is not used and the call stays a graph
break that CPython runs:

* the C functions check their arguments' types first (``heappush`` wants a
  list, ``hi=-1`` means "the end" to ``bisect``): each twin has a check of
  the arguments it accepts;
* the C code raises where the Python code may not, and with other messages
  (``heappop([])`` is "index out of range" in C, "pop from empty list" in
  Python; a comparison that resizes the heap is a RuntimeError only in C).
  So the twin runs only on items whose comparisons run no user code
  (trace-time constants of builtin types), and an exception that leaves the
  twin is never raised in the trace: it becomes a graph break at the
  program's own call, where the C function raises what it raises.
"""
import bisect
import collections
import functools
import heapq
import importlib.util
import sys

from ...errors import unsupported
from ..core.base import CallableVariable
from ..core.exceptions import TracedException

# A module, and the accelerator its Python code tries to import.
_SOURCES = {heapq: "_heapq", bisect: "_bisect", collections: "_collections", functools: "_functools"}
_loaded = {}


def _python_module(module):
    """A private copy of ``module`` executed with its accelerator blocked."""
    if module not in _loaded:
        blocked = _SOURCES[module]
        spec = importlib.util.find_spec(module.__name__)
        spec = importlib.util.spec_from_file_location(f"framegraph._twin_{module.__name__}", spec.origin,
                                                      submodule_search_locations=spec.submodule_search_locations)
        copy = importlib.util.module_from_spec(spec)
        saved = sys.modules.get(blocked)
        sys.modules[blocked] = None  # `from _heapq import *` raises ImportError
        try:
            spec.loader.exec_module(copy)
        finally:
            if saved is None:
                del sys.modules[blocked]
            else:
                sys.modules[blocked] = saved
        _loaded[module] = copy
    return _loaded[module]


def _plain(value) -> bool:
    """A trace-time constant whose comparisons and hash run no user code."""
    if not value.is_python_constant():
        return False
    try:
        constant = value.as_python_constant()
    except Exception:
        return False
    return _plain_constant(constant)


def _plain_constant(constant) -> bool:
    if isinstance(constant, tuple):
        return all(_plain_constant(c) for c in constant)
    return type(constant) in (bool, int, float, str, bytes, type(None))


def _items(seq):
    items = getattr(seq, "items", None)
    return items if isinstance(items, list) else None


def _heap_args(args, kwargs):
    """``heapq``'s C functions take a list (``PyList_Check``) and compare its items."""
    if kwargs or not args or not issubclass(args[0].python_type(), list):
        return False
    items = _items(args[0])
    return items is not None and all(_plain(v) for v in list(items) + list(args[1:]))


def _bisect_args(args, kwargs):
    """``bisect``: a list or tuple of plain items, no key, and ``lo``/``hi`` as Python
    spells them (C reads ``hi=-1`` as "the end", the Python twin does not)."""
    if not args or "key" in kwargs or set(kwargs) - {"lo", "hi"}:
        return False
    if not issubclass(args[0].python_type(), (list, tuple)) or _items(args[0]) is None:
        return False
    if not all(_plain(v) for v in _items(args[0]) + list(args[1:]) + list(kwargs.values())):
        return False
    bounds = list(args[2:4]) + [kwargs[k] for k in ("lo", "hi") if k in kwargs]
    return all(b.as_python_constant() is None or (type(b.as_python_constant()) is int
                                                 and b.as_python_constant() >= 0) for b in bounds)


def _count_args(args, kwargs):
    """``Counter.update``'s helper: ``mapping[elem] = mapping.get(elem, 0) + 1`` for
    each element, which is what the C loop does too (through the same methods)."""
    return len(args) == 2 and not kwargs


# The C function -> (module whose Python twin replaces it, argument check).
_TWINS = {
    **{getattr(heapq, n): (heapq, _heap_args)
       for n in ("heappush", "heappop", "heapify", "heapreplace", "heappushpop")},
    **{getattr(bisect, n): (bisect, _bisect_args)
       for n in ("bisect_left", "bisect_right", "insort_left", "insort_right")},
}
def _cmp_to_key_args(args, kwargs):
    """``functools.cmp_to_key(mycmp)``: the twin's K compares as the C KeyWrapper does
    (``mycmp(a.obj, b.obj) < 0``); both wrap any callable."""
    return len(args) + len(kwargs) == 1 and set(kwargs) <= {"mycmp"}


def _reduce_args(args, kwargs):
    """``functools.reduce(function, iterable[, initial])``: positional only, in C and Python
    alike; the twin's loop is C's (a raising function or iterable is a break: C words
    some errors its own way)."""
    return not kwargs and len(args) in (2, 3)


_TWINS[functools.cmp_to_key] = (functools, _cmp_to_key_args)
_TWINS[functools.reduce] = (functools, _reduce_args)
if hasattr(collections, "_count_elements"):
    _TWINS[collections._count_elements] = (collections, _count_args)


def has_twin(fn) -> bool:
    """Is ``fn`` a C accelerator with a Python twin the tracer may run instead?"""
    try:
        return fn in _TWINS
    except TypeError:  # unhashable
        return False


class TwinFunctionVariable(CallableVariable):
    """A C accelerator function (``heapq.heappush``): calls trace its Python twin
    when the arguments pass the twin's check, and are a graph break otherwise."""

    def call(self, tx, args, kwargs):
        module, accepts = _TWINS[self.fn]
        name = f"{module.__name__}.{self.fn.__name__}"
        if not accepts(args, kwargs):
            unsupported("unsupported_call", f"C function {name} (arguments its Python twin may not "
                                            "treat as C does)")
        twin = getattr(_python_module(module), self.fn.__name__)
        try:
            return tx.wrap(twin).call(tx, args, kwargs)
        except TracedException:
            unsupported("unsupported_call", f"C function {name} raises (CPython's error, not the twin's)")

    def __repr__(self):
        return f"TwinFunctionVariable({self.fn.__qualname__})"
