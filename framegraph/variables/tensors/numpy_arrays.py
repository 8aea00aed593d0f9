"""NumPy in a trace: an ndarray is a tensor, NumPy's functions are torch._numpy's.

torch ships NumPy's API written over tensors (``torch._numpy``: ``tnp.sin``,
``tnp.ndarray.reshape``, NumPy's dtype rules and defaults). A trace models an
ndarray as the tensor that holds its data, and records each NumPy call on it
as one graph node whose target is a small wrapper: it views its tensor
arguments as ``tnp.ndarray``s, calls the ``torch._numpy`` function of the same
name, and hands back tensors. The backend traces through the wrapper into
plain torch ops, so NumPy code fuses with the tensor code around it.

Where ndarrays come from and go to:

* ``x.numpy()`` of a tensor is ``x.detach()`` (it shares memory with ``x``,
  as ``numpy()`` does); ``torch.from_numpy(a)`` and ``torch.as_tensor(a)``
  are a view of ``a``'s tensor, ``torch.tensor(a)`` a copy.
* An ndarray passed in is a graph input read as ``torch.from_numpy(arr)``
  (``NumpyTensorSource``), guarded by its type and the tensor's metadata.
* An ndarray made in the trace is rebuilt after the graph as
  ``to_ndarray(graph output)``; a result NumPy gives as a scalar (``a.sum()``,
  a ufunc of 0-d operands, an element) is rebuilt as that NumPy scalar.

What needs the data (``a.item()``, ``a.tolist()``, ``bool(a)``, printing) is a
break, as for tensors. ``np.random`` is not traced (its generator's state is
NumPy's), nor are NumPy functions torch._numpy does not have.
"""
import functools
import operator

import torch

from ...errors import unsupported
from ..containers.lists import BaseListVariable, ListVariable, TupleVariable
from ..core import space
from ..core.base import CallableVariable, VariableTracker, type_lookup
from ..core.constant import ConstantVariable, wrap_constant
from .tensor import TensorVariable

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is optional for torch
    np = None


def _tnp():
    # torch._numpy is loaded on the first NumPy call a trace meets, not with framegraph
    import torch._numpy as tnp
    from torch._numpy import _dtypes_impl  # its dtype defaults, set below

    if _dtypes_impl._default_dtypes is None:
        # NumPy's own defaults, set here: left unset, torch._numpy reads them from
        # torch._dynamo's config, whose import loads all of torch._dynamo
        _dtypes_impl._default_dtypes = _dtypes_impl.DefaultDTypes(
            float_dtype=torch.float64, complex_dtype=torch.complex128, int_dtype=torch.int64)
    return tnp


def _as_numpy_would(fn, args, kwargs):
    """``fn(*args, **kwargs)`` on torch._numpy arrays, with torch's default dtype NumPy's
    (float64) meanwhile: where torch makes a float of integers (``/``, ``arctan2``) it
    takes its default float, NumPy float64. Inductor reads the default again when it
    lowers such an op, so those operands are made float64 here, explicitly."""
    if getattr(fn, "__name__", "") in _INTEGERS_TO_FLOAT and not any(
            isinstance(a, torch.Tensor) and (a.is_floating_point() or a.is_complex()) for a in args):
        args = tuple(a.to(torch.float64) if isinstance(a, torch.Tensor) else a for a in args)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return _to_torch(fn(*_to_tnp(args), **_to_tnp(kwargs)))
    finally:
        torch.set_default_dtype(previous)


# ---- the graph's side: what a node runs (on FakeTensors at trace time, on tensors after)
def _to_tnp(value):
    """Tensors as ``torch._numpy`` ndarrays, through tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        return _tnp().ndarray(value)
    if type(value) in (tuple, list):
        return type(value)(_to_tnp(v) for v in value)
    if type(value) is dict:
        return {k: _to_tnp(v) for k, v in value.items()}
    return value


def _to_torch(value):
    """``torch._numpy`` ndarrays back as their tensors, through tuples and lists."""
    if isinstance(value, _tnp().ndarray):
        return value.tensor
    if type(value) in (tuple, list):
        return type(value)(_to_torch(v) for v in value)
    return value


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


@functools.lru_cache(maxsize=None)
def numpy_function(fn):
    """The graph target of ``torch._numpy``'s ``fn``: tensors in, tensors out."""
    def call(*args, **kwargs):
        return _as_numpy_would(fn, args, kwargs)
    # a name ending in "_" is an in-place op to DCE (node_effects.writes_in_place)
    return _named(call, f"np_{fn.__name__}" + ("_" if fn.__name__ in _WRITES else ""))


