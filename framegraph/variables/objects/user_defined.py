"""User classes and their instances: attribute lookup the way CPython does it.

``lookup_attribute`` follows ``PyObject_GenericGetAttr``: a data descriptor on
the type (a ``property``) wins, then the instance ``__dict__``, then other
class attributes (functions bind to the instance, ``staticmethod`` and
``classmethod`` unwrap), then ``__getattr__``. Methods and property getters
are inlined.

``UserDefinedObjectVariable`` is either an object from outside the frame
(guarded by type; its attributes are read through sources) or a new object
created during the trace (``Point(1, 2)``: ``__init__`` is inlined and the
attributes live in ``attrs``). ``super()`` is supers.py. A class's operators
that go through its metaclass (``E(1)``, ``E['A']``, ``len(E)``) are
metaclasses.py; class attribute writes, read back by every lookup here through
``class_attr``, are class_attrs.py; ``type.__call__``'s default is instances.py.
Namedtuple classes build ``NamedTupleVariable``s; dataclasses are ordinary
classes whose generated ``__init__`` is inlined like any other.
"""
import collections
import functools
import operator
import types

from torch import nn

from ...errors import unsupported
from ...guards.sources import AttrSource, ConstSource, TypeSource
from ...side_effects import ledger
from ..callables.functions import BaseUserFunctionVariable, UserFunctionVariable, UserMethodVariable
from ..callables.trace_time import class_getitem, is_pure_class_getitem
from ..callables.wrappers import INSTANCE_METHOD, LruCacheVariable, cpp_method
from ..core import space
from ..core.aliases import class_source
from ..core.base import VariableTracker, guard_identity, tp_name, type_lookup, user_code
from ..core.constant import ConstantVariable
from ..core.exceptions import ExceptionVariable, TracedException, python_operation, raise_in_trace
from ..core.ops import _is_not_implemented, dunder_name
from ..iteration.object_iteration import ObjectIteration
from ..tensors.autograd_function import AutogradFunctionApplyVariable, is_modelled_apply
from ..tensors.nn_module import NNModuleVariable
from ..tensors.optim import without_dynamo_patch
from ..tensors.rng import is_rng_method, rng_break
from .class_attrs import (ClassDictVariable, DELETED, class_attr, class_setattr, missing_class_attribute,
                          type_setattr, written)
from .deleting import delete_object_attribute
from .descriptors import descriptor_get, python_get_through_class
from .instance_dict import generic_hasattr, instance_attr_source, instance_dict, real_dict
from .metaclasses import MetaclassSlots, call_meta, meta_attribute, meta_data_descriptor, meta_fallback
from .slots import property_refusal as _property_refusal
from .slots import is_slot as _is_slot, no_slot_message as _no_slot_message


@space.register
def bind_class_attribute(tx, obj, attr, source, guard=False):
    """The value of class attribute ``attr`` read through instance ``obj``.

    Plain class-level values (``factor = 2.0``) are guarded by value when
    ``guard`` (user classes); functions are covered by the instance's type guard.
    """
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
        fn = without_dynamo_patch(attr)  # an optimizer's _init_group, as without torch._dynamo loaded
        return UserMethodVariable(UserFunctionVariable(fn, source=source if fn is attr else None), obj)
    if type(attr) is functools._lru_cache_wrapper:  # its __get__ binds like a function's
        return UserMethodVariable(LruCacheVariable(attr, source=source), obj)
    if type(attr) is INSTANCE_METHOD and getattr(obj, "value", None) is not None:
        return cpp_method(attr, obj.value)  # torch's C++ classes: calling it is a break
    if hasattr(type(attr), "__get__") and not isinstance(attr, type):
        if is_rng_method(attr):  # rng.getrandbits: the generator's state is not the trace's
            rng_break(f"{attr.__qualname__} of a {obj.python_type().__name__}")
        return descriptor_get(tx, obj, attr, source)  # modelled ones (cached_property), else a break
    return tx.wrap(attr, source, guard=guard)


@space.register
def class_attribute(tx, obj, name):
    """Class-level attribute ``name`` of ``obj`` (methods, properties, constants)."""
    return lookup_attribute(tx, obj, name, lambda n: None)


_C_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType)

