"""User classes and their instances: attribute lookup the way CPython does it.

``lookup_attribute`` follows ``PyObject_GenericGetAttr``: a data descriptor on
the type (a ``property``) wins, then the instance ``__dict__``, then other
class attributes (functions bind to the instance, ``staticmethod`` and
``classmethod`` unwrap), then ``__getattr__``. Methods and property getters
are inlined.

``UserDefinedObjectVariable`` is either an object from outside the frame
(guarded by type; its attributes are read through sources) or a new object
created during the trace (``Point(1, 2)``: ``__init__`` is inlined and the
attributes live in ``attrs``). ``super()`` is supers.py.
Namedtuple classes build ``NamedTupleVariable``s; dataclasses are ordinary
classes whose generated ``__init__`` is inlined like any other.
"""
import functools
import inspect
import operator
import types

from torch import nn

from .autograd_function import AutogradFunctionApplyVariable, is_modelled_apply
from .call_shapes import check_function_shape
from ..errors import unsupported
from ..guards.sources import AttrSource, GenericAttrSource, TypeSource
from .base import STABLE_MODULES, VariableTracker, guard_identity
from .constant import ConstantVariable
from .descriptor_models import descriptor_get
from .ops import dunder_name
from .rng import is_rng_class, is_rng_method, rng_break
from .wrappers import INSTANCE_METHOD


