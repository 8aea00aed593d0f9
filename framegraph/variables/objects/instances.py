"""Making an instance of a class whose ``__new__`` is written in Python: ``type.__call__``.

CPython's ``type_call`` (Objects/typeobject.c, 3.11) runs two steps, and so
does ``type_call`` here, inlining the user's code of each:

1. ``obj = cls.__new__(cls, *args, **kwargs)``: the ``__new__`` found on the
   MRO (a staticmethod, called with the class first);
2. only if ``obj`` is an instance of ``cls``: ``type(obj).__init__(obj, *args,
   **kwargs)``; ``object.__init__`` there ignores the arguments, since the
   class overrides ``__new__`` (``object_init``'s excess-argument rule).

``object.__new__(cls)``, which such a ``__new__`` reaches through
``super().__new__(cls)``, is ``object_new``: a new ``UserDefinedObjectVariable``
with no attributes, whose class is the tracker passed in (so it is rebuilt as
``object.__new__(cls)`` plus its attributes, like any object made in the
trace). Its errors are CPython's: extra arguments when the class also
overrides ``__new__`` or does not override ``__init__``, an abstract class, and
a class whose layout is not ``object``'s (``object.__new__(X) is not safe``: a
break here).
"""
import abc
import functools
import inspect
import types

from torch import nn

from ...errors import unsupported
from ..callables.builtins import BUILTINS
from ..callables.functions import UserFunctionVariable
from ..callables.partials import make_partial, partial_class
from ..containers.lists import NamedTupleVariable, TupleVariable
from ..containers.sets import SetVariable
from ..core import space
from ..core.base import VariableTracker
from ..core.base import type_lookup
from ..core.call_shapes import builtin_base, check_function_shape, own_methods
from ..core.constant import items_of
from ..core.exceptions import make_exception, python_operation, raise_in_trace
from ..tensors.nn_module import new_module
from ..tensors.rng import is_rng_class, rng_break
from .user_defined import UserDefinedClassVariable, UserDefinedObjectVariable, bind_class_attribute