# dunders set to None that CPython reads as "not supported", each with its own TypeError
_NONE_MEANS_ABSENT = frozenset({"__hash__", "__iter__", "__contains__", "__reversed__", "__await__",
                                "__aiter__"})


def _guard_not_shadowed(tx, obj, cls, name):
    """The class attribute was found because the instance has no `name` of its own:
    guard that, so `obj.name = other` later makes a new trace instead of a stale one."""
    real = getattr(obj, "value", None)
    if obj.source is None or real is None or not isinstance(real_dict(real), dict):
        return
    if getattr(obj, "attrs", {}).get(name) is DELETED:
        return  # `del obj.name` in this trace: deleting.py guarded what the real dict held
    tx.output.add_guard("DICT_CONTAINS", instance_attr_source(obj.source, cls, "__dict__"), (name, False))


@space.register
def class_of(tx, obj):
    """``type(obj)``, with a source to re-read it from, so that reading a class
    attribute through it (``type(self).count``) is guarded like ``Cls.count``:
    ``type(L['self'])`` for an object from outside, or the class tracker that
    created an object made in the trace."""

    cls = obj.python_type()
    if not user_code(cls):  # torch's and the standard library's classes are assumed stable
        return tx.wrap(cls)
    if obj.source is not None:
        return tx.wrap(cls, TypeSource(obj.source))
    maker = getattr(obj, "class_var", None)
    if maker is not None:
        return maker
    return tx.wrap(cls)


def real_object(obj):
    """The real object an object tracker stands for (None: one made in the trace)."""
    return obj.module if isinstance(obj, NNModuleVariable) else getattr(obj, "value", None)


@space.register
def bound_written(attr, obj):
    """A class attribute the trace wrote (class_attrs.py), read through an instance."""
    return UserMethodVariable(attr, obj) if isinstance(attr, BaseUserFunctionVariable) else attr


def _user_data_descriptor(attr) -> bool:
    """A descriptor of a user's class with ``__set__`` or ``__delete__``: it wins over the
    instance's ``__dict__`` (PyObject_GenericGetAttr)."""
    kind = type(attr)
    return user_code(kind) and (hasattr(kind, "__set__") or hasattr(kind, "__delete__")) and hasattr(kind, "__get__")


def class_attr_source(tx, obj, cls, name):
    """Where class attribute ``name`` of ``obj``'s class is re-read from (None: nowhere)."""
    maker = getattr(obj, "class_var", None)
    if obj.source is not None:
        return AttrSource(class_source(tx, obj.source, cls), name)
    if maker is not None and maker.source is not None:
        return AttrSource(maker.source, name)
    return None


@space.register
def lookup_attribute(tx, obj, name, instance_dict_lookup):
    """Generic attribute lookup; ``instance_dict_lookup(name)`` -> tracker or None."""
    cls = obj.python_type()
    if name == "__class__" and type_lookup(cls, name)[1] is object.__dict__["__class__"]:
        return class_of(tx, obj)  # the type is fixed by the tracker (and guarded by TYPE_MATCH)
    found, attr = class_attr(tx, cls, name)  # this trace's class attribute writes first
    source = None
    if found and isinstance(attr, VariableTracker):  # written in the trace: a value, or a function
        return instance_dict_lookup(name) or bound_written(attr, obj)
    if found:  # a class attribute is re-read from the class: its mutations are real ones
        source = class_attr_source(tx, obj, cls, name)
    if found and (isinstance(attr, property) or _user_data_descriptor(attr)):  # before the instance's dict
        return bind_class_attribute(tx, obj, attr, source, guard=user_code(cls))
    value = instance_dict_lookup(name)
    if value is not None:
        return value
    if found and isinstance(attr, _C_DESCRIPTORS):  # __slots__ members, __dict__ of a C type
        real = real_object(obj)
        if name == "__dict__":  # a live view: the real dict and this trace's writes
            return instance_dict(tx, obj, real_dict(real) if real is not None else None,
                                 instance_attr_source(obj.source, cls, name))
        if real is None:
            unsupported("unsupported_attribute", f"{cls.__name__}.{name} ({type(attr).__name__})")
        if isinstance(attr, types.GetSetDescriptorType) and ledger(tx):
            # C code computes it, from state the trace may have changed without CPython seeing it
            # yet (property.__isabstractmethod__ asks fget's, written in this trace)
            unsupported("side_effect", f"{cls.__name__}.{name}: computed by C code after this trace's writes")


        with python_operation(f"{cls.__name__}.{name}"):  # the getter's own exception is the program's
            value = getattr(real, name)
        return tx.wrap(value, instance_attr_source(obj.source, cls, name))
    if found:
        user = user_code(cls)
        if user:
            _guard_not_shadowed(tx, obj, cls, name)
        return bind_class_attribute(tx, obj, attr, source, guard=user)
    found, getattr_fn = type_lookup(cls, "__getattr__")
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


