"""Result metadata by rule, for ops whose meta kernels are slow Python decompositions.

Run on its kernels, ``F.linear`` of a 3-d input is a view, an ``addmm``
decomposition of Python refs and a view back, about a millisecond on each new
shape; ``layer_norm`` and the activations are alike, and a model meets new
shapes in every stage. For these ops the result's metadata follows from the
inputs' by a rule. Each rule engages only where it certainly holds (dtypes,
shapes and layouts it was checked on against FakeTensorMode: the tests run
every rule over layouts and dtypes) and answers None otherwise: then the
kernels decide, and give the error where the call is wrong.

A rule returns a spec of ``meta_ops``: ``("new", size, stride, dtype)``.
"""
import torch
import torch.nn.functional as F
from torch._prims_common import make_channels_last_2d_strides_for, make_contiguous_strides_for
from torch._subclasses.fake_tensor import FakeTensor

FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def argument(args, kwargs, index, name, default):
    """A call's argument given by position or by name."""
    return args[index] if len(args) > index else kwargs.get(name, default)


def _fresh(size, dtype):
    size = tuple(size)
    return ("new", size, tuple(make_contiguous_strides_for(size)), dtype)


def _tensor_like(t, dtype, size) -> bool:
    """``t`` is a FakeTensor of ``dtype`` and exactly ``size``."""
    return type(t) is FakeTensor and t.dtype == dtype and tuple(t.shape) == size


# Ops whose result, for a dense floating-point input, is a fresh tensor with
# the input's shape, strides and dtype: elementwise activations (one tensor in)
# and inference batch norm (per-channel statistics of the input's dtype). The
# number is the position of the ``inplace`` flag: an in-place call returns its
# argument and takes the kernels' path.
LIKE_INPUT = {
    F.relu: 1, F.relu6: 1, F.silu: 1, F.hardswish: 1, F.hardsigmoid: 1, F.mish: 1, F.selu: 1, F.hardtanh: 3,
    F.leaky_relu: 2, F.elu: 2, F.celu: 2, F.gelu: None, F.softplus: None, F.tanh: None, F.sigmoid: None,
    torch.tanh: None, torch.sigmoid: None, F.batch_norm: None,
}


def like_input(target, args, kwargs, tensors):
    """The spec of a fresh tensor like ``args[0]``, or None where the rule does not certainly hold."""
    x = args[0]
    if x is not tensors[0] or x.dtype not in FLOATS or "out" in kwargs:
        return None
    inplace = LIKE_INPUT[target]
    if inplace is not None and argument(args, kwargs, inplace, "inplace", False):
        return None
    if target is F.batch_norm:
        if x.dim() < 2 or argument(args, kwargs, 5, "training", False):
            return None
        for t in tensors[1:]:
            if t.dtype != x.dtype or t.shape != (x.shape[1],):
                return None
    elif len(tensors) != 1:
        return None
    if not (x.is_contiguous() or x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last)):
        return None
    return ("new", tuple(x.shape), x.stride(), x.dtype)


def layer_norm(target, args, kwargs, tensors):
    """``layer_norm(x, normalized_shape, weight, bias, eps)``: a contiguous tensor of x's
    shape and dtype, whatever x's layout (the decomposition normalizes a contiguous copy)."""
    x = args[0]
    shape = argument(args, kwargs, 1, "normalized_shape", None)
    weight, bias = argument(args, kwargs, 2, "weight", None), argument(args, kwargs, 3, "bias", None)
    shape = (shape,) if type(shape) is int else tuple(shape) if type(shape) in (tuple, list, torch.Size) else None
    if x is not tensors[0] or x.dtype not in FLOATS or not shape or len(shape) > x.dim() \
            or not all(type(n) is int for n in shape) or tuple(x.shape[x.dim() - len(shape):]) != shape:
        return None
    given = [t for t in (weight, bias) if t is not None]
    if len(tensors) != 1 + len(given) or not all(_tensor_like(t, x.dtype, shape) for t in given):
        return None
    return _fresh(x.shape, x.dtype)


def linear(target, args, kwargs, tensors):
    """``linear(x, weight, bias)``: a contiguous ``(*x.shape[:-1], out_features)`` tensor of
    x's dtype (``x @ weight.T`` is a matrix product into a fresh tensor, then a view)."""
    x, weight, bias = args[0], argument(args, kwargs, 1, "weight", None), argument(args, kwargs, 2, "bias", None)
    if x is not tensors[0] or x.dtype not in FLOATS or x.dim() < 1 or type(weight) is not FakeTensor \
            or weight.dim() != 2 or weight.dtype != x.dtype or x.shape[-1] != weight.shape[1]:
        return None
    if bias is not None and not _tensor_like(bias, x.dtype, (weight.shape[0],)):
        return None
    if len(tensors) != 2 + (bias is not None):
        return None
    return _fresh((*x.shape[:-1], weight.shape[0]), x.dtype)


