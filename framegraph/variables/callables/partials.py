"""``functools.partial`` objects, as CPython's ``_functools`` builds and calls them.

``PartialVariable`` holds the three things a partial is: ``func``, ``args``
(a tuple tracker) and ``keywords`` (a dict tracker). It follows
``Modules/_functoolsmodule.c`` of 3.11:

* ``partial_new``: the first argument must be callable; a partial of a partial
  whose instance ``__dict__`` was never created is flattened (``func`` is the
  inner function, ``args`` the inner's then the new ones, ``keywords`` the
  inner's updated with the new ones). A partial made in this trace has no
  ``__dict__``, so it flattens; for one from outside the frame the tracer
  cannot see whether CPython would flatten (reading ``__dict__`` creates it),
  so the new partial keeps it as its ``func``: calling is the same either way,
  and reading ``func``/``args``/``keywords`` of that outer partial is a break.
* ``partial_call``: ``func(*args, *call_args, **{**keywords, **call_kwargs})``,
  so keywords given at the call override the stored ones.
* ``func``, ``args``, ``keywords`` are read-only members; ``keywords`` is the
  partial's own dict (mutating it changes later calls), so the tracker hands
  out the same dict tracker every time.

The same tracker models every class whose instances are made and called by that
C code (``partial_class``): ``functools.partial``, another copy of its type (a
fresh import of ``_functools``, as CPython's own tests make one), and a Python
subclass that keeps partial's ``__new__``, ``__call__`` and attribute access
(``class P(functools.partial): ...``). ``cls`` is the instance's class; class
attributes of a subclass are looked up as for any object (methods bind to the
partial). An instance has a ``__dict__`` once an attribute is set or
``__dict__`` is read: for a partial made in the trace that is ``dict_var`` (a
dict tracker, None while CPython's ``part->dict`` is NULL), and once it exists
``partial(p, ...)`` no longer flattens ``p``, as CPython does. Reading
``__dict__`` creates it, which changes later flattening, so the tracer never
reads the ``__dict__`` of a partial from outside: its attributes other than the
members and class attributes are a graph break. ``__setstate__`` (what
unpickling and ``copy`` call) is partial_setstate, with its checks; a partial
made in the trace is rebuilt the same way, ``cls(func)`` and then the C base's
``__setstate__`` with the very args tuple, keywords dict and ``__dict__`` it
holds (so a partial inside its own args is itself).

A partial from outside the frame (an argument, ``self.act`` of a module) is
wrapped by the builder from its three members, each read through its source
(``p.func``, ``p.args``, ``p.keywords``): they get the guards any value read
there gets (identity of the function, length and items of the tuple, keys and
values of the dict), which is everything a call depends on. A partial that
leaves the trace (returned, or live across a graph break) is rebuilt from its
source when it has one.
"""
import functools
import types

from ...errors import unsupported
from ...guards.sources import AttrSource, ConstSource, GetItemSource, PartialDictSource
from ..containers.dicts import ConstDictVariable, hash_key
from ..containers.lists import TupleVariable
from ..core import space
from ..core.base import BoundMethodVariable, VariableTracker
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_in_trace
from .functions import UserFunctionVariable, UserMethodVariable


_UNREAD = object()
_GENERIC = object.__getattribute__  # a slot wrapper: the C lookup, no user code