class UserDefinedClassVariable(MetaclassSlots, VariableTracker):
    # one tracker per class however it is reached (``type(self.h[0])``, ``type(self.h[1])``):
    # its attributes are read, guarded and written once, not once per instance's layer
    one_per_object = True

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
        if name == "__class__":  # object's getset, through the metatype: the metaclass
            return tx.wrap(type(self.cls))
        if is_modelled_apply(self.cls, name):  # MyFunction.apply: one node, the user's backward
            return AutogradFunctionApplyVariable(
                self.cls, source=AttrSource(self.source, name) if self.source is not None else None)
        result = meta_data_descriptor(tx, self, name)  # type.__getattribute__: the metaclass's first
        if result is not None:
            return result
        if name == "__dict__":  # type's getset (a mappingproxy), not the instances' descriptor
            return ClassDictVariable(self, source=AttrSource(self.source, name) if self.source else None)
        found, attr = class_attr(tx, self.cls, name)
        if found and isinstance(attr, VariableTracker):  # written in this trace (class_attrs.py)
            return attr
        if not found:
            result = meta_fallback(tx, self, name)
            if result is None:
                missing_class_attribute(tx, self, name)
                unsupported("unsupported_attribute", f"{self.cls.__name__}.{name}")
            return result
        if isinstance(attr, classmethod):
            return UserMethodVariable(UserFunctionVariable(attr.__func__), self)
        if isinstance(attr, staticmethod):
            attr = attr.__func__
        elif any(attr is f for f in _FROMKEYS) and issubclass(self.cls, dict):  # Sub.fromkeys, bound to Sub
            return space.FromkeysVariable(self)
        elif hasattr(type(attr), "__get__") and not isinstance(attr, _GET_IS_ITSELF):
            # type.__getattribute__ calls attr.__get__(None, cls): a singledispatchmethod
            # makes a new function there, a classmethod_descriptor binds the class
            result = python_get_through_class(tx, self, name, attr)  # enum.property, a user's
            if result is not None:
                return result
            unsupported("unsupported_attribute", f"{self.cls.__name__}.{name}: a {type(attr).__name__} "
                                                 "read through the class")
        source = AttrSource(self.source, name) if self.source is not None else None
        return tx.wrap(attr, source, guard=user_code(self.cls))  # `Cfg.scale = 3.0` recompiles

    def hasattr(self, tx, name):
        found, attr = class_attr(tx, self.cls, name)
        if isinstance(attr, VariableTracker):
            return True
        if not found and (written(tx, self.cls, name) or meta_attribute(self.cls, "__getattr__")[0]):
            return None  # deleted in the trace, or the metaclass's Python __getattr__ decides
        if hasattr(type(meta_attribute(self.cls, name)[1]), "__get__"):
            return None  # a property of the metaclass: its getter decides, traced
        return hasattr(self.cls, name)

    def setattr(self, tx, name, value):
        """``cls.name = value``: through the metaclass's ``__setattr__`` (class_attrs.py)."""
        class_setattr(tx, self, name, value)

    def delattr(self, tx, name):
        """``del cls.name``."""
        class_setattr(tx, self, name, DELETED)

    def getitem(self, tx, key):
        """``MyGeneric[T]``, ``OrderedDict[str, Tensor]``: a generic alias, built at trace
        time; a ``__class_getitem__`` written in Python by the user is inlined, as
        CPython calls it."""
        result = self.meta_getitem(tx, key)
        if result is not NotImplemented:
            return result
        found, raw = type_lookup(self.cls, "__class_getitem__")
        if (found and not is_pure_class_getitem(self.cls) and isinstance(raw, classmethod)
                and isinstance(raw.__func__, types.FunctionType)
                and getattr(type(self.cls), "__getitem__", None) is None):
            return self.getattr(tx, "__class_getitem__").call(tx, [key], {})
        alias = class_getitem(tx, self.cls, key)
        if getattr(self, "rebuilt", False):  # an alias of a class made in the trace: rebuilt with it
            return space.RebuiltAliasVariable(alias.as_python_constant(), self, key)
        return alias

    def call(self, tx, args, kwargs):
        """``type(cls).__call__(cls, ...)``: the metaclass's Python ``__call__``, else ``type_call``."""
        result = call_meta(tx, self, "__call__", args, kwargs)
        return self.type_call(tx, args, kwargs) if result is NotImplemented else result

    def builtin_method(self, tx, name, args, kwargs):
        """``type``'s own slot reached past a metaclass's override (``super().__call__()``)."""
        if name == "__call__":
            return self.type_call(tx, args, kwargs)
        if name in ("__setattr__", "__delattr__") and not kwargs and len(args) == (2 if name == "__setattr__" else 1):
            attr = args[0].as_python_constant() if args[0].is_python_constant() else None
            if not isinstance(attr, str):  # type_setattro's check
                raise_in_trace(TypeError, f"attribute name must be string, not '{args[0].python_type().__name__}'")
            type_setattr(tx, self, attr, args[1] if name == "__setattr__" else DELETED)
            return ConstantVariable(None)
        unsupported("unsupported_call", f"type.{name} of {self.cls.__name__}")

    def type_call(self, tx, args, kwargs):
        """``type.__call__(cls, ...)``: ``__new__`` then ``__init__``, or the model of a builtin."""
        return space.type_call(tx, self, args, kwargs)

    def __repr__(self):
        return f"UserDefinedClassVariable({self.cls.__qualname__})"