def _resolved(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def python_new_call(tx, cls_var, args, kwargs):
    """``cls(*args, **kwargs)`` for a class whose ``__new__`` is a Python function."""
    cls = cls_var.cls
    new = _resolved(cls, "__new__")
    fn = new.__func__ if isinstance(new, staticmethod) else new
    if not isinstance(fn, types.FunctionType):
        unsupported("unsupported_call", f"creating a {cls.__name__} (its __new__ is a {type(new).__name__})")
    obj = UserFunctionVariable(fn).call(tx, [cls_var] + list(args), kwargs)
    kind = obj.python_type()
    if not (isinstance(kind, type) and issubclass(kind, cls)):
        return obj  # not an instance of cls: __init__ is not called
    init = _resolved(kind, "__init__")
    if init is object.__init__:
        return obj  # the class overrides __new__: object.__init__ ignores the arguments
    if not isinstance(init, types.FunctionType):
        unsupported("unsupported_call", f"creating a {cls.__name__} (its __init__ is a {type(init).__name__})")
    result = bind_class_attribute(tx, obj, init, None).call(tx, list(args), kwargs)
    if not (result.is_python_constant() and result.as_python_constant() is None):
        raise_in_trace(TypeError, f"__init__() should return None, not '{result.python_type().__name__}'")
    return obj


def _layout_is_objects(cls) -> bool:
    """What ``tp_new_wrapper`` checks before ``object.__new__(cls)``: past the classes
    whose ``__new__`` is Python code, the first base's ``__new__`` is object's."""
    base = cls
    while base is not None and isinstance(base.__new__, types.FunctionType):
        base = base.__base__
    return base is None or base.__new__ is object.__new__


def object_new(tx, cls_var=None, *args, **kwargs):
    """``object.__new__(cls, *args, **kwargs)`` (object_new)."""
    if not isinstance(cls_var, UserDefinedClassVariable) or not isinstance(cls_var.cls, type):
        unsupported("unsupported_call", f"object.__new__({cls_var})")
    cls = cls_var.cls
    refuse_finalizer(cls)
    if type(cls) not in (type, abc.ABCMeta) or not _layout_is_objects(cls):  # ABCMeta: Fraction, a library ABC
        unsupported("unsupported_call", f"object.__new__({cls.__name__}): not a plain object layout")
    if args or kwargs:
        if cls.__new__ is not object.__new__:
            raise_in_trace(TypeError, "object.__new__() takes exactly one argument (the type to instantiate)")
        if cls.__init__ is object.__init__:
            raise_in_trace(TypeError, f"{cls.__name__}() takes no arguments")
    if getattr(cls, "__abstractmethods__", None):  # object_new refuses: its TypeError, as it words it
        with python_operation(f"creating a {cls.__name__}"):
            object.__new__(cls)
    obj = UserDefinedObjectVariable(None, cls)
    obj.class_var = cls_var  # type(obj) is this tracker, with its source
    return obj


_DISALLOW_INSTANTIATION = 1 << 7  # Py_TPFLAGS_DISALLOW_INSTANTIATION


def refuse_finalizer(cls):
    """An instance of a class whose ``__del__`` is Python code: its finalizer runs when
    reference counting says, which a trace does not follow (the whole frame runs in CPython)."""
    if any(isinstance(klass.__dict__.get("__del__"), types.FunctionType) for klass in cls.__mro__):
        unsupported("finalizer", f"creating a {cls.__name__} (it defines __del__)")


def _plain_immutable_subclass(tx, cls, args, kwargs):
    """``class Key(tuple): pass``, ``class Tags(frozenset): pass``, made in the trace: the
    base's tracker, of type ``cls`` (tuple_new / frozenset_new, then object's __init__);
    None for any other class."""
    base = builtin_base(cls)
    if base not in (tuple, frozenset) or type(cls) is not type or cls.__new__ is not base.__new__ \
            or cls.__init__ is not object.__init__ or base is frozenset and own_methods(cls, base):
        return None
    if kwargs:
        raise_in_trace(TypeError, f"{base.__name__}() takes no keyword arguments")
    if len(args) > 1:
        raise_in_trace(TypeError, f"{base.__name__ if base is tuple else cls.__name__} expected at most "
                                  f"1 argument, got {len(args)}")
    items = items_of(tx, args[0]) if args else []
    if base is tuple and own_methods(cls, base):  # its methods traced, as a namedtuple's are
        return space.NamedTupleVariable(items, cls)
    if base is tuple:
        made = TupleVariable(items)
        made.py_type = cls
        return made
    return SetVariable(items, py_type=cls)


@space.register
def type_call(tx, cls_var, args, kwargs):
    """``type.__call__(cls, *args, **kwargs)`` (type_call) for a class whose metaclass
    leaves it to ``type``: the modelled builtins and containers, a namedtuple, an
    exception, a module, else ``__new__`` then ``__init__``."""
    cls = cls_var.cls
    refuse_finalizer(cls)
    if _is_namedtuple(cls):
        return _namedtuple_call(tx, cls_var, args, kwargs)
    if issubclass(cls, BaseException):
        return make_exception(cls, args, kwargs, tx)
    if issubclass(cls, nn.Module):
        return new_module(tx, cls, args, kwargs)
    if type(type(cls)).__call__ is not type.__call__:
        unsupported("unsupported_call", f"creating a {cls.__name__} (its metaclass's metaclass defines __call__)")
    if cls in BUILTINS:  # OrderedDict(), defaultdict(list): modelled like the builtins
        return BUILTINS[cls](tx, *args, **kwargs)
    if space.is_user_dict_class(cls):
        return space.new_user_dict(tx, cls, args, kwargs)
    if space.is_user_container_class(cls):
        return space.new_user_container(tx, cls, args, kwargs)
    if partial_class(cls):  # functools.partial, a copy of its C type, a subclass keeping its C code
        return make_partial(tx, cls_var, args, kwargs)
    if isinstance(cls.__new__, types.FunctionType):  # __new__ then __init__, both inlined
        return python_new_call(tx, cls_var, args, kwargs)
    if is_rng_class(cls):  # _random.Random.__new__ seeds it from outside the trace
        rng_break(f"creating a {cls.__name__}")
    base = space.value_base(cls)
    if base is not None and cls.__new__ is base.__new__:  # class IntSubclass(int): an int value, an object
        return space.new_value_instance(tx, cls_var, base, args, kwargs)
    plain = _plain_immutable_subclass(tx, cls, args, kwargs)
    if plain is not None:
        return plain
    if cls.__new__ is not object.__new__:
        unsupported("unsupported_call", f"creating a {cls.__name__} (a __new__ of a builtin base)")
    return _plain_object_call(tx, cls_var, args, kwargs)


def _plain_object_call(tx, cls_var, args, kwargs):
    """``cls(...)`` where ``cls.__new__`` is object's: a new object, then the class's ``__init__``."""
    cls = cls_var.cls
    if cls.__flags__ & _DISALLOW_INSTANTIATION:  # a C type whose tp_new is NULL: type_call refuses
        where = "" if cls.__module__ == "builtins" else f"{cls.__module__}."
        raise_in_trace(TypeError, f"cannot create '{where}{cls.__qualname__}' instances")
    if getattr(cls, "__abstractmethods__", None):  # object.__new__ refuses: its TypeError
        with python_operation(f"creating a {cls.__name__}"):
            object.__new__(cls)
    obj = UserDefinedObjectVariable(None, cls)
    obj.class_var = cls_var  # type(obj) is this tracker, with its source
    found, init = type_lookup(cls, "__init__")
    if init is object.__init__:
        if args or kwargs:
            raise_in_trace(TypeError, f"{cls.__name__}() takes no arguments")
    else:
        bind_class_attribute(tx, obj, init, None).call(tx, args, kwargs)
    return obj


def _namedtuple_call(tx, cls_var, args, kwargs):
    user_new = _namedtuple_user_new(cls_var.cls)
    if user_new is not None:  # type.__call__: cls.__new__(cls, *args), inlined
        return UserFunctionVariable(user_new.__func__).call(tx, [cls_var] + list(args), kwargs)
    return new_namedtuple(tx, cls_var.cls, args, kwargs)


def _is_namedtuple(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def _namedtuple_user_new(cls):
    """The ``__new__`` staticmethod a namedtuple subclass defines itself, or None where
    it is collections' generated one (its class also holds ``_make``)."""
    for klass in cls.__mro__:
        if "__new__" in klass.__dict__:
            attr = klass.__dict__["__new__"]
            generated = "_make" in klass.__dict__ or klass is tuple
            return None if generated or not isinstance(attr, staticmethod) else attr
    return None


def new_namedtuple(tx, cls, args, kwargs):
    """A ``cls`` instance as collections' generated ``__new__(_cls, field...)`` makes it."""
    try:
        bound = inspect.signature(cls).bind(*args, **kwargs)
    except TypeError:  # `P(1)`: the generated __new__'s own TypeError, from a probe call of it
        check_function_shape(functools.partial(cls.__new__, cls), args, kwargs)
        unsupported("operator_error", f"{cls.__name__}() does not take these arguments")
    bound.apply_defaults()
    items = [v if isinstance(v, VariableTracker) else tx.wrap(v) for v in bound.arguments.values()]
    return NamedTupleVariable(items, cls)


BUILTINS[object.__new__] = object_new  # super().__new__(cls) in a Python __new__
