"""Python builtins (len, isinstance, min, sorted, zip...) and pure C functions.

``BuiltinVariable(fn)`` calls go through ``BUILTINS``, a table from the
builtin to a small model taking ``(tx, *args, **kwargs)`` trackers. A builtin
without a model is still computed at trace time when it is known to be pure
(``PURE``: math functions, methods of immutable constants, operator
functions on constants) and every argument is a constant.
"""
import abc
import builtins
import collections
import math
import operator
import struct
import sys
import types
import weakref
from typing import Callable, Dict

import torch

from ...errors import unsupported
from ..containers.deques import make_deque
from ..containers.lists import ListVariable, SizeVariable
from ..containers.ranges import SliceVariable
from ..containers.mapping_proxy import make_mapping_proxy
from ..containers.sorting import minmax as _minmax, sorted_items
from ..core import space
from ..core.base import CallableVariable, VariableTracker, known_type, tp_name, type_lookup
from ..core.call_shapes import (STAND_INS, builtin_base, check_function_shape, fits,
                                real_signature_rejects, real_stand_in)
from ..core.constant import ConstantVariable, is_constant_value, items_of, wrap_constant
from ..core.exceptions import (TracedException, is_exception_class, make_exception, python_operation,
                               raise_in_trace)
from ..core.fresh import wrap_fresh
from ..core.interpreter_state import MODELS as INTERPRETER_STATE_MODELS
from ..core.iterator import IteratorVariable, REVERSED_TYPES, builtin_iterator_type
from ..core.number_protocol import divmod_of, hash_of, index_builtin
from ..core.ops import COMPARE_OPS, binary_op, compare, contains_op, is_op, unary_op
from ..core.reprs import formatted_value, user_repr
from ..iteration.generators import GeneratorVariable
from ..iteration.iteration_protocol import (CallableIteratorVariable, SequenceReversedVariable, count_of,
                                            index_of)
from ..iteration.iterators import (EnumerateVariable, FilterVariable, GiveBackUnread, ListIteratorVariable, MapVariable,
                                   ZipVariable)
from ..iteration.groupby import MODELS as GROUPBY_MODELS
from ..iteration.itertools_iters import MODELS as ITERTOOLS_MODELS
from .lru_caches import MODELS as LRU_MODELS
from ..tensors.tensor import TensorVariable
from .builtin_methods import (MODELS as BUILTIN_METHOD_MODELS, DescriptorGetVariable, call_unbound,
                              is_unbound_builtin_method, joined_items)
from .constructors import collection as _collection, defaultdict_model as _defaultdict, dict_model as _dict
from .constructors import ordered_dict_model as _ordered_dict, scalar as _scalar, tuple_new
from .evaluation import compile_model, eval_model
from .identity import MODELS as IDENTITY_MODELS
from .operator_getters import MODELS as OPERATOR_GETTER_MODELS
from .trace_time import class_getitem
from .weak_refs import make_weakref


