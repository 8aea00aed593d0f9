"""Instances of user subclasses of list, set and frozenset, made in the trace (``class Layers(list)``).

Like ``UserDictVariable`` for dicts, each is two things at once: the builtin
container (its items, in the ``ListVariable`` or ``SetVariable`` it extends)
and an object (attributes in ``attrs``, the class's methods and properties).
A slot or method the subclass defines in Python is inlined with ``self``
bound to the tracker; one it inherits runs the builtin model. Operators of the
builtin base return the base type (``MyList([1]) + MyList([2])`` is a plain
``list``, as CPython's ``list_concat`` makes it). After the graph the object
is rebuilt from its final state without running user code:
``cls.__new__(cls)``, the base's ``extend``/``update``, ``object.__setattr__``
(a frozenset's members go to ``cls.__new__(cls, members)``, as frozenset_new
takes them).
Instances from outside the frame are not modelled here.
"""
import types

from ...errors import unsupported
from ..containers.lists import ListVariable, TupleVariable
from ..containers.sets import SetVariable
from ..core import space
from ..core.base import type_lookup
from ..core.call_shapes import check_method_shape, fits
from ..core.constant import ConstantVariable, items_of
from ..core.exceptions import raise_in_trace
from ..core.ops import dunder_name
from .builtin_subclass import BuiltinSubclassMixin

_BASES = {list: ListVariable, set: SetVariable, frozenset: SetVariable}
_BUILTIN_BASES = frozenset(_BASES) | {object}


def _base_of(cls):
    return next((base for base in cls.__mro__ if base in _BASES), None)


@space.register
def is_user_container_class(cls) -> bool:
    """A Python subclass of list, set or frozenset whose instances ``cls.__new__`` makes plainly."""
    base = isinstance(cls, type) and _base_of(cls)
    return bool(base) and cls is not base and cls.__new__ is base.__new__ and "__slots__" not in cls.__dict__ \
        and type(cls) is type


@space.register
def is_user_frozenset_class(cls) -> bool:
    """A Python subclass of frozenset whose instances carry a ``__dict__``, whatever its ``__new__``."""
    return isinstance(cls, type) and _base_of(cls) is frozenset and cls is not frozenset \
        and "__slots__" not in cls.__dict__ and type(cls) is type


def _python_override(cls, name):
    """The function ``cls`` defines for ``name`` above its builtin base, or None."""
    for klass in cls.__mro__:
        if klass in _BUILTIN_BASES:
            return None
        if name in klass.__dict__:
            attr = klass.__dict__[name]
            return attr if isinstance(attr, types.FunctionType) else None
    return None