@space.register
def checked_len(result):
    """What CPython's len() makes of a ``__len__`` result: an int >= 0, else the
    TypeError or ValueError it raises (``__len__() should return >= 0``)."""
    value = result.as_python_constant()
    try:
        value = operator.index(value)
        if value < 0:
            raise ValueError("__len__() should return >= 0")
    except (TypeError, ValueError) as e:
        raise TracedException(ExceptionVariable(type(e), [ConstantVariable(str(e))])) from None
    return value


def _runs_code_on_get(attr) -> bool:
    """Is ``attr`` a descriptor of a user class, whose ``__get__`` may raise?"""
    getter = getattr(type(attr), "__get__", None)
    return isinstance(getter, types.FunctionType)


# dict's and OrderedDict's fromkeys (odict_fromkeys: the same _PyDict_FromKeys)
_FROMKEYS = (dict.__dict__["fromkeys"], collections.OrderedDict.__dict__["fromkeys"])


def _owner(cls, name):
    """The first class of ``cls``'s MRO whose ``__dict__`` defines ``name``."""
    return next((klass for klass in cls.__mro__ if name in klass.__dict__), object)


@space.register
class UserDefinedObjectVariable(ObjectIteration, VariableTracker):
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

    def check_mutable(self, what, tx=None):
        if getattr(self, "hashed_as_key", False):  # a dict holding it is not rebuilt (traced_keys.py)
            self.key_changed = True
        super().check_mutable(what, tx)

    @property
    def overrides_setattr(self) -> bool:
        """Whether the class has its own ``__setattr__``: the trace models it, so
        attribute writes are replayed with ``object.__setattr__``."""
        return type_lookup(self.cls, "__setattr__")[1] is not object.__setattr__

    def _instance_attr(self, tx, name):
        if self.value is None or name in self.attrs:  # attrs: written in this trace
            written = self.attrs.get(name)
            return None if written is DELETED else written  # `del obj.name` in this trace
        d = real_dict(self.value)
        if d is None or name not in d:
            return None

        return tx.wrap(d[name], instance_attr_source(self.source, self.cls, name))

    def getattr(self, tx, name):
        user = type_lookup(self.cls, "__getattribute__")[1]
        if isinstance(user, types.FunctionType):  # e.g. configs mapping attribute aliases
            return bind_class_attribute(tx, self, user, None).call(tx, [ConstantVariable(name)], {})
        return self.generic_getattr(tx, name)

    def generic_getattr(self, tx, name):
        """``object.__getattribute__(self, name)``: the lookup without an override."""
        return lookup_attribute(tx, self, name, lambda n: self._instance_attr(tx, n))

    def hasattr(self, tx, name):
        """``hasattr(obj, name)``; for an object from outside, guarded on its
        ``__dict__`` holding ``name`` or not (``obj.scale = 3.0`` later recompiles)."""
        deleted = self.attrs.get(name) is DELETED  # `del obj.name` earlier in this trace
        if name in self.attrs and not deleted:
            return True
        found, attr = class_attr(tx, self.cls, name)
        if found and isinstance(attr, VariableTracker):
            return True  # written in this trace (class_attrs.py)
        if found and not isinstance(attr, _C_DESCRIPTORS):
            if isinstance(attr, property) or _runs_code_on_get(attr):
                return None  # its getter decides, and may raise AttributeError: hasattr traces it
            return True  # class attributes are stable (the class is guarded by identity)
        if found and isinstance(attr, types.GetSetDescriptorType) and name in ("__dict__", "__weakref__", "__class__"):
            return True  # their getters never raise (subtype_dict, subtype_getweakref, object_get_class)
        if self.value is not None and not deleted:
            if found:  # a C descriptor (a __slots__ member): only the real object knows
                if not generic_hasattr(self.value, name):
                    # nothing a guard re-reads stays true when the member is set later
                    unsupported("unsupported_attribute", f"hasattr of an unset member {self.cls.__name__}.{name}")
                return None  # the read is traced, its value guarded: a `del` later misses the guard
            d = real_dict(self.value)
            present = isinstance(d, dict) and name in d
            if isinstance(d, dict) and self.source is not None:
                tx.output.add_guard("DICT_CONTAINS", instance_attr_source(self.source, self.cls, "__dict__"),
                                    (name, present))
            if present:
                return True
        if isinstance(type_lookup(self.cls, "__getattr__")[1], types.FunctionType):
            return None  # the answer is whatever user code decides
        if not guard_class_lacks(self, tx, name) or not guard_class_lacks(self, tx, "__getattr__"):
            return None  # a class that cannot be re-read: the lookup is traced
        return False

    def missing_attribute(self, tx, name):
        """No ``name`` on the class, in the instance dict, nor from ``__getattr__``: raise
        PyObject_GenericGetAttr's AttributeError in the trace, guarded on the name staying
        absent from the instance's ``__dict__`` and from the ``__dict__`` of each user class
        of the MRO (``obj.name = 1`` or ``Class.name = 1`` later make a new trace)."""
        if self.value is not None and self.attrs.get(name) is not DELETED:  # a deletion guarded it
            d = real_dict(self.value)
            if not isinstance(d, dict) or self.source is None:
                return  # __slots__, or nothing to guard: not modelled
            tx.output.add_guard("DICT_CONTAINS", instance_attr_source(self.source, self.cls, "__dict__"),
                                (name, False))
        if not guard_class_lacks(self, tx, name):
            return  # a class that cannot be re-read: not modelled
        raise_in_trace(AttributeError, f"'{self.cls.__name__:.100}' object has no attribute '{name}'")

    def setattr(self, tx, name, value):
        self.check_mutable(f"setting .{name}", tx)
        found, attr = class_attr(tx, self.cls, name)
        if found and isinstance(attr, property):
            if attr.fset is None:
                _property_refusal(attr, self.cls, deleting=False)
            UserFunctionVariable(attr.fset).call(tx, [self, value], {})
            return
        if found and _is_slot(attr, name) and not self.overrides_setattr:  # a member of a Python class's __slots__
            self.attrs[name] = value
            return
        user_setattr = type_lookup(self.cls, "__setattr__")[1]
        if found and hasattr(type(attr), "__set__"):  # a data descriptor's __set__ decides
            if user_setattr is not object.__setattr__ or \
                    type(type_lookup(type(attr), "__set__")[1]) is not types.FunctionType:
                unsupported("unsupported_attribute", f"setting {self.cls.__name__}.{name} ({type(attr).__name__})")
            descriptor = tx.wrap(attr, class_attr_source(tx, self, self.cls, name))
            descriptor.getattr(tx, "__set__").call(tx, [self, value], {})  # tp_descr_set, written in Python
            return
        if user_setattr is not object.__setattr__:
            if not isinstance(user_setattr, types.FunctionType):
                unsupported("unsupported_attribute", f"{self.cls.__name__} overrides __setattr__")
            bind_class_attribute(tx, self, user_setattr, None).call(tx, [ConstantVariable(name), value], {})
            return
        if self.cls.__dictoffset__ == 0:  # only __slots__, no instance __dict__
            raise_in_trace(AttributeError, _no_slot_message(self.cls.__name__, name, in_class=found))
        self.attrs[name] = value

    def delattr(self, tx, name):
        """``del obj.name`` (deleting.py)."""
        delete_object_attribute(tx, self, name)

    def object_setattr(self, tx, name, value):
        """``object.__setattr__(self, name, value)`` (from an overriding ``__setattr__``)."""
        self.check_mutable(f"setting .{name}", tx)
        self.attrs[name] = value
        return ConstantVariable(None)

    def call(self, tx, args, kwargs):
        """``obj(...)``: the type's ``__call__``, never an instance attribute or ``__getattr__``."""
        found, attr = type_lookup(self.cls, "__call__")
        if not found:
            raise_in_trace(TypeError, f"'{tp_name(self.cls)}' object is not callable")
        if isinstance(attr, types.FunctionType):
            return bind_class_attribute(tx, self, attr, None).call(tx, args, kwargs)
        return self.call_method(tx, "__call__", args, kwargs)

    def _dunder(self, tx, name, args):
        found, attr = type_lookup(self.cls, name)
        if name == "__ne__" and attr is object.__ne__:  # object_richcompare: not __eq__, unless NotImplemented
            equal = self._dunder(tx, "__eq__", args)
            return equal if _is_not_implemented(equal) else ConstantVariable(not equal.truth(tx))
        if not found:
            return NotImplemented
        if attr is None and name not in _NONE_MEANS_ABSENT:  # `__bool__ = None`: the slot calls None
            raise_in_trace(TypeError, "'NoneType' object is not callable")
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
                raise_in_trace(TypeError, f"__bool__ should return bool, returned {result.python_type().__name__}")
            return result.truth(tx)
        result = self._dunder(tx, "__len__", [])
        return True if result is NotImplemented else checked_len(result) > 0

    def length(self, tx):
        result = self._dunder(tx, "__len__", [])
        if result is NotImplemented:
            unsupported("operator_error", f"object of type {self.cls.__name__} has no len()")
        return checked_len(result)

    def getitem(self, tx, key):
        result = self._dunder(tx, "__getitem__", [key])
        if result is NotImplemented:
            unsupported("operator_error", f"{self.cls.__name__} is not subscriptable")
        return result

    def setitem(self, tx, key, value):
        """``obj[key] = value``: the class's ``__setitem__`` (``collections.UserDict``, a
        registry class), inlined as CPython calls it."""
        if self._dunder(tx, "__setitem__", [key, value]) is NotImplemented:
            raise_in_trace(TypeError, f"'{self.cls.__name__}' object does not support item assignment")

    def delitem(self, tx, key):
        """``del obj[key]``: the class's ``__delitem__``."""
        if self._dunder(tx, "__delitem__", [key]) is NotImplemented:
            raise_in_trace(TypeError, f"'{self.cls.__name__}' object does not support item deletion")

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
        self.rebuild_attributes(cg)

    def rebuild_attributes(self, cg):
        """Store the trace's attributes on the object just made on the stack (left there)."""
        temp = cg.remember(self)  # attributes may refer back to the object
        for name, value in self.attrs.items():
            cg(value)
            cg.store_attr_of(temp, name, self.overrides_setattr)
        cg.load_fast(temp)

    def __repr__(self):
        return f"UserDefinedObjectVariable({self.cls.__name__})"


def guard_class_lacks(var, tx, name) -> bool:
    """Guard ``name`` staying out of each user class of the MRO of ``var``'s class
    (``Class.name = 1`` later makes a new trace); False where a class cannot be re-read.
    ``var`` is an instance tracker: a user object's, or a partial's (partials.py)."""
    class_var = getattr(var, "class_var", None)
    cls_source = TypeSource(var.source) if var.source is not None else getattr(class_var, "source", None)
    if cls_source is None and not getattr(class_var, "rebuilt", False):
        if space.is_prototype(var.cls):
            return True  # made in this trace: nothing outside it changes the class
        cls_source = ConstSource.of(var.cls)  # an object read without a source: its class, held
    return space.guard_absent(tx, var.cls, cls_source, class_var, name)