@space.register
class BuiltinVariable(CallableVariable):
    """A Python builtin: modelled per function in ``BUILTINS``, or folded on constants."""

    def call(self, tx, args, kwargs):
        model = BUILTINS.get(self.fn)
        if model is not None:
            binds = fits(model, 1, args, kwargs)
            if not binds or self.fn in STAND_INS or real_signature_rejects(self.fn, args, kwargs):
                check_function_shape(self.fn, args, kwargs)  # `len()`, `bool(x=1)`: CPython's TypeError
            if not binds or real_signature_rejects(self.fn, args, kwargs):
                unsupported("operator_error", f"{_name(self.fn)}() does not take these arguments")
            return model(tx, *args, **kwargs)
        if is_exception_class(self.fn):
            return make_exception(self.fn, args, kwargs)
        if is_unbound_builtin_method(self.fn):  # dict.get(d, k), list.__iadd__(a, b)
            return call_unbound(tx, self.fn, args, kwargs)
        if _is_pure(self.fn):  # a generator argument is consumed whole by the builtin, as in eager
            args = [ListIteratorVariable(a.unpack(tx)) if isinstance(a, GeneratorVariable) else a for a in args]
            if getattr(self.fn, "__name__", None) == "join" and type(getattr(self.fn, "__self__", None)) in (
                    str, bytes) and len(args) == 1 and not kwargs:
                args = [joined_items(tx, args[0])]
        values = list(args) + list(kwargs.values())
        if _is_pure(self.fn) and all(is_constant_arg(a) for a in values):
            read = []
            real_args = [constant_arg(a, read=read) for a in args]
            real_kwargs = {k: constant_arg(v, read=read) for k, v in kwargs.items()}
            # what it raises, CPython raises; operator.indexOf(it, x) stops after the match: so do the iterators
            with GiveBackUnread(read), python_operation(_name(self.fn)):
                value = self.fn(*real_args, **real_kwargs)
            if not is_constant_value(value) and type(value) not in (list, dict, tuple):
                unsupported("unsupported_call", f"builtin {_name(self.fn)} made a {type(value).__name__}")
            return wrap_fresh(value)
        unsupported("unsupported_call", f"builtin {_name(self.fn)}")

    def getattr(self, tx, name):
        if name in ("__name__", "__qualname__", "__module__"):
            return ConstantVariable(getattr(self.fn, name))
        if name == "__get__" and is_unbound_builtin_method(self.fn):  # list.append.__get__(obj)
            return DescriptorGetVariable(self.fn)
        if name in _DESCRIPTOR_FACTS and isinstance(self.fn, _C_CALLABLES):
            # a C function's or descriptor's own facts: no program can set them
            if not hasattr(self.fn, name):
                raise_in_trace(AttributeError, f"'{type(self.fn).__name__}' object has no attribute '{name}'")
            return tx.wrap(getattr(self.fn, name))
        if isinstance(self.fn, type):
            if not hasattr(self.fn, name):  # `int.__dataclass_fields__`: what CPython raises
                raise_in_trace(AttributeError, f"type object '{self.fn.__name__}' has no attribute '{name}'")
            attr = getattr(self.fn, name)
            return space.ObjectSlotVariable(attr) if attr in space.OBJECT_SLOTS else BuiltinVariable(attr)
        return super().getattr(tx, name)

    def hasattr(self, tx, name):
        if isinstance(self.fn, (type,) + _C_CALLABLES):  # attributes no program can set
            return hasattr(self.fn, name)
        return super().hasattr(tx, name)

    def getitem(self, tx, key):
        """``list[Tensor]``, ``dict[str, int]``: a generic alias, built at trace time."""
        if isinstance(self.fn, type):
            return class_getitem(tx, self.fn, key)
        return super().getitem(tx, key)

    def __repr__(self):
        return f"BuiltinVariable({_name(self.fn)})"


# Lists nested deeper are not rebuilt at trace time (the builtin runs in CPython).
_MAX_NESTING = 64


# C functions and the descriptors of C types: immutable, without a __dict__
_C_CALLABLES = (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
                types.ClassMethodDescriptorType)
_DESCRIPTOR_FACTS = frozenset({"__objclass__", "__doc__", "__text_signature__"})


@space.register
def is_constant_arg(v, inside=()) -> bool:
    if isinstance(v, ListVariable) and v.python_type() is not list:
        return False  # a list subclass: its methods (``__repr__``...) may be the user's
    if isinstance(v, ListVariable):
        if any(v is outer for outer in inside):
            return True  # a list that contains itself: rebuilt with the cycle
        return len(inside) < _MAX_NESTING and all(is_constant_arg(x, inside + (v,)) for x in v.items)
    if isinstance(v, ListIteratorVariable):
        return all(is_constant_arg(x, inside) for x in v.items[v.index:])
    return v.is_python_constant()


