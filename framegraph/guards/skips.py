"""Checks skipped while nothing they read changed.

Two kinds of group, each rendered as one part of the check function:

* ``_VersionGroup``: identity/constant checks of items of one dict (module
  globals), behind the dict's PEP 509 version tag.
* ``_ReaderCall`` / ``_ReaderGroup``: the values under one root (a module's
  parameters, submodules, closure cells) read by one ``_C.SourceReader``
  call, and their identity/constant checks, run only when the reader saw a
  change (reader.py).

Neither drops a fact: a skipped check is one whose inputs are provably the
objects it passed on before. Which guards may join a group, their kind's
record says (``GuardKind.versioned``, ``same_object``); each group is an
expression node (expr.py) that writes itself, members after an ``or``.
"""
import itertools
import operator
from typing import Dict, List, Optional

from .. import _C
from .expr import Leaf, Node, Plain, Py, Read, Render
from .kinds import KINDS, Guard, plain_constant, plain_tuple
from .reader import Reader, group, reader_root
from .sources import GLOBALS, GetItemSource, GlobalSource, Source, parts_of


# ---- dict-version groups: many item checks of one dict, skipped while it is unchanged
MIN_GROUP = 2  # below this a version check costs as much as the checks it skips
MIN_RUN = 4  # checks of one kind compared as one tuple (or one map), from this many
NEVER = -1  # a group's state cell before its members first pass (no version or walk count is negative)


def _versioned_dict(g: Guard):
    """(True, source of the dict) when ``g`` only checks one item (or key) of a dict
    by identity or immutable value, so an unchanged dict version implies ``g``;
    the source is None for the frame's globals. (False, None) otherwise."""
    kind = KINDS[g.kind]
    if kind.versioned == "dict":
        return True, g.source
    if kind.versioned != "item" or not kind.same_object(g):
        return False, None
    if isinstance(g.source, GlobalSource):
        return True, None
    if isinstance(g.source, GetItemSource) and type(g.source.index) is str:
        return True, g.source.base
    return False, None


class _VersionGroup(Node):
    """Checks of items of one dict, behind a check of the dict's version tag.

    CPython 3.11 gives every dict a version (``ma_version_tag``, PEP 509) from
    a global counter, renewed by every change to the dict: an equal version
    means the same dict with the same key -> value identities. The group runs
    its member checks (the slow path) until they pass once, then remembers the
    version it read *before* running them; later calls that find the same
    version skip the members. A dict that changes (a module global rebound, a
    submodule replaced) gets a version never seen before, so the members run
    again and decide. ``_C.dict_version`` is None for anything but an exact
    dict (a subclass may override ``__getitem__``), which never matches.
    """

    def __init__(self, base: Optional[Source], members: List[Guard]):
        self.base, self.members = base, members
        keys = [g for g in members if g.kind == "DICT_CONTAINS"] if base is not None else []
        if len(keys) < MIN_RUN:
            keys = []
        self.checks = [KINDS[g.kind].check(g, self._value(g)) for g in members if g not in keys]
        if keys:
            self.checks.append(_KeyRun(base, keys))
        self.seen = [NEVER]  # the version the members last passed on

    def cells(self):
        return [self.seen]

    def _value(self, g: Guard) -> Node:
        """What member ``g`` checks: the dict itself, a global, or an item of the dict
        (read from the dict as the header bound it)."""
        if KINDS[g.kind].versioned == "dict":
            return Py(GLOBALS) if self.base is None else Read(self.base)
        if isinstance(g.source, GlobalSource):
            return Plain(g.source)
        return Py(Read(self.base), f"[{g.source.index!r}]")

    def counted(self):
        return [self.base] if self.base is not None else []

    def render(self, r: Render) -> str:
        header = GLOBALS if self.base is None else r.read(self.base, bind=True)
        checks = r.skippable(lambda: " and ".join(c.render(r) for c in self.checks))
        seen = r.consts(self.seen)
        version = f"{seen}_v"
        return (f"({seen}[0] == ({version} := {r.consts(_C.dict_version)}({header})) or "
                f"({checks} and ({version} is None or {seen}.__setitem__(0, {version}) is None)))")


