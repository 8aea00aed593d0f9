"""Shape propagation for common ops without FakeTensorMode's Python dispatch.

Every op the tracer records runs once on FakeTensors to learn its result's
shape, dtype, strides and device. FakeTensorMode does that by sending each
aten op the call decomposes into through Python: a cache key over the
arguments, a lookup, a FakeTensor built from the cache entry. That is 0.3 to
1 ms per recorded op here, about 40% of tracing a small transformer.

For ops whose result depends only on their inputs' metadata and whose meta
kernels are the ones FakeTensorMode would use anyway (the ``_FUNCTIONS`` and
``_METHODS`` below: pointwise math, matmuls, norms, views), this module runs
the call's aten ops straight on their meta kernels, the way FakeTensorMode runs
one kernel (`in_kernel_invocation_manager`), and wraps each result as a
FakeTensor on the inputs' device. A result is remembered by the inputs'
metadata (`_SPECS`), so the next call with the same shapes, the rule in a
transformer's layers, only rebuilds it. It applies only when nothing could make
FakeTensorMode answer differently:

* every tensor argument is a FakeTensor of this trace's mode, with static
  sizes and no constant value (FakeTensorMode folds constants), except an
  empty one beside one that is not (``torch.cat([torch.tensor([]), x])``, a
  cache's first update): it holds no data to fold;
* all of them are on one device, so no device logic is needed;
* the other arguments are plain Python values (no SymInt, no device);
* no autograd record is needed (grad mode off, or no input requires grad);
* no torch function mode is active.

Anything else, and any exception on the fast path, goes the FakeTensorMode
way, which also gives the error message. With
``framegraph.config.check_meta_ops`` set (the tests set it), every op that
takes the fast path is run both ways and the results must agree: `same_meta`.
"""
import operator
from typing import Any

import torch
import torch.nn.functional as F
from torch._prims_common import suggest_memory_format
from torch._subclasses.fake_tensor import FakeTensor, in_kernel_invocation_manager
from torch.utils._python_dispatch import TorchDispatchMode

from .fakes import new_fake
from .meta_rules import BY_RULE_ONLY, KEYED_BY_STATE, RULES, UNCACHED, argument

