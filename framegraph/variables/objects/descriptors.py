"""Descriptors whose ``__get__`` the trace runs: a Python one read through a class,
and the standard library's, run as a model.

``type.__getattribute__`` finds ``attr`` on the class's MRO and returns
``type(attr).__get__(attr, None, cls)``: ``enum.property`` hands back the
member of that name, a user's descriptor whatever it computes. The tracer
inlines that ``__get__`` with the descriptor object itself, read from the
``__dict__`` of the class that holds it (``cls.__mro__[i].__dict__[name]``:
reading ``cls.name`` again would run ``__get__`` instead), so it is guarded
and its attributes are read like any object's from outside.

``functools.cached_property`` is a non-data descriptor: the instance's
``__dict__`` is looked at first (``lookup_attribute`` already did, and found
nothing), then its ``__get__`` computes ``self.func(instance)`` and stores the
value in the instance's ``__dict__`` under ``attrname`` (directly: no
``__setattr__`` runs), so the next lookup finds it there. On 3.11 the
computation holds ``self.lock`` (an RLock, removed in 3.12): a trace runs on
one thread, and the lock is released before ``__get__`` returns, so taking it
changes nothing the frame can see, and the model leaves it out. The store is
a write to the instance dict tracker: for an object from outside the frame, a
side effect replayed after the graph, and the ``__dict__`` guard the lookup
added makes the next call (which finds the value) a new trace.
"""
import types

from ...errors import unsupported
from ...guards.sources import AttrSource, GetItemSource
from ..callables.functions import UserFunctionVariable
from ..core import space
from ..core.base import guard_identity, type_lookup, user_code
from ..core.constant import ConstantVariable
from ..core.exceptions import TracedException, raise_in_trace


def _raw_source(class_var, name):
    """Where the descriptor itself is re-read: the ``__dict__`` of its class on the MRO."""
    if class_var.source is None:
        return None
    for i, klass in enumerate(class_var.cls.__mro__):
        if name in klass.__dict__:
            owner = GetItemSource(AttrSource(class_var.source, "__mro__"), i) if i else class_var.source
            return GetItemSource(AttrSource(owner, "__dict__"), name)
    return None


def python_get_through_class(tx, class_var, name, attr):
    """``type(attr).__get__(attr, None, cls)`` inlined, or None where ``__get__`` is not a
    Python function or the descriptor cannot be re-read."""
    getter = next((k.__dict__["__get__"] for k in type(attr).__mro__ if "__get__" in k.__dict__), None)
    source = _raw_source(class_var, name)
    if not isinstance(getter, types.FunctionType) or source is None:
        return None
    return UserFunctionVariable(getter).call(tx, [tx.wrap(attr, source), ConstantVariable(None), class_var], {})


def raw_source(obj, attr, source):
    """Where the descriptor object itself is re-read: ``Class.name`` (the source the
    lookup gives) runs its ``__get__(None, Class)``, which for singledispatchmethod is
    a new function; ``Class.__mro__[i].__dict__['name']`` is the object."""
    if not isinstance(source, AttrSource):
        return None
    mro = obj.python_type().__mro__
    index = next((i for i, klass in enumerate(mro) if klass.__dict__.get(source.member) is attr), None)
    if index is None:
        return None
    owner = GetItemSource(AttrSource(source.base, "__mro__"), index) if index else source.base
    return GetItemSource(AttrSource(owner, "__dict__"), source.member)


def cached_property_get(tx, obj, attr, source):
    """``attr.__get__(obj, type(obj))`` for a ``functools.cached_property`` ``attr``."""
    source = raw_source(obj, attr, source)
    guard_identity(tx, attr, source)  # its func and attrname are the ones read now
    if attr.attrname is None:
        raise_in_trace(TypeError, "Cannot use cached_property instance without calling __set_name__ on it.")
    try:
        cache = obj.getattr(tx, "__dict__")
    except TracedException as error:  # __slots__: __get__'s own TypeError instead
        if not issubclass(error.value.cls, AttributeError):
            raise
        raise_in_trace(TypeError, f"No '__dict__' attribute on {obj.python_type().__name__!r} "
                                  f"instance to cache {attr.attrname!r} property.")
    key = ConstantVariable(attr.attrname)
    if cache.contains(tx, key):
        return cache.getitem(tx, key)
    func = tx.wrap(attr.func, AttrSource(source, "func") if source is not None else None)
    value = func.call(tx, [obj], {})
    cache.setitem(tx, key, value)
    return value


def traced_get(tx, obj, attr, source):
    """``type(attr).__get__(attr, obj, type(obj))`` traced: a library descriptor whose
    ``__get__`` is plain Python (singledispatchmethod builds a dispatching closure)."""
    source = raw_source(obj, attr, source)
    if source is None:  # its attributes could not be guarded
        unsupported("unsupported_attribute", f"descriptor {type(attr).__name__} that cannot be re-read")
    get = type(attr).__get__
    return tx.wrap(get).call(tx, [tx.wrap(attr, source), obj, space.class_of(tx, obj)], {})


# descriptor class, by module and name -> model of its __get__ through an instance:
# fn(tx, obj, attr, source). By name, so that a fresh import of the module (the
# pure-Python functools that tests import besides the C-accelerated one) has the
# same model: it is the same source.
_MODELS = {("functools", "cached_property"): cached_property_get,
           ("functools", "singledispatchmethod"): traced_get,
           ("functools", "partialmethod"): traced_get}  # a partial of the bound function


def descriptor_get(tx, obj, attr, source):
    """``type(attr).__get__(attr, obj, type(obj))`` by its model; a break for a descriptor
    without one (its ``__get__`` may be C code, or user code the lookup does not trace)."""
    cls = type(attr)
    model = _MODELS.get((getattr(cls, "__module__", None), getattr(cls, "__qualname__", None)))
    if model is None and user_code(cls) and type(type_lookup(cls, "__get__")[1]) is types.FunctionType:
        model = traced_get  # a user's descriptor class: its __get__ is traced like any method
    if model is None:
        unsupported("unsupported_attribute", f"descriptor {cls.__name__}")
    return model(tx, obj, attr, source)