@space.register
def constant_arg(v, made=None, read=None, whole=False):
    """A constant argument of a pure builtin (lists of constants too: ``", ".join(names)``;
    an iterator over constants is consumed, as the builtin would: ``",".join(genexpr)``).
    A list in it twice is one list (``a.append(a); repr(a)``). ``read``: see ``lend``.
    ``whole``: the builtin takes an iterator as a value, without iterating it (``repr(it)``,
    ``int(it)``, an iterator inside a list): an empty real one of its type stands in."""
    if isinstance(v, ListVariable):
        made = {} if made is None else made
        if id(v) not in made:
            made[id(v)] = out = []
            out.extend(constant_arg(x, made, whole=True) for x in v.items)
        return made[id(v)]
    if isinstance(v, ListIteratorVariable):
        if not whole:
            return v.lend([constant_arg(x, whole=True) for x in v.items[v.index:]], read)
        stand_in = space.iterator_stand_in(v.python_type())
        if stand_in is None:
            unsupported("unsupported_value", f"a {v.python_type().__name__} as a builtin's argument")
        return stand_in
    return v.as_python_constant()


def _name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))


def _is_pure(fn) -> bool:
    if fn in PURE:  # int.from_bytes, a class method: its __self__ is the class
        return True
    owner = getattr(fn, "__self__", None)
    if owner in _IMMUTABLE_TYPES and isinstance(fn, types.BuiltinMethodType):
        return True  # bool.from_bytes, int.__new__(bool, 0): C code of an immutable type, no state
    if owner is not None and not isinstance(owner, type(math)):

        return is_constant_value(owner)  # a method of an immutable constant
    module = getattr(fn, "__module__", None) or getattr(owner, "__name__", None)
    # by name: a fresh import of _operator (test.support.import_fresh_module) has its own functions
    if module in ("operator", "_operator") and getattr(fn, "__name__", None) in _MUTATING_OPERATORS:
        return False  # run on a copy of the arguments, the change would be lost
    return module in ("math", "operator", "_operator", "cmath") or fn in PURE


_SLOT_ARITY = {"__len__": 0, "__getitem__": 1, "__contains__": 1, "__iter__": 0}


@space.register
def call_slot(tx, obj, name, args):
    """The dunder methods of containers, called explicitly (``l.__len__()``)."""
    wanted = _SLOT_ARITY.get(name, 0)
    if len(args) != wanted:  # the method-wrapper's own TypeError
        what = "no arguments" if wanted == 0 else "exactly one argument"
        raise_in_trace(TypeError, f"{obj.python_type().__name__}.{name}() takes {what} ({len(args)} given)")
    if name == "__len__":
        return ConstantVariable(obj.length(tx))
    if name == "__getitem__":
        return obj.getitem(tx, args[0])
    if name == "__contains__":
        return ConstantVariable(obj.contains(tx, args[0]))
    return obj.iter(tx)


def _is_none(v):
    return v.is_python_constant() and v.as_python_constant() is None


def _isinstance(tx, obj, classinfo):
    cls = classinfo.as_python_constant()
    if not isinstance(cls, (type, tuple, types.UnionType)):
        with python_operation("isinstance()"):  # "isinstance() arg 2 must be a type, ..."
            isinstance(None, cls)
    for c in cls if isinstance(cls, tuple) else (cls,):
        check = getattr(type(c), "__instancecheck__", None) if isinstance(c, type) else None
        # a metaclass of the user's decides from the object itself (ABCMeta's agrees with
        # issubclass; Parameter's does for a tensor of a known class, see _is_parameter)
        if isinstance(check, types.FunctionType) and check is not abc.ABCMeta.__instancecheck__ \
                and not _is_parameter_check(c, obj):
            unsupported("unsupported_call", f"isinstance with {type(c).__name__}.__instancecheck__")
    return ConstantVariable(issubclass(obj.python_type(), cls))


def _is_parameter_check(c, obj) -> bool:
    """``isinstance(t, nn.Parameter)`` of a tracked tensor: _ParameterMeta also accepts a
    tensor carrying ``_is_param``, which only Parameter.__new__ sets, on a tensor subclass
    it makes; a plain tensor (its class guarded) or a Parameter answers by its class."""
    return (c is torch.nn.Parameter and isinstance(obj, TensorVariable)
            and (obj.python_type() is torch.Tensor or issubclass(obj.python_type(), torch.nn.Parameter)))