class PartialVariable(VariableTracker):
    def __init__(self, func, args: TupleVariable, keywords: ConstDictVariable, *, flat=True,
                 cls=functools.partial, **kwargs):
        super().__init__(**kwargs)
        self.func, self.args, self.keywords = func, args, keywords
        self.flat = flat  # False: ``func`` is a partial CPython may have flattened into this one
        self.cls = cls
        self.dict_var = None  # ``part->dict``: None until an attribute is set or __dict__ read

    def python_type(self):
        return self.cls

    @property
    def has_dict(self) -> bool:
        """Whether CPython's ``part->dict`` is set (only known for a partial made in the trace)."""
        return self.source is not None or self.dict_var is not None

    def _instance_dict(self):
        """``p.__dict__`` of a partial made in the trace: reading it creates it, as in CPython."""
        if self.dict_var is None:
            self.dict_var = ConstDictVariable([])
        return self.dict_var

    def _own_attribute(self, name):
        if self.dict_var is None:
            return None
        return self.dict_var.items.get(_key(name), (None, None))[1]

    def call(self, tx, args, kwargs):
        keywords = {k.as_python_constant(): v for k, v in self.keywords.items.values()}
        keywords.update(kwargs)
        if not all(isinstance(key, str) for key in keywords):  # p.keywords[1] = ...: the call refuses
            raise_in_trace(TypeError, "keywords must be strings")
        return self.func.call(tx, list(self.args.unpack(tx)) + list(args), keywords)

    def getattr(self, tx, name):
        if name in _MEMBERS:
            if not self.flat:
                unsupported("unsupported_attribute", f"partial.{name} of a partial of a partial from "
                            "outside the frame (whether CPython flattened it depends on its __dict__)")
            return getattr(self, name)
        if name == "__call__":
            return BoundMethodVariable(self, "__call__")
        if name == "__class__":
            return self.class_var if self.class_var is not None else tx.wrap(self.cls)
        if self.source is not None and isinstance(self.outside_dict, dict) and name in self.outside_dict \
                and not any(name in klass.__dict__ for klass in self.cls.__mro__):
            # `p.__name__ = ...` set outside: from its __dict__, guarded (no class attribute shadows it)
            source = self._dict_source()
            tx.output.add_guard("DICT_CONTAINS", source, (name, True))
            return tx.wrap(self.outside_dict[name], GetItemSource(source, name))
        if self.source is not None:  # reading its __dict__ would create it
            if not self._hooks_lookup() and self.hasattr(tx, name) is False:
                self.missing_attribute(tx, name)  # raises, guarded, where it can
            unsupported("unsupported_attribute", f"{self.cls.__name__}.{name}")
        if name == "__dict__":
            return self._instance_dict()
        if name == "__setstate__" and _resolved(self.cls, name) is _c_base(self.cls).__dict__[name]:
            return BoundMethodVariable(self, name)
        return space.lookup_attribute(tx, self, name, self._own_attribute)

    class_var = None  # the class tracker that made it (type(p), and how p is rebuilt)

    value = None  # no real object: made in the trace, or read member by member
    outside_dict = _UNREAD  # from outside: the real __dict__ (None while it has none), see wrap_partial

    def tp_name(self) -> str:
        """``Py_TYPE(p)->tp_name``: ``functools.partial`` for a C partial type, else the class name."""
        return "functools.partial" if _is_c_partial(self.cls) else self.cls.__name__

    def missing_attribute(self, tx, name):
        """No ``name`` on the class nor in the attributes set in the trace: AttributeError,
        guarded on the program's classes of the MRO staying without it."""
        if _is_c_partial(self.cls):  # a C type: its attributes cannot change
            raise_in_trace(AttributeError, f"'{self.tp_name()}' object has no attribute '{name}'")
        space.UserDefinedObjectVariable.missing_attribute(self, tx, name)  # returns where it cannot guard

    def repr(self, tx):
        """partial_repr: ``tp_name(func, *args, k=v)``, ``...`` where it contains itself."""
        own = self._python_slot("__repr__")
        if own is not None:
            return own.call(tx, [], {})
        if id(self) in _IN_REPR:
            return ConstantVariable("...")
        _IN_REPR.add(id(self))
        try:
            parts = [space.builtin_repr(tx, self.func).as_python_constant()]
            parts += [space.builtin_repr(tx, arg).as_python_constant() for arg in self.args.unpack(tx)]
            parts += [f"{key.as_python_constant()!s}={space.builtin_repr(tx, value).as_python_constant()}"
                      for key, value in self.keywords.items.values()]
        finally:
            _IN_REPR.discard(id(self))
        return ConstantVariable(f"{_repr_prefix(self.cls)}({', '.join(parts)})")

    def str(self, tx):
        own = self._python_slot("__str__")
        return own.call(tx, [], {}) if own is not None else self.repr(tx)

    def _python_slot(self, name):
        """The bound method a subclass defines for ``name`` in Python, else None."""
        for klass in self.cls.__mro__:
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                return UserMethodVariable(UserFunctionVariable(attr), self) \
                    if isinstance(attr, types.FunctionType) else None
        return None

    def setattr(self, tx, name, value):
        if name in _MEMBERS:
            raise_in_trace(AttributeError, "readonly attribute")
        found = next((k.__dict__[name] for k in self.cls.__mro__ if name in k.__dict__), None)
        # a name the class defines (__dict__, __class__, a method) is not a plain store; another
        # dunder is (partialmethod.__get__ sets ``result.__self__``)
        if self.source is not None or hasattr(type(found), "__set__") or name.startswith("__") and found is not None:
            unsupported("unsupported_attribute", f"setting {self.cls.__name__}.{name}")
        self._instance_dict().call_method(tx, "__setitem__", [ConstantVariable(name), value], {})

    def delattr(self, tx, name):
        """``del p.name``: partial's members are read-only, and its ``__dict__`` cannot be
        deleted (PyObject_GenericSetDict's TypeError); other names are not modelled."""
        if name in _MEMBERS:
            raise_in_trace(AttributeError, "readonly attribute")
        if name == "__dict__":
            raise_in_trace(TypeError, "cannot delete __dict__")
        unsupported("unsupported_attribute", f"del {self.cls.__name__}.{name}")

    def call_method(self, tx, name, args, kwargs):
        if name == "__call__":
            return self.call(tx, args, kwargs)
        if name == "__setstate__" and len(args) == 1 and not kwargs:
            return self.setstate(tx, args[0])
        return super().call_method(tx, name, args, kwargs)

    def hasattr(self, tx, name):
        # the class's MRO, not hasattr(cls): `partial.__name__` is the metatype's, which
        # an instance does not see
        if name in _MEMBERS or self._own_attribute(name) is not None or \
                any(name in klass.__dict__ for klass in self.cls.__mro__):
            return True
        if self.source is None:
            return False
        if self.outside_dict is _UNREAD:
            return None
        # from outside: in its __dict__ or not, guarded without making the dict
        source = self._dict_source()
        if self.outside_dict is None:
            tx.output.add_guard("CONSTANT_MATCH", source, None)
            return False
        present = name in self.outside_dict
        tx.output.add_guard("DICT_CONTAINS", source, (name, present))
        return present

    def _hooks_lookup(self) -> bool:
        """A class of the MRO defines ``__getattr__`` or ``__getattribute__``: the lookup is user code."""
        return any(not isinstance(klass.__dict__.get(hook, _GENERIC), types.WrapperDescriptorType)
                   for klass in self.cls.__mro__ for hook in ("__getattr__", "__getattribute__"))

    def _dict_source(self):
        """Where a guard reads the ``__dict__`` of this partial from outside (None if it has none)."""
        return PartialDictSource(self.source, ConstSource.of(_c_base(self.cls).__reduce__))

    def reconstruct(self, cg):
        """``p = cls(func)``, then the C base's ``__setstate__(p, (func, args, keywords, dict))``:
        the same args tuple, keywords dict and ``__dict__`` the trace's partial holds (a
        partial inside its own args is the one being rebuilt)."""
        if self.source is not None:
            return super().reconstruct(cg)
        cg.emit_op("PUSH_NULL")
        if self.class_var is not None:
            cg(self.class_var)
        else:
            cg.load_const(self.cls)
        if not self.flat:  # func is a partial from outside: flattened (or not) as CPython decides
            return self._rebuild_by_call(cg)
        cg(self.func)
        cg.call(1)
        temp = cg.remember(self)
        cg.emit_op("PUSH_NULL")
        cg.load_const(_c_base(self.cls).__setstate__)
        cg.load_fast(temp)
        for part in (self.func, self.args, self.keywords):
            cg(part)
        if self.dict_var is not None:
            cg(self.dict_var)
        else:
            cg.load_const(None)
        cg.build(tuple, 4)
        cg.call(2)
        cg.emit_op("POP_TOP")
        cg.load_fast(temp)

    def _rebuild_by_call(self, cg):
        if self.dict_var is not None:
            unsupported("graph_output", "a partial of a partial from outside with attributes of its own")
        pairs = list(self.keywords.items.values())
        cg(self.func)
        for item in list(self.args.items) + [value for _, value in pairs]:
            cg(item)
        names = [k.as_python_constant() for k, _ in pairs]
        nargs = 1 + len(self.args.items) + len(pairs)
        cg.call_kw(nargs, names) if names else cg.call(nargs)

    def setstate(self, tx, state):
        """partial_setstate: ``(func, args, keywords or None, dict or None)``, checked as
        CPython checks it; the args tuple, keywords dict and dict are kept as they are."""
        if self.source is not None:
            unsupported("side_effect", f"{self.tp_name()}.__setstate__ of a partial from outside the frame")
        kind = state.python_type()
        if not (isinstance(kind, type) and issubclass(kind, tuple)):
            raise_in_trace(TypeError, "invalid partial state")
        if kind is not tuple:
            unsupported("unsupported_value", f"partial.__setstate__ of a {kind.__name__}")
        items = state.unpack(tx)
        if len(items) != 4:
            raise_in_trace(TypeError, "invalid partial state")
        func, args, keywords, namespace = items
        kw_none = keywords.is_python_constant() and keywords.as_python_constant() is None
        if not _is_callable(func) or not issubclass(args.python_type(), tuple) or not (
                kw_none or issubclass(keywords.python_type(), dict)):
            raise_in_trace(TypeError, "invalid partial state")
        dict_none = namespace.is_python_constant() and namespace.as_python_constant() is None
        if args.python_type() is not tuple or not (kw_none or type(keywords) is ConstDictVariable) \
                or not (dict_none or type(namespace) is ConstDictVariable):
            unsupported("unsupported_value", "partial.__setstate__ of containers of other types")
        self.func, self.args, self.flat = func, args, True
        self.keywords = ConstDictVariable([]) if kw_none else keywords
        self.dict_var = None if dict_none else namespace
        return ConstantVariable(None)

    def __repr__(self):
        return f"PartialVariable({self.func!r})"


