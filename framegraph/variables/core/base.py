"""VariableTracker: what sits on the tracer's value stack instead of a real value.

A tracker stands for one Python value during symbolic execution. Its methods
mirror CPython's type slots (see torch/_dynamo/CPYTHON_MIRRORING.md), so each
opcode handler is one call on the tracker it pops:

    tp_getattro -> getattr(tx, name)        tp_call     -> call(tx, args, kwargs)
    tp_iter     -> iter(tx)                 tp_iternext -> next(tx)  (None = exhausted)
    mp_subscript-> getitem(tx, key)         mp_ass_subscript -> setitem / delitem
    nb_bool     -> truth(tx) (a Python bool) sq_length  -> length(tx) (a Python int)
    tp_setattro -> setattr(tx, name, value)  sq_contains -> contains(tx, item)

``call_method(tx, name, args, kwargs)`` is ``getattr`` followed by ``call``,
overridden where a type has a cheaper or more precise model.

A tracker built from a value outside the frame has a ``source``; one created
during the trace (a new list, a graph result) has none and may be mutated in
place (``mutable``). Mutating a tracker that has a source is a side effect on
the caller's object: ``check_mutable`` records it in the side-effect ledger
(``side_effects.py``), which replays it after the graph.
"""
import collections
import gc
import types
from typing import Any, Dict, List, Optional

from ...errors import unsupported
from ...guards.kinds import function_guard_values
from ...side_effects import ledger, record_mutation
from . import space


# Modules whose functions and globals are taken as they are: reading them adds no
# guard (the tracer knows their contents), and their frames are not user code.
STABLE_MODULES = ("torch", "math", "operator", "functools", "itertools", "collections", "builtins",
                  "typing", "dataclasses", "enum", "abc", "inspect", "warnings", "numbers", "types",
                  "framegraph", "numpy", "contextlib", "copy", "re")


def stable_module(name) -> bool:
    """Is the module named ``name`` one of ``STABLE_MODULES`` (or inside one)?"""
    return (name if isinstance(name, str) else "").partition(".")[0] in STABLE_MODULES


def user_code(obj) -> bool:
    """Is the class or function ``obj`` defined outside ``STABLE_MODULES`` (a user's own)?"""
    return not stable_module(getattr(obj, "__module__", None))


def guard_identity(tx, value, source):
    """Guard that ``source`` still holds this very object (ID_MATCH), when it has a source."""
    if source is not None:
        tx.output.add_guard("ID_MATCH", source, function_guard_values(value))



