"""Reading many values under one object at once: parameters, submodules, attributes.

A module's guard and its replacement code read every parameter through a
chain such as ``L['self']._modules['0']._parameters['weight']``: five
bytecodes a parameter, each call, in both places; a Hugging Face model's
guard also reads hundreds of decorator closure cells
(``type(...).forward.__closure__[1].cell_contents``). A ``_C.SourceReader``
reads all the chains under one root in C and, while nothing it went through
changed (dict version tags, class version tags, the identity of function
fields and cell contents), returns the values of its last walk without
walking (see ``_C/source_reader.c``). Semantics are those of the chains it
replaces: reads the C side cannot prove cacheable (properties,
``__getattr__``, a list index) are made the ordinary way, every call.

``reader_root(source)`` is the object a source is read from by
attribute/str-key steps; ``group(sources)`` gathers sources worth a reader,
by root; ``Reader`` builds the C program for one root. Guard functions read
guarded values through readers (skips.py); codegen passes parameters to the
graph from one.
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import _C
from .sources import AttrSource, DictItemSource, GenericAttrSource, GetItemSource, Source, TypeSource

ATTR, ITEM, TYPE, INDEX, GENERIC_ATTR, DICT_ITEM = range(6)  # step kinds, as in source_reader.c
MIN_LEAVES = 3  # below this the reader's own call costs about what it saves


def step_of(source: Source) -> Optional[Tuple[int, Any]]:
    """(kind, name or key) when ``source`` is one reader step above its base, else None."""
    kind = type(source)
    if kind is AttrSource:
        return ATTR, source.member
    if kind is GenericAttrSource:
        return GENERIC_ATTR, source.member
    if kind is TypeSource:
        return TYPE, None
    if kind is GetItemSource and type(source.index) is str:
        return ITEM, source.index
    if kind is GetItemSource and type(source.index) is int:
        return INDEX, source.index
    if kind is DictItemSource and type(source.index) is str:
        return DICT_ITEM, source.index
    return None


def reader_root(source: Source) -> Optional[Source]:
    """The root a reader reads ``source`` from by steps (attribute, key, index,
    ``type()``): the first source below that is none of them (a local, a global, a
    closure variable), with the tuple items right above it (``L['args'][0]``). None
    when ``source`` is not such a read.

    The C reader records nothing for a tuple item (a tuple never changes), so
    it must only index tuples that a checked record holds: one right above the
    root would not be compared with the tuple passed in, and a new ``*args``
    tuple would be read as the old one, freed by then. Asked of each source many
    times by a guard build, so kept on the source, and found from its base's (a
    model's sources share long bases)."""
    cached = source.__dict__.get("_reader_root", _UNSET)
    if cached is _UNSET:
        step = step_of(source)
        if step is None:
            cached = None
        else:
            cached = reader_root(source.base)
            if cached is None:  # the base is a root: an index right above it joins the root
                cached = None if step[0] == INDEX else source.base
        object.__setattr__(source, "_reader_root", cached)
    return cached


_UNSET = object()


def group(sources: Sequence[Source], min_leaves: int = MIN_LEAVES) -> Dict[Source, List[Source]]:
    """root -> the sources (in the given order, no duplicates) read under it, for
    roots with at least ``min_leaves`` of them."""
    by_root: Dict[Source, Dict[Source, None]] = {}
    for source in sources:
        root = reader_root(source)
        if root is not None:
            by_root.setdefault(root, {})[source] = None
    return {root: list(leaves) for root, leaves in by_root.items() if len(leaves) >= min_leaves}


def plan_inputs(sources: Sequence[Source]) -> Tuple[List[int], List[Source], List["Reader"]]:
    """How the replacement code passes graph inputs read from ``sources``:
    (new order as indices into ``sources``, sources read directly, readers).
    The graph's placeholders are put in the new order: direct ones first,
    then each reader's values."""
    groups = group(sources)
    in_reader = {s for leaves in groups.values() for s in leaves}
    direct = [i for i, s in enumerate(sources) if s not in in_reader]
    readers = [Reader(root, leaves) for root, leaves in groups.items()]
    position = {s: i for i, s in enumerate(sources)}
    order = direct + [position[s] for r in readers for s in r.leaves]
    return order, [sources[i] for i in direct], readers


class Reader:
    """A ``_C.SourceReader`` for ``leaves`` (all under ``root``): ``reader.c(root_value)``
    returns the values of the first ``nhot`` as a tuple, in order;
    ``reader.c.all(root_value)`` all of them."""

    def __init__(self, root: Source, leaves: List[Source], nhot: Optional[int] = None, watched=None):
        self.root, self.leaves = root, list(leaves)
        self.nhot = len(self.leaves) if nhot is None else nhot
        # leaves whose checks are skipped while unchanged (None: all): only a new
        # object there counts as a walk
        self.watched = None if watched is None else [i for i, s in enumerate(self.leaves) if s in watched]
        nodes: Dict[Source, int] = {root: 0}
        steps: List[list] = []

        def node(source: Source) -> int:
            found = nodes.get(source)
            if found is None:
                parent = node(source.base)
                kind, name = step_of(source)
                steps.append([parent, kind, name, -1])
                found = nodes[source] = len(steps)
            return found

        for i, leaf in enumerate(self.leaves):
            steps[node(leaf) - 1][3] = i
        self.steps = [tuple(s) for s in steps]  # the C program: (parent, step kind, name or key, leaf index)
        self.c = _C.SourceReader(self.steps, len(self.leaves), self.nhot, self.watched)