@functools.lru_cache(maxsize=None)
def numpy_method(name):
    """The graph target of ``ndarray.<name>(...)`` on the tensor of the ndarray."""
    def call(tensor, *args, **kwargs):
        return _as_numpy_would(getattr(_tnp().ndarray(tensor), name), args, kwargs)
    return _named(call, f"ndarray_{name.strip('_')}" + ("_" if name in _WRITES else ""))


@functools.lru_cache(maxsize=None)
def numpy_attribute(name):
    """The graph target of ``ndarray.<name>`` for an attribute that is an array (``a.T``)."""
    def call(tensor):
        return _to_torch(getattr(_tnp().ndarray(tensor), name))
    return _named(call, f"ndarray_{name}")


@functools.lru_cache(maxsize=None)
def numpy_operator(fn):
    """The graph target of ``fn(a, b)`` (``operator.add``, ``operator.iadd``...) on ndarrays."""
    def call(a, b):
        return _as_numpy_would(fn, (a, b), {})
    inplace = fn.__name__.startswith("i") and fn.__name__ not in ("is_", "is_not")
    return _named(call, f"np_{fn.__name__.strip('_')}" + ("_" if inplace or fn is operator.setitem else ""))


def to_ndarray(tensor, scalar):
    """After the graph: the ndarray (or NumPy scalar) the program made, from its tensor."""
    array = tensor.numpy(force=True)
    return array[()] if scalar else array


# NumPy's functions that make a float of integer operands.
_INTEGERS_TO_FLOAT = frozenset({"true_divide", "divide", "truediv", "arctan2", "__truediv__", "__rtruediv__"})
# Methods and functions that write to their first operand (kept by DCE).
_WRITES = frozenset({"__setitem__", "fill", "sort", "put", "partition", "copyto", "fill_diagonal", "place", "putmask"})
# Results NumPy keeps as 0-d arrays; any other 0-d result of a NumPy call is a scalar.
_KEEPS_ARRAYS = frozenset({
    "array", "asarray", "asanyarray", "ascontiguousarray", "copy", "reshape", "squeeze", "astype",
    "view", "empty_like", "zeros_like", "ones_like", "full_like", "transpose", "ravel", "flatten",
    "atleast_1d", "expand_dims", "T", "real", "imag", "conj", "conjugate",
})
# What needs an ndarray's data in Python.
_DATA_METHODS = frozenset({
    "item", "tolist", "tobytes", "tofile", "dump", "dumps", "__bool__", "__int__", "__float__",
    "__index__", "__complex__", "__array__", "__format__", "__repr__", "__str__", "__iter__",
    "__contains__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__buffer__",
})
_META_ATTRS = frozenset({"shape", "ndim", "size", "itemsize", "nbytes"})
_ARRAY_ATTRS = frozenset({"T", "real", "imag", "mT"})


# ---- the trace's side
def numpy_dtype(dtype: torch.dtype):
    """NumPy's dtype for a torch dtype."""
    return torch.empty(0, dtype=dtype).numpy().dtype


def _scalar_type(tensor: TensorVariable):
    return numpy_dtype(tensor.fake.dtype).type


