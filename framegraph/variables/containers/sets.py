"""Sets and frozensets, modelled by a real set of members.

A set's iteration order is its hash table's order, which depends on the
values' hashes and on the history of insertions and deletions (``{30, 1, 2}``
with 17 and 9 added iterates 1, 2, 9, 17, 30). Which of two equal elements
stays (``{1} | {1.0}`` keeps 1), what ``pop()`` removes and how each
operation walks its operands (``s.difference(a_list)`` copies then discards;
``s & t`` walks the smaller set) are CPython's too. So the tracker does not
re-implement any of it: it holds a real ``set`` of ``SetMember`` objects, each
hashing and comparing like the value it stands for (the constant, or the
identity of a tracker: ``dicts.hash_key``) and carrying that value's tracker.
Every method and operator runs on that real set, and its order, its result
and the element it kept are CPython's own for constants.

A constant stands for itself in that set (``_member``): a real set or
frozenset of constants is then an operand as it is, and ``set().update(F)``
(a set display of many constants: SET_UPDATE of a frozenset constant) copies
F's table as CPython does, instead of adding F's items one by one into a
table of another size, which iterates in another order. A set from outside,
and a set rebuilt after the graph, must iterate as the real one: ``same_table``
checks it, and the tracker refuses (a break) where it would not.
"""
import operator

from ...bytecode import create_instruction
from ...errors import unsupported
from ..core import space
from ..core.base import VariableTracker
from ..core.call_shapes import check_method_shape
from ..core.constant import ConstantVariable, is_constant_value, items_of, wrap_constant
from ..core.exceptions import raise_in_trace
from .dicts import ConstDictVariable, DictViewVariable, _IN_PLACE, _key_error, hash_key
from .traced_keys import check_rebuild


@space.register
class SetMember:
    """An element that is not a constant: hashes and compares like ``hash_key(var)``
    (its identity); CPython's set compares identity first, so the same object is found."""

    __slots__ = ("key", "var")

    def __init__(self, var, key=None):
        self.key, self.var = (hash_key(var) if key is None else key), var

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        # a constant may stand for itself next to one held by another kind of tracker
        # (a size that is an int, 1 and 1.0): they are one element, as in CPython
        key = other.key if type(other) is SetMember else other
        return self.key is key or self.key == key


def _member(var, tx=None):
    """What stands for tracker ``var`` in a real set: a scalar constant itself (a tuple's
    tracker is kept, for the identity of its items), else a SetMember."""
    key = hash_key(var, tx)
    return key if type(var) is ConstantVariable and _scalar(key) else SetMember(var, key)


def _frozen_retry(var):
    """``{1} in s``: a set is unhashable, and set_contains (discard, remove) retries the lookup
    with ``frozenset(key)``, which equals it and hashes; any other key is looked up as it is."""
    if isinstance(var, SetVariable) and issubclass(var.py_type, set):
        return SetVariable(members=set(var.members), py_type=frozenset)
    return var


SCALARS = (int, float, complex, str, bytes, bool, type(None))


def _scalar(value) -> bool:
    return type(value) in SCALARS


def _as_constant(operand):
    """A constant that a set's update methods walk as they walk the real ``operand`` (a set
    of members, a dict or keys view of them, or a list): a frozenset with its table, a dict
    with its keys in order (update() sizes the table for a dict at once), a tuple in the
    iteration order; None when its members are not all scalars or no frozenset made here
    has its table."""
    if not isinstance(operand, (set, frozenset, dict, list, type({}.keys()))):
        return None
    if not all(_scalar(m) for m in operand):
        return None
    if type(operand) is dict:
        return dict.fromkeys(operand)
    if not isinstance(operand, (set, frozenset)):
        return tuple(operand)
    return next((f for f in (frozenset(list(operand)), frozenset(operand)) if same_table(f, operand)), None)


def _var(member, trackers):
    """The tracker of a real set's element; a constant's is made once per set
    (``trackers``: id -> (element, tracker)), so iterators see the same trackers each time."""
    if type(member) is SetMember:
        return member.var
    held = trackers.get(id(member))
    if held is None or held[0] is not member:  # (the element is held too: its id stays its own)
        held = trackers[id(member)] = (member, wrap_constant(member))
    return held[1]


