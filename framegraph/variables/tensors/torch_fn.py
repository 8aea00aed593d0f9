"""torch callables: recorded as graph nodes, or answered at trace time.

``TorchFunctionVariable`` wraps ``torch.*``, ``torch.nn.functional.*``,
``torch.linalg/fft/special.*``, ``torch.Tensor.*`` accessed on the class and
``torch.ops`` overloads. Calling one records a ``call_function`` node; the
op runs once on FakeTensors, and a result that is not a tensor (a bool from
``torch.is_floating_point``, a config getter) becomes a trace-time constant.

``TRACE_TIME`` lists callables answered by the tracer itself:
``torch.compiler.is_compiling()`` is True while tracing (like torch.compile,
because real libraries branch on it), ``torch.jit.is_scripting()`` False,
``torch.is_grad_enabled()`` the trace's grad mode (guarded).
Callables that change global state outside the graph are refused.
"""
import types

import torch

from ...errors import unsupported
from ..containers.lists import BaseListVariable
from ..core import space
from ..core.base import CallableVariable
from ..core.constant import ConstantVariable, wrap_constant
from .control_flow import TRACED_WRAPPERS
from .tensor import TensorVariable

# What the user said about a callable (framegraph.allow_in_graph, nonstrict_trace,
# disallow_in_graph; runtime/policy.py fills them). Sets of the objects themselves:
# torch's C functions take neither attributes nor weak references.
IN_GRAPH = set()     # one graph node, run on FakeTensors, never inlined
DISALLOWED = set()   # a graph break: the call runs in CPython

# Modules whose functions are single graph nodes (not inlined).
GRAPH_MODULES = frozenset({
    "torch", "torch.functional", "torch.nn.functional", "torch._C._nn", "torch._C._linalg",
    "torch._C._fft", "torch._C._special", "torch._C._VariableFunctions", "torch.linalg", "torch.fft",
    "torch.special", "torch._C", "torch.random", "torch._tensor", "torch.nn.init",
})
# Name prefixes of torch functions with effects outside the graph.
# Private torch C functions that only read state (a trace may ask them now).
_QUERY_PREFIXES = ("_get", "_is_", "_has_", "_are_", "_len_", "_dispatch_tls_is_", "_dispatch_has_",
                   "_dispatch_keys", "_dispatch_key_", "_saved_tensors_hooks_is_enabled",
                   "_saved_tensors_hooks_get_", "_debug_has", "_jit_is")
_REFUSED_PREFIXES = ("set_", "_set_", "manual_seed", "seed", "save", "load", "use_deterministic",
                     "set_default", "_jit", "compile", "cuda")


def _is_compiling_fns():
    # framegraph.is_compiling joins them when runtime loads the pipeline (runtime/pipeline.py)
    fns = [torch.compiler.is_compiling]
    utils = getattr(torch, "_utils", None)
    if utils is not None and hasattr(utils, "is_compiling"):
        fns.append(utils.is_compiling)
    return fns


def _trace_time_table():
    table = {
        torch.jit.is_scripting: lambda tx: False,
        torch.jit.is_tracing: lambda tx: False,
        torch._C._get_tracing_state: lambda tx: None,
        torch.is_grad_enabled: lambda tx: tx.output.grad_mode,
        torch.get_default_dtype: lambda tx: torch.get_default_dtype(),
        # the tracer enters autocast for real where the graph does (ctx_managers.py), and
        # the state at frame entry is guarded (GLOBAL_STATE)
        torch.is_autocast_enabled: lambda tx, *a, **k: torch.is_autocast_enabled(
            *(v.as_python_constant() for v in a), **{n: v.as_python_constant() for n, v in k.items()}),
        torch.is_inference_mode_enabled: lambda tx: torch.is_inference_mode_enabled(),
        torch.overrides.has_torch_function: lambda tx, *a, **k: False,
        torch.overrides.has_torch_function_unary: lambda tx, *a, **k: False,
        torch.overrides.has_torch_function_variadic: lambda tx, *a, **k: False,
        torch._C._is_torch_function_enabled: lambda tx: True,
    }
    for fn in _is_compiling_fns():
        table[fn] = lambda tx: True
    # torch's own wrappers ask it to take their traceable path (control_flow.py)
    table[torch.compiler.is_dynamo_compiling] = lambda tx: True
    return table


TRACE_TIME = _trace_time_table()


# torch._dynamo's hints about an input's dimensions (flex_attention's wrapper calls
# mark_static in a trace). A trace decides which sizes are symbolic from the sizes it
# sees, and the graph is right either way: called in a trace, a hint does nothing.
_SHAPE_HINTS = frozenset({"mark_static", "mark_dynamic", "maybe_mark_dynamic", "mark_unbacked",
                          "mark_static_address"})