def _issubclass(tx, cls, classinfo):
    real, info = cls.as_python_constant(), classinfo.as_python_constant()
    with python_operation("issubclass()"):  # "issubclass() arg 1 must be a class"
        answer = issubclass(real, info)
    return ConstantVariable(answer)


def _getattr(tx, obj, name, default=None):
    # a str subclass name (CPython's test_dict): the lookup uses its value
    name = name.plain if isinstance(getattr(name, "plain", None), str) else name.as_python_constant()
    if default is not None and obj.hasattr(tx, name) is False:
        return default
    try:
        return obj.getattr(tx, name)
    except TracedException as error:  # with a default, getattr catches AttributeError only
        if default is None or not issubclass(error.value.cls, AttributeError):
            raise
        return default


def _hasattr(tx, obj, name):
    """``hasattr``: the tracker's answer, else whether ``getattr`` raises AttributeError."""
    answer = obj.hasattr(tx, name.as_python_constant())
    if answer is None:
        try:
            obj.getattr(tx, name.as_python_constant())
        except TracedException as error:
            if not issubclass(error.value.cls, AttributeError):
                raise
            return ConstantVariable(False)
        return ConstantVariable(True)
    return ConstantVariable(answer)


def _setattr(tx, obj, name, value):
    obj.setattr(tx, name.as_python_constant(), value)
    return ConstantVariable(None)


def _sum(tx, iterable, start=None):
    total = start if start is not None else ConstantVariable(0)
    for item in space.items_one_by_one(tx, iterable):
        total = binary_op(tx, operator.add, total, item)
    return total


def _all_any(want):
    def model(tx, iterable):
        it = iterable.iter(tx)  # item by item: any() stops at the first true one, as CPython
        while (item := it.next(tx)) is not None:
            if item.truth(tx) is want:
                return ConstantVariable(want)
        return ConstantVariable(not want)
    return model


def _len(tx, obj):
    if isinstance(obj, IteratorVariable):  # an iterator has a __length_hint__ at most, no sq_length
        raise_in_trace(TypeError, f"object of type '{obj.python_type().__name__}' has no len()")
    return ConstantVariable(obj.length(tx))


def _refusal(fn, *args) -> str:
    """The TypeError message ``fn(*args)`` raises in this CPython (wordings change between versions)."""
    try:
        fn(*args)
    except TypeError as error:
        return str(error)
    raise AssertionError(f"{fn.__name__}{args} did not raise")


_ITER_NOT_CALLABLE = _refusal(iter, None, None)  # "iter(v, w): v must be callable" (3.11)


def _iter(tx, obj, *sentinel):
    """``iter(obj)``; ``iter(callable, sentinel)`` calls it until it returns the sentinel."""
    if not sentinel:
        return obj.iter(tx)
    if len(sentinel) > 1:
        raise_in_trace(TypeError, f"iter expected at most 2 arguments, got {1 + len(sentinel)}")
    if not builtin_callable(tx, obj).as_python_constant():
        raise_in_trace(TypeError, _ITER_NOT_CALLABLE)
    return CallableIteratorVariable(obj, sentinel[0])


def _next(tx, it, default=None):
    stand_in = real_stand_in(it)
    if stand_in is not None and not hasattr(type(stand_in), "__next__"):
        with python_operation("next()"):  # "'list' object is not an iterator"
            next(stand_in)
    item = it.next(tx)
    if item is None:
        if default is None:
            it.raise_stop()  # only iterators answer None
        return default
    return item


