"""Models of the builtin constructors: ``list()``, ``tuple()``, ``set()``, ``frozenset()``,
``dict()``, ``OrderedDict()``, ``defaultdict()``, ``int()``, ``float()``, ``bool()``, ``str()``.

Each takes ``(tx, *args, **kwargs)`` trackers, as ``builtins.BUILTINS`` calls
them (after the call's shape was checked against the real constructor,
call_shapes.py). What CPython raises for a value, the real constructor raises
here too: it runs on the constants, or ``items_of`` raises the iteration error.
"""
import collections

from ...errors import unsupported
from ..containers.dicts import ConstDictVariable
from ..containers.lists import ListVariable, NamedTupleVariable, TupleVariable
from ..containers.sets import SetVariable
from ..core import space
from ..core.call_shapes import own_methods
from ..core.constant import ConstantVariable, items_of, wrap_constant
from ..core.exceptions import python_operation, raise_in_trace
from ..core.interpreter_state import guard_digit_limit
from ..core.number_protocol import as_float, as_int, converts_here
from ..core.reprs import user_str
from ..tensors.tensor import TensorVariable


def collection(kind):
    """``list(it)``, ``tuple(it)``, ``set(it)``, ``frozenset(it)``."""
    def model(tx, iterable=None):
        if kind in (set, frozenset) and isinstance(iterable, SetVariable):  # copied table by table
            if kind is frozenset is iterable.py_type:
                return iterable  # CPython: frozenset(fs) is fs
            copy = SetVariable(members=set(iterable.members), py_type=kind)
            copy.table_known = iterable.table_known  # set_merge walks the operand's table
            return copy
        if kind is tuple and type(iterable) is TupleVariable and iterable.py_type is tuple:
            return iterable  # CPython: tuple(t) is t for an exact tuple
        items = items_of(tx, iterable) if iterable is not None else []
        if kind is tuple:
            return TupleVariable(items)
        if kind is list:
            return ListVariable(items)
        return SetVariable(items, py_type=kind, tx=tx)
    return model


# The keywords of dict(), OrderedDict() and defaultdict() are the items' keys, any names.
def ordered_dict_model(tx, /, *args, **kwargs):
    """``OrderedDict(mapping_or_pairs, **items)``."""
    result = dict_model(tx, *args, **kwargs)
    result.py_type = collections.OrderedDict
    return result


def defaultdict_model(tx, /, *args, **kwargs):
    """``defaultdict(factory, mapping_or_pairs, **items)``."""
    factory = args[0] if args else None
    if factory is not None and factory.is_python_constant():
        with python_operation("defaultdict()"):  # "first argument must be callable or None"
            collections.defaultdict(factory.as_python_constant())
    elif factory is not None and not space.builtin_callable(tx, factory).as_python_constant():  # defdict_init
        raise_in_trace(TypeError, "first argument must be callable or None")
    if factory is None:  # defaultdict(): no factory, missing keys are KeyErrors
        factory = ConstantVariable(None)
    result = dict_model(tx, *args[1:], **kwargs)
    result.py_type = collections.defaultdict
    result.default_factory = factory
    return result


def dict_model(tx, /, *args, **kwargs):
    """``dict(mapping_or_pairs, **items)``: update() with each."""
    result = ConstDictVariable([])
    result.call_method(tx, "update", list(args), {})
    result.call_method(tx, "update", [], kwargs)
    return result


def scalar(kind):
    """``int(x)``, ``float(x)``, ``bool(x)``, ``str(x)``."""
    def model(tx, value=None, *rest, **kwargs):
        if kwargs:  # int("ff", base=16), int(x=1): the real constructor parses them, on constants
            args = ([value] if value is not None else []) + list(rest)
            if not all(v.is_python_constant() for v in args + list(kwargs.values())):
                unsupported("unsupported_call", f"{kind.__name__}() with keywords of values not constant")
            if args and kind is int:
                guard_digit_limit(tx, args[0].as_python_constant())
            with python_operation(f"{kind.__name__}()"):
                result = kind(*[a.as_python_constant() for a in args],
                              **{k: v.as_python_constant() for k, v in kwargs.items()})
            return wrap_constant(result)
        if value is None:
            return ConstantVariable(kind())
        if isinstance(value, TensorVariable):
            unsupported("data_dependent_value", f"{kind.__name__}() of a tensor")
        if kind is bool:
            if rest:  # bool_new takes one argument at most
                raise_in_trace(TypeError, f"bool expected at most 1 argument, got {1 + len(rest)}")
            return ConstantVariable(value.truth(tx))
        if kind is str and not rest and hasattr(value, "str"):  # tp_str of the tracker's type
            return value.str(tx)
        if kind is str and not rest:  # a user class's Python __str__ (or __repr__)
            traced = user_str(tx, value)
            if traced is not None:
                return traced
        if kind in (int, float) and not rest and hasattr(value, "convert"):  # class MyInt(int) (value_subclass.py)
            return value.convert(tx, kind)
        if kind in (int, float) and not rest and converts_here(value, kind):  # a user class's __int__ ...
            return ConstantVariable(as_int(tx, value) if kind is int else as_float(tx, value))
        first = space.constant_arg(value, whole=True) if space.is_constant_arg(value) else value.as_python_constant()  # str([1])
        real = [first] + [r.as_python_constant() for r in rest]
        if kind in (int, str):  # int("1" * 5000) raises or not by sys.get_int_max_str_digits()
            guard_digit_limit(tx, first)
        with python_operation(f"{kind.__name__}()"):  # int("x") raises ValueError
            result = kind(*real)
        return wrap_constant(result)
    return model


def tuple_new(tx, cls, iterable=None):
    """``tuple.__new__(cls, iterable)``: what a namedtuple's generated ``__new__`` (and
    ``super().__new__(cls, ...)`` in a subclass's own) returns."""
    klass = cls.as_python_constant()
    items = iterable.unpack(tx) if iterable is not None else []
    if klass is tuple:
        return TupleVariable(items)
    if isinstance(klass, type) and issubclass(klass, tuple) and hasattr(klass, "_fields"):
        return NamedTupleVariable(items, klass)
    if isinstance(klass, type) and issubclass(klass, tuple) and type(klass) is type and not space.is_prototype(klass):
        if own_methods(klass, tuple):
            return NamedTupleVariable(items, klass)  # a tuple subclass with methods (its __new__ calling tuple's)
        made = TupleVariable(items)  # `class Key(tuple): pass`: a tuple of that type
        made.py_type = klass
        return made
    unsupported("unsupported_call", f"tuple.__new__({klass!r})")