_FUNCTIONS = {
    # functional layers
    F.linear, F.layer_norm, F.gelu, F.silu, F.relu, F.softmax, F.log_softmax, F.dropout, F.embedding,
    F.normalize, F.pad, torch.layer_norm, torch.rms_norm, F.rms_norm,
    # math
    torch.add, torch.sub, torch.mul, torch.div, torch.matmul, torch.bmm, torch.mm, torch.addmm, torch.baddbmm,
    torch.tanh, torch.sigmoid, torch.exp, torch.rsqrt, torch.sqrt, torch.neg, torch.pow, torch.mean, torch.sum,
    torch.softmax, torch.where, torch.masked_fill, torch.cos, torch.sin, torch.abs, torch.clamp, torch.maximum,
    torch.minimum, torch.erf, torch.log,
    # shapes
    torch.cat, torch.stack, torch.transpose, torch.permute, torch.reshape, torch.flatten, torch.unsqueeze,
    torch.squeeze, torch.chunk, torch.split, torch.narrow,
    operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.matmul, operator.pow,
    operator.getitem,
    # comparisons and masks (the attention masks every decoder builds)
    torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge, torch.logical_and, torch.logical_or,
    torch.logical_not, torch.bitwise_and, torch.bitwise_or, torch.bitwise_not, torch.cumsum, torch.diff,
    operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge, operator.and_, operator.or_,
    operator.invert, torch.zeros_like, torch.ones_like, torch.full_like, torch.empty_like,
    # attention (its key: meta_rules.KEYED_BY_STATE) and convolution (each call: UNCACHED), pooling
    F.scaled_dot_product_attention, F.conv2d, F.max_pool2d, F.avg_pool2d, F.adaptive_avg_pool2d, F.adaptive_avg_pool1d, F.avg_pool1d,
    # what vision models are built of; FakeTensorMode runs each one's Python
    # decomposition op by op, 5 to 30 ms on every new shape
    F.batch_norm, F.group_norm, F.instance_norm, F.interpolate, torch.einsum, torch.linalg.vector_norm,
    F.hardswish, F.hardsigmoid, F.hardtanh, F.relu6, F.leaky_relu, F.elu, F.selu, F.celu, F.mish, F.softplus,
    F.glu, F.logsigmoid, F.tanh, F.sigmoid,
    # in place: a residual's ``x += shortcut`` (IN_PLACE)
    operator.iadd, operator.isub, operator.imul, operator.itruediv,
}
_METHODS = {
    "view", "reshape", "transpose", "permute", "contiguous", "expand", "flatten", "unsqueeze", "squeeze",
    "split", "chunk", "narrow", "add", "sub", "mul", "div", "matmul", "softmax", "mean", "sum", "pow",
    "tanh", "neg", "sqrt", "rsqrt", "exp", "sigmoid", "masked_fill", "float", "half", "bfloat16", "type_as",
    "view_as", "expand_as", "reshape_as", "__getitem__", "__add__", "__mul__", "__sub__", "__truediv__",
    "__radd__", "__rmul__", "__rsub__", "__matmul__", "cos", "sin", "abs", "clamp",
    "eq", "ne", "lt", "le", "gt", "ge", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__and__", "__or__", "__invert__", "logical_and", "logical_or", "logical_not", "cumsum", "diff",
    "new_ones", "new_zeros", "new_empty", "new_full", "bool", "long", "int", "to",
    "add_", "sub_", "mul_", "div_",
}
# Ops that write to their first argument: run on its kernel at every call (never a
# remembered spec, which would hand the argument back without the write), so the write
# bumps its version counter as under FakeTensorMode, and a shape or dtype the write
# cannot take raises there and goes the FakeTensorMode way, for its error.
IN_PLACE = frozenset({operator.iadd, operator.isub, operator.imul, operator.itruediv, "add_", "sub_", "mul_",
                      "div_"})
_UNREMEMBERED = UNCACHED | IN_PLACE


# Ops that write to an argument in some of their calls: the fast path rebuilds
# results from their metadata and would skip the write's version bump, and
# dead code elimination must keep the call although its result is unused.
# Training-mode batch norm updates its running statistics in place; so does
# instance norm when it uses the input's statistics and was given running ones.
_WRITES_WHEN = {
    F.batch_norm: lambda a, k: argument(a, k, 5, "training", False) and (
        argument(a, k, 1, "running_mean", None) is not None or argument(a, k, 2, "running_var", None) is not None),
    F.instance_norm: lambda a, k: argument(a, k, 5, "use_input_stats", True) and (
        argument(a, k, 1, "running_mean", None) is not None or argument(a, k, 2, "running_var", None) is not None),
}


def writes_arguments(target, args, kwargs) -> bool:
    """Whether this call of ``target`` writes to a tensor argument without saying so in
    its name or an ``inplace``/``out`` argument (``_WRITES_WHEN``); ``args`` may be FX nodes."""
    when = _WRITES_WHEN.get(target)
    return when is not None and bool(when(args, kwargs))


_PLAIN = (int, float, bool, str, type(None), torch.dtype, torch.memory_format, torch.layout)
_INDEX = (int, slice, type(None), type(Ellipsis))
NOT_ENGAGED = object()


