"""SymNodeVariable: a size (or a number computed from sizes) of a dynamic-shape trace.

With dynamic shapes (graph/dynamic.py) ``x.size(0)`` is not a constant but a
SymInt: an FX node (``x.size(0)`` in the graph) plus its symbolic value in the
trace's ShapeEnv. Arithmetic and comparisons on it become graph nodes too,
so ``x.view(x.size(0) * 2, -1)`` works for every batch size.

A symbolic value the frame returns (``return x.shape``) is a graph output,
computed when the graph runs. Wherever Python needs an actual value
(``range(n)``, ``if n > 4``, a key), the tracker *specialises*: it asks the ShapeEnv for the value,
which records a guard (``s0 == 8``, ``s0 > 4``), so the graph is reused only
when that decision holds. That is always sound; it only costs generality.
"""
import operator

import torch
from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

from ...errors import unsupported
from ..core import space
from ..core.base import VariableTracker
from ..core.constant import ConstantVariable

SYM_TYPES = (torch.SymInt, torch.SymFloat, torch.SymBool)
_PY_TYPE = {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}


def is_symbolic(value) -> bool:
    """A SymInt/SymFloat/SymBool that is not a known constant."""
    return isinstance(value, SYM_TYPES) and not value.node.is_constant()


def wrap_sym(node, value) -> VariableTracker:
    """The tracker of a graph node whose fake result is ``value`` (a Sym* or a number)."""
    if not is_symbolic(value):
        return ConstantVariable(_PY_TYPE.get(type(value), lambda v: v)(value))
    node.meta["example_value"] = value
    return SymNodeVariable(node, value)


@space.register
def has_symbols(var) -> bool:
    """Does a tracker (a SizeVariable, a tuple...) hold a symbolic item?"""
    if isinstance(var, SymNodeVariable):
        return True
    if isinstance(var, space.RangeVariable):
        return False  # ints only, and maybe 2**64 of them
    return any(has_symbols(item) for item in getattr(var, "items", ()))


@space.register
def sym_operands(a, b) -> bool:
    """True when ``a <op> b`` should be a graph node over symbolic sizes."""
    if not (isinstance(a, SymNodeVariable) or isinstance(b, SymNodeVariable)):
        return False
    other = b if isinstance(a, SymNodeVariable) else a
    return isinstance(other, SymNodeVariable) or (
        isinstance(other, ConstantVariable) and type(other.value) in (int, float, bool))


@space.register
class SymNodeVariable(VariableTracker):
    """A symbolic int/float/bool: an FX node and its Sym* value."""

    def __init__(self, node, value, **kwargs):
        super().__init__(**kwargs)
        self.node = node
        self.value = value

    def python_type(self):
        return _PY_TYPE[type(self.value)]

    @property
    def mutable(self):
        return False

    def is_python_constant(self) -> bool:
        # True without specialising: callers that need the value ask as_python_constant()
        return not self.unbacked

    @property
    def unbacked(self) -> bool:
        """A number the tracer does not know (``step.item()``, optim.py): never specialised."""
        return bool(free_unbacked_symbols(self.value))

    def as_python_constant(self):
        """The concrete value, guarded: the ShapeEnv records ``symbol == value``."""
        if self.unbacked:
            unsupported("data_dependent_value", f"the value of {self.value}, known only when the graph runs")
        return self.python_type()(self.value)

    def convert(self, tx, kind):
        """``int(n)`` of an unbacked SymInt is itself (torch's ``int(u0)`` keeps it symbolic);
        a known value converts as its number does."""
        if self.unbacked and kind is int and self.python_type() is int:
            return self
        return ConstantVariable(kind(self.as_python_constant()))

    def truth(self, tx) -> bool:
        if self.unbacked:
            unsupported("data_dependent_branch", f"branching on {self.value}")
        return bool(self.value)  # guards the branch taken (``s0 > 4``), not the exact size

    def binop(self, tx, fn, other, reflected=False):
        if not sym_operands(self, other):
            return NotImplemented
        args = [other, self] if reflected else [self, other]
        return tx.output.call_function(tx, fn, args, {})

    def call_method(self, tx, name, args, kwargs):
        if name in _DUNDER_OPS and len(args) == 1 and not kwargs:
            result = self.binop(tx, _DUNDER_OPS[name], args[0], reflected=name.startswith("__r"))
            if result is not NotImplemented:
                return result
        return ConstantVariable(self.as_python_constant()).call_method(tx, name, args, kwargs)

    def reconstruct(self, cg):
        cg.load_const(self.as_python_constant())

    def __repr__(self):
        return f"SymNodeVariable({self.value})"


_DUNDER_OPS = {
    f"__{prefix}{name}__": fn
    for name, fn in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                     ("floordiv", operator.floordiv), ("truediv", operator.truediv), ("mod", operator.mod))
    for prefix in ("", "r")
}


def unbacked_item(tx, tensor) -> SymNodeVariable:
    """``tensor.item()`` as a graph node whose value the trace does not know: an unbacked
    SymFloat, SymInt or SymBool (optim.py's step counts; ``config.capture_scalar_outputs``)."""
    fake = tensor.fake
    if fake.numel() != 1 or fake.is_complex():
        unsupported("data_dependent_value", "item() of a tensor that is not one real number")
    env = tx.output.shapes.shape_env
    if fake.is_floating_point():
        value = env.create_unbacked_symfloat()
    elif fake.dtype is torch.bool:
        value = env.create_unbacked_symbool()
    else:
        value = env.create_unbacked_symint()
    return tx.output.call_known(tx, "call_method", "item", [tensor], value)


def _has_symbolic(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_has_symbolic(v) for v in value)
    return is_symbolic(value)


def symbolic_meta(tx, tensor, name, args, value):
    """``x.size()``, ``x.shape``, ``x.numel()``... when the answer is symbolic: graph nodes.

    Returns None when ``value`` (the answer on the FakeTensor) is static, so
    the caller keeps its constant. A whole ``size()``/``stride()`` becomes a
    tuple with one node per symbolic item and constants for static ones.
    """
    if not _has_symbolic(value):
        return None
    if isinstance(value, tuple) and not args:
        items = [ConstantVariable(v) if not is_symbolic(v) else
                 tx.output.call_method(tx, name, [tensor, ConstantVariable(i)], {})
                 for i, v in enumerate(value)]
        return space.SizeVariable(items) if isinstance(value, torch.Size) else space.TupleVariable(items)
    return tx.output.call_method(tx, name, [tensor] + [ConstantVariable(a) for a in args], {})
