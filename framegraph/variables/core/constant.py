"""Immutable Python values known at trace time: None, numbers, strings, dtypes...

A ConstantVariable is computed with, not recorded: ``2 * 3`` is 6 at trace
time and never reaches the graph. Methods of constants (``"a".upper()``,
``(3).bit_length()``) run at trace time when all their arguments are
constants too. Tuples, slices and ranges of constants have their own
trackers (lists.py) so they can be unpacked; ``wrap_constant`` picks the
right one.
"""
import enum
import types

import torch

from ...errors import unsupported
from . import space
from .base import VariableTracker

# Types whose values are immutable and safe to compute with at trace time.
CONSTANT_TYPES = (
    type(None), bool, int, float, complex, str, bytes, type(Ellipsis), type(NotImplemented),
    torch.dtype, torch.device, torch.layout, torch.memory_format, types.CodeType,
)


def is_constant_value(value) -> bool:
    if isinstance(value, (tuple, frozenset)) and type(value) in (tuple, frozenset):
        return all(is_constant_value(v) for v in value)
    return isinstance(value, CONSTANT_TYPES) and not isinstance(value, torch.Tensor)


@space.register
class ConstantVariable(VariableTracker):
    def __init__(self, value, **kwargs):
        super().__init__(**kwargs)
        self.value = value

    def python_type(self):
        return type(self.value)

    def as_python_constant(self):
        return self.value

    def is_python_constant(self):
        return True

    @property
    def mutable(self):
        return False

    def getattr(self, tx, name):
        with space.python_operation("%r.%s", self.value, name):
            attr = getattr(self.value, name)
        if callable(attr):
            return space.BuiltinVariable(attr)
        return wrap_constant(attr)

    def hasattr(self, tx, name):
        # the value itself is known (and guarded), and constants are immutable:
        # CPython's answer now is the answer on every call that passes the guards
        return hasattr(self.value, name)

    def call_method(self, tx, name, args, kwargs):
        with space.python_operation("%r.%s", self.value, name):  # a missing method: CPython's AttributeError
            getattr(self.value, name)
        method = getattr(type(self.value), name, None)
        if method is None:  # an attribute of the instance only (a dtype's): called as it is
            return self.getattr(tx, name).call(tx, args, kwargs)
        return space.BuiltinVariable(method).call(tx, [self] + list(args), kwargs)

    def call(self, tx, args, kwargs):
        """``5()``, ``None()`` (``__hash__ = None`` read, then called): CPython's TypeError."""
        if callable(self.value):
            return super().call(tx, args, kwargs)
        space.raise_in_trace(TypeError, f"'{type(self.value).__name__}' object is not callable")

    def truth(self, tx):
        return bool(self.value)

    def length(self, tx):
        with space.python_operation("len()"):  # len(5): "object of type 'int' has no len()"
            return len(self.value)

    def iter(self, tx):
        """``iter(c)``: CPython's TypeError for a constant that is not iterable."""
        items_of(tx, self)
        return super().iter(tx)

    def unpack(self, tx):
        if isinstance(self.value, (str, bytes, frozenset, tuple)):  # a struct sequence is a tuple
            return [wrap_constant(v) for v in self.value]
        return super().unpack(tx)

    def getitem(self, tx, key):
        index = space.sequence_index(tx, key) if isinstance(self.value, (str, bytes, tuple, range)) \
            else key.as_python_constant()
        with space.python_operation("%r[%r]", self.value, index):
            item = self.value[index]
        return wrap_constant(item)

    def reconstruct(self, cg):
        cg.load_const(self.value)

    def __repr__(self):
        return f"ConstantVariable({self.value!r})"


def items_of(tx, var):
    """What iterating ``var`` gives, as a builtin taking an iterable sees it (``list(x)``,
    ``d.update(x)``, ``sorted(x)``): a constant that is not iterable raises CPython's
    TypeError there ("'int' object is not iterable"). (UNPACK_SEQUENCE and ``f(*x)``
    word their errors otherwise: they call ``unpack`` itself.)"""
    if isinstance(var, ConstantVariable):
        with space.python_operation("iter()"):
            iter(var.value)
    if type(var) is space.BuiltinVariable and not hasattr(type(var.fn), "__iter__"):
        space.raise_in_trace(TypeError, f"'{type(var.fn).__name__}' object is not iterable")
    check = getattr(var, "check_iterable", None)  # a user object: the builtin's words, not unpack's
    if check is not None:
        check()
    return var.unpack(tx)


def is_struct_sequence(value) -> bool:
    """``sys.float_info``, ``os.stat_result``, ``time.struct_time``: a C struct sequence (an
    immutable tuple subclass with named fields) of constants, itself a constant."""
    return isinstance(value, tuple) and "n_sequence_fields" in type(value).__dict__ and all(
        is_constant_value(v) for v in value)


def wrap_constant(value) -> VariableTracker:
    """The tracker of a trace-time constant (tuples become TupleVariable, ...)."""
    if type(value) is tuple:
        return space.TupleVariable([wrap_constant(v) for v in value])
    if type(value) is torch.Size:
        return space.SizeVariable([wrap_constant(v) for v in value])
    if type(value) is slice:
        return space.SliceVariable([wrap_constant(v) for v in (value.start, value.stop, value.step)])
    if type(value) is range:
        return space.RangeVariable(value)
    if isinstance(value, CONSTANT_TYPES) or type(value) is frozenset or is_struct_sequence(value):
        return ConstantVariable(value)
    if isinstance(value, enum.Enum):  # `Flag.A | Flag.B`: a member, as a member read from its class is
        return space.EnumVariable(value)
    if isinstance(value, ANNOTATION_TYPES):  # `int | None` computed now: immutable, every use runs now
        return space.OpaqueConstantVariable(value)
    unsupported("unsupported_value", f"{type(value).__name__} is not a trace-time constant")


# Annotation objects a trace computes (``int | None``, ``list[int]``): immutable and
# compared by value, like the ones builder.py wraps from globals.
ANNOTATION_TYPES = (types.UnionType, types.GenericAlias)