_MEMBERS = ("func", "args", "keywords")
_IN_REPR = set()  # partial trackers whose repr is being built (Py_ReprEnter)

# What a class must leave to partial's C code for this tracker to model its instances.
_OVERRIDES = ("__new__", "__init__", "__call__", "__getattribute__", "__getattr__", "__setattr__",
              "__delattr__", "__get__", "__del__")


def _is_c_partial(klass) -> bool:
    """``functools.partial`` or another copy of its C type (``_functools`` imported afresh)."""
    return (klass.__module__ == "functools" and klass.__qualname__ == "partial"
            and isinstance(klass.__dict__.get("__call__"), types.WrapperDescriptorType))


@functools.lru_cache(maxsize=None)
def _repr_prefix(cls) -> str:
    """What partial_repr writes before the parenthesis for ``cls`` (3.13 adds the module
    of a subclass): read from the repr of a probe instance (no Python code of ``cls``
    runs: ``partial_class`` admits no ``__new__``, ``__init__`` or ``__del__``)."""
    text = repr(cls(print))
    return text[:text.index("(")]


def _c_base(cls):
    return next(klass for klass in cls.__mro__ if _is_c_partial(klass))


def _resolved(cls, name):
    return next((klass.__dict__[name] for klass in cls.__mro__ if name in klass.__dict__), None)


