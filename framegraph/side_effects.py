"""Side effects: mutations of objects from outside the frame, replayed after the graph.

A graph is a pure function of tensors. When traced code mutates something that
existed before the frame started (``lst.append(y)``, ``d[k] = v``,
``obj.attr = v``, ``global n; n = ...``, ``nonlocal c; c = ...``), the tracker
of that object changes at trace time, so later reads in the trace see the
change, and the object goes into this ledger. Nothing real is mutated while
tracing: a trace that fails, or raises under ``fullgraph=True``, has changed
nothing, and a trace restarted at a graph break starts a fresh ledger.

After the graph runs, the generated code replays the ledger once, in the order
the objects were first mutated, on the real objects:

    list      ->  obj[:] = [final items]
    dict, set ->  obj.clear(); obj.update(final contents)
    dict_items -> obj[key] = value      for every item written (a dict keyed by objects,
                                        read one key at a time: containers/object_dicts.py)
    object    ->  obj.attr = value      for every attribute written (``del obj.attr``
                                        for one deleted)
    class     ->  type.__setattr__(cls, name, value), type.__delattr__(cls, name)
                  (the overlay of variables/class_attrs.py, in the order written)
    global    ->  STORE_GLOBAL name     (``module_globals[name] = value`` elsewhere)
    cell      ->  STORE_DEREF name      (``fn.__closure__[i].cell_contents = value``)

Replaying final states, as torch.compile does, is exact for every object's
final state and needs no replay model per method (``pop``, ``sort``,
``insert`` all end as one slice assignment).

Every value a replay writes, and every mutated object itself, is stored in a
temporary *before* any replay runs (``prepare``): values read through sources
such as ``L['lst'][0]`` mean the state before the frame's mutations.
"""
import collections
import dataclasses
from typing import Any, Dict, List, Optional

from .errors import unsupported
from .guards.sources import AttrSource, ClosureCellSource, ClosureSource


class _Deleted:
    """What a class attribute deleted in the trace holds in its overlay (``del Cls.z``)."""

    def __repr__(self):
        return "DELETED"


DELETED = _Deleted()


@dataclasses.dataclass(eq=False)
class Mutation:
    """One ledger entry: ``kind`` says how it is replayed."""

    kind: str                # "list", "dict", "set", "object", "global", "cell", "class"
    target: Any              # the tracker; the globals dict; the CellVariable
    name: str = ""           # global name
    location: Any = None     # cell: where its contents were read from (a Source)
    temps: Any = None        # filled by prepare(): the materialized values
    attrs: Any = None        # class: {name: tracker or DELETED}, the trace's writes


class SideEffects:
    """The ledger of one trace (``output.side_effects``)."""

    def __init__(self, root_globals: dict):
        self.root_globals = root_globals
        self.entries: List[Mutation] = []
        self._keys: Dict[Any, Mutation] = {}
        self._globals: Dict[Any, Any] = {}  # (id(globals dict), name) -> value tracker
        self.mutations = 0  # every recorded mutation, repeats included (generators check it)
        self.local_mutations = 0  # in-place changes of objects made in the trace (autograd_function.py)
        self.tensor_writes = 0  # ops recorded that write to a tensor (or to global state)
        # id(class) -> (class, {name: tracker or DELETED}): attribute writes to classes,
        # read back by the rest of the trace (variables/class_attrs.py)
        self.class_attrs: Dict[int, Any] = {}

    def __len__(self):
        return len(self.entries)

    def _add(self, key, mutation: Mutation) -> Mutation:
        if key not in self._keys:
            self._keys[key] = mutation
            self.entries.append(mutation)
        return self._keys[key]

    # ---- recording
    def impure_op(self, draws_random: bool):
        """An op that dead code elimination keeps was recorded: one that writes to a tensor
        (or to global state: it may change a tensor's metadata, tracer/memo.py), or draws."""
        self.local_mutations += 1  # an in-place tensor op (autograd_function.py checks)
        self.tensor_writes += not draws_random

    def track_object(self, var, what: str):
        self.mutations += 1
        kind = var.replay_kind
        if kind is None:
            unsupported("side_effect", f"{what} on {var.source.name()}")
        self._add(("object", id(var)), Mutation(kind, var))

    def track_class(self, class_var, writes: dict):
        """A class from outside the frame gets attribute writes (``writes``, filled by the caller)."""
        self.mutations += 1
        self._add(("class", id(class_var.cls)), Mutation("class", class_var, attrs=writes))

    def store_global(self, f_globals: dict, name: str, value):
        self.mutations += 1
        self._globals[(id(f_globals), name)] = value
        self._add(("global", id(f_globals), name), Mutation("global", f_globals, name))

    def written_global(self, f_globals: dict, name: str):
        return self._globals.get((id(f_globals), name))

    def store_cell(self, output, cell, value):
        self.mutations += 1
        entry = self._keys.get(("cell", id(cell))) or self._cell_holding(cell.contents)
        if entry is None:
            location = _contents_source(cell)
            if not isinstance(location, ClosureSource) and not _is_cell_contents(location):
                unsupported("side_effect", "assigning to a closure variable that was empty "
                            "or cannot be re-read")
            entry = self._add(("cell", id(cell)), Mutation("cell", cell, location=location))
        # Other trackers of the same cell (an inlined function's closure is
        # wrapped again on each call) re-read it through this source.
        output.by_source[entry.location] = value
        self._keys[("cell", id(cell))] = entry
        entry.target = cell

    def _cell_holding(self, contents):
        """The entry of a cell whose stored value a fresh tracker of it holds."""
        return next((m for m in self.entries if m.kind == "cell" and m.target.contents is contents), None)

    # ---- code generation (cg is a tracer.rebuild.FrameCodegen)
    def prepare(self, cg):
        """Store every mutated object and every value to write in temporaries."""
        for m in self.entries:
            m.temps = _PREPARE[m.kind](self, cg, m)

    def replay(self, cg):
        """Emit the writes, in ledger order (after ``prepare``)."""
        for m in self.entries:
            _REPLAY[m.kind](self, cg, m)


