"""TensorVariable: a tensor during tracing, i.e. an FX node plus its FakeTensor.

The FakeTensor (``fake``) knows shape, dtype, device and requires_grad but no
data, so a tensor tracker answers metadata questions at trace time (``x.shape``,
``x.dtype``, ``x.dim()``, ``x.size(0)``: static shapes, covered by the tensor
guard) and turns everything else into graph nodes (``x.sum()``, ``x[1:]``,
``x.T``). Asking for its data (``bool(x)``, ``x.item()``) is data-dependent
and ends the trace with a catalogued reason.

``used`` records that the trace relied on this tensor: an input placeholder
that ends with no users and was never used is pruned; its tensor guard gives
way to a type guard (the trace may have asked what kind of value it is: ``t is
None``).
"""
import operator

import torch

from ...config import config
from ...errors import unsupported
from ...guards.sources import AttrSource, CallSource
from ...side_effects import record_mutation
from ..core import space
from ..core.base import METHOD_NAME_ATTRS, VariableTracker, bound_method_attr, bound_method_type, type_lookup
from ..core.constant import ConstantVariable, wrap_constant
from .symint import symbolic_meta, unbacked_item

# Attributes answered from the FakeTensor at trace time (static, guarded).
META_ATTRS = frozenset({
    "dtype", "device", "ndim", "requires_grad", "is_cuda", "is_cpu", "is_sparse", "is_quantized",
    "is_meta", "is_mkldnn", "is_nested", "layout", "is_leaf", "itemsize", "nbytes", "is_mps", "is_xpu",
})
# Attributes that are tensors computed from this one: recorded as graph nodes.
GRAPH_ATTRS = frozenset({"T", "mT", "H", "mH", "real", "imag"})
# Methods whose result depends only on metadata: computed at trace time.
META_METHODS = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "stride", "is_floating_point", "is_complex",
    "is_contiguous", "element_size", "get_device", "is_signed", "__len__", "is_inference",
    "storage_offset",
})
# Facts of a tensor its TENSOR_MATCH guard (type, dispatch keys, dtype, device, sizes,
# strides, requires_grad) does not decide: guarded where the trace reads them.
UNGUARDED_FACTS = frozenset({"storage_offset", "_is_view", "is_pinned", "is_shared"})
# In-place changes of a tensor's shape or storage.
METADATA_WRITES = frozenset({"resize_", "resize_as_", "set_"})
# Methods that change what autograd does with this very tensor at run time: a graph
# intermediate is not the tensor backward reaches, so they run between two graphs.
AUTOGRAD_RUNTIME_METHODS = frozenset({"retain_grad"})
AUTOGRAD_RUNTIME_ATTRS = frozenset({"grad", "grad_fn", "_version", "_base", "retains_grad"})
# Methods that need a tensor's data in Python.
DATA_METHODS = frozenset({
    "item", "tolist", "__bool__", "__int__", "__float__", "__index__", "data_ptr",
    "backward", "__array__", "__format__",
})