def same_table(mine, real) -> bool:
    """Do two sets iterate alike, from tables of one size? (What later inserts and
    removes find then is the same too, but for probe chains that wrap around.)"""
    return [_key(m) for m in mine] == list(real) and mine.__sizeof__() == real.__sizeof__()


def _key(member):
    return member.key if type(member) is SetMember else member


# name -> does it mutate the set. The others return a new set, a bool, or an element.
_METHODS = {
    "union": False, "intersection": False, "difference": False, "symmetric_difference": False,
    "copy": False, "isdisjoint": False, "issubset": False, "issuperset": False,
    "update": True, "intersection_update": True, "difference_update": True,
    "symmetric_difference_update": True, "add": True, "discard": True, "remove": True,
    "pop": True, "clear": True,
}
_ELEMENT_ARG = ("add", "discard", "remove")
_UPDATES = ("update", "intersection_update", "difference_update", "symmetric_difference_update")
# `s |= t` is set_update_internal as `s.update(t)` is, and so on for t a set
_UPDATES_IN_PLACE = dict(zip((operator.ior, operator.iand, operator.isub, operator.ixor), _UPDATES))
_PLAIN = {operator.ior: operator.or_, operator.iand: operator.and_, operator.isub: operator.sub,
          operator.ixor: operator.xor}


def _operand(tx, var):
    """The real object a set method is handed for argument ``var``: a set of members
    for a set, a dict or keys view for those (CPython walks each kind its own way),
    else a list of the iterable's members."""
    if isinstance(var, SetVariable):
        return var.members
    if type(var) is ConstantVariable and type(var.value) in (set, frozenset) and all(map(is_constant_value, var.value)):
        # of constants (a display's frozenset, tuples in it too): walked as CPython walks it;
        # set_merge copies its table, which inserting its items in iteration order may not rebuild
        return var.value
    if isinstance(var, ConstDictVariable) and var.python_type() is dict:  # walked by its entries' hashes
        return dict.fromkeys(_member(k, tx) for k in var.keys_vars())
    if isinstance(var, ConstDictVariable):  # a dict subclass is iterated, as any iterable
        return [_member(k, tx) for k in var.keys_vars()]
    if isinstance(var, DictViewVariable) and var.kind == "keys":
        return dict.fromkeys(_member(k, tx) for k in var.unpack(tx)).keys()
    return [_member(v, tx) for v in items_of(tx, var)]


