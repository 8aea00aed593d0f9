"""Dicts and sets whose keys are trace-time constants (or trackers, by identity).

``ConstDictVariable`` keeps an insertion-ordered Python dict from a hashable
key (the constant value, or the identity of a non-constant key tracker) to a
``(key tracker, value tracker)`` pair, so ``d['a']``, ``d.items()``,
``**kwargs`` and ``dict(...)`` behave like CPython's dict. ``SetVariable``
(sets.py) holds a real set of its members. Dicts and sets created during the trace are mutated
in place; mutating ones from outside the frame records them in the side-effect
ledger (``side_effects.py``), which replays their final contents after the graph.
"""
import collections
import operator
import types

import torch

from ... import pyver
from ...bytecode import create_instruction
from ...errors import unsupported
from ...side_effects import relink_odict
from ..core import space
from ..core.base import VariableTracker
from ..core.call_shapes import STAND_INS, builtin_base, check_method_shape, fits
from ..core.constant import ConstantVariable
from ..core.exceptions import ExceptionVariable, TracedException, python_operation
from ..core.ops import _dicts_equal
from ..core.reprs import container_repr, repr_stand_in, user_repr
from .lists import TupleVariable
from .traced_keys import check_rebuild, note_operation, runs_python_hash_and_eq, traced_key


# The mappings whose | and update() dict_merge.py models.
MERGEABLE = (dict, collections.OrderedDict, collections.defaultdict)


def hash_key(key: VariableTracker, tx=None):
    """The Python dict key that stands for tracker ``key`` in one dict operation; given the
    operation's ``tx``, a key hashed by Python code is hashed in the trace (traced_keys.py)."""
    if tx is not None:
        note_operation(tx)
    if key.is_python_constant():
        value = key.as_python_constant()
        if not plain_key(value):  # an int subclass with its own __hash__: each lookup runs it
            unsupported("unsupported_value", f"a dict or set key of type {type(value).__name__}, hashed "
                                             "or compared by Python code")
        try:
            hash(value)
        except TypeError:
            unsupported("operator_error", f"unhashable key {value!r}")
        return value
    plain = getattr(key, "key_value", lambda: None)()
    if plain is not None:  # an int or str subclass hashing and comparing as its value (value_subclass.py)
        return plain
    cls = key.python_type()
    if cls in STAND_INS and getattr(cls, "__hash__", None) is None:
        with python_operation("hash()"):  # a list key: "unhashable type: 'list'"
            hash(STAND_INS[cls]())
    if tx is not None and runs_python_hash_and_eq(key):
        return traced_key(tx, key)
    if getattr(cls, "__eq__", None) is not object.__eq__ and not issubclass(cls, torch.Tensor) \
            or getattr(cls, "__hash__", None) is None:
        # equal keys that are different objects (a class defining __eq__, a tuple of
        # trackers): the lookup would run __hash__ and __eq__, which identity does not model.
        # Tensors hash by id, so their __eq__ is never asked.
        unsupported("unsupported_value", f"a dict or set key of type {cls.__name__}, compared by its __eq__")
    if runs_python_hash(cls):
        # each lookup runs it (its side effects, a hash that changes: test_ordered_dict's
        # randrange key), which hashing by identity does not model
        unsupported("unsupported_value", f"a dict or set key of type {cls.__name__}, hashed by its __hash__")
    return IdentityKey(key)


# Modules whose Python __hash__ methods are pure functions of the object's identity
# and fixed fields (Enum hashes its name).
_PURE_HASH_MODULES = frozenset({"enum"})


def plain_key(value) -> bool:
    """Whether hashing and comparing ``value`` as a dict or set key runs no Python code
    (``class HashCountingInt(int)`` counts its hashes: the tracer must not add any)."""
    cls = type(value)
    eq = getattr(cls, "__eq__", None)
    return not runs_python_hash(cls) and not (isinstance(eq, types.FunctionType)
                                              and eq.__module__ not in _PURE_HASH_MODULES)


def runs_python_hash(cls) -> bool:
    """Does hashing an instance of ``cls`` run a Python ``__hash__`` (not Tensor's ``id``)?"""
    own_hash = getattr(cls, "__hash__", None)
    return isinstance(own_hash, types.FunctionType) and own_hash.__module__ not in _PURE_HASH_MODULES \
        and not issubclass(cls, torch.Tensor)


