"""Trackers for framegraph's own callables, and for values a graph break leaves.

``compile()`` and ``disable()`` return ``_C.Wrapper`` objects (the callback
to set around the call, and the wrapped callable):

* a compiled function called from compiled code is inlined: its
  ``_framegraph_fn`` is traced like any user function;
* a disabled function (no callback) never runs in a graph: calling it is a
  graph break (``disabled_function``), and so is ``framegraph.graph_break()``
  (``explicit_graph_break``), which is a disabled no-op.

``BreakingCallVariable`` is that kind of callable, also used by the builder
for C functions without a model (``unsupported_call``): the value itself can
be loaded, stored and passed on; only calling it breaks the graph.

A graph break inside ``with torch.no_grad():`` hands the resume function the
bound ``__exit__`` of a ``torch.set_grad_enabled(mode)`` object (see
``codegen/rebuild.py``); ``grad_mode_exit`` wraps it back into the same
``WithExitVariable`` the tracer had, so the rest of the block traces on.
"""
import types

import torch

from ...errors import unsupported
from ...guards.sources import AttrSource
from ..core.base import VariableTracker, guard_identity
from ..core.constant import ConstantVariable
from ..tensors.ctx_managers import GradModeVariable, WithExitVariable
from ..tensors.tensor import TensorVariable
from .functions import marked_constant_result


_C_CALLABLES = (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
                 types.MethodWrapperType, types.ClassMethodDescriptorType)


class BreakingCallVariable(VariableTracker):
    """A callable that must run in CPython: calling it is a graph break
    (catalogue ``entry``); loading, storing and passing it around is not."""

    def __init__(self, fn, entry: str, context: str = "", **kwargs):
        super().__init__(**kwargs)
        self.fn, self.entry = fn, entry
        name = getattr(fn, "__qualname__", None) or repr(fn)
        self.context = context or f"call to {name}()"

    def python_type(self):
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def call(self, tx, args, kwargs):
        unsupported(self.entry, self.context)

    def getattr(self, tx, name):
        """The names of a C callable (``OrderedDict.update.__name__``, what ``assertRaises``
        prints): fixed for C code, as its identity is guarded."""
        if name in ("__name__", "__qualname__", "__module__", "__doc__") and isinstance(self.fn, _C_CALLABLES) \
                and hasattr(self.fn, name):  # a method descriptor has no __module__
            return ConstantVariable(getattr(self.fn, name))
        return super().getattr(tx, name)

    def __repr__(self):
        return f"BreakingCallVariable({getattr(self.fn, '__qualname__', '?')})"


def wrap_framegraph_wrapper(tx, wrapper, source):
    """builder rule for ``_C.Wrapper``: guard by identity, then inline or break."""

    guard_identity(tx, wrapper, source)
    entry = getattr(wrapper._framegraph_fn, "framegraph_break_entry", None)
    if entry is not None:  # framegraph.graph_break() (breaks/api.py)
        return BreakingCallVariable(wrapper, entry)
    if wrapper._framegraph_callback is None:
        return BreakingCallVariable(wrapper, "disabled_function")
    # the wrapper's identity (guarded) fixes the function it wraps
    return tx.wrap(wrapper._framegraph_fn)


def is_grad_mode_exit(method) -> bool:
    """Is ``method`` the bound ``__exit__`` of a ``torch.set_grad_enabled`` object?"""
    return type(method.__self__) is torch.set_grad_enabled and method.__func__.__name__ == "__exit__"


def grad_mode_exit(tx, method, source):
    """The ``with`` block's exit, guarded on the modes the object switches between."""
    ctx = method.__self__
    ctx_source = AttrSource(source, "__self__") if source is not None else None
    if ctx_source is not None:
        tx.output.add_guard("TYPE_MATCH", ctx_source, type(ctx))
        for attr in ("mode", "prev"):
            tx.output.add_guard("CONSTANT_MATCH", AttrSource(ctx_source, attr), getattr(ctx, attr))
    var = GradModeVariable(bool(ctx.mode))
    var.previous = bool(ctx.prev)
    return WithExitVariable(var, source=source)