@space.register
class SetVariable(VariableTracker):
    @property
    def replay_kind(self):
        return "set" if issubclass(self.py_type, set) else None  # a frozenset never mutates

    def __init__(self, items=(), *, py_type=set, members=None, tx=None, **kwargs):
        super().__init__(**kwargs)
        self.py_type = py_type
        # the element operations the table saw, as (method, member or None), since it was
        # empty (a set made in the trace) or since the trace read it (a set from outside,
        # `history` emptied by the builder); None once another kind of change came
        self.history = None
        if members is None:  # BUILD_SET, set(iterable): added one by one, in order
            members, self.history = set(), []
            for item in items:
                member = _member(item, tx)
                members.add(member)
                self.history.append(("add", member))
        self.members = members
        self._trackers = {}  # id of a constant element -> its tracker (var_of)
        # False when `members`' table need not be the real set's (a set from outside no
        # copy reproduces, and what is made from it): its order is then `outside_order`,
        # the real one's as read, until a change makes it unknown
        self.table_known = True
        self.outside_order = None

    @property
    def inserted(self):
        """The members in the order they were added, where adds (since a clear) are all the
        table saw: BUILD_SET in that order makes the same table; else None."""
        if self.history is None:
            return None
        start = max((i + 1 for i, (name, _) in enumerate(self.history) if name == "clear"), default=0)
        order, seen = [], set()
        for name, member in self.history[start:]:
            if name != "add":
                return None
            if member not in seen:  # a second add of an equal value leaves the first one
                seen.add(member)
                order.append(member)
        return order

    def var_of(self, member):
        """The tracker of one of ``members``."""
        return _var(member, self._trackers)

    @property
    def items(self):
        """{hash key: tracker}, in iteration order."""
        return {_key(m): self.var_of(m) for m in self.members}

    def python_type(self):
        return self.py_type

    def as_python_constant(self):
        return self.py_type(self.var_of(m).as_python_constant() for m in self.members)

    def is_python_constant(self):
        # a frozenset rebuilt from its items must iterate as this one: its table known
        return self.py_type is frozenset and self.table_known and super().is_python_constant()

    def unpack(self, tx=None):
        return [self.var_of(m) for m in self.ordered()]

    def ordered(self):
        """The members in the real set's iteration order."""
        if self.table_known:
            return list(self.members)
        if self.outside_order is None:
            unsupported("unsupported_value", "iterating a set whose real order the trace no longer knows "
                                             "(a set from outside, changed or combined)")
        by_key = {_key(m): m for m in self.members}
        return [by_key[k] for k in self.outside_order]

    def copy_of(self, members, *operands):
        """A new set tracker of this one's kind (set or frozenset) holding ``members``; its
        table is the real result's if every operand's was."""
        result = SetVariable(members=members, py_type=frozenset if issubclass(self.py_type, frozenset) else set)
        result.table_known = all(o.table_known for o in (self,) + operands if isinstance(o, SetVariable))
        return result

    def changed(self, *operands):
        """After an in-place change: is the table still the real one's?"""
        if not all(o.table_known for o in (self,) + operands if isinstance(o, SetVariable)):
            self.table_known, self.outside_order = False, None

    def _log(self, name, real, operand=None):
        """After ``name`` ran on the members: an element operation, or an update of one
        operand of constants (``operand``: a constant that acts as it did, or None), goes
        into ``history``, which replaying on the real set repeats exactly; any other
        change ends it."""
        if self.history is None:
            return
        if name in _ELEMENT_ARG:
            self.history.append((name, real[0]))
        elif name in ("pop", "clear"):  # pop takes what the real table holds first, as here
            self.history.append((name, None))
        elif name in _UPDATES and operand is not None:
            self.history.append((name, operand))
        else:
            self.history = None

    def replayed_ops(self):
        """``history`` as (method, tracker of its argument or None), for the replay."""
        return [(name, None if arg is None else ConstantVariable(arg) if name in _UPDATES else self.var_of(arg))
                for name, arg in self.history]

    def refill_kind(self):
        """How ``s.clear(); s.update(t)`` makes this set's table again: ``t`` a set (set_merge
        sizes the table for it at once) or a tuple (added one by one, growing as it goes), each
        in iteration order; None when neither does."""
        if self.table_known:
            for kind in (set, tuple):
                rebuilt = set()
                rebuilt.update(kind(list(self.members)))
                if same_table(rebuilt, self.members):
                    return kind
        return None

    def contains(self, tx, item):
        return _member(_frozen_retry(item), tx) in self.members

    def length(self, tx):
        return len(self.members)

    def truth(self, tx):
        return bool(self.members)

    def _init(self, tx, args):
        """``s.__init__(iterable)`` (set_init): cleared first, then updated, so that
        ``s.__init__(s)`` empties it and a bad argument leaves it empty."""
        if len(args) > 1:
            raise_in_trace(TypeError, f"{self.py_type.__name__} expected at most 1 argument, got {len(args)}")
        self.call_method(tx, "clear", [], {})
        if args:
            self.call_method(tx, "update", list(args), {})
        return ConstantVariable(None)

    def binop(self, tx, fn, other, reflected):
        if not isinstance(other, SetVariable):
            return NotImplemented
        if fn in _IN_PLACE and (reflected or not issubclass(self.py_type, set)):
            fn = _PLAIN[fn]  # a frozenset's `|=` makes a new one
        a, b = (other, self) if reflected else (self, other)
        operand = None
        if fn in _IN_PLACE:  # `s |= t`: aliases see it
            self.check_mutable(f"set {fn.__name__}", tx)
            operand = _as_constant(b.members)  # before the change: `s -= s`
        result = fn(a.members, b.members)
        if isinstance(result, bool):  # ==, !=, <, <=, >, >=: subset and equality tests
            return ConstantVariable(result)
        if result is self.members:
            self.changed(other)
            self._log(_UPDATES_IN_PLACE.get(fn, fn.__name__), [], operand)
            return self
        return a.copy_of(result, b)

    def call_method(self, tx, name, args, kwargs):
        check_method_shape(self.python_type(), name, args, kwargs)  # `s.add()`: CPython's TypeError
        if name == "__contains__" and len(args) == 1:
            return ConstantVariable(self.contains(tx, args[0]))
        if name == "__len__" and not args:
            return ConstantVariable(len(self.members))
        if name == "__init__" and issubclass(self.py_type, set) and not kwargs:
            return self._init(tx, args)
        mutates = _METHODS.get(name)
        if mutates is None or kwargs or (mutates and issubclass(self.py_type, frozenset)):
            unsupported("unsupported_call", f"{self.py_type.__name__}.{name}")
        if name == "copy" and self.py_type is frozenset:
            return self  # CPython: a frozenset's copy is itself
        if mutates:
            self.check_mutable(f"set.{name}", tx)
        if name == "pop" and not self.table_known:  # it takes the table's first element
            unsupported("unsupported_value", "set.pop() of a set whose real table the trace does not know")
        if name in ("discard", "remove"):  # set_discard_key/set_remove: a set key is retried frozen
            real = [_member(_frozen_retry(a), tx) for a in args]
        else:
            real = [_member(a, tx) for a in args] if name in _ELEMENT_ARG else [_operand(tx, a) for a in args]
        operand = _as_constant(real[0]) if name in _UPDATES and len(real) == 1 else None
        try:
            result = getattr(self.members, name)(*real)
        except KeyError:
            if name == "pop":
                raise_in_trace(KeyError, "pop from an empty set")
            _key_error(args[0])
        except TypeError as e:  # the wrong number of arguments
            raise_in_trace(TypeError, str(e))
        if mutates:
            self.changed(*args)
            self._log(name, real, operand)
        if isinstance(result, set):
            return self.copy_of(result, *args)
        if name == "pop":
            return self.var_of(result)
        return ConstantVariable(result)

    def check_rebuild(self):
        """Refuse when building the real set again would not hash and compare as the trace did."""
        check_rebuild(_key(m) for m in self.members)

    def reconstruct(self, cg):
        """BUILD_SET of the items (wrapped in frozenset() for a frozenset), in an order that
        makes this set's table again: its iteration order, or the order they were added in;
        for constants, else ``set(F)`` of a frozenset constant, whose table set_merge
        copies; else a break."""
        if self.source is not None:
            return super().reconstruct(cg)
        self.check_rebuild()
        frozen = self.py_type is not set  # frozenset(...), or a subclass's: (NULL, type, set) CALL 1
        order, table = self._rebuild_plan()
        if frozen:
            cg.emit(create_instruction("PUSH_NULL"))
            cg.load_const(self.py_type)
        if table is None:
            for m in order:
                cg(self.var_of(m))
            cg.build(set, len(order))
        else:
            cg.emit(create_instruction("PUSH_NULL"))
            cg.load_const(set)
            cg.load_const(table)
            cg.call(1)
        if frozen:
            cg.call(1)

    def _rebuild_plan(self, copied=True):
        """(the order BUILD_SET adds the members in, None), or (None, the frozenset whose
        copy makes this set's table). ``copied``: a frozenset is made as a copy of the set
        built (``frozenset({...})``), not by adding the members to it one by one."""
        if not self.table_known:
            unsupported("graph_output", "a set made from one whose real table the trace does not know")
        iteration = list(self.members)
        if any(type(m) is SetMember for m in self.members):
            return iteration, None  # objects made anew after the graph hash by new identities anyway
        wrap = self.py_type if self.py_type is not set and copied else (lambda t: t)
        for order in (iteration, self.inserted):
            if order is not None and same_table(wrap(set(order)), self.members):
                return order, None
        table = frozenset(self.members)
        if same_table(wrap(set(table)), self.members):
            return None, table
        unsupported("graph_output", "a set of constants whose rebuild would iterate in another order")

    def __repr__(self):
        return f"SetVariable({[_key(m) for m in self.members]!r})"