def run_meta(mode, kind: str, target, args: tuple, kwargs: dict) -> Any:
    """The fake result of ``target(*args, **kwargs)``, or ``NOT_ENGAGED``.

    ``kind`` is ``call_function`` or ``call_method`` (``target`` is then the
    method name and ``args[0]`` the tensor), as in FX.
    """
    if kind == "call_method":
        if target not in _METHODS:
            return NOT_ENGAGED
    elif target not in _FUNCTIONS:
        return NOT_ENGAGED
    elif writes_arguments(target, args, kwargs):
        return NOT_ENGAGED
    if mode.in_kernel_invocation or torch._C._len_torch_function_stack() or torch._C._is_any_autocast_enabled():
        return NOT_ENGAGED  # autocast changes result dtypes, which the cache key does not hold
    tensors, key = [], [kind, target, torch.get_default_dtype()]
    if not (_leaves(args, tensors, key, mode) and _leaves(kwargs, tensors, key, mode)) or not tensors:
        return NOT_ENGAGED
    if all(t.constant is not None for t in tensors):
        return NOT_ENGAGED  # all constants (empty ones): FakeTensorMode's result is a constant too
    device = tensors[0].fake_device
    for t in tensors:
        if t.fake_device != device:
            return NOT_ENGAGED
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return NOT_ENGAGED
    if (target is operator.getitem or target == "__getitem__") and not _basic_index(args[1]):
        return NOT_ENGAGED
    if target == "to" and any(type(a) is str for a in (*args[1:], *kwargs.values())):
        return NOT_ENGAGED  # a device by name: FakeTensorMode's device logic decides
    key.append(device)
    state = KEYED_BY_STATE.get(target)
    if state is not None:
        key.append(state(tensors))
    key = tuple(key)
    try:
        spec = None if target in _UNREMEMBERED else _SPECS.get(key)
        rule = RULES.get(target) if spec is None else None
        if rule is not None:
            spec = rule(target, args, kwargs, tensors)
            if spec is None and target in BY_RULE_ONLY:
                return NOT_ENGAGED
            if spec is not None and target not in _UNREMEMBERED:
                _remember(key, spec)
        if spec is not None and not _has_view(spec) and not torch._C._len_torch_dispatch_stack():
            # fresh tensors only: made straight as FakeTensors over meta storage,
            # what _MetaKernels would wrap them into, without the dispatch round trip
            return _build_fresh(mode, spec, tensors, device)
        with _MetaKernels(mode, device):
            if spec is not None:
                out = _build(spec, tensors)
            else:
                out = getattr(args[0], target)(*args[1:], **kwargs) if kind == "call_method" else \
                    target(*args, **kwargs)
                spec = _spec(out, tensors)
                if spec is not None and target not in _UNREMEMBERED:
                    _remember(key, spec)
        return _wrap(mode, out, device)
    except Exception:
        return NOT_ENGAGED


class _MetaKernels(TorchDispatchMode):
    """Each aten op the call reaches runs on its meta kernel; tensor results become FakeTensors.

    Being a dispatch mode (rather than calling with Python dispatch off)
    keeps the autograd-level view tracking above it: a view's result is a
    view of its FakeTensor input, as under FakeTensorMode.
    """

    def __init__(self, mode, device):
        super().__init__()
        self.mode, self.device = mode, device

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps a mode's __torch_dispatch__ in torch._dynamo.disable unless the mode says
        # no (its documented opt-out): a frame-evaluator round trip on each of the two dispatches
        # a view makes, a fifth of its cost. No torch._dynamo trace runs inside this mode.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is _DEVICE:  # C++ asking a FakeTensor its device: answer as FakeTensor does
            return torch.device("meta") if self.mode.in_kernel_invocation else args[0].fake_device
        kwargs = kwargs or {}
        if "device" in kwargs and not any(isinstance(a, torch.Tensor) for a in torch.utils._pytree.tree_leaves(args)):
            # a tensor the op's C++ makes on its input's device (batch norm's empty
            # reserve buffer): made on meta, a FakeTensor on that device, as
            # FakeTensorMode makes factory results
            if _device(kwargs["device"]) != self.device:
                raise TypeError("a factory on another device")
            kwargs = {**kwargs, "device": torch.device("meta")}
        if func in _RESIZES:
            out = _resized(self.device, *args)
            if out is not None:
                return _wrap(self.mode, out, self.device, strict=False)
        with in_kernel_invocation_manager(self.mode):
            out = func(*args, **kwargs)
        return _wrap(self.mode, out, self.device, strict=False)