class _KeyRun(Node):
    """Many DICT_CONTAINS checks of one dict as two, ``key in d`` for each key in C
    (``operator.contains(d, key)``: the type's ``__contains__``, as ``in`` asks it): none of
    the absent keys, all of the present ones. A transformers config is checked not to hold
    dozens of names, and ``compile()`` costs about 8 us a comparison."""

    def __init__(self, base: Source, members: List[Guard]):
        self.base = base
        self.absent = tuple(g.value[0] for g in members if not g.value[1])
        self.present = tuple(g.value[0] for g in members if g.value[1])

    def render(self, r: Render) -> str:
        each = f"map({r.consts(operator.contains)}, {r.consts(itertools.repeat)}({r.read(self.base)}), "
        parts = ([f"not any({each}{r.consts(self.absent)}))"] if self.absent else []) + \
                ([f"all({each}{r.consts(self.present)}))"] if self.present else [])
        return "(" + " and ".join(parts) + ")"


# ---- source readers: the values under one root read in C, walk skipped while unchanged
class _ReaderCall(Node):
    """``(___rK := reader(root))``: binds the values a SourceReader (reader.py)
    returns on every call; ``all_name`` (``___aK``) is bound to all its values only
    where its group's checks run."""

    def __init__(self, reader: Reader, k: int):
        self.reader, self.k = reader, k
        self.name, self.all_name = f"___r{k}", f"___a{k}"

    def counted(self):
        return [self.reader.root]

    def render(self, r: Render) -> str:
        return f"({self.name} := {r.consts(self.reader.c)}({r.read(self.reader.root)})) is not None"


class _ReaderGroup(Node):
    """Identity and immutable-constant checks of values a reader returns, skipped
    while the reader has not walked since they last passed: an unchanged walk
    means the same objects (``SourceReader.walks`` counts walks). Values only
    these checks read are not returned by the reader's call (fewer objects
    touched each call) but by ``reader.all(root)``, here."""

    def __init__(self, call: _ReaderCall, members: List[Guard]):
        self.call, self.members = call, members
        self.checks = _identity_runs(call, members)
        self.seen = [NEVER]  # the walk count the members last passed on
        self.reads_all = call.reader.nhot < len(call.reader.leaves)

    def cells(self):
        return [self.seen]

    def counted(self):
        return [self.call.reader.root] if self.reads_all else []

    def render(self, r: Render) -> str:
        reader = self.call.reader
        checks = r.skippable(lambda: [c.render(r) for c in self.checks])
        if self.reads_all:
            checks.insert(0, r.skippable(
                lambda: f"({self.call.all_name} := {r.consts(reader.c)}.all({r.read(reader.root)})) is not None"))
        seen, walks = r.consts(self.seen), f"{r.consts(reader.c)}.walks"
        return f"({seen}[0] == {walks} or ({' and '.join(checks)} and {seen}.__setitem__(0, {walks}) is None))"


def _values_of(call: _ReaderCall, last: int) -> str:
    """The name bound to a reader call's values up to index ``last``: what the call
    returned (``___rK``) while they are all hot, else all of them (``___aK``)."""
    return call.name if last < call.reader.nhot else call.all_name


class _IdentityRun(Node):
    """``tuple(map(id, ___aK[i:j])) == (id_i, ...)``: the identity checks of values
    ``i`` to ``j`` of one reader call as one comparison. A module's parameters and
    submodules sit next to each other in a reader's values; compiled one by one,
    their thousands of ``id(...) == N`` were most of a large model's guard source
    (``compile()`` costs about 8 us a comparison). The ids are literals of the code,
    like a single check's, so the trace cache rebinds them the same way."""

    def __init__(self, call: _ReaderCall, start: int, ids: List[int]):
        self.call, self.start, self.ids = call, start, ids

    def render(self, r: Render) -> str:
        call, end = self.call, self.start + len(self.ids)
        name = _values_of(call, end - 1)
        return f"tuple(map(id, {name}[{self.start}:{end}])) == {tuple(self.ids)!r}"