def _contents_source(cell):
    """Where the contents of a cell from outside are re-read (and written back)."""
    where = cell.cell_source
    if isinstance(where, ClosureCellSource):  # a free variable of the traced frame
        return ClosureSource(where.var_name, where.index)
    if where is not None:  # also when the cell is empty: writing fills it
        return AttrSource(where, "cell_contents")
    return getattr(cell.contents, "source", None)


def _is_cell_contents(source) -> bool:
    return isinstance(source, AttrSource) and source.member == "cell_contents"


# ---- prepare: kind -> fn(ledger, cg, mutation) -> temporaries
def _prepare_list(se, cg, m):
    return cg.materialize(m.target), cg.materialize_items(m.target.items, list)


def _prepare_dict(se, cg, m):
    d = m.target
    d.check_rebuild()  # the update() below hashes and compares the keys again
    if not d.table_order_moved:
        pairs = [x for pair in d.items.values() for x in pair]
        return cg.materialize(d), cg.materialize_items(pairs, dict), None
    # an OrderedDict that move_to_end reordered: update() in its table's order, then relinked
    pairs = [x for pair in d.table_pairs() for x in pair]
    return cg.materialize(d), cg.materialize_items(pairs, dict), cg.materialize_items(d.keys_vars(), tuple)


_LONG_HISTORY = 64  # more operations than this are replayed as one refill, where that is exact


def _prepare_set(se, cg, m):
    """The set, and either the element operations the trace did to it, each with its
    argument (replayed in order they leave the real table as eager's), or its contents."""
    s = m.target
    s.check_rebuild()
    kind = s.refill_kind() if s.history is None or len(s.history) > _LONG_HISTORY else None
    if s.history is not None and kind is None:
        return cg.materialize(s), [(name, None if arg is None else cg.materialize(arg))
                                   for name, arg in s.replayed_ops()]
    if kind is None:
        unsupported("graph_output", "a changed set whose table clear() and update() would not rebuild")
    return cg.materialize(s), cg.materialize_items(list(s.items.values()), kind)


def _prepare_object(se, cg, m):
    return cg.materialize(m.target), {name: v if v is DELETED else cg.materialize(v)
                                      for name, v in m.target.attrs.items()}


def _prepare_class(se, cg, m):
    return cg.materialize(m.target), {name: v if v is DELETED else cg.materialize(v) for name, v in m.attrs.items()}


def _prepare_dict_items(se, cg, m):
    return cg.materialize(m.target), [(cg.materialize(k), cg.materialize(v)) for k, v, _ in m.target.writes.values()]


def _prepare_global(se, cg, m):
    return cg.materialize(se.written_global(m.target, m.name))


def _prepare_cell(se, cg, m):
    return cg.materialize(m.target.contents)


# ---- replay: kind -> fn(ledger, cg, mutation)
def _replay_list(se, cg, m):
    obj, items = m.temps
    cg.load_fast(items)
    cg.load_fast(obj)
    cg.load_const(None)
    cg.load_const(None)
    cg.emit_op("BUILD_SLICE", arg=2)  # [:] (slices are not hashable constants in 3.11)
    cg.emit_op("STORE_SUBSCR")