# Resampling to a size the caller computed (F.interpolate passes it): the
# result is the input's batch and channels at that size, in the input's
# dtype. The meta kernels are Python decompositions that compute every output
# coordinate: 5 to 70 ms on each new shape.
_RESIZES = {getattr(torch.ops.aten, name).default for name in (
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "upsample_linear1d", "upsample_bilinear2d",
    "upsample_bicubic2d", "upsample_trilinear3d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d",
    "_upsample_nearest_exact3d")}


def _resized(device, x, output_size, *rest):
    """A meta tensor like ``x`` resized to ``output_size``, or None where the kernels must decide.

    The format is the one the decompositions pick, ``suggest_memory_format``
    of the input; off the CPU they make some channels-last results contiguous
    (by device and channel count), so there only a contiguous one is certain."""
    if len(output_size) != x.dim() - 2 or not all(type(n) is int and n >= 0 for n in output_size):
        return None
    fmt = suggest_memory_format(x)
    if fmt is not torch.contiguous_format and device.type != "cpu":
        return None
    return torch.empty((*x.shape[:2], *output_size), dtype=x.dtype, device="meta", memory_format=fmt)


def _device(device) -> torch.device:
    """A factory's device argument as a device with its index, as FakeTensorMode would place it."""
    device = torch.device("cpu") if device is None else torch.device(device)
    if device.type != "cpu" and device.index is None:
        device = torch.device(device.type, torch.get_device_module(device.type).current_device())
    return device


_DEVICE = torch.ops.prim.device.default


# What each op returned for given input metadata: a result is rebuilt from
# its spec instead of running the kernels again (a transformer repeats the
# same few shapes in every layer). Specs hold no tensors.
_SPECS: dict = {}
_MAX_SPECS = 8192


def _remember(key, spec):
    """Keep ``spec`` for calls with ``key``'s metadata (the table is bounded)."""
    if len(_SPECS) >= _MAX_SPECS:
        _SPECS.clear()
    _SPECS[key] = spec


def _leaves(value, tensors, key, mode) -> bool:
    """Collect the tensors in ``value`` and its cache key; False if a leaf rules the fast path out."""
    kind = type(value)
    if kind is FakeTensor:
        if value.fake_mode is not mode or value._has_symbolic_sizes_strides:
            return False
        if value.constant is not None and value.numel():  # FakeTensorMode computes with its data
            return False
        key.append((len(tensors), value.shape, value.stride(), value.storage_offset(), value.dtype))
        tensors.append(value)
        return True
    if kind in _PLAIN:
        key.append((kind, value))  # typed: 1, 1.0 and True are equal keys but not equal arguments
        return True
    if kind is slice:
        key.append(slice)
        return _leaves((value.start, value.stop, value.step), tensors, key, mode)
    if value is Ellipsis:
        key.append(value)
        return True
    if kind in (tuple, list, torch.Size):
        key.append((kind, len(value)))
        return all(_leaves(v, tensors, key, mode) for v in value)
    if kind is dict:
        key.append((dict, tuple(value)))
        return all(_leaves(v, tensors, key, mode) for v in value.values())
    return False


def _basic_index(index) -> bool:
    """Indexing by ints, slices, None, ``...`` and integer tensors: the result's
    shape follows from the indices' shapes (a boolean mask's needs its data)."""
    items = index if type(index) is tuple else (index,)
    return all(type(i) in _INDEX or type(i) is FakeTensor and i.dtype in _INDEX_DTYPES for i in items)


_INDEX_DTYPES = (torch.int64, torch.int32)


def _spec(out, tensors):
    """How to rebuild ``out`` from the inputs' metadata, or None where that is not exact."""
    if isinstance(out, torch.Tensor):
        for i, t in enumerate(tensors):
            if out is t:
                return ("same", i)
        for i, t in enumerate(tensors):
            if torch._C._is_alias_of(out, t):
                if out.dtype != t.dtype:
                    return None  # a dtype-changing view: as_strided cannot make it
                return ("view", i, tuple(out.shape), out.stride(), out.storage_offset())
        if out.storage_offset():
            return None
        return ("new", tuple(out.shape), out.stride(), out.dtype)
    if type(out) in (tuple, list):
        specs = [_spec(o, tensors) for o in out]
        return None if None in specs else (type(out), specs)
    if isinstance(out, _PLAIN):
        return ("value", out)
    return None


