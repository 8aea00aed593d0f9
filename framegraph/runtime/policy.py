"""What a user tells framegraph about how to trace a callable: torch.compiler's decorators.

    allow_in_graph(fn)          each call is one graph node, run on FakeTensors
                                while tracing, never traced into
    nonstrict_trace(fn)         the same; its arguments may be any pytree of
                                tensors and constants
    disallow_in_graph(fn)       each call is a graph break; it runs in CPython
    substitute_in_graph(orig)   trace the decorated Python function wherever the
                                program calls `orig` (usually a C function)
    assume_constant_result(fn)  run it while tracing and keep its answer as a
                                constant (no guard: it must not change)
    nested_compile_region(fn)   a region torch compiles once and reuses; traced
                                inline here, which gives the same answers
    wrap_numpy(fn)              a NumPy function called with tensors: tensors in
                                become ndarrays, ndarrays out become tensors

Each returns what torch's returns: the function itself, marked, for the
first five, a wrapper for `substitute_in_graph` and `wrap_numpy`. The marks
are read by the tracker builder (variables/builder.py, tensors/torch_fn.py),
after the function's identity is guarded.
"""
import functools
import inspect

import torch
from torch._higher_order_ops.invoke_subgraph import invoke_subgraph_placeholder

from ..variables.callables.trace_time import SUBSTITUTES
from ..variables.callables.functions import CONSTANT_RESULT_MARK
from ..variables.tensors.torch_fn import DISALLOWED, IN_GRAPH


def _callable(name, fn):
    if not callable(fn):
        raise TypeError(f"framegraph.{name}() expects a callable, got {type(fn).__name__}")


def _each(fn):
    # torch's decorators take a list or tuple of functions too
    return list(fn) if isinstance(fn, (list, tuple)) else [fn]


def allow_in_graph(fn):
    """Put each call of `fn` into the graph as one node instead of tracing into it.

    While tracing, `fn` runs on FakeTensors to learn its outputs; the backend
    then traces or calls it with real tensors. `fn` must be a pure function of
    its tensor and constant arguments returning tensors (or tuples/lists of
    them); what it does besides is not seen. A list or tuple of functions marks
    each one.
    """
    for one in _each(fn):
        _callable("allow_in_graph", one)
        DISALLOWED.discard(one)
        IN_GRAPH.add(one)
    return fn


def nonstrict_trace(traceable_fn):
    """Like `allow_in_graph`: each call is one graph node, its body run once on
    FakeTensors while tracing (torch traces it with make_fx the same way),
    with tensors, constants and tuples, lists and dicts of them as arguments."""
    _callable("nonstrict_trace", traceable_fn)
    if inspect.isclass(traceable_fn):
        raise TypeError("framegraph.nonstrict_trace() expects a function, got a class")
    return allow_in_graph(traceable_fn)


def disallow_in_graph(fn):
    """Break the graph at each call of `fn` (a torch op or any function): the call
    runs in CPython, and tracing resumes after it."""
    for one in _each(fn):
        _callable("disallow_in_graph", one)
        IN_GRAPH.discard(one)
        DISALLOWED.add(one)
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    """Register the decorated function as what framegraph traces in place of
    `original_fn` (a function a trace cannot see into, usually a C function).

    The decorator returns a function that calls `original_fn` when it runs
    for real. With `can_constant_fold_through`, a call whose arguments are all
    constants is answered by `original_fn` itself while tracing. Unless
    `skip_signature_check`, the two signatures must match (parameter names and
    defaults), as torch requires.
    """
    if not callable(original_fn) or inspect.isclass(original_fn):
        raise TypeError(f"substitute_in_graph expects a function, got {type(original_fn)!r}")

    def register(traceable_fn):
        if not inspect.isfunction(traceable_fn):
            raise TypeError(f"@substitute_in_graph(...) expects a function, got {type(traceable_fn)!r}")
        if not skip_signature_check:
            _check_signatures(original_fn, traceable_fn)
        if original_fn in SUBSTITUTES:
            raise ValueError(f"substitute_in_graph: {original_fn} already has a substitute "
                             f"({SUBSTITUTES[original_fn][0].__qualname__})")
        SUBSTITUTES[original_fn] = (traceable_fn, bool(can_constant_fold_through))

        @functools.wraps(traceable_fn)
        def calls_original(*args, **kwargs):
            return original_fn(*args, **kwargs)

        return calls_original

    return register


def _shape(sig):
    """(positional names, keyword-only names, defaults): what must agree, as torch compares."""
    params = sig.parameters.values()
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return (tuple(p.name for p in params if p.kind not in variadic + (inspect.Parameter.KEYWORD_ONLY,)),
            {p.name for p in params if p.kind == inspect.Parameter.KEYWORD_ONLY},
            {p.name: p.default for p in params if p.kind not in variadic})


def _check_signatures(original_fn, traceable_fn):
    try:
        original = inspect.signature(original_fn)
    except ValueError:  # a C function without a text signature: nothing to compare
        return
    traceable = inspect.signature(traceable_fn)
    wildcard = _shape(inspect.signature(lambda *args, **kwargs: None))
    if _shape(original) != _shape(traceable) and wildcard not in (_shape(original), _shape(traceable)):
        raise TypeError(f"Signature mismatch between {original_fn} and {traceable_fn}: "
                        f"{original} != {traceable}")


def assume_constant_result(fn):
    """Run `fn` while tracing and use its answer as a constant (its arguments must
    be constants). Nothing guards the answer: `fn` must give the same one for
    the life of the process. torch's own mark, so torch's decorator works too."""
    _callable("assume_constant_result", fn)
    setattr(fn, CONSTANT_RESULT_MARK, True)
    return fn


def nested_compile_region(fn=None, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """torch.compiler.nested_compile_region: mark a region that torch compiles once
    and reuses at each call. framegraph traces it inline at each call, which gives
    the same answers in the same one graph; the other arguments are accepted for
    torch's signature. Usable as `@nested_compile_region` and
    `@nested_compile_region(options=...)`."""
    if fn is None:
        return functools.partial(nested_compile_region, options=options, max_reuse_entries=max_reuse_entries,
                                 reuse_hash_fn=reuse_hash_fn)
    _callable("nested_compile_region", fn)
    return fn


def _call_region(func, *args, **kwargs):
    return func(*args, **kwargs)


# A region marked with torch's own nested_compile_region calls this placeholder,
# which raises while torch._dynamo compiles and calls the region in eager: traced
# as the eager call it is.
SUBSTITUTES[invoke_subgraph_placeholder] = (_call_region, False)


def wrap_numpy(fn):
    """Make a NumPy function take and return tensors: tensor arguments become
    ndarrays (sharing memory, as `Tensor.numpy()`), ndarray results become tensors.
    In compiled code the NumPy calls are traced as torch operations."""
    _callable("wrap_numpy", fn)
    import numpy as np  # only for programs that use NumPy

    def to_numpy(value):
        return value.numpy() if isinstance(value, torch.Tensor) else value

    def to_tensor(value):
        return torch.as_tensor(value) if isinstance(value, np.ndarray) else value

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        args, kwargs = torch.utils._pytree.tree_map(to_numpy, (args, kwargs))
        return torch.utils._pytree.tree_map(to_tensor, fn(*args, **kwargs))

    return wrapped


def is_exporting() -> bool:
    """False: framegraph has no export (torch.export traces with torch._dynamo);
    the tracer answers False too."""
    return False