def _key(name):
    return hash_key(ConstantVariable(name))


@functools.lru_cache(maxsize=None)
def partial_class(cls) -> bool:
    """Whether CPython's partial code makes and calls instances of ``cls``: a C partial
    type, or a Python subclass of one that overrides none of ``_OVERRIDES`` (with
    ``type`` as its metaclass)."""
    if not isinstance(cls, type) or type(cls) is not type:
        return False
    for klass in cls.__mro__:
        if _is_c_partial(klass):
            return True
        if any(name in klass.__dict__ for name in _OVERRIDES):
            return False
    return False


def make_partial(tx, cls_var, args, kwargs):
    """``cls(func, *args, **keywords)`` for a ``partial_class`` (partial_new)."""
    if not args:
        raise_in_trace(TypeError, "type 'partial' takes at least one argument")
    func, args = args[0], list(args[1:])
    if not _is_callable(func):
        raise_in_trace(TypeError, "the first argument must be callable")
    keywords = dict(kwargs)
    flat = True
    if isinstance(func, PartialVariable):  # its type's tp_call is partial_call: flattened if no __dict__
        if func.source is None and not func.has_dict and func.flat:
            args = list(func.args.items) + args
            keywords = {**{k.as_python_constant(): v for k, v in func.keywords.items.values()}, **keywords}
            func = func.func
        elif func.source is not None:
            flat = False
    var = PartialVariable(func, TupleVariable(args), ConstDictVariable.from_kwargs(keywords), flat=flat,
                          cls=cls_var.as_python_constant())
    var.class_var = cls_var
    return var


def _is_callable(var) -> bool:
    """``callable()`` of the first argument: its type defines ``__call__``."""
    if isinstance(var, ConstantVariable):
        return callable(var.value)
    return any("__call__" in klass.__dict__ for klass in var.python_type().__mro__)


def wrap_partial(tx, value, source):
    """An instance of a ``partial_class`` from outside the frame, read member by member
    (``source`` None: a value assumed stable, wrapped without guards)."""

    if source is not None:
        tx.output.add_guard("TYPE_MATCH", source, type(value))
    func, args, keywords = (tx.wrap(getattr(value, name), AttrSource(source, name) if source else None)
                            for name in _MEMBERS)
    var = PartialVariable(func, args, keywords, flat=True, cls=type(value), source=source)
    var.outside_dict = _c_base(type(value)).__reduce__(value)[2][3]  # its __dict__, or None: not made
    return var