def _reversed(tx, seq):
    """A user class's ``__reversed__``, else its ``__len__`` and ``__getitem__``, as CPython does."""
    if isinstance(seq, ConstantVariable):
        with python_operation("reversed()"):  # "'int' object is not reversible"
            reversed(seq.value)

    if isinstance(seq, space.UserDefinedObjectVariable):
        found, method = type_lookup(seq.cls, "__reversed__")
        if found and method is None:  # reversed_new_impl: `__reversed__ = None` (Mapping's) blocks it
            raise_in_trace(TypeError, f"'{seq.cls.__name__}' object is not reversible")
        if found and not isinstance(method, types.FunctionType):
            unsupported("unsupported_call", f"{seq.cls.__name__}.__reversed__ is a {type(method).__name__}")
        if found:
            return seq.call_method(tx, "__reversed__", [], {})
        if type_lookup(seq.cls, "__len__")[0] and type_lookup(seq.cls, "__getitem__")[0]:
            n = seq.call_method(tx, "__len__", [], {}).as_python_constant()
            return SequenceReversedVariable(seq, n - 1)
        unsupported("operator_error", f"{seq.cls.__name__!r} object is not reversible")
    odict = getattr(seq, "odict_iterator", None)
    if odict is not None and odict(reverse=True) is not None:
        return odict(reverse=True)
    seq_type = known_type(seq)
    if seq_type is not None and not (type_lookup(seq_type, "__reversed__")[0]
            or type_lookup(seq_type, "__len__")[0] and type_lookup(seq_type, "__getitem__")[0]):
        # reversed_new_impl: no __reversed__ and not a sequence (a set, a generator, an iterator)
        raise_in_trace(TypeError, f"'{tp_name(seq_type)}' object is not reversible")
    kind = builtin_iterator_type(seq.python_type(), REVERSED_TYPES)  # reversed(container), rebuilt
    return ListIteratorVariable(list(reversed(seq.unpack(tx))), container=seq if kind else None, make=reversed,
                                kind=kind)


def _enumerate(tx, iterable, start=ConstantVariable(0)):
    iterator = iterable.iter(tx)  # enum_new_impl: iter() first, then the start's __index__
    value = start.as_python_constant()
    if not hasattr(type(value), "__index__"):
        raise_in_trace(TypeError, f"'{type(value).__name__}' object cannot be interpreted as an integer")
    return EnumerateVariable(iterator, value.__index__())


def _zip(tx, *iterables, strict=ConstantVariable(False)):
    return ZipVariable([it.iter(tx) for it in iterables], strict.as_python_constant())


def _map(tx, fn, *iterables):
    if not iterables:  # map_new's check, before any iter()
        raise_in_trace(TypeError, "map() must have at least two arguments.")
    return MapVariable(fn, [it.iter(tx) for it in iterables])


def _filter(tx, fn, iterable):
    return FilterVariable(fn, iterable.iter(tx))


def _sorted(tx, iterable, key=None, reverse=None):
    return ListVariable(sorted_items(tx, items_of(tx, iterable), key, reverse))


@space.register
def builtin_repr(tx, obj):
    """``repr()``: the tracker's tp_repr where it models one, else of a constant."""
    modelled = obj.repr(tx) if hasattr(obj, "repr") else None  # None: the tracker leaves it to the rest
    if modelled is not None:
        return modelled
    traced = user_repr(tx, obj)  # a Python __repr__ of the type (reprs.py)
    if traced is not None:
        return traced
    value = constant_arg(obj, whole=True)
    with python_operation("repr()"):
        text = repr(value)
    return ConstantVariable(text)


def _format(tx, value, spec=ConstantVariable("")):
    if not spec.is_python_constant() or not isinstance(spec.as_python_constant(), str):
        with python_operation("format()"):  # "format() argument 2 must be str, not int"
            format(0, spec.as_python_constant() if spec.is_python_constant() else 0)
        unsupported("unsupported_value", f"format() with the spec {spec}")
    return formatted_value(tx, value, 0, spec.as_python_constant())


def _abs(tx, x):
    return unary_op(tx, operator.abs, x)


def _type(tx, obj, *rest):
    return space.type_builtin(tx, obj, *rest)


@space.register
def builtin_callable(tx, obj):
    """``callable(obj)``: whether its type defines ``__call__`` (a class is callable, 3 is not)."""
    if isinstance(obj, BuiltinVariable):
        return ConstantVariable(True)
    return ConstantVariable(any("__call__" in k.__dict__ for k in obj.python_type().__mro__))


def _slice(tx, *args):
    with python_operation("slice()"):  # slice() and slice(1, 2, 3, 4) raise TypeError
        slice(*[None] * len(args))
    items = list(args) + [ConstantVariable(None)] * (3 - len(args))
    return SliceVariable(items[:3] if len(args) > 1 else [ConstantVariable(None), args[0],
                                                          ConstantVariable(None)])