class _ValueRun(Node):
    """The constant checks of many values of one reader call as two comparisons: their
    types, each by identity (``all(map(operator.is_, map(type, vs), types))``), then their
    values as one tuple. Only constants whose check is ``type(x) is T and x == v``
    (``kinds.plain_constant``) join, and flat tuples of them (``kinds.plain_tuple``), whose
    items' types are compared in between, all of them in one sequence: so the tuple's
    ``==`` is the builtin types' own. A model's flags, sizes and names (``is False``,
    ``== 3``, ``== 'zeros'``, ``== (1, 1)``) were a third of its guard source."""

    def __init__(self, call: _ReaderCall, indices: List[int], values: List):
        self.getter, self.name = operator.itemgetter(*indices), _values_of(call, max(indices))
        self.types, self.values = tuple(map(type, values)), tuple(values)
        self.tuples = [i for i, v in zip(indices, values) if type(v) is tuple]
        self.item_types = tuple(type(item) for v in values if type(v) is tuple for item in v)

    def _items(self, r: Render) -> str:
        """The tuples' items as one sequence, from objects the trace cache stores (by name, by value)."""
        if len(self.tuples) == 1:
            return f"{self.name}[{self.tuples[0]}]"
        tuples = f"{r.consts(operator.itemgetter(*self.tuples))}({self.name})"
        return f"{r.consts(itertools.chain)}.from_iterable({tuples})"

    def render(self, r: Render) -> str:
        got = f"{r.consts(self.getter)}({self.name})"
        items = "" if not self.tuples else \
            f"and tuple(map(type, {self._items(r)})) == {r.consts(self.item_types)} "
        return (f"(all(map({r.consts(operator.is_)}, map(type, {got}), {r.consts(self.types)})) "
                f"{items}and {got} == {r.consts(self.values)})")


class _SameRun(Node):
    """IS_SAME checks of pairs of one reader call's values as one: ``all(map(operator.is_,
    firsts, seconds))`` (a model's tied or shared modules, the config every layer holds)."""

    def __init__(self, call: _ReaderCall, pairs: List[tuple]):
        self.firsts, self.seconds = (operator.itemgetter(*side) for side in zip(*pairs))
        self.name = _values_of(call, max(map(max, pairs)))

    def render(self, r: Render) -> str:
        name = self.name
        return f"all(map({r.consts(operator.is_)}, {r.consts(self.firsts)}({name}), {r.consts(self.seconds)}({name})))"


def _identity_runs(call: _ReaderCall, members: List[Guard]) -> List[Node]:
    """The members' checks in order, runs of identity checks of consecutive values
    (all returned by the call, or all by ``all()``) joined into one ``_IdentityRun``;
    the plain constant checks into one ``_ValueRun`` and the IS_SAME checks into one
    ``_SameRun``, each where its first member stood."""
    index = {s: i for i, s in enumerate(call.reader.leaves)}
    nhot = call.reader.nhot
    checks: List[Node] = []
    run: List[Guard] = []
    values = [g for g in members if g.kind == "CONSTANT_MATCH" and g.source in index
              and (plain_constant(g.value) or plain_tuple(g.value))]
    values = values if len(values) >= MIN_RUN else []
    same = [g for g in members if g.kind == "IS_SAME" and g.source in index and g.value in index]
    same = same if len(same) >= MIN_RUN else []
    joined = {id(g): None for g in values + same}  # checked by a run, which stands where its first member did
    if values:
        joined[id(values[0])] = _ValueRun(call, [index[g.source] for g in values], [g.value for g in values])
    if same:
        joined[id(same[0])] = _SameRun(call, [(index[g.source], index[g.value]) for g in same])

    def flush():
        if len(run) >= MIN_RUN:
            checks.append(_IdentityRun(call, index[run[0].source], [g.value[0] for g in run]))
        else:
            checks.extend(KINDS[g.kind].check(g, Read(g.source)) for g in run)
        run.clear()

    for g in members:
        i = index.get(g.source) if g.kind == "ID_MATCH" else None
        if run and (i is None or i != index[run[-1].source] + 1 or i == nhot):
            flush()
        if id(g) in joined:
            if joined[id(g)] is not None:
                checks.append(joined[id(g)])
        elif i is None:
            checks.append(KINDS[g.kind].check(g, Read(g.source)))
        else:
            run.append(g)
    flush()
    return checks