class LruCacheVariable(BreakingCallVariable):
    """A ``functools.lru_cache`` wrapper (``_lru_cache_wrapper``, a C callable).

    What a call returns depends on the cache: a hit returns the object stored
    by an earlier call (stale if the function is not pure, or its tensor
    argument was changed in place since). The call is traced through
    ``__wrapped__`` only where eager is sure to miss: an argument is a tensor
    made in this trace (the key hashes it by identity, and the cache holds
    every key it stored alive, so a fresh tensor matches no entry), or the
    cache keeps nothing (``maxsize=0``). A miss only adds an entry no later
    call can hit, so the result and the side effects are the wrapped
    function's. A wrapped function marked as having a constant result
    (``functions.CONSTANT_RESULT_MARK``, transformers' ``is_torch_*_available``)
    called with constants is answered now by the real wrapper, its cache
    included. Any other call is a graph break at the call: CPython runs it
    with the real cache.

    Why a call with constant arguments does not consult the real cache at trace
    time: the compiled code is reused on later calls, and by then the answer
    may differ. An entry can be evicted (``maxsize``) or dropped
    (``cache_clear()``), and eager then runs the function again, with its side
    effects; even a hit changes the wrapper (its ``hits`` count in
    ``cache_info()`` and the LRU order decide what a later miss evicts). A
    guard cannot ask the cache either: a lookup through the wrapper is itself
    a hit or a miss, and the C cache has no other way in. So there is nothing
    sound to fold, and the call is left to CPython.
    """

    def __init__(self, fn, **kwargs):
        super().__init__(fn, "unsupported_call",
                         f"{getattr(fn, '__qualname__', fn)}: a functools.lru_cache wrapper whose "
                         "cache may hold the result (no argument is a tensor made in the graph)", **kwargs)

    def call(self, tx, args, kwargs):
        constant = marked_constant_result(tx, self.fn.__wrapped__, self.fn, args, kwargs)
        if constant is not None:
            return constant
        if not self._surely_misses(list(args) + list(kwargs.values())):
            unsupported(self.entry, self.context)
        source = AttrSource(self.source, "__wrapped__") if self.source is not None else None
        return tx.wrap(self.fn.__wrapped__, source).call(tx, args, kwargs)

    def _surely_misses(self, values) -> bool:
        if self.fn.cache_parameters().get("maxsize") == 0:
            return True
        fresh = [v for v in values if isinstance(v, TensorVariable) and v.source is None]
        # the others must hash in eager without raising or running user code:
        # hashable constants, objects hashed by identity (``self``, a module)
        return bool(fresh) and all(v in fresh or _hashes_quietly(v) for v in values)


def _hashes_quietly(v) -> bool:
    if v.is_python_constant():
        try:
            hash(v.as_python_constant())
            return True
        except TypeError:
            return False
    try:
        return v.source is not None and v.python_type().__hash__ is object.__hash__
    except Exception:  # a tracker that does not know its type
        return False


# pybind11's method descriptor (PyInstanceMethod_Type, not in `types`): how
# torch's C++ classes (Reducer, Logger, Store) expose their methods.
INSTANCE_METHOD = type(torch._C._distributed_c10d.Store.__dict__["add"]) \
    if torch.distributed.is_available() else None


def cpp_method(attr, obj):
    """``obj.name`` where the class has a pybind11 method: its ``__get__`` binds the
    builtin to ``obj`` as a function's does; the C++ body is opaque, so calling it is
    a graph break at the CALL."""
    return BreakingCallVariable(types.MethodType(attr.__func__, obj), "unsupported_call",
                                f"C++ method {type(obj).__name__}.{attr.__func__.__name__}")