def is_shape_hint(value) -> bool:
    """Is ``value`` one of torch._dynamo's shape hints (read by name: never imported here)?"""
    return getattr(value, "__module__", None) == "torch._dynamo.decorators" and \
        getattr(value, "__name__", None) in _SHAPE_HINTS


def _in(value, table) -> bool:
    try:
        return value in table
    except TypeError:  # unhashable
        return False


def is_disallowed(value) -> bool:
    """Did the user ask for a graph break at every call of ``value``?"""
    return bool(DISALLOWED) and _in(value, DISALLOWED)


def is_graph_callable(value) -> bool:
    """Is ``value`` a torch callable that becomes one graph node?"""
    if _in(value, IN_GRAPH):
        return True
    if isinstance(value, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return True
    if isinstance(value, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return getattr(value, "__objclass__", None) in (torch.Tensor, torch._C.TensorBase)
    if isinstance(value, types.BuiltinFunctionType):
        owner = getattr(value, "__self__", None)
        module = getattr(value, "__module__", None) or getattr(owner, "__name__", "")
        return module in GRAPH_MODULES or str(module).startswith("torch.")
    if isinstance(value, types.FunctionType):
        return value.__module__ in GRAPH_MODULES and value not in TRACED_WRAPPERS
    return False


@space.register
def lower_constants(args, kwargs):
    """Trackers of constants -> Python values (for trace-time metadata calls)."""
    try:
        return ([a.as_python_constant() for a in args],
                {k: v.as_python_constant() for k, v in kwargs.items()})
    except Exception:
        unsupported("unsupported_value", "non-constant argument of a trace-time function")


def _has_tensor(values) -> bool:
    for v in values:
        if isinstance(v, TensorVariable):
            return True
        if isinstance(v, BaseListVariable) and _has_tensor(v.items):
            return True
    return False


def _functorch_call(fn, name, args):
    """torch.func's C layer. A trace never runs inside a transform (convert_frame runs
    such frames unmodified), so a query about the tensors of a trace answers as for
    plain tensors; the rest (``_vmap_increment_nesting``, ``_add_batch_dim``, ...) moves
    the interpreter stack of vmap/grad, state a graph cannot hold: a break, and the
    transform runs in CPython."""
    if name.startswith("is_") and len(args) == 1 and isinstance(args[0], TensorVariable):
        return ConstantVariable(False)
    if name == "maybe_current_level" and not args:
        return ConstantVariable(None)
    unsupported("unsupported_call", f"torch._C._functorch.{name}: a torch.func transform runs in CPython")


class TorchFunctionVariable(CallableVariable):
    """A torch callable: one graph node (run on FakeTensors), or a trace-time answer."""

    def call(self, tx, args, kwargs):
        if _in(self.fn, IN_GRAPH):  # the user's: whatever its name, a node
            return tx.output.call_function(tx, self.fn, args, kwargs)
        if self.fn in TRACE_TIME:
            return wrap_constant(TRACE_TIME[self.fn](tx, *args, **kwargs))
        if self.fn in space.FROM_NUMPY:  # torch.from_numpy(a) of an ndarray of the trace
            made = space.torch_of_ndarray(tx, self.fn, args, kwargs)
            if made is not None:
                return made
        if self.fn in (torch.is_tensor, torch.overrides.is_tensor_like):
            return ConstantVariable(isinstance(args[0], TensorVariable))
        name = getattr(self.fn, "__name__", "")
        if getattr(self.fn, "__module__", None) == "torch._C._functorch":
            return _functorch_call(self.fn, name, args)
        if name.startswith(_REFUSED_PREFIXES) and self.fn is not torch.set_grad_enabled:
            unsupported("unsupported_call", f"torch.{name} changes state outside the graph")
        if name.startswith("_") and not _has_tensor(list(args) + list(kwargs.values())):
            # a private torch._C query (dispatch stack, tracing state): ask it now, for real.
            # Only a query: a C function that changes state (`_saved_tensors_hooks_disable`,
            # `_enter_dual_level`, `_push_on_torch_function_stack`) would change it once, at
            # trace time, and never on a call of the compiled code
            if isinstance(self.fn, types.BuiltinFunctionType) and not name.startswith(_QUERY_PREFIXES):
                unsupported("unsupported_call", f"torch C function {name}: not known to be a query")
            cargs, ckwargs = lower_constants(args, kwargs)
            value = self.fn(*cargs, **ckwargs)
            if not isinstance(value, torch.Tensor):
                return wrap_constant(value)
        return tx.output.call_function(tx, self.fn, args, kwargs)

    def getattr(self, tx, name):
        if name in ("__name__", "__qualname__", "__module__"):
            return ConstantVariable(getattr(self.fn, name))
        if isinstance(self.fn, torch._ops.OpOverloadPacket):
            return TorchFunctionVariable(getattr(self.fn, name))
        return super().getattr(tx, name)

    def __repr__(self):
        return f"TorchFunctionVariable({getattr(self.fn, '__name__', self.fn)})"
