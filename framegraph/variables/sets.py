"""Sets and frozensets, modelled by a real set of members.

A set's iteration order is its hash table's order, which depends on the
values' hashes and on the history of insertions and deletions (``{30, 1, 2}``
with 17 and 9 added iterates 1, 2, 9, 17, 30). Which of two equal elements
stays (``{1} | {1.0}`` keeps 1), what ``pop()`` removes and how each
operation walks its operands (``s.difference(a_list)`` copies then discards;
``s & t`` walks the smaller set) are CPython's too. So the tracker does not
re-implement any of it: it holds a real ``set`` of ``_Member`` objects, each
hashing and comparing like the value it stands for (the constant, or the
identity of a tracker: ``dicts.hash_key``) and carrying that value's tracker.
Every method and operator runs on that real set, and its order, its result
and the element it kept are CPython's own for constants.
"""
import operator

from ..bytecode import create_instruction
from ..errors import unsupported
from .base import VariableTracker
from .call_shapes import check_method_shape
from .constant import ConstantVariable, items_of
from .dicts import _IN_PLACE, ConstDictVariable, DictViewVariable, _key_error, hash_key
from .exceptions import raise_in_trace


class _Member:
    """One element: hashes and compares like ``hash_key(var)``; CPython's set
    compares identity first, so the same object (a NaN) is found."""

    __slots__ = ("key", "var")

    def __init__(self, var):
        self.key, self.var = hash_key(var), var

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Member) and (self.key is other.key or self.key == other.key)


# name -> does it mutate the set. The others return a new set, a bool, or an element.
_METHODS = {
    "union": False, "intersection": False, "difference": False, "symmetric_difference": False,
    "copy": False, "isdisjoint": False, "issubset": False, "issuperset": False,
    "update": True, "intersection_update": True, "difference_update": True,
    "symmetric_difference_update": True, "add": True, "discard": True, "remove": True,
    "pop": True, "clear": True,
}
_ELEMENT_ARG = ("add", "discard", "remove")
_PLAIN = {operator.ior: operator.or_, operator.iand: operator.and_, operator.isub: operator.sub,
          operator.ixor: operator.xor}


def _operand(tx, var):
    """The real object a set method is handed for argument ``var``: a set of members
    for a set, a dict or keys view for those (CPython walks each kind its own way),
    else a list of the iterable's members."""
    if isinstance(var, SetVariable):
        return var.members
    if isinstance(var, ConstDictVariable):
        return dict.fromkeys(_Member(k) for k in var.keys_vars())
    if isinstance(var, DictViewVariable) and var.kind == "keys":
        return dict.fromkeys(_Member(k) for k in var.unpack(tx)).keys()
    return [_Member(v) for v in items_of(tx, var)]


class SetVariable(VariableTracker):
    @property
    def replay_kind(self):
        return "set" if self.py_type is set else None  # a frozenset never mutates

    def __init__(self, items=(), *, py_type=set, members=None, **kwargs):
        super().__init__(**kwargs)
        self.py_type = py_type
        if members is None:  # BUILD_SET, set(iterable): added one by one, in order
            members = set()
            for item in items:
                members.add(_Member(item))
        self.members = members

    @property
    def items(self):
        """{hash key: tracker}, in iteration order."""
        return {m.key: m.var for m in self.members}

    def python_type(self):
        return self.py_type

    def as_python_constant(self):
        return self.py_type(m.var.as_python_constant() for m in self.members)

    def is_python_constant(self):
        return self.py_type is frozenset and super().is_python_constant()

    def unpack(self, tx=None):
        return [m.var for m in self.members]

    def copy_of(self, members):
        """A new set tracker of this one's kind (set or frozenset) holding ``members``."""
        return SetVariable(members=members, py_type=frozenset if issubclass(self.py_type, frozenset) else set)

    def contains(self, tx, item):
        return _Member(item) in self.members

    def length(self, tx):
        return len(self.members)

    def truth(self, tx):
        return bool(self.members)

    def binop(self, tx, fn, other, reflected):
        if not isinstance(other, SetVariable):
            return NotImplemented
        if fn in _IN_PLACE and (reflected or self.py_type is not set):
            fn = _PLAIN[fn]  # a frozenset's `|=` makes a new one
        a, b = (other, self) if reflected else (self, other)
        if fn in _IN_PLACE:  # `s |= t`: aliases see it
            self.check_mutable(f"set {fn.__name__}", tx)
        result = fn(a.members, b.members)
        if isinstance(result, bool):  # ==, !=, <, <=, >, >=: subset and equality tests
            return ConstantVariable(result)
        return self if result is self.members else a.copy_of(result)

    def call_method(self, tx, name, args, kwargs):
        check_method_shape(self.python_type(), name, args, kwargs)  # `s.add()`: CPython's TypeError
        if name == "__contains__" and len(args) == 1:
            return ConstantVariable(self.contains(tx, args[0]))
        if name == "__len__" and not args:
            return ConstantVariable(len(self.members))
        mutates = _METHODS.get(name)
        if mutates is None or kwargs or (mutates and issubclass(self.py_type, frozenset)):
            unsupported("unsupported_call", f"{self.py_type.__name__}.{name}")
        if name == "copy" and self.py_type is frozenset:
            return self  # CPython: a frozenset's copy is itself
        if mutates:
            self.check_mutable(f"set.{name}", tx)
        real = [_Member(a) for a in args] if name in _ELEMENT_ARG else [_operand(tx, a) for a in args]
        try:
            result = getattr(self.members, name)(*real)
        except KeyError:
            if name == "pop":
                raise_in_trace(KeyError, "pop from an empty set")
            _key_error(args[0])
        except TypeError as e:  # the wrong number of arguments
            raise_in_trace(TypeError, str(e))
        if isinstance(result, set):
            return self.copy_of(result)
        if isinstance(result, _Member):
            return result.var
        return ConstantVariable(result)

    def reconstruct(self, cg):
        if self.source is not None:
            return super().reconstruct(cg)
        frozen = self.py_type is frozenset
        if frozen:  # frozenset({...}): (NULL, frozenset, set) CALL 1
            cg.emit(create_instruction("PUSH_NULL"))
            cg.load_const(frozenset)
        for m in self.members:
            cg(m.var)
        cg.build(set, len(self.members))
        if frozen:
            cg.call(1)

    def __repr__(self):
        return f"SetVariable({[m.key for m in self.members]!r})"
