"""``int(obj)``, ``float(obj)``, ``hex(obj)`` and friends on instances of user classes.

CPython converts an object to a number through its type's slots, each a
Python dunder for a user class: ``PyNumber_Long`` tries ``__int__``, then
``__index__``, then ``__trunc__``; ``PyNumber_Float`` tries ``__float__``, then
``__index__``; ``PyNumber_Index`` (``hex``, ``oct``, ``bin``, ``operator.index``)
only ``__index__``; ``divmod`` and ``hash`` go through ``__divmod__``/``__rdivmod__``
and ``__hash__``. The dunder is inlined and its result checked as CPython
checks it, with CPython's TypeError when it is of the wrong type. A result of
a subclass of the right type is accepted by CPython with a DeprecationWarning:
that is a break here, so the warning is not lost.
"""
import sys
import types

from ...errors import unsupported
from . import space
from .base import VariableTracker, type_lookup
from .constant import ConstantVariable
from .exceptions import python_operation, raise_in_trace
from .ops import binary_op


def _python_dunder(obj, name):
    if not isinstance(obj, space.UserDefinedObjectVariable):
        return None
    found, fn = type_lookup(obj.python_type(), name)
    return fn if found and isinstance(fn, types.FunctionType) else None


def _checked(tx, obj, name, kind, message):
    result = obj._dunder(tx, name, [])
    if not result.is_python_constant():
        unsupported("unsupported_value", f"{obj.python_type().__name__}.{name} returned {result}")
    value = result.as_python_constant()
    if type(value) is kind:
        return value
    if isinstance(value, kind):  # accepted by CPython with a DeprecationWarning
        unsupported("unsupported_value", f"{obj.python_type().__name__}.{name} returned a {kind.__name__} subclass")
    raise_in_trace(TypeError, message.format(type(value).__name__))


_CONVERSIONS = {int: ("__int__", "__index__", "__trunc__"), float: ("__float__", "__index__")}


def converts_here(obj, kind) -> bool:
    """Whether ``kind(obj)`` (int or float) is answered here: ``obj`` is a user object whose
    class has only Python dunders for it, or none (then CPython's TypeError)."""
    if not isinstance(obj, space.UserDefinedObjectVariable):
        return False
    cls = obj.python_type()
    present = [name for name in _CONVERSIONS[kind] if hasattr(cls, name)]
    return all(_python_dunder(obj, name) for name in present)  # a C slot (numpy's) is not modelled


@space.register
def sequence_index(tx, key):
    """The int or slice a sequence subscript ``key`` stands for: a constant, or a user
    object whose class defines ``__index__`` (``PyNumber_AsSsize_t``, what list, tuple,
    str and range subscripts call), also as a slice's bound (``_PyEval_SliceIndex``)."""
    if key.is_python_constant():
        return key.as_python_constant()
    if _python_dunder(key, "__index__") is not None:
        return as_index(tx, key)
    if isinstance(key, space.SliceVariable):
        return slice(*(sequence_index(tx, part) if _python_dunder(part, "__index__") is None
                       else as_index(tx, part) for part in key.items))
    unsupported("unsupported_value", f"sequence index {key}")


def as_index(tx, obj) -> int:
    """``PyNumber_Index(obj)``: ``__index__``, which must return an int."""
    if _python_dunder(obj, "__index__") is None:
        raise_in_trace(TypeError, f"'{obj.python_type().__name__}' object cannot be interpreted as an integer")
    return _checked(tx, obj, "__index__", int, "__index__ returned non-int (type {})")


def as_int(tx, obj) -> int:
    """``int(obj)`` (PyNumber_Long): ``__int__``, else ``__index__``, else ``__trunc__``."""
    if _python_dunder(obj, "__int__"):
        return _checked(tx, obj, "__int__", int, "__int__ returned non-int (type {})")
    if _python_dunder(obj, "__index__"):
        return as_index(tx, obj)
    if _python_dunder(obj, "__trunc__"):  # deprecated since 3.11: CPython warns
        unsupported("unsupported_call", f"int() through {obj.python_type().__name__}.__trunc__ (deprecated)")
    raise_in_trace(TypeError, "int() argument must be a string, a bytes-like object or a real number, "
                              f"not '{obj.python_type().__name__}'")


def as_float(tx, obj) -> float:
    """``float(obj)`` (PyNumber_Float): ``__float__``, else ``__index__`` as a float."""
    name = obj.python_type().__name__
    if _python_dunder(obj, "__float__"):
        return _checked(tx, obj, "__float__", float, f"{name}.__float__ returned non-float (type {{}})")
    if _python_dunder(obj, "__index__"):
        return float(as_index(tx, obj))
    raise_in_trace(TypeError, f"float() argument must be a string or a real number, not '{name}'")


def _indexes_here(obj) -> bool:
    return isinstance(obj, space.UserDefinedObjectVariable) and (
        _python_dunder(obj, "__index__") is not None or not hasattr(obj.python_type(), "__index__"))


def index_builtin(fn):
    """``hex``/``oct``/``bin`` of an object: ``fn`` of its ``__index__``."""
    def model(tx, obj):
        if obj.is_python_constant():
            with python_operation(f"{fn.__name__}()"):
                return ConstantVariable(fn(obj.as_python_constant()))
        if not _indexes_here(obj):
            unsupported("unsupported_call", f"builtin {fn.__name__} of {obj}")
        return ConstantVariable(fn(as_index(tx, obj)))
    return model


def divmod_of(tx, a, b):
    """``divmod(a, b)``: folded on constants, else ``a.__divmod__(b)`` / ``b.__rdivmod__(a)``."""
    if isinstance(a, space.TensorVariable) or isinstance(b, space.TensorVariable):
        unsupported("unsupported_call", "divmod() of a tensor")
    return binary_op(tx, divmod, a, b)


def hash_of(tx, obj):
    """``hash(obj)``: a constant's own; a user class's Python ``__hash__`` inlined, its result
    checked and reduced as slot_tp_hash does. Identity hashes (object's, a tensor's) are breaks:
    they differ from call to call."""
    if obj.is_python_constant():
        with python_operation("hash()"):
            return ConstantVariable(hash(obj.as_python_constant()))
    kind = obj.python_type() if type(obj).python_type is not VariableTracker.python_type else None
    if kind is not None and getattr(kind, "__hash__", 0) is None:  # a list, dict or set (or subclass)
        raise_in_trace(TypeError, f"unhashable type: '{kind.__name__}'")
    user_object = isinstance(obj, space.UserDefinedObjectVariable)
    found, fn = type_lookup(obj.python_type(), "__hash__") if user_object else (False, None)
    if not isinstance(fn, types.FunctionType) and not getattr(obj, "slots_on_value", False):
        if found and fn is None:  # __hash__ = None, or __eq__ without __hash__
            raise_in_trace(TypeError, f"unhashable type: '{obj.python_type().__name__}'")
        unsupported("unsupported_call", f"hash() of {obj}")
    result = obj._dunder(tx, "__hash__", [])
    if not (result.is_python_constant() and isinstance(result.as_python_constant(), int)):
        if result.is_python_constant():
            raise_in_trace(TypeError, "__hash__ method should return an integer")
        unsupported("unsupported_value", f"__hash__ of {obj} returned {result}")
    value = result.as_python_constant()
    # slot_tp_hash: an int outside Py_hash_t is hashed again; -1 is reserved for errors
    value = value if -sys.maxsize - 1 <= value <= sys.maxsize else hash(value)
    return ConstantVariable(-2 if value == -1 else int(value))