def _key_error(key: VariableTracker):
    """``KeyError(key)``, raised in the trace: what a dict lookup of a missing key raises.

    A handler in the traced code (``Mapping.get``'s ``except KeyError``) catches
    it; uncaught it ends the trace with the ``exception`` break and the frame
    raises it for real. The keys are guarded (DICT_KEYS, DICT_CONTAINS), so the
    key is missing on every call that passes the guards."""
    raise TracedException(ExceptionVariable(KeyError, [key]))


@space.register
class IdentityKey:
    """Hashes a non-constant key (a tensor, a module) by tracker identity."""

    __slots__ = ("var",)

    def __init__(self, var):
        self.var = getattr(var, "identity", var)

    def __hash__(self):
        return id(self.var)

    def __eq__(self, other):
        return isinstance(other, IdentityKey) and other.var is self.var


@space.register
class ConstDictVariable(VariableTracker):
    replay_kind = "dict"

    def __init__(self, pairs, *, py_type=dict, default_factory=None, tx=None, **kwargs):
        super().__init__(**kwargs)
        self.items = {}
        for k, v in pairs:  # a repeated key keeps its first object, the last value ({1: 'a', True: 'b'})
            h = hash_key(k, tx)
            first = self.items.get(h)
            self.items[h] = (first[0] if first is not None else k, v)
        # an OrderedDict's od_state: counts each key added or removed (its iterators check it)
        self.od_state = 0
        # an OrderedDict's table (what dict's own keys() iterates) in its order, once move_to_end
        # (which relinks only the order list) may have made it differ: {hashed key: None}
        self.table = None
        self.py_type = py_type
        self.default_factory = default_factory  # a defaultdict made in the trace

    @classmethod
    def copied(cls, other, tx, **kwargs):
        """A new dict of ``other``'s items, their stored hashes reused (dict_copy hashes nothing;
        keys of equal hash may still be compared, in ``tx``, as dict_merge inserts them)."""
        note_operation(tx)
        made = cls([], **kwargs)
        made.items = dict(other.items)
        return made

    @classmethod
    def from_kwargs(cls, kwargs):
        return cls([(ConstantVariable(k), v) for k, v in kwargs.items()])

    def python_type(self):
        return self.py_type

    def as_plain_dict(self):
        """{constant key: value tracker}: used for **kwargs and graph arguments."""
        return {k: v for k, (_, v) in self.items.items()}

    def keys_vars(self):
        return [k for k, _ in self.items.values()]

    def unpack(self, tx):
        return self.keys_vars()

    def length(self, tx):
        return len(self.items)

    def truth(self, tx):
        return bool(self.items)

    def contains(self, tx, item):
        return hash_key(item, tx) in self.items

    def iter(self, tx):
        return self.odict_iterator() or super().iter(tx)

    table_from_outside = None  # the keys of a moved table the builder read from the real OrderedDict

    def check_mutable(self, what, tx=None):
        """An OrderedDict from outside is replayed as its table and its order list after the
        graph, both as the trace left them: from a table in the order the trace saw, guarded."""
        if not self.mutable and tx is not None and issubclass(self.py_type, collections.OrderedDict):
            self.guard_table(tx)
        super().check_mutable(what, tx)

    @property
    def table_order_moved(self):
        """An OrderedDict whose table holds its keys in another order than its order list."""
        return self.table is not None and list(self.table) != list(self.items)

    def table_view(self, tx, kind):
        """``dict.keys(d)`` (``values``, ``items``) on a dict subclass that overrides them (an
        OrderedDict): dict's own view, which iterates the table. That is the order list's order
        unless move_to_end moved a key, in the trace (``self.table``) or before it (then the
        table the builder read, guarded for later calls)."""
        if self.source is not None:
            self.guard_table(tx)
        return DictViewVariable(self, kind, table=True)

    def guard_table(self, tx):
        """The table of an OrderedDict from outside holds its keys as when the trace read it."""
        if self.table_from_outside is not None:
            tx.output.add_guard("ODICT_TABLE_KEYS", self.source, self.table_from_outside)
        else:
            tx.output.add_guard("ODICT_TABLE_ORDER", self.source)

    def table_pairs(self):
        """The (key, value) pairs in the table's order (dict's own iteration)."""
        if self.table is None:
            return list(self.items.values())
        return [self.items[h] for h in self.table]

    def odict_iterator(self, reverse=False):
        """An OrderedDict's own iterator (it checks od_state), or None for other dicts."""
        return space.odict_iterator(self, self, "keys", reverse)

    def getitem(self, tx, key):
        try:
            return self.items[hash_key(key, tx)][1]
        except KeyError:
            if self.py_type is collections.defaultdict:
                if self.source is not None and not key.is_python_constant():
                    # an object key into a defaultdict from outside: optimizer.state's first
                    # step creates the state, left to CPython (it runs once)
                    unsupported("missing_dict_key", f"{key} in a defaultdict")
                return self.missing(tx, key)
            missing = getattr(self, "missing_key", None)  # a subclass's __missing__ (Counter's)
            if missing is not None:
                return missing(tx, key)
            _key_error(key)

    def missing(self, tx, key):
        """A defaultdict's ``__missing__(key)`` (defdict_missing): ``factory()`` stored under
        the key and returned; without a factory, dict's KeyError."""
        if self.default_factory is None:  # its factory not known to the trace
            unsupported("missing_dict_key", f"{key} in a defaultdict")
        if _is_none(self.default_factory):
            _key_error(key)
        value = self.default_factory.call(tx, [], {})
        self.setitem(tx, key, value)
        return value

    def setitem(self, tx, key, value):
        h = hash_key(key, tx)
        pair = self.items.get(h)
        if pair is not None and pair[1] is value and self.py_type in (dict, collections.OrderedDict):
            return  # `d[k] = d[k]`: no change, nothing to replay (an optimizer storing its buffers back)
        self.check_mutable("dict item assignment", tx)
        if pair is not None:
            self.check_dropped([pair[1]], "dict item assignment")
        # an existing key keeps its first object, as in CPython (`d[1.0] = x` with 1 in d)
        self.items[h] = (pair[0] if pair is not None else key, value)
        self.od_state += pair is None
        if pair is None:
            table_added(self, h)

    def delitem(self, tx, key):
        h = hash_key(key, tx)
        pair = self.items.get(h)
        if pair is None:
            _key_error(key)
        self.check_mutable("del dict item", tx)
        self.check_dropped(list(pair), "del dict item")
        self.items.pop(h)
        self.od_state += 1
        table_removed(self, h)

    def getattr(self, tx, name):
        """A defaultdict's ``default_factory``; the rest of dict's attributes are its methods."""
        if name == "default_factory" and self.py_type is collections.defaultdict \
                and self.default_factory is not None:
            return self.default_factory
        return super().getattr(tx, name)

    def setattr(self, tx, name, value):
        """``d.default_factory = list`` on a defaultdict made in the trace (a plain member)."""
        if name == "default_factory" and self.py_type is collections.defaultdict and self.source is None:
            self.default_factory = value
            return
        super().setattr(tx, name, value)

    def repr(self, tx):
        """``repr(d)``: the real type's tp_repr run on stand-ins whose reprs are the items'
        traced reprs, so that its format is this CPython's (OrderedDict's changed in 3.12);
        a dict that contains itself shows ``{...}`` (``...`` in an OrderedDict)."""
        base = self.py_type
        if base not in (dict, collections.OrderedDict, collections.defaultdict):
            traced = user_repr(tx, self)  # a subclass's Python __repr__
            if traced is not None:
                return traced
            # else its base's C repr (which names the subclass), when that is the first in the MRO
            base = next(klass for klass in self.py_type.__mro__ if "__repr__" in vars(klass))
            if base not in (dict, collections.OrderedDict, collections.defaultdict):
                unsupported("unsupported_value", f"repr() of a {self.py_type.__name__}")

        def parts(item_repr):
            pairs = [(repr_stand_in(item_repr(k)), repr_stand_in(item_repr(v))) for k, v in self.items.values()]
            if base is collections.defaultdict:
                factory = self.default_factory
                if factory is None:
                    unsupported("unsupported_value", "repr() of a defaultdict whose factory is not known")
                factory = None if _is_none(factory) else repr_stand_in(item_repr(factory))
                text = repr(collections.defaultdict(factory, pairs))
            else:
                text = repr(base(pairs))
            if base is not dict and self.py_type is not base:  # _PyType_Name(Py_TYPE(self)) in odict_repr
                text = self.py_type.__name__ + text[len(base.__name__):]
            return [text]

        fill = "..." if base is collections.OrderedDict else "{...}"
        return container_repr(tx, self, parts, fill, lambda text: text)

    def str(self, tx):
        """``str(d)``: object's tp_str, which is the repr (a subclass may define its own)."""
        owner = next(klass for klass in self.py_type.__mro__ if "__str__" in vars(klass))
        if owner is not object:  # a subclass's own __str__
            unsupported("unsupported_value", f"str() of a {self.py_type.__name__}")
        return self.repr(tx)

    def binop(self, tx, fn, other, reflected):
        """``d | e`` (dict_or, odict_or, defdict_or: a new mapping) and ``d |= e`` (dict_ior:
        ``update()`` in place from any mapping or iterable of pairs; what update() refuses,
        |= refuses)."""
        if fn in (operator.eq, operator.ne) and isinstance(other, ConstDictVariable):
            # dict_richcompare (a subclass whose own __eq__ gave NotImplemented ends here: Counter == dict)
            same = _dicts_equal(tx, self, other)
            return ConstantVariable(same if fn is operator.eq else not same)
        if fn is operator.ior and not reflected and self.py_type in MERGEABLE:
            self.call_method(tx, "update", [other], {})
            return self
        if fn not in (operator.or_, operator.ior) or not isinstance(other, ConstDictVariable) \
                or builtin_base(other.py_type) not in MERGEABLE \
                or builtin_base(self.py_type) not in MERGEABLE or fn is operator.ior and not reflected:
            return NotImplemented  # (|= of a subclass: its own update rules, not modelled)
        return space.dict_or(tx, *((other, self) if reflected else (self, other)))  # (dict_merge.py)

    def call_method(self, tx, name, args, kwargs):
        if name == "__missing__" and self.py_type is collections.defaultdict and len(args) == 1 and not kwargs:
            return self.missing(tx, args[0])  # called directly: stores the value as a lookup does
        method = _DICT_METHODS.get(name)
        check_method_shape(self.py_type, name, args, kwargs)  # `d.get()`: CPython's TypeError
        if method is None or not fits(method, 2, args, kwargs):
            unsupported("unsupported_call", f"dict.{name}" + ("" if method is None else " with these arguments"))
        if name in _MUTATING:
            self.check_mutable(f"dict.{name}", tx)
        result = method(self, tx, *args, **kwargs)
        return ConstantVariable(None) if result is None else result

    def check_rebuild(self):
        """Refuse when building the real dict again would not hash and compare as the trace did."""
        check_rebuild(self.items)

    def reconstruct(self, cg):
        if self.source is not None:
            return super().reconstruct(cg)
        self.check_rebuild()
        if self.py_type not in (dict, collections.OrderedDict, collections.defaultdict) or (
                self.py_type is collections.defaultdict and self.default_factory is None):
            unsupported("graph_output", f"rebuilding a {self.py_type.__name__}")
        if self.table_order_moved:  # both orders, as move_to_end left them
            cg.call_const(rebuild_relinked_odict, [ConstDictVariable(self.table_pairs()),
                                                   TupleVariable(self.keys_vars())])
            return
        if self.py_type is not dict:  # OrderedDict({...}), defaultdict(factory, {...})
            cg.emit(create_instruction("PUSH_NULL"))
            cg.load_const(self.py_type)
            if self.py_type is collections.defaultdict:
                cg(self.default_factory)
        for k, v in self.items.values():
            cg(k)
            cg(v)
        cg.build(dict, len(self.items))
        if self.py_type is not dict:
            cg.call(2 if self.py_type is collections.defaultdict else 1)

    def __repr__(self):
        return f"ConstDictVariable({list(self.items)!r})"