@space.register
class TensorVariable(VariableTracker):
    @property
    def replay_kind(self):
        return "object" if self.source is not None else None  # t.grad = ..., written back

    def __init__(self, node, fake, *, cls=torch.Tensor, source=None):
        super().__init__(source=source)
        self.node = node
        self._fake = fake
        self.cls = cls
        self.used = False
        self.attrs = {}  # attributes written in the trace (only .grad): replayed as an object's
        node.meta["example_value"] = fake

    @property
    def fake(self):
        """The FakeTensor; reading it means the trace relied on this tensor."""
        self.used = True
        return self._fake

    def python_type(self):
        return self.cls

    @property
    def mutable(self):
        return True  # tensor mutations are graph ops, replayed by the graph itself

    def getattr(self, tx, name):
        if name in ("shape",):
            return symbolic_meta(tx, self, "size", [], self.fake.shape) or wrap_constant(self.fake.shape)
        if name == "is_leaf" and self.source is not None:  # an input's grad_fn is not in its guard
            _guard_fact(tx, self, name, lambda s: AttrSource(s, name))
        if name in META_ATTRS:
            return wrap_constant(getattr(self.fake, name))
        if name in GRAPH_ATTRS:
            return tx.output.call_function(tx, getattr, [self, ConstantVariable(name)], {})
        if name == "data":
            return tx.output.call_method(tx, "detach", [self], {})
        if name == "__class__":

            return tx.wrap(self.cls)
        if name == "grad" and name in self.attrs:  # written earlier in this trace
            return self.attrs[name]
        if name == "grad" and self._real(tx) is not None:
            # an input's .grad (an optimizer reading parameters): re-read and guarded on every call
            return tx.wrap(self._real(tx).grad, AttrSource(self.source, "grad"))
        if name in AUTOGRAD_RUNTIME_ATTRS:
            unsupported("unsupported_attribute", f"tensor.{name} is run-time autograd state")
        if callable(getattr(torch.Tensor, name, None)):
            return TensorMethodVariable(self, name)
        real = self._real(tx)
        if real is not None and name in self._instance_dict(tx, real, name):  # `x.tag = 1` before the call
            return tx.wrap(real.__dict__[name], AttrSource(self.source, name))
        unsupported("unsupported_attribute", f"Tensor.{name}")

    def hasattr(self, tx, name):
        """Attributes of the tensor's type, and for a tensor from outside those its own
        ``__dict__`` holds (guarded); a tensor made in the graph has none."""
        if type_lookup(self.cls, name)[0] or name in META_ATTRS or name == "shape":
            return True
        real = self._real(tx)
        return real is not None and name in self._instance_dict(tx, real, name)

    def _real(self, tx):
        """The tensor itself, for an input of the graph (None for one made in it)."""
        if self.source is not None:
            for var, real in zip(tx.output.inputs, tx.output.example_inputs):
                if var is self:
                    return real
        return None

    def _instance_dict(self, tx, real, name) -> dict:
        """``real.__dict__``, guarded on holding ``name`` or not."""
        d = real.__dict__
        tx.output.add_guard("DICT_CONTAINS", AttrSource(self.source, "__dict__"), (name, name in d))
        return d

    def setattr(self, tx, name, value):
        """``t.grad = None`` or ``= g`` (``zero_grad(set_to_none=True)``, a gradient
        hook written by hand): on a tensor from outside, a write replayed after the
        graph like an object attribute's; later reads in the trace see it.
        ``t.data = other`` is a graph op (``_set_data``)."""
        if name == "data":
            return self._set_data(tx, value)
        if name != "grad":
            unsupported("unsupported_attribute", f"setting tensor.{name}")
        if isinstance(value, TensorVariable):
            mine, theirs = self.fake, value.fake
            if (mine.shape, mine.dtype, mine.device) != (theirs.shape, theirs.dtype, theirs.device):
                # autograd would raise "assigned grad has data of a different size/type"
                unsupported("unsupported_attribute", "assigning a .grad of another shape, dtype or device")
        elif not (value.is_python_constant() and value.as_python_constant() is None):
            unsupported("unsupported_attribute", f"assigning {value} to tensor.grad")
        if self.source is None:
            if isinstance(value, TensorVariable):  # a graph value's .grad is not modelled
                unsupported("unsupported_attribute", "setting .grad of a tensor made in the graph")
            return  # made in the graph: its .grad is None already (no backward runs inside)
        if self not in tx.output.inputs:
            unsupported("unsupported_attribute", "setting .grad of a tensor that is not a graph input")
        record_mutation(tx, self, "setting tensor.grad")
        self.attrs[name] = value

    def _set_data(self, tx, value):
        """``t.data = other``: ``t`` holds ``other``'s data from now on (its storage, its
        shape) and stays the same tensor to autograd; recorded as ``t.set_(other)``
        with grad off, as the assignment bypasses autograd."""
        if not isinstance(value, TensorVariable):
            unsupported("unsupported_attribute", f"assigning {value} to tensor.data")
        mine, theirs = self.fake, value.fake
        if (mine.dtype, mine.device) != (theirs.dtype, theirs.device):
            unsupported("unsupported_attribute", "tensor.data = a tensor of another dtype or device")
        output = tx.output
        if (mine.shape, mine.stride()) != (theirs.shape, theirs.stride()) and output.options.backend_name == "inductor":
            # Inductor (torch 2.13) checks such an input against its new size at the next
            # call and raises, under torch.compile too
            unsupported("unsupported_attribute", "tensor.data = a tensor of another shape, under Inductor")
        with output.fake_mode:  # the fake the node was traced with (a placeholder's) stays as it was
            self._fake = torch.empty_strided(mine.shape, mine.stride(), dtype=mine.dtype, device=mine.device,
                                             requires_grad=mine.requires_grad)
        mode = output.grad_mode
        output.set_grad_mode(False)
        try:
            output.call_function(tx, keep_version, [output.call_method(tx, "set_", [self, value], {})], {})
        finally:
            output.set_grad_mode(mode)

    def call_method(self, tx, name, args, kwargs):
        if name in UNGUARDED_FACTS and not args and not kwargs:
            value = getattr(self.fake, name)()
            if type(value) in (int, bool):
                _guard_fact(tx, self, name, lambda s: CallSource(AttrSource(s, name)))
                return ConstantVariable(value)
        if name in META_METHODS:
            cargs, ckwargs = space.lower_constants(args, kwargs)
            value = getattr(self.fake, name)(*cargs, **ckwargs)
            if not ckwargs:  # a symbolic size/stride/numel stays a graph value (symint.py)
                symbolic = symbolic_meta(tx, self, name, cargs, value)
                if symbolic is not None:
                    return symbolic
            return wrap_constant(value)
        if name == "item" and not args and not kwargs and config.capture_scalar_outputs:
            return unbacked_item(tx, self)
        if name == "is_set_to" and len(args) == 1 and not kwargs:
            if args[0] is self:  # the same tensor: the same storage, offset, sizes and strides
                return ConstantVariable(True)
            # FakeTensors do not know which real storages alias
            unsupported("data_dependent_value", "Tensor.is_set_to() of two tensors")
        if name in AUTOGRAD_RUNTIME_METHODS:
            unsupported("autograd_runtime_state", f"Tensor.{name}()")
        if name == "requires_grad_" and self.source is None and not self.fake.requires_grad:
            cargs, ckwargs = space.lower_constants(args, kwargs)
            if cargs[0] if cargs else ckwargs.get("requires_grad", True):
                # a leaf that requires grad, made inside: AOTAutograd's traced graph hands back a
                # tensor without it (and autograd.grad of it fails), so CPython makes it
                unsupported("autograd_runtime_state", "Tensor.requires_grad_() on a tensor the graph makes")
        if name in METADATA_WRITES and self.source is not None:
            # a functionalizing backend's graph does not hand a new shape or storage back to the caller's tensor
            unsupported("side_effect", f"Tensor.{name}() of a tensor from outside the frame")
        if name in DATA_METHODS:
            unsupported("data_dependent_value", f"Tensor.{name}() needs the tensor's data")
        if name == "numpy":  # the same data seen as an ndarray (numpy_arrays.py)
            force = kwargs.get("force", args[0] if args else ConstantVariable(False))
            return space.ndarray_of_tensor(tx, self, bool(force.as_python_constant()))
        if name == "type" and not args and not kwargs:
            return ConstantVariable(self.fake.type())
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "register_hook" and self.source is None and len(args) == 1 and not kwargs \
                and self.fake.requires_grad:
            return space.register_hook_in_graph(tx, self, args[0])  # tensor_hooks.py
        return tx.output.call_method(tx, name, [self] + list(args), kwargs)

    def truth(self, tx):
        unsupported("data_dependent_branch", f"attempted to jump with {self}")

    def length(self, tx):
        if self.fake.dim() == 0:
            unsupported("operator_error", "len() of a 0-d tensor")
        return int(self.fake.shape[0])  # a symbolic size is specialised (guarded) here

    def unpack(self, tx):
        return [self.getitem(tx, ConstantVariable(i)) for i in range(self.length(tx))]

    def getitem(self, tx, key):
        return tx.output.call_function(tx, operator.getitem, [self, key], {})

    def setitem(self, tx, key, value):
        tx.output.call_function(tx, operator.setitem, [self, key, value], {})

    def contains(self, tx, item):
        unsupported("data_dependent_value", "`in` on a tensor needs its data")

    def __repr__(self):
        return "TensorVariable()"