def _build(spec, tensors):
    """A result with ``spec``'s metadata (under `_MetaKernels`)."""
    kind = spec[0]
    if kind == "same":
        return tensors[spec[1]]
    if kind == "view":
        _, i, size, stride, offset = spec
        return torch.as_strided(tensors[i], size, stride, offset)
    if kind == "new":
        _, size, stride, dtype = spec
        return torch.empty_strided(size, stride, dtype=dtype, device="meta")
    if kind == "value":
        return spec[1]
    return kind(_build(s, tensors) for s in spec[1])


def _has_view(spec) -> bool:
    """Whether rebuilding ``spec`` makes a view (which needs the autograd-level view
    tracking that only a dispatch mode below it keeps)."""
    kind = spec[0]
    if kind == "view":
        return True
    return kind in (tuple, list) and any(_has_view(s) for s in spec[1])


def _build_fresh(mode, spec, tensors, device):
    """A result with ``spec``'s metadata, no views in it, as FakeTensors of ``mode``."""
    kind = spec[0]
    if kind == "same":
        return tensors[spec[1]]
    if kind == "new":
        _, size, stride, dtype = spec
        return new_fake(mode, torch.empty_strided(size, stride, dtype=dtype, device="meta"), device)
    if kind == "value":
        return spec[1]
    return kind(_build_fresh(mode, s, tensors, device) for s in spec[1])


def _wrap(mode, out, device, strict=True, made=None):
    """``out`` with its meta tensors made FakeTensors of ``mode`` on ``device``; one
    meta tensor returned twice becomes one FakeTensor (``made``: those made so far)."""
    if isinstance(out, torch.Tensor):
        if type(out) is FakeTensor:
            if out.fake_mode is not mode:
                raise TypeError("a FakeTensor of another mode")
            return out
        if out.device.type != "meta":
            raise TypeError("a real tensor made inside the op")  # FakeTensorMode makes it a constant
        if made is None:
            return new_fake(mode, out, device)  # fresh: nothing to look up in the converter's memo
        fake = made.get(id(out))
        if fake is None:
            fake = made[id(out)] = new_fake(mode, out, device)
        return fake
    if type(out) in (tuple, list):
        made = {} if made is None else made
        return type(out)(_wrap(mode, o, device, strict, made) for o in out)
    if isinstance(out, _PLAIN) or not strict:
        return out
    raise TypeError(f"unexpected result {type(out).__name__}")


def _significant_strides(t):
    """The strides that address memory: a dimension of size 1 is never stepped
    over, and a tensor with no elements addresses nothing. FakeTensorMode and
    the meta kernels may differ there (``reshape`` of a transposed tensor keeps
    the input's stride on a size-1 dimension under FakeTensorMode, while eager
    and the meta kernel compute a fresh one), as torch's own stride checks allow."""
    if t.numel() == 0:
        return ()
    return tuple(st for size, st in zip(t.shape, t.stride()) if size != 1)


def same_meta(fast, slow) -> bool:
    """Whether two fake results agree in type, shape, significant strides, offset, dtype and device."""
    if isinstance(fast, torch.Tensor) or isinstance(slow, torch.Tensor):
        return (isinstance(fast, torch.Tensor) and isinstance(slow, torch.Tensor)
                and fast.shape == slow.shape and _significant_strides(fast) == _significant_strides(slow)
                and fast.storage_offset() == slow.storage_offset() and fast.dtype == slow.dtype
                and fast.device == slow.device and fast.requires_grad == slow.requires_grad)
    if type(fast) in (tuple, list):
        return type(fast) is type(slow) and len(fast) == len(slow) and all(map(same_meta, fast, slow))
    return type(fast) is type(slow) and fast == slow