class _UserContainer(BuiltinSubclassMixin):
    """What a list- or set-subclass tracker adds to its builtin tracker (a mixin)."""

    def _setup(self, cls):
        self.cls, self.attrs = cls, {}

    def python_type(self):
        return self.cls

    def _override(self, name):
        return _python_override(self.cls, name)

    def _base_tracker(self):
        return _BASES[_base_of(self.cls)]

    def hasattr(self, tx, name):
        return name in self.attrs or type_lookup(self.cls, name)[0]

    def object_setattr(self, tx, name, value):
        return self.builtin_method(tx, "__setattr__", [ConstantVariable(name), value], {})

    def builtin_method(self, tx, name, args, kwargs):
        """The base's own method (``super().append(x)``, or one not overridden)."""
        base = self._base_tracker()
        if name == "__setattr__":
            if self.source is not None:  # only a frozenset from outside is modelled, and only to read
                unsupported("side_effect", f"setting an attribute of a {self.cls.__name__} from outside the frame")
            self.attrs[args[0].as_python_constant()] = args[1]
            return ConstantVariable(None)
        check_method_shape(self.cls, name, args, kwargs)  # `super().__init__(1, 2)`: CPython's TypeError
        if name == "__init__" and _base_of(self.cls) is frozenset:  # object_init: the members came from __new__
            if (args or kwargs) and self._override("__init__") is not None:  # excess_args, tp_init overridden
                raise_in_trace(TypeError, "object.__init__() takes exactly one argument (the instance to initialize)")
            return ConstantVariable(None)
        if name == "copy" and _base_of(self.cls) is frozenset and not args:
            return self._plain(self)  # frozenset_copy: a subclass's copy is a plain frozenset
        if name == "__init__":  # list.__init__ clears, then extends; set.__init__ the same
            if len(args) > 1 or kwargs:
                unsupported("operator_error", f"{self.cls.__name__}() takes at most 1 argument")
            base.call_method(self, tx, "clear", [], {})
            if args:
                base.call_method(self, tx, "extend" if base is ListVariable else "update", list(args), {})
            return ConstantVariable(None)
        slot = _SLOTS.get(name)
        if slot is not None and not fits(slot, 3, args, kwargs):
            unsupported("unsupported_call", f"{self.cls.__name__}.{name} with these arguments")
        if slot is not None:
            result = slot(base, self, tx, *args)
            return result if result is not None else ConstantVariable(None)
        return base.call_method(self, tx, name, args, kwargs)

    def _slot(self, tx, name, args, builtin):
        user = _python_override(self.cls, name)
        return self._inline(tx, user, args) if user is not None else builtin()

    def getitem(self, tx, key):
        return self._slot(tx, "__getitem__", [key], lambda: self._base_tracker().getitem(self, tx, key))

    def setitem(self, tx, key, value):
        self._slot(tx, "__setitem__", [key, value], lambda: self._base_tracker().setitem(self, tx, key, value))

    def contains(self, tx, item):
        user = _python_override(self.cls, "__contains__")
        return self._inline(tx, user, [item]).truth(tx) if user else self._base_tracker().contains(self, tx, item)

    def length(self, tx):
        user = _python_override(self.cls, "__len__")
        return self._inline(tx, user, []).as_python_constant() if user else len(self.items)

    def iter(self, tx):
        user = _python_override(self.cls, "__iter__")
        return self._inline(tx, user, []) if user is not None else self._base_tracker().iter(self, tx)

    def unpack(self, tx):
        if _python_override(self.cls, "__iter__") is not None:
            return self.iter(tx).unpack(tx)
        return self._base_tracker().unpack(self, tx)

    def binop(self, tx, fn, other, reflected):
        if self._override(dunder_name(fn, reflected) or "") is not None:
            return BuiltinSubclassMixin.binop(self, tx, fn, other, reflected)  # the user's result as is
        result = self._base_tracker().binop(self, tx, fn, other, reflected)
        if isinstance(result, (ListVariable, SetVariable)) and result is not self:
            result = self._plain(result)  # the base's operators make the base type
        return result

    def reconstruct(self, cg):
        if self.source is not None:
            return cg.load_source(self.source)
        items = list(self.items) if isinstance(self, ListVariable) else list(self.items.values())
        cg.call_const(rebuild_user_container, [ConstantVariable(self.cls), ConstantVariable(len(items)),
                                               ConstantVariable(tuple(self.attrs))] + items
                      + list(self.attrs.values()))


class UserListVariable(_UserContainer, ListVariable):
    def __init__(self, cls, **kwargs):
        ListVariable.__init__(self, [], **kwargs)
        self._setup(cls)

    def similar(self, items):
        return ListVariable(items)  # slicing and + of a list subclass make a list

    @staticmethod
    def _plain(result):
        return ListVariable(result.items)

    def __repr__(self):
        return f"UserListVariable({self.cls.__name__}, {self.items!r})"


class UserSetVariable(_UserContainer, SetVariable):
    def __init__(self, cls, **kwargs):
        SetVariable.__init__(self, [], **kwargs)
        self._setup(cls)

    @property
    def py_type(self):
        return set  # what SetVariable's own operators make

    @py_type.setter
    def py_type(self, value):
        pass

    @staticmethod
    def _plain(result):
        return SetVariable(list(result.items.values()))

    def __repr__(self):
        return f"UserSetVariable({self.cls.__name__}, {list(self.items)!r})"