def _guard_fact(tx, tensor, name, source_of):
    """Guard fact ``name`` (``source_of(s)`` reads it) of ``tensor`` if it is an input; of
    a tensor the graph made, of every input, from which it may derive (a view's
    ``storage_offset()`` is its base's plus the view's own)."""
    output = tx.output
    for var in [tensor] if tensor.source is not None else list(output.inputs):
        if isinstance(var, TensorVariable) and var.source is not None:  # (an int input has no tensor facts)
            value = getattr(var.fake, name)
            output.add_guard("CONSTANT_MATCH", source_of(var.source), value() if callable(value) else value)


def keep_version(t):
    """Undo the version bump of the ``set_`` that stands for ``t.data = other``: an
    assignment to ``.data`` is hidden from autograd (and AOTAutograd keeps a hidden
    ``set_`` of an input in the graph)."""
    torch._C._autograd._unsafe_set_version_counter((t,), (max(t._version - 1, 0),))
    return t


class TensorMethodVariable(VariableTracker):
    """A bound tensor method, ``x.sum`` before it is called."""

    def __init__(self, tensor: TensorVariable, name: str, **kwargs):
        super().__init__(**kwargs)
        self.tensor = tensor
        self.name = name

    def call(self, tx, args, kwargs):
        return self.tensor.call_method(tx, self.name, args, kwargs)

    def python_type(self):
        return bound_method_type(self.tensor.cls, self.name)

    def getattr(self, tx, name):
        if name == "__self__":
            return self.tensor
        if name in METHOD_NAME_ATTRS:  # x.sum.__qualname__: 'Tensor.sum', not the FakeTensor's
            found, value = bound_method_attr(self.tensor.cls, self.name, name)
            if found:
                return ConstantVariable(value)
        return super().getattr(tx, name)

    def reconstruct(self, cg):
        cg(self.tensor)
        cg.load_attr(self.name)

    def __repr__(self):
        return f"TensorMethodVariable({self.name})"