def _range(tx, *args):
    if not all(a.is_python_constant() for a in args):
        # `range([], 1)`: a container is never an integer: CPython's TypeError, from a stand-in
        stand_ins = [a.as_python_constant() if a.is_python_constant() else real_stand_in(a) for a in args]
        if any(s is None for s in stand_ins):
            unsupported("unsupported_value", "range() of values not constant")
        with python_operation("range()"):
            range(*stand_ins)
        unsupported("unsupported_value", "range() of values not constant")
    values = [a.as_python_constant() for a in args]
    with python_operation("range()"):  # `range()`, `range(1.5)`: CPython's TypeError
        value = range(*values)
    return wrap_constant(value)


def _super(tx, *args):
    return space.SuperVariable.create(tx, args)


def _print(tx, *args, **kwargs):
    unsupported("side_effect_builtin", "print() writes to a stream")


def _side_effecting(fn):
    """I/O and interpreter-state builtins: a graph break, the call runs in CPython."""
    def model(tx, *args, **kwargs):
        unsupported("side_effect_builtin", f"{fn.__name__}() has side effects")
    return model


def _operator_fn(fn):
    def model(tx, *args):
        return binary_op(tx, fn, *args) if len(args) == 2 else unary_op(tx, fn, *args)
    return model


def _compare_fn(op):
    return lambda tx, a, b: compare(tx, op, a, b)


BUILTINS: Dict[Callable, Callable] = {
    len: _len, isinstance: _isinstance, issubclass: _issubclass, getattr: _getattr,
    hasattr: _hasattr, setattr: _setattr, min: _minmax(min), max: _minmax(max), sum: _sum,
    all: _all_any(False), any: _all_any(True), tuple: _collection(tuple), list: _collection(list),
    set: _collection(set), frozenset: _collection(frozenset), dict: _dict, int: _scalar(int),
    collections.OrderedDict: _ordered_dict, collections.defaultdict: _defaultdict,
    float: _scalar(float), bool: _scalar(bool), str: _scalar(str), iter: _iter, next: _next,
    reversed: _reversed, enumerate: _enumerate, zip: _zip, map: _map, filter: _filter,
    sorted: _sorted, abs: _abs, hash: hash_of, divmod: divmod_of, type: _type, callable: builtin_callable,
    slice: _slice, range: _range, hex: index_builtin(hex), oct: index_builtin(oct), bin: index_builtin(bin),
    super: _super, print: _print, repr: builtin_repr, format: _format,
    torch.Size: lambda tx, it=None: SizeVariable(it.unpack(tx) if it is not None else []),
    operator.getitem: lambda tx, a, b: a.getitem(tx, b), operator.countOf: count_of, operator.indexOf: index_of,
    operator.setitem: lambda tx, a, b, c: a.setitem(tx, b, c) or ConstantVariable(None),
    operator.delitem: lambda tx, a, b: a.delitem(tx, b) or ConstantVariable(None),
    operator.contains: lambda tx, a, b: ConstantVariable(contains_op(tx, b, a)),
    operator.is_: lambda tx, a, b: ConstantVariable(is_op(tx, a, b)),
    operator.is_not: lambda tx, a, b: ConstantVariable(not is_op(tx, a, b)),
    operator.not_: lambda tx, a: ConstantVariable(not a.truth(tx)),
    operator.truth: lambda tx, a: ConstantVariable(a.truth(tx)),
}
for _fn in (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
            operator.mod, operator.pow, operator.matmul, operator.and_, operator.or_, operator.xor,
            operator.lshift, operator.rshift, operator.neg, operator.pos, operator.invert, operator.abs,
            operator.iadd, operator.isub, operator.imul, operator.iand, operator.ior, operator.ixor,
            operator.itruediv, operator.ifloordiv, operator.imod, operator.ipow, operator.ilshift,
            operator.irshift, operator.imatmul):
    BUILTINS[_fn] = _operator_fn(_fn)