def _static(cls, name):
    """(True, attribute) from the MRO without running descriptors, or (False, None)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return True, klass.__dict__[name]
    return False, None


def bind_class_attribute(tx, obj, attr, source, guard=False):
    """The value of class attribute ``attr`` read through instance ``obj``.

    Plain class-level values (``factor = 2.0``) are guarded by value when
    ``guard`` (user classes); functions are covered by the instance's type guard.
    """
    from .functions import UserFunctionVariable, UserMethodVariable

    if guard and source is not None:  # `Class.method = other` must not reuse the graph
        # what ``Class.name`` gives: the property itself, a staticmethod's function,
        # a new bound method for a classmethod (so its __func__ is checked)
        if isinstance(attr, (property, types.FunctionType)):
            guard_identity(tx, attr, source)
        elif isinstance(attr, staticmethod):
            guard_identity(tx, attr.__func__, source)
        elif isinstance(attr, classmethod):
            guard_identity(tx, attr.__func__, AttrSource(source, "__func__"))
    if isinstance(attr, property):
        if attr.fget is None:
            unsupported("unsupported_attribute", "property without a getter")
        return UserFunctionVariable(attr.fget).call(tx, [obj], {})
    if isinstance(attr, staticmethod):
        return tx.wrap(attr.__func__)
    if isinstance(attr, classmethod):
        return UserMethodVariable(UserFunctionVariable(attr.__func__), class_of(tx, obj))
    if isinstance(attr, types.FunctionType):
        return UserMethodVariable(UserFunctionVariable(attr, source=source), obj)
    if type(attr) is functools._lru_cache_wrapper:  # its __get__ binds like a function's
        from .wrappers import LruCacheVariable

        return UserMethodVariable(LruCacheVariable(attr, source=source), obj)
    if type(attr) is INSTANCE_METHOD and getattr(obj, "value", None) is not None:
        from .wrappers import cpp_method  # torch's C++ classes: calling it is a break

        return cpp_method(attr, obj.value)
    if hasattr(type(attr), "__get__") and not isinstance(attr, type):
        if is_rng_method(attr):  # rng.getrandbits: the generator's state is not the trace's
            rng_break(f"{attr.__qualname__} of a {obj.python_type().__name__}")
        return descriptor_get(tx, obj, attr, source)  # modelled ones (cached_property), else a break
    return tx.wrap(attr, source, guard=guard)


def class_attribute(tx, obj, name):
    """Class-level attribute ``name`` of ``obj`` (methods, properties, constants)."""
    return lookup_attribute(tx, obj, name, lambda n: None)


def _user_class(cls) -> bool:
    return (cls.__module__ or "").split(".")[0] not in STABLE_MODULES


def instance_attr_source(source, cls, name):
    """Where an instance attribute is re-read from: ``obj.name``, or, when the class
    overrides ``__getattribute__``, ``object.__getattribute__(obj, name)``."""
    if source is None:
        return None
    if isinstance(_static(cls, "__getattribute__")[1], types.FunctionType):
        return GenericAttrSource(source, name)
    return AttrSource(source, name)


_C_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType)


def _guard_not_shadowed(tx, obj, cls, name):
    """The class attribute was found because the instance has no `name` of its own:
    guard that, so `obj.name = other` later makes a new trace instead of a stale one."""
    real = getattr(obj, "value", None)
    if obj.source is None or real is None or not isinstance(getattr(real, "__dict__", None), dict):
        return
    tx.output.add_guard("DICT_CONTAINS", instance_attr_source(obj.source, cls, "__dict__"), (name, False))


def class_of(tx, obj):
    """``type(obj)``, with a source to re-read it from, so that reading a class
    attribute through it (``type(self).count``) is guarded like ``Cls.count``:
    ``type(L['self'])`` for an object from outside, or the class tracker that
    created an object made in the trace."""

    cls = obj.python_type()
    if not _user_class(cls):  # torch's and the standard library's classes are assumed stable
        return tx.wrap(cls)
    if obj.source is not None:
        return tx.wrap(cls, TypeSource(obj.source))
    maker = getattr(obj, "class_var", None)
    if maker is not None:
        return maker
    return tx.wrap(cls)


def real_object(obj):
    """The real object an object tracker stands for (None: one made in the trace)."""
    from .nn_module import NNModuleVariable

    return obj.module if isinstance(obj, NNModuleVariable) else getattr(obj, "value", None)


def lookup_attribute(tx, obj, name, instance_dict_lookup):
    """Generic attribute lookup; ``instance_dict_lookup(name)`` -> tracker or None."""
    cls = obj.python_type()
    if name == "__class__" and _static(cls, name)[1] is object.__dict__["__class__"]:
        return class_of(tx, obj)  # the type is fixed by the tracker (and guarded by TYPE_MATCH)
    found, attr = _static(cls, name)
    source = None
    if found:  # a class attribute is re-read from the class: its mutations are real ones
        maker = getattr(obj, "class_var", None)
        if obj.source is not None:
            source = AttrSource(TypeSource(obj.source), name)
        elif maker is not None and maker.source is not None:
            source = AttrSource(maker.source, name)
    if found and isinstance(attr, property):
        return bind_class_attribute(tx, obj, attr, source, guard=_user_class(cls))
    value = instance_dict_lookup(name)
    if value is not None:
        return value
    if found and isinstance(attr, _C_DESCRIPTORS):  # __slots__ members, __dict__ of a C type
        real = real_object(obj)
        if name == "__dict__":  # a live view: the real dict and this trace's writes
            from .instance_dict import instance_dict

            real_dict = object.__getattribute__(real, "__dict__") if real is not None else None
            return instance_dict(tx, obj, real_dict, instance_attr_source(obj.source, cls, name))
        if real is None:
            unsupported("unsupported_attribute", f"{cls.__name__}.{name} ({type(attr).__name__})")

        return tx.wrap(getattr(real, name), instance_attr_source(obj.source, cls, name))
    if found:
        user = _user_class(cls)
        if user:
            _guard_not_shadowed(tx, obj, cls, name)
        return bind_class_attribute(tx, obj, attr, source, guard=user)
    found, getattr_fn = _static(cls, "__getattr__")
    if found and getattr_fn is not nn.Module.__getattr__:
        return bind_class_attribute(tx, obj, getattr_fn, None).call(tx, [ConstantVariable(name)], {})
    missing = getattr(obj, "missing_attribute", None)
    if missing is not None:
        missing(tx, name)
    unsupported("unsupported_attribute", f"{cls.__name__!s} object has no attribute {name!r}")


# Descriptors whose __get__(None, cls) is the descriptor itself (a function, a
# property, a slot wrapper or method of a builtin base).
_GET_IS_ITSELF = (types.FunctionType, property, types.MethodDescriptorType, types.WrapperDescriptorType,
                  types.MemberDescriptorType, types.GetSetDescriptorType, functools._lru_cache_wrapper)


class UserDefinedClassVariable(VariableTracker):
    def __init__(self, cls, **kwargs):
        super().__init__(**kwargs)
        self.cls = cls
        self.identity = cls

    def python_type(self):
        return type(self.cls)

    def as_python_constant(self):
        return self.cls

    def getattr(self, tx, name):

        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.cls, name))
        if is_modelled_apply(self.cls, name):  # MyFunction.apply: one node, the user's backward
            return AutogradFunctionApplyVariable(
                self.cls, source=AttrSource(self.source, name) if self.source is not None else None)
        found, attr = _static(self.cls, name)
        if not found:
            unsupported("unsupported_attribute", f"{self.cls.__name__}.{name}")
        if isinstance(attr, classmethod):
            from .functions import UserFunctionVariable, UserMethodVariable

            return UserMethodVariable(UserFunctionVariable(attr.__func__), self)
        if isinstance(attr, staticmethod):
            attr = attr.__func__
        elif hasattr(type(attr), "__get__") and not isinstance(attr, _GET_IS_ITSELF):
            # type.__getattribute__ calls attr.__get__(None, cls): a singledispatchmethod
            # makes a new function there, a classmethod_descriptor binds the class
            unsupported("unsupported_attribute", f"{self.cls.__name__}.{name}: a {type(attr).__name__} "
                                                 "read through the class")
        source = AttrSource(self.source, name) if self.source is not None else None
        return tx.wrap(attr, source, guard=_user_class(self.cls))  # `Cfg.scale = 3.0` recompiles

    def hasattr(self, tx, name):
        return hasattr(self.cls, name)

    def getitem(self, tx, key):
        """``MyGeneric[T]``, ``OrderedDict[str, Tensor]``: a generic alias, built at trace
        time; a ``__class_getitem__`` written in Python by the user is inlined, as
        CPython calls it."""
        from .trace_time import class_getitem, is_pure_class_getitem

        found, raw = _static(self.cls, "__class_getitem__")
        if (found and not is_pure_class_getitem(self.cls) and isinstance(raw, classmethod)
                and isinstance(raw.__func__, types.FunctionType)
                and getattr(type(self.cls), "__getitem__", None) is None):
            return self.getattr(tx, "__class_getitem__").call(tx, [key], {})
        return class_getitem(tx, self.cls, key)

    def call(self, tx, args, kwargs):
        cls = self.cls
        if _is_namedtuple(cls):
            user_new = _namedtuple_user_new(cls)
            if user_new is not None:  # type.__call__: cls.__new__(cls, *args), inlined
                from .functions import UserFunctionVariable

                return UserFunctionVariable(user_new.__func__).call(tx, [self] + list(args), kwargs)
            return new_namedtuple(tx, cls, args, kwargs)
        if issubclass(cls, BaseException):
            from .exceptions import make_exception

            return make_exception(cls, args, kwargs)
        if issubclass(cls, nn.Module):
            from .nn_module import new_module

            return new_module(tx, cls, args, kwargs)
        if type(type(cls)).__call__ is not type.__call__ or type(cls).__call__ is not type.__call__:
            unsupported("unsupported_call", f"creating a {cls.__name__} (its metaclass defines __call__)")
        from .builtins import BUILTINS
        from .user_dict import is_user_dict_class, new_user_dict

        if cls in BUILTINS:  # OrderedDict(), defaultdict(list): modelled like the builtins
            return BUILTINS[cls](tx, *args, **kwargs)
        if is_user_dict_class(cls):
            return new_user_dict(tx, cls, args, kwargs)
        from .user_containers import is_user_container_class, new_user_container

        if is_user_container_class(cls):
            return new_user_container(tx, cls, args, kwargs)
        from .partials import make_partial, partial_class

        if partial_class(cls):  # functools.partial, a copy of its C type, a subclass keeping its C code
            return make_partial(tx, self, args, kwargs)
        if isinstance(cls.__new__, types.FunctionType):  # __new__ then __init__, both inlined
            from .instances import type_call

            return type_call(tx, self, args, kwargs)
        if is_rng_class(cls):  # _random.Random.__new__ seeds it from outside the trace
            rng_break(f"creating a {cls.__name__}")
        if cls.__new__ is not object.__new__:
            unsupported("unsupported_call", f"creating a {cls.__name__} (a __new__ of a builtin base)")
        if cls.__flags__ & _DISALLOW_INSTANTIATION:  # a C type whose tp_new is NULL: type_call refuses
            where = "" if cls.__module__ == "builtins" else f"{cls.__module__}."
            from .exceptions import raise_in_trace

            raise_in_trace(TypeError, f"cannot create '{where}{cls.__qualname__}' instances")
        if getattr(cls, "__abstractmethods__", None):  # object.__new__ refuses: its TypeError
            from .exceptions import python_operation

            with python_operation(f"creating a {cls.__name__}"):
                object.__new__(cls)
        obj = UserDefinedObjectVariable(None, cls)
        obj.class_var = self  # type(obj) is this tracker, with its source
        found, init = _static(cls, "__init__")
        if init is object.__init__:
            if args or kwargs:
                unsupported("operator_error", f"{cls.__name__}() takes no arguments")
        else:
            bind_class_attribute(tx, obj, init, None).call(tx, args, kwargs)
        return obj

    def __repr__(self):
        return f"UserDefinedClassVariable({self.cls.__qualname__})"


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
    from .lists import NamedTupleVariable

    try:
        bound = inspect.signature(cls).bind(*args, **kwargs)
    except TypeError:  # `P(1)`: the generated __new__'s own TypeError, from a probe call of it
        check_function_shape(functools.partial(cls.__new__, cls), args, kwargs)
        unsupported("operator_error", f"{cls.__name__}() does not take these arguments")
    bound.apply_defaults()
    items = [v if isinstance(v, VariableTracker) else tx.wrap(v) for v in bound.arguments.values()]
    return NamedTupleVariable(items, cls)


def _checked_len(result):
    """What CPython's len() makes of a ``__len__`` result: an int >= 0, else the
    TypeError or ValueError it raises (``__len__() should return >= 0``)."""
    from .exceptions import ExceptionVariable, TracedException

    value = result.as_python_constant()
    try:
        value = operator.index(value)
        if value < 0:
            raise ValueError("__len__() should return >= 0")
    except (TypeError, ValueError) as e:
        raise TracedException(ExceptionVariable(type(e), [ConstantVariable(str(e))])) from None
    return value


def _items_of(tx, iterator):
    """Every item of what ``__iter__`` returned; an iterator of a user class: ``__next__`` until it stops."""
    if isinstance(iterator, UserDefinedObjectVariable):
        return iterator._drain(tx)
    return iterator.unpack(tx)


@functools.lru_cache(maxsize=64)
def _no_slot_message(class_name, name) -> str:
    """CPython's AttributeError for setting ``name`` on an object with only ``__slots__``
    (its wording changed in 3.13), from a probe class of the same name."""
    probe = object.__new__(type(class_name, (), {"__slots__": ()}))
    try:
        setattr(probe, name, None)
    except AttributeError as e:
        return str(e)
    return f"'{class_name}' object has no attribute '{name}'"  # pragma: no cover


def _is_slot(attr, name) -> bool:
    """Whether class attribute ``attr`` is the member ``__slots__`` made for ``name``."""
    if not isinstance(attr, types.MemberDescriptorType) or attr.__name__ != name:
        return False
    slots = attr.__objclass__.__dict__.get("__slots__", ())
    return name in ((slots,) if isinstance(slots, str) else slots)


def _runs_code_on_get(attr) -> bool:
    """Is ``attr`` a descriptor of a user class, whose ``__get__`` may raise?"""
    getter = getattr(type(attr), "__get__", None)
    return isinstance(getter, types.FunctionType)


_DISALLOW_INSTANTIATION = 1 << 7  # Py_TPFLAGS_DISALLOW_INSTANTIATION


def _owner(cls, name):
    """The first class of ``cls``'s MRO whose ``__dict__`` defines ``name``."""
    return next((klass for klass in cls.__mro__ if name in klass.__dict__), object)