def reader_calls(guards: List[Guard], batched):
    """The reader calls of the guards, the ``Leaf`` of each value they return, and
    the reader group of each guard that needs checking only after a walk.

    A guarded source that is a chain of reads (reader.reader_root) is read by
    its root's reader; one that is not (``dict.get(state, p)``, ``len(x)``)
    through its nearest ancestor that is. Values some check reads every call
    are "hot" and come first (batched tensors first, in batch order, so the
    tensor check can take them as ``*___rK``); the rest are only read by the
    reader's group."""
    def readable(source):
        while source is not None and reader_root(source) is None:
            source = getattr(source, "base", None)
        return source

    first, rest = [], []  # the batched tensors' sources (in batch order), then the rest
    for g in guards:
        for read in KINDS[g.kind].reads(g):
            source = readable(read)
            if source is not None:
                (first if g in batched and source == read else rest).append(source)
    by_root = group(first + rest)
    owner = {s: root for root, sources in by_root.items() for s in sources}

    def skippable(g):
        """Checks the same objects pass again, all of whose reads are values of one reader (by
        identity: ``owner`` holds ``group``'s one object per root, ``readable`` its argument)."""
        reads = KINDS[g.kind].reads(g)
        root = owner.get(g.source)
        return (root is not None and KINDS[g.kind].same_object(g)
                and all(owner.get(s) is root and readable(s) is s for s in reads))

    members = {g for g in guards if skippable(g)}
    hot = set()
    for g in guards:
        if g not in members:
            hot.update(readable(r) for r in KINDS[g.kind].reads(g))
    for root in by_root:
        hot.update(part for part in _parts(root) if part in owner)
    members_of: Dict[Source, List[Guard]] = {}  # in the guards' order (one pass: roots x guards was a tenth)
    for g in guards:
        if g in members:
            members_of.setdefault(owner[g.source], []).append(g)
    calls, leaves, by_call = [], {}, {}
    for k, root in enumerate(_roots_in_order(by_root, owner)):
        sources = by_root[root]
        ordered = [s for s in sources if s in hot] + [s for s in sources if s not in hot]
        nhot = sum(1 for s in sources if s in hot)
        watched = {r for g in members_of.get(root, ()) for r in KINDS[g.kind].reads(g)}
        call = _ReaderCall(Reader(root, ordered, nhot, watched), k)
        calls.append(call)
        by_call[root] = call
        leaves.update((s, Leaf(call, i)) for i, s in enumerate(ordered))
    groups: Dict[Guard, _ReaderGroup] = {}
    for root, call in by_call.items():
        mine = members_of.get(root)
        if mine:
            grp = _ReaderGroup(call, mine)
            groups.update((g, grp) for g in mine)
    return calls, leaves, groups


def _roots_in_order(groups, owner) -> List[Source]:
    """Reader roots, each after the readers whose values its root is read from
    (``dict.get(___r0[1], ...)``)."""
    done: Dict[Source, None] = {}

    visiting = set()

    def visit(root):
        if root in done or root in visiting:  # a cycle cannot occur: a root is below its own leaves
            return
        visiting.add(root)
        for part in _parts(root):
            if part in owner and owner[part] != root:
                visit(owner[part])
        done[root] = None

    for root in groups:
        visit(root)
    return list(done)


def _parts(source) -> List[Source]:
    """Every source ``source`` is read from (bases, and the key of a DictGetSource)."""
    out = []
    for part in parts_of(source):
        out.append(part)
        out.extend(_parts(part))
    return out


def version_groups(guards: List[Guard]) -> Dict[Guard, _VersionGroup]:
    """Guard -> its group, for dicts with at least MIN_GROUP versioned checks."""
    if getattr(_C, "dict_version", None) is None:
        return {}
    by_dict: Dict[Optional[Source], List[Guard]] = {}
    for g in guards:
        ok, base = _versioned_dict(g)
        if ok:
            by_dict.setdefault(base, []).append(g)
    groups = {}
    for base, members in by_dict.items():
        if len(members) >= MIN_GROUP:
            group = _VersionGroup(base, members)
            groups.update((g, group) for g in members)
    return groups