@space.register
class NumpyArrayVariable(VariableTracker):
    """An ndarray (or a NumPy scalar, ``scalar``) whose data is the tensor ``tensor``."""

    def __init__(self, tensor: TensorVariable, scalar: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.tensor = tensor
        self.scalar = scalar

    @property
    def graph_tensor(self):
        """The tensor an operation of torch gets for this array (``tensor * array``)."""
        return self.tensor

    def python_type(self):
        return _scalar_type(self.tensor) if self.scalar else np.ndarray

    @property
    def mutable(self):
        return not self.scalar  # writes are graph ops on its tensor

    def _view(self):
        return _tnp().ndarray(self.tensor.fake)

    def getattr(self, tx, name):
        if name in _META_ATTRS:
            return wrap_constant(getattr(self._view(), name))
        if name in _DATA_METHODS:
            unsupported("data_dependent_value", f"ndarray.{name}() needs the array's data")
        if name == "dtype":
            return space.OpaqueConstantVariable(numpy_dtype(self.tensor.fake.dtype))
        if name == "strides":
            return wrap_constant(tuple(s * self.tensor.fake.element_size() for s in self.tensor.fake.stride()))
        if name == "__class__":
            return tx.wrap(self.python_type())
        if name in _ARRAY_ATTRS:
            return record(tx, numpy_attribute(name), [self], {}, keeps_array=True)
        if name not in _DATA_METHODS and callable(getattr(self.python_type(), name, None)) \
                and hasattr(_tnp().ndarray, name):
            return NumpyMethodVariable(self, name)
        unsupported("unsupported_attribute", f"ndarray.{name} (not in torch._numpy, or needs the data)")

    def hasattr(self, tx, name):
        return type_lookup(self.python_type(), name)[0]

    def call_method(self, tx, name, args, kwargs):
        if name in _DATA_METHODS:
            unsupported("data_dependent_value", f"ndarray.{name}() needs the array's data")
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "__setitem__":
            return self.setitem(tx, args[0], args[1])
        if not hasattr(_tnp().ndarray, name):
            unsupported("unsupported_call", f"ndarray.{name}: torch._numpy has no such method")
        return record(tx, numpy_method(name), [self, *args], kwargs, keeps_array=name in _KEEPS_ARRAYS,
                      writes=name in _WRITES)

    def binop(self, tx, fn, other, reflected):
        if not _operand(other):
            return NotImplemented
        operands = [other, self] if reflected else [self, other]
        return record(tx, numpy_operator(fn), operands, {})

    def truth(self, tx):
        unsupported("data_dependent_branch", f"attempted to jump with {self}")

    def length(self, tx):
        if self.tensor.fake.dim() == 0:
            unsupported("operator_error", "len() of a 0-d array")
        return int(self.tensor.fake.shape[0])

    def unpack(self, tx):
        return [self.getitem(tx, ConstantVariable(i)) for i in range(self.length(tx))]

    def getitem(self, tx, key):
        return record(tx, numpy_operator(operator.getitem), [self, key], {})

    def setitem(self, tx, key, value):
        tx.output.call_function(tx, numpy_method("__setitem__"), _lowered([self, key, value]), {})

    def contains(self, tx, item):
        unsupported("data_dependent_value", "`in` on an ndarray needs its data")

    def reconstruct(self, cg):
        if self.source is not None:
            self.source.reconstruct(cg)
            return
        cg.emit_op("PUSH_NULL")
        cg.load_const(to_ndarray)
        cg(self.tensor)
        cg.load_const(self.scalar)
        cg.call(2)

    def __repr__(self):
        return f"NumpyArrayVariable({'scalar' if self.scalar else 'array'})"


class NumpyMethodVariable(VariableTracker):
    """``a.reshape`` before it is called."""

    def __init__(self, array: NumpyArrayVariable, name: str, **kwargs):
        super().__init__(**kwargs)
        self.array = array
        self.name = name

    def call(self, tx, args, kwargs):
        return self.array.call_method(tx, self.name, args, kwargs)

    def python_type(self):
        return type(getattr(np.zeros(1), self.name))

    def getattr(self, tx, name):
        if name == "__self__":
            return self.array
        if name in ("__name__", "__qualname__"):
            return ConstantVariable(getattr(getattr(np.ndarray, self.name), name))
        return super().getattr(tx, name)

    def reconstruct(self, cg):
        cg(self.array)
        cg.load_attr(self.name)

    def __repr__(self):
        return f"NumpyMethodVariable({self.name})"


def _operand(value) -> bool:
    """Can ``value`` be an operand of a NumPy operation in the graph?"""
    return isinstance(value, (NumpyArrayVariable, TensorVariable, space.SymNodeVariable)) or \
        value.is_python_constant() or isinstance(value, BaseListVariable)


def _lowered(values):
    """Arguments of a NumPy node: an array is its tensor, a NumPy dtype or scalar type its
    name (torch._numpy has dtypes of its own), containers item by item."""
    def lower(v):
        if isinstance(v, NumpyArrayVariable):
            return v.tensor
        if isinstance(v, BaseListVariable) and not isinstance(v, space.SizeVariable):
            items = [lower(i) for i in v.items]
            return ListVariable(items) if v.python_type() is list else TupleVariable(items) \
                if v.python_type() is tuple else v
        if isinstance(v, (TensorVariable, space.SymNodeVariable)) or not v.is_python_constant():
            return v
        value = v.as_python_constant()
        if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
            return ConstantVariable(np.dtype(value).name)
        if isinstance(value, np.generic):
            return ConstantVariable(value.item())
        return v
    if isinstance(values, dict):
        return {k: lower(v) for k, v in values.items()}
    return [lower(v) for v in values]


def record(tx, target, args, kwargs, keeps_array=False, writes=False):
    """One NumPy node ``target(*args, **kwargs)``; its tensors come back as ndarrays (a
    tensor argument written in place comes back as the array it was)."""
    arrays = {id(a.tensor): a for a in args if isinstance(a, NumpyArrayVariable)}
    result = tx.output.call_function(tx, target, _lowered(args), _lowered(kwargs))
    return _as_arrays(result, arrays, keeps_array)


def _as_arrays(result, arrays, keeps_array):
    if isinstance(result, TensorVariable):
        if id(result) in arrays:
            return arrays[id(result)]
        scalar = not keeps_array and result.fake.dim() == 0
        return NumpyArrayVariable(result, scalar=scalar)
    if type(result) in (TupleVariable, ListVariable):
        return type(result)([_as_arrays(item, arrays, keeps_array) for item in result.items])
    return result


@space.register
def ndarray_of_tensor(tx, tensor: TensorVariable, force: bool) -> NumpyArrayVariable:
    """``tensor.numpy(force=...)``: the tensor's data seen as an ndarray (shared, as in eager)."""
    fake = tensor.fake
    if fake.requires_grad and not force:
        unsupported("unsupported_call", "Tensor.numpy() of a tensor that requires grad (eager raises; "
                                        "use tensor.detach().numpy())")
    if fake.device.type != "cpu" and not force:
        unsupported("unsupported_call", f"Tensor.numpy() of a tensor on {fake.device.type}")
    if fake.is_conj() or fake.is_neg():
        unsupported("unsupported_call", "Tensor.numpy() of a tensor with a lazy conjugate or negation")
    return NumpyArrayVariable(tx.output.call_method(tx, "detach", [tensor], {}))


# ---- NumPy's functions
@functools.lru_cache(maxsize=1)
def _counterparts():
    """{NumPy callable: torch._numpy's callable of the same name} for NumPy's main
    namespace, ``linalg`` and ``fft`` (not ``random``: the generator is NumPy's)."""
    tnp = _tnp()
    table = {}
    for ours, theirs in ((tnp, np), (tnp.linalg, np.linalg), (tnp.fft, np.fft)):
        for name in dir(ours):
            mine, real = getattr(ours, name), getattr(theirs, name, None)
            if name.startswith("_") or real is None or isinstance(real, type) or not callable(real) \
                    or isinstance(mine, type) or not callable(mine):
                continue
            try:
                table[real] = mine
            except TypeError:  # pragma: no cover - an unhashable callable
                continue
    return table


def numpy_counterpart(value):
    """torch._numpy's function for the NumPy callable ``value``, or None."""
    if np is None or getattr(type(value), "__module__", None) != "numpy" and \
            not str(getattr(value, "__module__", "")).startswith("numpy"):
        return None
    try:
        return _counterparts().get(value)
    except TypeError:
        return None


def scalar_type_counterpart(cls):
    """torch._numpy's scalar type for NumPy's ``cls`` (``np.float32``), or None."""
    mine = getattr(_tnp(), cls.__name__, None)
    return mine if isinstance(mine, type) else None


def _has_array(values) -> bool:
    for v in values:
        if isinstance(v, (NumpyArrayVariable, TensorVariable)):
            return True
        if isinstance(v, BaseListVariable) and _has_array(v.items):
            return True
    return False


class NumpyFunctionVariable(CallableVariable):
    """A NumPy function with a torch._numpy counterpart (``np.sin``, ``np.where``,
    ``np.linalg.norm``): one graph node on arrays. On constants alone it runs now
    where its answer is a plain constant (``np.issubdtype(a.dtype, np.floating)``),
    and is recorded where it makes an array (``np.zeros(3)``, ``np.sqrt(2.0)``)."""

    def __init__(self, fn, counterpart, **kwargs):
        super().__init__(fn, **kwargs)
        self.counterpart = counterpart

    def call(self, tx, args, kwargs):
        if not _has_array(list(args) + list(kwargs.values())):
            answer = self._now(args, kwargs)
            if answer is not None:
                return answer
        name = self.fn.__name__
        return record(tx, numpy_function(self.counterpart), list(args), kwargs,
                      keeps_array=name in _KEEPS_ARRAYS)

    def _now(self, args, kwargs):
        try:
            real_args = [a.as_python_constant() for a in args]
            real_kwargs = {k: v.as_python_constant() for k, v in kwargs.items()}
        except Exception:  # noqa: BLE001 - not all constants: recorded instead
            return None
        try:
            value = self.fn(*real_args, **real_kwargs)
        except Exception:  # noqa: BLE001 - torch._numpy's answer (or error) is the trace's
            return None
        if isinstance(value, (np.ndarray, np.generic)):
            return None
        if isinstance(value, np.dtype):
            return space.OpaqueConstantVariable(value)
        return wrap_constant(value) if isinstance(value, (bool, int, float, str, tuple, type(None))) else None

    def getattr(self, tx, name):
        if name in ("__name__", "__qualname__", "__module__"):
            return ConstantVariable(getattr(self.fn, name))
        return super().getattr(tx, name)

    def __repr__(self):
        return f"NumpyFunctionVariable({self.fn.__name__})"


class NumpyScalarTypeVariable(CallableVariable):
    """A NumPy scalar type (``np.float32``). As a class it is the class (``isinstance``,
    ``dtype=np.float32``); called, ``np.float32(2)`` or ``np.float32(a)`` is recorded as
    torch._numpy's type of the same name makes it: a scalar, or an array."""

    def call(self, tx, args, kwargs):
        return record(tx, numpy_function(scalar_type_counterpart(self.fn)), list(args), kwargs)

    def getattr(self, tx, name):
        value = getattr(self.fn, name)
        if not isinstance(value, (bool, int, float, str, type(None))):
            unsupported("unsupported_attribute", f"{self.fn.__name__}.{name}")
        return ConstantVariable(value)

    def __repr__(self):
        return f"NumpyScalarTypeVariable({self.fn.__name__})"


def is_numpy_scalar_type(cls) -> bool:
    """Is ``cls`` one of NumPy's scalar types that torch._numpy also has?"""
    return np is not None and issubclass(cls, np.generic) and scalar_type_counterpart(cls) is not None


# ---- torch functions that take an ndarray
def _shared(tx, array):
    """``torch.from_numpy(a)``: a tensor over ``a``'s memory."""
    return tx.output.call_method(tx, "detach", [array.tensor], {})


def _given(**kwargs):
    """The keyword arguments given, as trackers (left out, or None: not given)."""
    return {k: v for k, v in kwargs.items()
            if v is not None and not (v.is_python_constant() and v.as_python_constant() is None)}


def _as_tensor(tx, array, dtype=None, device=None):
    """``torch.as_tensor(a)``: ``a``'s memory where dtype and device allow, else a copy."""
    wanted = _given(dtype=dtype, device=device)
    if not wanted:
        return _shared(tx, array)
    return tx.output.call_method(tx, "to", [array.tensor], wanted)


def _copied(tx, array, dtype=None, device=None, requires_grad=None):
    """``torch.tensor(a)``: a copy."""
    if _given(requires_grad=requires_grad):
        return None  # a leaf that requires grad, made in the graph: the tensor path
    out = tx.output.call_method(tx, "clone", [array.tensor], {})
    wanted = _given(dtype=dtype, device=device)
    return tx.output.call_method(tx, "to", [out], wanted) if wanted else out


FROM_NUMPY = {torch.from_numpy: _shared, torch.as_tensor: _as_tensor, torch.asarray: _as_tensor,
              torch.tensor: _copied}
space.register(FROM_NUMPY, "FROM_NUMPY")


def torch_of_ndarray(tx, fn, args, kwargs):
    """``torch.from_numpy(a)`` and its kin on an ndarray of the trace, or None."""
    if fn not in FROM_NUMPY or len(args) != 1 or not isinstance(args[0], NumpyArrayVariable):
        return None
    if args[0].scalar:
        return None  # torch.tensor(np.float32(1.0)): the tensor path
    try:
        return FROM_NUMPY[fn](tx, args[0], **kwargs)
    except TypeError:  # an argument these do not model (torch.tensor(a, pin_memory=True))
        return None


space.register(torch_of_ndarray, "torch_of_ndarray")