class UserDefinedObjectVariable(VariableTracker):
    @property
    def replay_kind(self):
        return "object" if self.value is not None else None  # attribute writes, replayed

    def __init__(self, value, cls=None, **kwargs):
        super().__init__(**kwargs)
        self.value = value
        self.cls = cls if cls is not None else type(value)
        self.attrs = {}
        self.identity = value if value is not None else self

    def python_type(self):
        return self.cls

    @property
    def mutable(self):
        return self.value is None

    @property
    def overrides_setattr(self) -> bool:
        """Whether the class has its own ``__setattr__``: the trace models it, so
        attribute writes are replayed with ``object.__setattr__``."""
        return _static(self.cls, "__setattr__")[1] is not object.__setattr__

    def _instance_attr(self, tx, name):
        if self.value is None or name in self.attrs:  # attrs: written in this trace
            return self.attrs.get(name)
        d = getattr(self.value, "__dict__", None)
        if d is None or name not in d:
            return None

        return tx.wrap(d[name], instance_attr_source(self.source, self.cls, name))

    def getattr(self, tx, name):
        user = _static(self.cls, "__getattribute__")[1]
        if isinstance(user, types.FunctionType):  # e.g. configs mapping attribute aliases
            return bind_class_attribute(tx, self, user, None).call(tx, [ConstantVariable(name)], {})
        return self.generic_getattr(tx, name)

    def generic_getattr(self, tx, name):
        """``object.__getattribute__(self, name)``: the lookup without an override."""
        return lookup_attribute(tx, self, name, lambda n: self._instance_attr(tx, n))

    def contains(self, tx, item):
        """``item in obj``: the class's ``__contains__`` when it has one, else iteration."""
        found, fn = _static(self.cls, "__contains__")
        if found and isinstance(fn, types.FunctionType):
            return bind_class_attribute(tx, self, fn, None).call(tx, [item], {}).truth(tx)
        return super().contains(tx, item)

    def hasattr(self, tx, name):
        """``hasattr(obj, name)``; for an object from outside, guarded on its
        ``__dict__`` holding ``name`` or not (``obj.scale = 3.0`` later recompiles)."""
        if name in self.attrs:
            return True
        found, attr = _static(self.cls, name)
        if found and not isinstance(attr, _C_DESCRIPTORS):
            if isinstance(attr, property) or _runs_code_on_get(attr):
                return None  # its getter decides, and may raise AttributeError: hasattr traces it
            return True  # class attributes are stable (the class is guarded by identity)
        if self.value is not None:
            d = getattr(self.value, "__dict__", None)
            if not isinstance(d, dict) or found:  # __slots__ members: only the real object knows
                return hasattr(self.value, name)
            present = name in d
            if self.source is not None:
                tx.output.add_guard("DICT_CONTAINS", instance_attr_source(self.source, self.cls, "__dict__"),
                                    (name, present))
            if present:
                return True
        if isinstance(_static(self.cls, "__getattr__")[1], types.FunctionType):
            return None  # the answer is whatever user code decides
        return False

    def missing_attribute(self, tx, name):
        """No ``name`` on the class, in the instance dict, nor from ``__getattr__``: raise
        PyObject_GenericGetAttr's AttributeError in the trace, guarded on the name staying
        absent from the instance's ``__dict__`` and from the ``__dict__`` of each user class
        of the MRO (``obj.name = 1`` or ``Class.name = 1`` later make a new trace)."""
        from .exceptions import raise_in_trace

        if self.value is not None:
            d = getattr(self.value, "__dict__", None)
            if not isinstance(d, dict) or self.source is None:
                return  # __slots__, or nothing to guard: not modelled
            tx.output.add_guard("DICT_CONTAINS", instance_attr_source(self.source, self.cls, "__dict__"),
                                (name, False))
        class_var = getattr(self, "class_var", None)
        cls_source = TypeSource(self.source) if self.source is not None else getattr(class_var, "source", None)
        from .missing_attrs import guard_absent

        if not guard_absent(tx, self.cls, cls_source, class_var, name):
            return  # a class that cannot be re-read: not modelled
        raise_in_trace(AttributeError, f"'{self.cls.__name__:.100}' object has no attribute '{name}'")

    def setattr(self, tx, name, value):
        self.check_mutable(f"setting .{name}", tx)
        found, attr = _static(self.cls, name)
        if found and isinstance(attr, property):
            if attr.fset is None:
                unsupported("operator_error", f"can't set attribute {name!r}")
            from .functions import UserFunctionVariable

            UserFunctionVariable(attr.fset).call(tx, [self, value], {})
            return
        if found and _is_slot(attr, name) and not self.overrides_setattr:  # a member of a Python class's __slots__
            self.attrs[name] = value
            return
        if found and hasattr(type(attr), "__set__"):  # a data descriptor's __set__ decides
            unsupported("unsupported_attribute", f"setting {self.cls.__name__}.{name} ({type(attr).__name__})")
        user_setattr = _static(self.cls, "__setattr__")[1]
        if user_setattr is not object.__setattr__:
            if not isinstance(user_setattr, types.FunctionType):
                unsupported("unsupported_attribute", f"{self.cls.__name__} overrides __setattr__")
            bind_class_attribute(tx, self, user_setattr, None).call(tx, [ConstantVariable(name), value], {})
            return
        if self.cls.__dictoffset__ == 0:  # only __slots__, no instance __dict__
            from .exceptions import raise_in_trace

            raise_in_trace(AttributeError, _no_slot_message(self.cls.__name__, name))
        self.attrs[name] = value

    def object_setattr(self, tx, name, value):
        """``object.__setattr__(self, name, value)`` (from an overriding ``__setattr__``)."""
        self.check_mutable(f"setting .{name}", tx)
        self.attrs[name] = value
        return ConstantVariable(None)

    def call(self, tx, args, kwargs):
        return self.call_method(tx, "__call__", args, kwargs)

    def _dunder(self, tx, name, args):
        found, attr = _static(self.cls, name)
        if not found:
            return NotImplemented
        if not isinstance(attr, types.FunctionType):
            owner = _owner(self.cls, name)
            if owner is object:  # object's default slot: the callers model it (identity ==, ...)
                return NotImplemented
            # `__bool__ = None` raises TypeError; a C function or a descriptor in a class
            # statement, or the slot of a builtin base (an int subclass's __eq__ compares
            # the int values), runs C code: CPython calls it, whatever it is
            unsupported("unsupported_call", f"{self.cls.__name__}.{name} is {owner.__name__}'s "
                                            f"{type(attr).__name__}")
        return bind_class_attribute(tx, self, attr, None).call(tx, args, {})

    def binop(self, tx, fn, other, reflected):
        return self._dunder(tx, dunder_name(fn, reflected), [other])

    def truth(self, tx):
        result = self._dunder(tx, "__bool__", [])
        if result is not NotImplemented:
            if result.python_type() is not bool:  # slot_nb_bool: only a bool will do
                from .exceptions import raise_in_trace

                raise_in_trace(TypeError, f"__bool__ should return bool, returned {result.python_type().__name__}")
            return result.truth(tx)
        result = self._dunder(tx, "__len__", [])
        return True if result is NotImplemented else _checked_len(result) > 0

    def length(self, tx):
        result = self._dunder(tx, "__len__", [])
        if result is NotImplemented:
            unsupported("operator_error", f"object of type {self.cls.__name__} has no len()")
        return _checked_len(result)

    def getitem(self, tx, key):
        result = self._dunder(tx, "__getitem__", [key])
        if result is NotImplemented:
            unsupported("operator_error", f"{self.cls.__name__} is not subscriptable")
        return result

    def iter(self, tx):
        """``iter(obj)``: the class's ``__iter__`` runs now, and the iterator it returns
        (a generator, ``iter(self.items)``) is consumed lazily, one ``next()`` at a time,
        as CPython does; an iterator object of a user class is read to its end here."""
        from .iterators import IteratorVariable, ListIteratorVariable

        result = self._iterator(tx)
        if isinstance(result, IteratorVariable):
            return result
        return ListIteratorVariable(_items_of(tx, result))

    def unpack(self, tx):
        return _items_of(tx, self._iterator(tx))

    def _iterator(self, tx):
        result = self._dunder(tx, "__iter__", [])
        if result is NotImplemented:
            unsupported("operator_error", f"{self.cls.__name__} is not iterable")
        return result

    def _drain(self, tx, limit=10000):
        """``list(it)`` for an iterator object of a user class: ``__next__`` until StopIteration."""
        from .exceptions import TracedException

        items = []
        while len(items) < limit:
            try:
                item = self._dunder(tx, "__next__", [])
            except TracedException as error:
                if issubclass(error.value.cls, StopIteration):
                    return items
                raise
            if item is NotImplemented:
                unsupported("operator_error", f"iter() returned non-iterator of type '{self.cls.__name__}'")
            items.append(item)
        unsupported("unsupported_value", f"more than {limit} items from a {self.cls.__name__} iterator")

    def reconstruct(self, cg):
        """From outside: its source. Made in the trace: ``object.__new__(cls)``, then its attributes."""
        if self.source is not None:
            return super().reconstruct(cg)
        if self.value is not None:
            unsupported("graph_output", f"returning a {self.cls.__name__} created inside compiled code")
        class_var = getattr(self, "class_var", None)
        if getattr(class_var, "rebuilt", False):  # a class the trace made: rebuilt too (classes.py)
            cg.emit_op("PUSH_NULL")
            cg.load_const(object.__new__)
            cg(class_var)
            cg.call(1)
        else:
            cg.call_constant(object.__new__, self.cls)
        temp = cg.remember(self)  # attributes may refer back to the object
        for name, value in self.attrs.items():
            cg(value)
            cg.store_attr_of(temp, name, self.overrides_setattr)
        cg.load_fast(temp)

    def __repr__(self):
        return f"UserDefinedObjectVariable({self.cls.__name__})"