def table_added(d, h):
    """A new key ``h`` went into ``d``: dict's insertion appends it to the table."""
    if d.table is not None:
        d.table[h] = None


def table_removed(d, h):
    if d.table is not None:
        d.table.pop(h, None)


def rebuild_relinked_odict(table, keys):
    """An OrderedDict whose table holds ``table``'s items in their order and whose order
    list is ``keys``: what move_to_end in the trace left."""
    return relink_odict(collections.OrderedDict(table), keys)


def _is_none(value) -> bool:
    return value.is_python_constant() and value.as_python_constant() is None


def _get(d, tx, key, default=None):
    pair = d.items.get(hash_key(key, tx))
    return pair[1] if pair else (default or ConstantVariable(None))


def _pop(d, tx, key, default=None):
    h = hash_key(key, tx)
    pair = d.items.pop(h, None)
    if pair is None and default is None:
        _key_error(key)
    d.od_state += pair is not None
    table_removed(d, h)
    return pair[1] if pair else default


def _setdefault(d, tx, key, default=None):
    default = default or ConstantVariable(None)
    h = hash_key(key, tx)
    if h not in d.items:
        d.od_state += 1
        table_added(d, h)
    return d.items.setdefault(h, (key, default))[1]


def _popitem(d, tx, last=None):
    """``popitem()``: the last item (LIFO); an OrderedDict's ``last=False`` pops the first."""
    if not d.items:
        with python_operation(f"{d.py_type.__name__}.popitem"):  # its own KeyError ('dictionary is empty')
            STAND_INS[builtin_base(d.py_type)]().popitem()
    if d.source is not None and d.py_type is dict:
        # on an instance's (split) dict CPython's popitem combines the table, which
        # sys.getsizeof shows; the replay (clear, then update) would leave it split
        unsupported("side_effect", f"{d.py_type.__name__}.popitem on a dict from outside the frame")
    if last is not None and not issubclass(d.py_type, collections.OrderedDict):
        unsupported("operator_error", "dict.popitem() takes no arguments")
    d.od_state += 1
    h = next(reversed(d.items)) if last is None or last.as_python_constant() else next(iter(d.items))
    table_removed(d, h)
    return TupleVariable(list(d.items.pop(h)))