def _replay_clear_update(se, cg, m):
    obj, contents = m.temps[:2]
    cg.call_method_of(obj, "clear", [])
    cg.call_method_of(obj, "update", [contents])


def _replay_set(se, cg, m):
    obj, ops = m.temps
    if isinstance(ops, str):
        return _replay_clear_update(se, cg, m)
    for name, arg in ops:
        cg.call_method_of(obj, name, [] if arg is None else [arg])


def relink_odict(od, keys):
    """Relink ``od``'s order list to ``keys`` (all of its keys) and leave its table as it is
    (what move_to_end does); ``od`` back."""
    for key in keys:
        collections.OrderedDict.move_to_end(od, key)
    return od


def _replay_dict(se, cg, m):
    _replay_clear_update(se, cg, m)
    obj, _, order = m.temps
    if order is not None:
        cg.emit_op("PUSH_NULL")
        cg.load_const(relink_odict)
        cg.load_fast(obj)
        cg.load_fast(order)
        cg.call(2)
        cg.emit_op("POP_TOP")


def _replay_object(se, cg, m):
    obj, values = m.temps
    raw = getattr(m.target, "overrides_setattr", False)  # nn.Module: through nn.Module.__setattr__
    for name, value in values.items():
        if value is DELETED:  # DELETE_ATTR: the class's own __delattr__ is object's (deleting.py)
            cg.load_fast(obj)
            cg.emit_op("DELETE_ATTR", argval=name)
            continue
        cg.load_fast(value)
        cg.store_attr_of(obj, name, raw)


def _replay_class(se, cg, m):
    cls, values = m.temps
    for name, value in values.items():  # type's own store: a metaclass __setattr__ ran in the trace
        cg.emit_op("PUSH_NULL")
        cg.load_const(type.__delattr__ if value is DELETED else type.__setattr__)
        cg.load_fast(cls)
        cg.load_const(name)
        if value is not DELETED:
            cg.load_fast(value)
        cg.call(2 if value is DELETED else 3)
        cg.emit_op("POP_TOP")


def _replay_dict_items(se, cg, m):
    obj, items = m.temps
    for key, value in items:  # STORE_SUBSCR: TOS1[TOS] = TOS2
        cg.load_fast(value)
        cg.load_fast(obj)
        cg.load_fast(key)
        cg.emit_op("STORE_SUBSCR")


def _replay_global(se, cg, m):
    cg.load_fast(m.temps)
    if m.target is se.root_globals:
        cg.emit_op("STORE_GLOBAL", argval=m.name)
        return
    cg.load_const(m.target)  # another module's globals dict (an inlined function's)
    cg.load_const(m.name)
    cg.emit_op("STORE_SUBSCR")


def _replay_cell(se, cg, m):
    cg.load_fast(m.temps)
    if isinstance(m.location, ClosureSource):  # a free variable of the traced frame itself
        cg.emit_op("STORE_DEREF", argval=m.location.var_name)
        return
    m.location.base.reconstruct(cg)  # the cell object: fn.__closure__[i]
    cg.emit_op("STORE_ATTR", argval="cell_contents")


_PREPARE = {"list": _prepare_list, "dict": _prepare_dict, "set": _prepare_set,
            "object": _prepare_object, "global": _prepare_global, "cell": _prepare_cell,
            "class": _prepare_class, "dict_items": _prepare_dict_items}
_REPLAY = {"list": _replay_list, "dict": _replay_dict, "set": _replay_set,
           "object": _replay_object, "global": _replay_global, "cell": _replay_cell,
           "class": _replay_class, "dict_items": _replay_dict_items}


# ---- the hooks trackers and handlers call while tracing
def ledger(tx) -> Optional[SideEffects]:
    """The side-effect ledger of the trace ``tx`` belongs to (None outside one)."""
    return getattr(getattr(tx, "output", None), "side_effects", None)


def record_mutation(tx, var, what: str):
    """``var`` (from outside the frame) is about to be mutated in place."""
    se = ledger(tx)
    if se is None:
        unsupported("side_effect", f"{what} on {var.source.name()}")
    se.track_object(var, what)


def store_global(tx, name: str, value):
    se = ledger(tx)
    if se is None:
        unsupported("side_effect", f"assigning the global {name!r}")
    se.store_global(tx.f_globals, name, value)


def written_global(tx, name: str):
    """The tracker last assigned to global ``name`` in this trace, or None."""
    se = ledger(tx)
    return se.written_global(tx.f_globals, name) if se is not None else None


def store_cell(tx, cell, value):
    se = ledger(tx)
    if se is None:
        unsupported("side_effect", "assigning to a closure variable of an outer function")
    se.store_cell(tx.output, cell, value)