for _op, _fn in COMPARE_OPS.items():
    BUILTINS[_fn] = _compare_fn(_op)

# Builtins that are pure functions of constant arguments.
for _fn in (input, open, breakpoint, exec, globals, locals, vars, delattr, __import__):
    BUILTINS[_fn] = _side_effecting(_fn)
BUILTINS[eval] = eval_model  # of a constant expression, in the frame's namespaces (evaluation.py)
BUILTINS[compile] = compile_model


BUILTINS[delattr] = lambda tx, obj, name: delete_attribute(tx, obj, name.as_python_constant())


def _vars(tx, *args):
    """``vars(obj)`` is ``obj.__dict__`` (the same live view); ``vars()`` reads the
    calling frame's locals, which CPython must run."""
    if len(args) != 1:
        return _side_effecting(vars)(tx, *args)
    return args[0].getattr(tx, "__dict__")


BUILTINS[vars] = _vars


BUILTINS[tuple.__new__] = tuple_new
BUILTINS[weakref.ref] = make_weakref


def _object(tx, *args, **kwargs):
    """``object()``: a new featureless object (a sentinel: ``d.get(k, missing) is missing``)."""
    if args or kwargs:
        raise_in_trace(TypeError, "object() takes no arguments")
    return space.UserDefinedObjectVariable(None, object)


BUILTINS[object] = _object
BUILTINS.update(BUILTIN_METHOD_MODELS)
BUILTINS.update(ITERTOOLS_MODELS)
BUILTINS.update(GROUPBY_MODELS)
BUILTINS.update(LRU_MODELS)  # _lru_cache_wrapper(...) made in the trace (lru_caches.py)
BUILTINS.update(OPERATOR_GETTER_MODELS)
BUILTINS.update(IDENTITY_MODELS)  # id(), _thread.get_ident() (identity.py)
BUILTINS.update(INTERPRETER_STATE_MODELS)  # sys.get_int_max_str_digits() ... (guarded)
BUILTINS[collections.deque] = make_deque
BUILTINS[types.MappingProxyType] = make_mapping_proxy


def _intern(tx, s):
    """``sys.intern(s)``: the one str of that value (a constant here either way)."""
    if not (s.is_python_constant() and type(s.as_python_constant()) is str):
        unsupported("operator_error", "intern() argument must be a str")
    return ConstantVariable(sys.intern(s.as_python_constant()))


BUILTINS[sys.intern] = _intern


def delete_attribute(tx, obj, name):
    """``del obj.name`` / ``delattr(obj, name)``: the tracker's own tp_setattro(NULL) model
    (a class, a function, a user object: descriptors, ``__delattr__``), else an attribute
    of an object made in the trace (its attributes are trackers)."""
    if hasattr(obj, "delattr"):
        obj.delattr(tx, name)
        return ConstantVariable(None)
    attrs = getattr(obj, "attrs", None)
    if attrs is None or not obj.mutable or name not in attrs:
        unsupported("side_effect", f"delattr({obj}, {name!r})")
    del attrs[name]
    return ConstantVariable(None)


# operator functions that change their first argument (the in-place ones modelled in
# BUILTINS are never folded: BUILTINS comes first)
_MUTATING_OPERATORS = frozenset(fn.__name__ for fn in (
    operator.setitem, operator.delitem, operator.iadd, operator.iand, operator.iconcat,
    operator.ifloordiv, operator.ilshift, operator.imod, operator.imul, operator.imatmul,
    operator.ior, operator.ipow, operator.irshift, operator.isub, operator.itruediv, operator.ixor,
))

_IMMUTABLE_TYPES = frozenset({int, bool, float, complex, str, bytes, tuple, frozenset})

PURE = frozenset({
    builtins.round, builtins.divmod, builtins.pow, builtins.repr, builtins.ord, builtins.chr,
    builtins.hash, builtins.format, builtins.bin, builtins.hex, builtins.oct, builtins.complex,
    builtins.bytes, torch.device, int.from_bytes, float.fromhex, bytes.fromhex, str.maketrans,
    struct.pack, struct.unpack, struct.calcsize,  # bytes and tuples from constants, no state
})