def _move_to_end(d, tx, key, last=None):
    """``OrderedDict.move_to_end(key, last=True)``: the items dict is reordered the
    same way, so iteration, ``values()`` and the rebuilt object keep the order."""
    if not issubclass(d.py_type, collections.OrderedDict):
        unsupported("operator_error", f"'{d.py_type.__name__}' object has no attribute 'move_to_end'")
    k = hash_key(key, tx)
    if k not in d.items:
        _key_error(key)
    to_end = last is None or last.as_python_constant()
    if next(reversed(d.items) if to_end else iter(d.items)) == k:
        return  # already there: CPython leaves the order, and od_state, as they are
    if d.table is None:  # odict_move_to_end relinks the node; the table keeps its slot
        d.table = dict.fromkeys(d.items)
    pair = d.items.pop(k)
    d.od_state += 1
    if to_end:
        d.items[k] = pair
    else:
        d.items = {k: pair, **d.items}


def _clear(d):
    d.od_state += bool(d.items) and pyver.ODICT_CLEAR_BUMPS_STATE  # odict_clear resets the state
    d.items.clear()
    d.table = None


_MUTATING = {"update", "pop", "setdefault", "clear", "popitem", "__setitem__", "__delitem__", "move_to_end",
             "__ior__"}
_DICT_METHODS = {
    "keys": lambda d, tx: DictViewVariable(d, "keys"),
    "values": lambda d, tx: DictViewVariable(d, "values"),
    "items": lambda d, tx: DictViewVariable(d, "items"),
    "get": _get,
    "pop": _pop,
    "setdefault": _setdefault,
    "clear": lambda d, tx: _clear(d),
    "copy": lambda d, tx: ConstDictVariable.copied(d, tx, py_type=d.py_type,
                                            default_factory=d.default_factory),  # defdict_copy keeps it
    "__getitem__": lambda d, tx, k: d.getitem(tx, k),
    "__setitem__": lambda d, tx, k, v: d.setitem(tx, k, v),
    "__delitem__": lambda d, tx, k: d.delitem(tx, k),
    "__contains__": lambda d, tx, k: ConstantVariable(d.contains(tx, k)),
    "__len__": lambda d, tx: ConstantVariable(d.length(tx)),
    "popitem": _popitem,
    "move_to_end": _move_to_end,
    # `a.__or__(None)` is NotImplemented, `a.__ior__("BAD")` the ValueError of update()
    "__or__": lambda d, tx, other: _slot_result(d.binop(tx, operator.or_, other, False)),
    "__ror__": lambda d, tx, other: _slot_result(d.binop(tx, operator.or_, other, True)),
    "__ior__": lambda d, tx, other: _slot_result(d.binop(tx, operator.ior, other, False)),
}