class UserFrozenSetVariable(_UserContainer, SetVariable):
    """An instance of a user frozenset class: its members fixed when frozenset_new made it."""

    def __init__(self, cls, items=(), tx=None, **kwargs):
        SetVariable.__init__(self, items, py_type=frozenset, tx=tx, **kwargs)
        self._setup(cls)

    def is_python_constant(self):
        return False  # an object of a user class, with its own attributes, not a frozenset value

    @staticmethod
    def _plain(result):
        return SetVariable(members=set(result.members), py_type=frozenset)

    def reconstruct(self, cg):
        """``frozenset.__new__(cls, members)``, then its attributes: the members a tuple,
        added one by one in an order that makes its table, or else a frozenset constant
        whose table set_merge copies (as ``SetVariable.reconstruct`` chooses)."""
        if self.source is not None:
            return cg.load_source(self.source)
        self.check_rebuild()
        order, table = self._rebuild_plan(copied=False)
        members = TupleVariable([self.var_of(m) for m in order]) if table is None else ConstantVariable(table)
        cg.call_const(rebuild_user_frozenset, [ConstantVariable(self.cls), members, ConstantVariable(tuple(self.attrs))]
                      + list(self.attrs.values()))

    def __repr__(self):
        return f"UserFrozenSetVariable({self.cls.__name__}, {list(self.items)!r})"


_SLOTS = {
    "__getitem__": lambda base, obj, tx, key: base.getitem(obj, tx, key),
    "__setitem__": lambda base, obj, tx, key, value: base.setitem(obj, tx, key, value),
    "__contains__": lambda base, obj, tx, item: ConstantVariable(base.contains(obj, tx, item)),
    "__len__": lambda base, obj, tx: ConstantVariable(len(obj.items)),
    "__iter__": lambda base, obj, tx: base.iter(obj, tx),
}


def rebuild_user_container(cls, n, names, *values):
    """The real object of a user list or set made in the trace, from its final state."""
    obj = cls.__new__(cls)
    base = _base_of(cls)
    (base.extend if base is list else base.update)(obj, values[:n])
    for name, value in zip(names, values[n:]):
        object.__setattr__(obj, name, value)
    return obj


def rebuild_user_frozenset(cls, members, names, *values):
    """The real object of a user frozenset made in the trace: frozenset_new of its members
    (not the class's own ``__new__``: that is user code), then its attributes."""
    obj = frozenset.__new__(cls, members)
    for name, value in zip(names, values):
        object.__setattr__(obj, name, value)
    return obj


@space.register
def new_user_container_instance(cls):
    """``list.__new__(cls)`` / ``set.__new__(cls)``: an empty instance of a user list or set class."""
    return (UserListVariable if _base_of(cls) is list else UserSetVariable)(cls)


def user_frozenset_of(tracker):
    """The frozenset ``tracker`` of a user frozenset class's instance from outside, as that class's tracker."""
    made = UserFrozenSetVariable(tracker.py_type, members=tracker.members, source=tracker.source)
    made.table_known, made.outside_order = tracker.table_known, tracker.outside_order
    return made


@space.register
def new_user_frozenset(tx, cls, args, kwargs):
    """``frozenset.__new__(cls, iterable=())`` (frozenset_new) for a user frozenset class:
    keywords only where the class has its own ``__init__`` to take them, one iterable at most."""
    if kwargs and _python_override(cls, "__init__") is None:
        raise_in_trace(TypeError, "frozenset() takes no keyword arguments")
    if len(args) > 1:
        raise_in_trace(TypeError, f"{cls.__name__} expected at most 1 argument, got {len(args)}")
    return UserFrozenSetVariable(cls, items_of(tx, args[0]) if args else [], tx=tx)


@space.register
def new_user_container(tx, cls, args, kwargs):
    """``cls(*args, **kwargs)`` for a user list, set or frozenset class: allocate (a
    frozenset takes its members there), then inline ``__init__``."""
    if _base_of(cls) is frozenset:
        return new_user_frozenset(tx, cls, args, kwargs).initialise(tx, args, kwargs)
    return new_user_container_instance(cls).initialise(tx, args, kwargs)