def addmm(target, args, kwargs, tensors):
    """``addmm(bias, m1, m2, beta=, alpha=)``: a contiguous ``(m1 rows, m2 columns)``
    tensor of their dtype, ``bias`` broadcast to it in any layout."""
    if len(args) != 3 or set(kwargs) - {"beta", "alpha"} or len(tensors) != 3:
        return None
    bias, m1, m2 = args
    if not all(type(t) is FakeTensor and t.dtype == m1.dtype for t in args) or m1.dtype not in FLOATS \
            or m1.dim() != 2 or m2.dim() != 2 or m1.shape[1] != m2.shape[0] or bias.dim() > 2:
        return None
    size = (m1.shape[0], m2.shape[1])
    if not all(n in (1, want) for n, want in zip(reversed(bias.shape), reversed(size))):
        return None
    return _fresh(size, m1.dtype)


def _pair(value):
    """A convolution's stride, padding or dilation as two ints, or None (``"same"``)."""
    value = (value, value) if type(value) is int else tuple(value) if type(value) in (tuple, list) else None
    return value if value is not None and len(value) == 2 and all(type(n) is int for n in value) else None


def conv2d(target, args, kwargs, tensors):
    """``conv2d(x, weight, bias, stride, padding, dilation, groups)`` of a batch: the size by
    the convolution arithmetic, in the memory format FakeTensorMode gives, which is the
    backend's choice (``_select_conv_backend``, ``_conv_determine_backend_memory_format``).
    That choice reads global flags (``torch.backends.mkldnn``...): never remembered."""
    if kwargs or not 2 <= len(args) <= 7:
        return None
    x, weight, bias = args[0], args[1], args[2] if len(args) > 2 else None
    stride, padding, dilation = (_pair(args[i]) if len(args) > i else default
                                 for i, default in ((3, (1, 1)), (4, (0, 0)), (5, (1, 1))))
    groups = args[6] if len(args) > 6 else 1
    if x is not tensors[0] or x.dtype not in FLOATS or x.dim() != 4 or x.numel() == 0 \
            or type(weight) is not FakeTensor or weight.dim() != 4 or weight.dtype != x.dtype \
            or None in (stride, padding, dilation) or type(groups) is not int or groups < 1:
        return None
    out_channels, per_group, *kernel = weight.shape
    if x.shape[1] != per_group * groups or out_channels % groups or min(stride + dilation) < 1 or min(padding) < 0:
        return None
    if bias is not None and not _tensor_like(bias, x.dtype, (out_channels,)) or len(tensors) != 2 + (bias is not None):
        return None
    spatial = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                    for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation))
    if min(spatial) < 1:
        return None
    backend = torch._C._select_conv_backend(x, weight, stride=list(stride), padding=list(padding),
                                            dilation=list(dilation), transposed=False, output_padding=[0, 0],
                                            groups=groups, bias=bias)
    layout = torch._C._conv_determine_backend_memory_format(x, weight, backend)
    size = (x.shape[0], out_channels, *spatial)
    if layout == torch.contiguous_format:
        return _fresh(size, x.dtype)
    if layout == torch.channels_last:
        return ("new", size, tuple(make_channels_last_2d_strides_for(size)), x.dtype)
    return None


RULES = {**{target: like_input for target in LIKE_INPUT},
         F.layer_norm: layer_norm, torch.layer_norm: layer_norm, F.linear: linear, torch.addmm: addmm,
         F.conv2d: conv2d}
# Ops whose result's layout is a backend's choice, which reads global flags
# (``torch.backends.mkldnn``): no spec is remembered for them, the rule or the
# kernels answer each call. A convolution's kernels alone would not give
# FakeTensorMode's memory format: where its rule answers None, FakeTensorMode decides.
UNCACHED = frozenset({F.conv2d})
# Attention's backend (flash or math on the CPU: the result's strides) is chosen from its
# inputs' metadata, which the cache key holds, and the ``sdpa_kernel`` flags and the
# determinism setting, which this adds to it; and whether its inputs require grad.
_SDPA_FLAGS = tuple(getattr(torch._C, name) for name in sorted(dir(torch._C))
                    if name.startswith("_get_") and "sdp" in name)


def _attention_state(tensors) -> tuple:
    flags = tuple(tuple(v) if type(v) is list else v for v in (flag() for flag in _SDPA_FLAGS))  # the priority order
    return flags, torch.are_deterministic_algorithms_enabled(), tuple(t.requires_grad for t in tensors)


KEYED_BY_STATE = {F.scaled_dot_product_attention: _attention_state}
BY_RULE_ONLY = frozenset({F.conv2d})