def _slot_result(result):
    return ConstantVariable(NotImplemented) if result is NotImplemented else result


_IN_PLACE = {operator.ior, operator.iand, operator.isub, operator.ixor}
_MISSING = object()


_VIEW_TYPES = {"keys": type({}.keys()), "values": type({}.values()), "items": type({}.items())}
# an OrderedDict's own views are odict_keys, ... (subclasses of dict's, odictobject.c)
_ODICT_VIEW_TYPES = {kind: type(getattr(collections.OrderedDict(), kind)()) for kind in _VIEW_TYPES}


@space.register
class DictViewVariable(VariableTracker):
    """``d.keys()``, ``d.values()``, ``d.items()``: live views of a dict tracker.
    Keys and items views are set-like (``d.keys() - {"a"}``, ``== {"a"}``)."""

    def __init__(self, dict_var, kind, table=False, **kwargs):
        super().__init__(**kwargs)
        self.dict_var, self.kind = dict_var, kind
        # `dict.keys(od)`: dict's own view of an OrderedDict, iterating its table, not its order
        # list (``ConstDictVariable.table_view``)
        self.table = table

    def python_type(self):
        if not self.table and issubclass(self.dict_var.python_type(), collections.OrderedDict):
            return _ODICT_VIEW_TYPES[self.kind]
        return _VIEW_TYPES[self.kind]

    @property
    def mutable(self):
        return False

    def unpack(self, tx=None):
        pairs = self.dict_var.table_pairs() if self.table else list(self.dict_var.items.values())
        if self.kind == "keys":
            return [k for k, _ in pairs]
        if self.kind == "values":
            return [v for _, v in pairs]
        return [TupleVariable([k, v]) for k, v in pairs]

    def length(self, tx):
        return len(self.dict_var.items)

    def truth(self, tx):
        return bool(self.dict_var.items)

    def repr(self, tx):
        """``dict_keys(['a'])``: the view's type name around the repr of its items as a list."""
        ordered = not self.table and issubclass(self.dict_var.python_type(), collections.OrderedDict)
        name = type(getattr(collections.OrderedDict() if ordered else {}, self.kind)()).__name__
        return container_repr(tx, self, lambda item_repr: [item_repr(v) for v in self.unpack(tx)], "...",
                              lambda inner: f"{name}([{inner}])")

    def contains(self, tx, item):
        if self.kind == "keys":
            return self.dict_var.contains(tx, item)
        return super().contains(tx, item)

    def iter(self, tx):
        return self.odict_iterator() or super().iter(tx)

    def odict_iterator(self, reverse=False):
        """An OrderedDict view's own iterator (it checks od_state), or None for other dicts
        and for dict's own view of an OrderedDict (a dict iterator over the table)."""
        if self.table:
            return None
        return space.odict_iterator(self, self.dict_var, self.kind, reverse)

    def getattr(self, tx, name):
        if name == "mapping":  # a new read-only proxy of the view's dict (dictview_mapping)
            return space.MappingProxyVariable(self.dict_var)
        return super().getattr(tx, name)

    def as_set(self) -> "SetVariable":
        if self.kind == "values":
            unsupported("operator_error", "dict values are not set-like")
        return space.SetVariable(self.unpack())

    def binop(self, tx, fn, other, reflected):
        if fn in _IN_PLACE or not isinstance(other, (space.SetVariable, DictViewVariable)):
            return NotImplemented
        other = other.as_set() if isinstance(other, DictViewVariable) else other
        return self.as_set().binop(tx, fn, other, reflected)

    def reconstruct(self, cg):  # (NULL, d.keys) CALL 0; dict's own view: (NULL, dict.keys, d) CALL 1
        cg.emit(create_instruction("PUSH_NULL"))
        if self.table:
            cg.load_const(getattr(dict, self.kind))
            cg(self.dict_var)
            cg.call(1)
            return
        cg(self.dict_var)
        cg.load_attr(self.kind)
        cg.call(0)

    def __repr__(self):
        return f"DictViewVariable({self.kind})"