def type_lookup(cls, name):
    """(True, attribute) from the MRO without running descriptors, or (False, None):
    ``_PyType_Lookup``, the first step of every attribute read."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return True, klass.__dict__[name]
    return False, None


def known_type(var):
    """``type()`` of the value ``var`` stands for, where its tracker class says (None where
    it keeps the protocol's default)."""
    return var.python_type() if type(var).python_type is not VariableTracker.python_type else None


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class statement's class


def is_heap_type(cls) -> bool:
    """``Py_TPFLAGS_HEAPTYPE``: a class made by a class statement or ``type()`` (its
    attributes can be set; its slots call Python code), not a static C type."""
    return bool(cls.__flags__ & _HEAPTYPE)


def defines_in_python(cls, names) -> bool:
    """Does a class of ``cls``'s MRO made by a class statement define one of ``names``?
    Such a class has the number slot those dunders fill (``slot_nb_add`` for
    ``__add__`` or ``__radd__``), whatever its builtin base has."""
    return any(name in klass.__dict__ for klass in cls.__mro__ if is_heap_type(klass) for name in names)


def tp_name(cls) -> str:
    """``Py_TYPE(o)->tp_name``, as CPython's TypeErrors name a type: a class statement's
    ``__name__``; a C type's full name (``collections.OrderedDict``) unless a builtin."""
    if cls.__flags__ & _HEAPTYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def finalizable(cls) -> bool:
    """Does ``cls`` (a user class) define ``__del__`` in Python?"""
    try:
        mro = cls.__mro__
    except AttributeError:
        return False
    return any(isinstance(klass.__dict__.get("__del__"), types.FunctionType) for klass in mro)

# Set when a trace stopped before dropping a real object that has a __del__, for
# CPython to drop it at that instruction. The tracer's own objects form reference
# cycles (translator, trackers, exceptions) that hold the real object until the
# next garbage collection, so its __del__ would run late (test_dict's
# test_oob_indexing_dictiter_iternextitem): collect them before the frame runs.
FINALIZERS_DROPPED = []


def collect_trace_cycles():
    """After a trace: collect its garbage now where it stopped for a finalizer (above)."""
    if FINALIZERS_DROPPED:
        FINALIZERS_DROPPED.clear()
        gc.collect()


class VariableTracker:
    """Base class: every slot is 'unsupported' until a subclass models it."""

    def __init__(self, *, source=None):
        self.source = source

    # ---- identity and constants
    def python_type(self) -> type:
        unsupported("unsupported_value", f"type of {self}")

    def as_python_constant(self) -> Any:
        unsupported("unsupported_value", f"{self} is not a Python constant")

    def is_python_constant(self) -> bool:
        try:
            self.as_python_constant()
            return True
        except Exception:
            return False

    # How the side-effect ledger replays this object's mutations after the graph
    # (side_effects.py: "list", "dict", "set", "object"); None: it cannot.
    replay_kind = None

    @property
    def mutable(self) -> bool:
        """True when the value was created during the trace (mutations stay local)."""
        return self.source is None

    def check_dropped(self, dropped, what: str):
        """Before this container lets go of the trackers ``dropped``: a real object
        among them whose class has a ``__del__`` would be finalised when the replay
        drops it after the graph, not here, as CPython would (its ``__del__`` may
        change what the rest of the frame sees): stop the trace instead."""
        for var in dropped:
            if var.source is not None and finalizable(var.python_type()):
                FINALIZERS_DROPPED.append(what)  # the frame is run by CPython now: see collect_trace_cycles
                unsupported("side_effect", f"{what} drops a {var.python_type().__name__}, whose __del__ "
                                           "would run at the replay instead")

    def check_mutable(self, what: str, tx=None):
        """Called before mutating in place: an object from outside the frame goes
        into the side-effect ledger (replayed after the graph), when ``tx`` is given."""
        if not self.mutable:
            record_mutation(tx, self, what)
            return
        se = ledger(tx) if tx is not None else None
        if se is not None:
            se.local_mutations += 1  # autograd.Function checks its forward changed nothing

    # ---- CPython slots
    def getattr(self, tx, name: str) -> "VariableTracker":
        """Default: methods of builtin containers bind to ``call_method``."""
        kind = known_type(self)
        if name == "__class__" and isinstance(kind, type):
            return tx.wrap(kind)  # object.__class__: the type itself, never a method named so
        if kind is not None and kind not in _METHOD_TYPES and isinstance(kind, type):
            # a subclass of a builtin container (`class Tags(set): pass`): the base's method,
            # where the subclass does not override it
            base = next((k for k in kind.__mro__ if k in _METHOD_TYPES), None)
            if base is not None and getattr(kind, name, None) is getattr(base, name, None):
                kind = base
        # type_lookup, not getattr(kind): `list.mro` and `list.__name__` are the metatype's,
        # which an instance does not see
        if kind in _METHOD_TYPES and callable(getattr(kind, name, None)) and type_lookup(kind, name)[0]:
            return BoundMethodVariable(self, name)
        if kind in _METHOD_TYPES and name in _NONE_SLOTS and getattr(kind, name, 0) is None:
            return _constant(None)  # slice.__hash__, list.__hash__: set to None by the type
        if kind in _METHOD_TYPES and not kind.__dictoffset__ and not type_lookup(kind, name)[0]:
            if kind in space.STAND_INS:  # no instance dict: "'frozenset' object has no attribute 'add'"
                with space.python_operation(f"{kind.__name__}.{name}"):
                    getattr(space.STAND_INS[kind](), name)
        if name in _C_SLOTS and _c_slot(kind, name):  # `view.__iter__`: the protocol, bound
            return BoundMethodVariable(self, name)
        unsupported("unsupported_attribute", f"{self}.{name}")

    def hasattr(self, tx, name: str):
        """True/False when known at trace time, None when not."""
        kind = known_type(self)
        return type_lookup(kind, name)[0] if kind in _METHOD_TYPES else None

    def setattr(self, tx, name: str, value: "VariableTracker"):
        unsupported("unsupported_attribute", f"setting {self}.{name}")

    def call(self, tx, args: List["VariableTracker"], kwargs: Dict[str, "VariableTracker"]):
        kind = known_type(self)
        if isinstance(kind, type) and not type_lookup(kind, "__call__")[0]:  # `{}()`: the type decides
            space.raise_in_trace(TypeError, f"'{tp_name(kind)}' object is not callable")
        unsupported("unsupported_call", f"calling {self}")

    def call_method(self, tx, name, args, kwargs) -> "VariableTracker":
        slot = _C_SLOTS.get(name)
        if slot is not None and not kwargs and len(args) == slot[0] and \
                _c_slot(known_type(self), name):
            return slot[1](self, tx, *args)  # `type(view).__iter__(view)`: the tracker's own protocol
        return self.getattr(tx, name).call(tx, args, kwargs)

    def iter(self, tx) -> "VariableTracker":
        """Iteration over the items; a builtin container's iterator remembers the
        container, so that it is rebuilt as ``iter(container)`` of the same type."""
        typed = type(self).python_type is not VariableTracker.python_type
        kind = space.builtin_iterator_type(self.python_type()) if typed else None
        return space.ListIteratorVariable(self.unpack(tx), container=self if kind else None, kind=kind)

    def next(self, tx) -> Optional["VariableTracker"]:
        unsupported("unsupported_value", f"next() of {self}")

    def unpack(self, tx) -> List["VariableTracker"]:
        """All items, as iterating over the value would produce them."""
        unsupported("unsupported_value", f"iterating over {self}")

    def truth(self, tx) -> bool:
        if self.is_python_constant():
            return bool(self.as_python_constant())
        unsupported("unsupported_value", f"bool() of {self}")

    def length(self, tx) -> int:
        return len(self.unpack(tx))

    def getitem(self, tx, key: "VariableTracker") -> "VariableTracker":
        unsupported("unsupported_value", f"{self}[{key}]")

    def setitem(self, tx, key, value):
        unsupported("unsupported_value", f"{self}[{key}] = ...")

    def delitem(self, tx, key):
        unsupported("unsupported_value", f"del {self}[{key}]")

    def contains(self, tx, item) -> bool:
        # PyObject_RichCompareBool: the same object is found without == (a NaN, an object
        # whose __eq__ says no)
        return any(space.is_identical(x, item) or space.compare(tx, "==", x, item).truth(tx) for x in self.unpack(tx))

    # ---- rebuilding the value after the graph ran
    def reconstruct(self, cg):
        """Push the real value after the graph ran (``cg``: codegen.rebuild.FrameCodegen).

        The one way values are rebuilt: a value from outside is read again from
        its source; a constant made in the trace is loaded as itself; trackers of
        other values made in the trace override this and build them."""
        if self.source is not None:
            cg.load_source(self.source)
            return
        if self.is_python_constant():
            constant = self.as_python_constant()
            if type(constant) not in (list, dict, set):
                cg.load_const(constant)
                return
        unsupported("graph_output", f"cannot rebuild {self}")

    def __repr__(self):
        return f"{type(self).__name__}()"


class CallableVariable(VariableTracker):
    """A tracker around one Python callable known at trace time (``self.fn``);
    subclasses say what calling it does."""

    def __init__(self, fn, **kwargs):
        super().__init__(**kwargs)
        self.fn = fn

    def python_type(self):
        return type(self.fn)

    def as_python_constant(self):
        return self.fn


METHOD_NAME_ATTRS = ("__name__", "__qualname__", "__doc__", "__module__")
# What a descriptor of each kind's __get__(instance) makes (``[].append``, ``[].__len__``)
_BOUND_TYPES = {types.MethodDescriptorType: types.BuiltinMethodType,
                types.WrapperDescriptorType: types.MethodWrapperType,
                types.FunctionType: types.MethodType}


def bound_method_type(cls, name) -> type:
    """``type(instance.name)`` for an instance of ``cls``, from the descriptor alone."""
    return _BOUND_TYPES.get(type(type_lookup(cls, name)[1]), types.BuiltinMethodType)


def bound_method_attr(cls, name, attr):
    """(True, ``instance.name.<attr>``) for one of METHOD_NAME_ATTRS, from the descriptor
    alone, or (False, None). A C method names the instance's type (``meth_get__qualname__``:
    ``Parameter.add``), a slot wrapper the type defining it, a Python function itself."""
    found, raw = type_lookup(cls, name)
    if isinstance(raw, types.MethodDescriptorType) and attr in ("__qualname__", "__module__"):
        return True, f"{cls.__qualname__}.{raw.__name__}" if attr == "__qualname__" else None
    if not found or not hasattr(raw, attr):
        return False, None
    return True, getattr(raw, attr)


def _constant(value):
    return space.ConstantVariable(value)


# The protocol slots a C type's wrapper descriptors stand for: (arity, what the tracker does)
_C_SLOTS = {
    "__iter__": (0, lambda var, tx: var.iter(tx)),
    "__len__": (0, lambda var, tx: _constant(var.length(tx))),
    "__contains__": (1, lambda var, tx, item: _constant(bool(var.contains(tx, item)))),
}


def _c_slot(kind, name) -> bool:
    """Does the C type ``kind`` (not a class statement's) give its instances ``name``?"""
    return isinstance(kind, type) and not kind.__flags__ & _HEAPTYPE and type_lookup(kind, name)[0]


class BoundMethodVariable(VariableTracker):
    """``obj.name`` for a method the tracker models in ``call_method``."""

    def __init__(self, obj, name, **kwargs):
        super().__init__(**kwargs)
        self.obj, self.name = obj, name

    def call(self, tx, args, kwargs):
        return self.obj.call_method(tx, self.name, args, kwargs)

    def python_type(self):
        return bound_method_type(self.obj.python_type(), self.name)

    def getattr(self, tx, name):
        """``__self__``, and the names of the method its type defines (``[].append.__qualname__``
        is ``'list.append'``: what ``unittest`` and error messages print)."""
        if name == "__self__":
            return self.obj
        if name in METHOD_NAME_ATTRS:
            found, value = bound_method_attr(self.obj.python_type(), self.name, name)
            if found:
                return _constant(value)
        return super().getattr(tx, name)

    def reconstruct(self, cg):
        cg(self.obj)
        cg.load_attr(self.name)

    def __repr__(self):
        return f"BoundMethodVariable({self.obj!r}.{self.name})"


_NONE_SLOTS = frozenset({"__hash__"})
_METHOD_TYPES = frozenset({list, tuple, dict, set, frozenset, str, bytes, range, slice,
                           collections.OrderedDict, collections.defaultdict, type(iter([])), enumerate,
                           zip, map, filter})


class NullVariable(VariableTracker):
    """The NULL that 3.11 pushes below a callable (PUSH_NULL, LOAD_GLOBAL with NULL)."""

    def __repr__(self):
        return "NULL"


NULL = NullVariable()
