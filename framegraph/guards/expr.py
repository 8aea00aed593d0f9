"""Guard checks as data: Python expressions whose reads and constants are objects.

A guard kind (kinds.py) builds its check as a ``Py``: Python text interleaved
with nodes, ``Py("type(", Read(source), ") is ", Const(cls))``. Nothing in a
check is a placeholder to fill in later or text to search: a read of a
guarded value is a ``Read`` of its Source, a constant is a ``Const`` holding
the object, and the groups of skips.py and the tensor batch of compile.py are
nodes of their own. compile.py renders the whole guard function once, at the
end, through one ``Render``, which decides for every read how it is written:

* a value a SourceReader call returned: ``___r0[2]`` (a ``Leaf``);
* a source read before and bound with a walrus: ``___t0``;
* otherwise the source's own expression, its base read the same way, bound
  (``(___t0 := ___G['m']._modules)``) when two or more parts read it.

Parts are rendered in the order they run (joined by ``and``; a group's
members sit after an ``or`` and may not run), so a name is always bound
before it is read, and a member that may be skipped binds nothing.
"""
import builtins
import dataclasses
import itertools
import math
from collections import Counter
from typing import Any, Dict, Iterable, Iterator

from .sources import Source


class Node:
    """A piece of a guard function: ``render(r)`` writes it; ``reads()`` are the
    ``Read``s in it; ``counted()`` the sources it evaluates every time it runs
    (for the shared-prefix count: each once per part)."""

    def render(self, r: "Render") -> str:
        raise NotImplementedError

    def reads(self) -> Iterator[Source]:
        return iter(())

    def counted(self) -> Iterable[Source]:
        return dict.fromkeys(self.reads())

    def cells(self) -> list:
        """The mutable state cells it keeps between calls (a group's last version)."""
        return []


class Py(Node):
    """Python text and nodes, written one after the other."""

    __slots__ = ("parts",)

    def __init__(self, *parts):
        self.parts = parts

    def render(self, r):
        return "".join(p if type(p) is str else p.render(r) for p in self.parts)

    def reads(self):
        for p in self.parts:
            if type(p) is not str:
                yield from p.reads()


def joined(parts, sep: str) -> list:
    """The parts with ``sep`` between them, to hand to ``Py``."""
    out = []
    for i, part in enumerate(parts):
        out += [sep, part] if i else [part]
    return out


def all_of(parts) -> Py:
    """``(a and b and ...)``."""
    return Py("(", *joined(parts, " and "), ")")


@dataclasses.dataclass(frozen=True)
class Read(Node):
    """The value at ``source``, as the guard function reads it (see ``Render.read``)."""

    source: Source

    def render(self, r):
        return r.read(self.source)

    def reads(self):
        yield self.source


@dataclasses.dataclass(frozen=True)
class Plain(Node):
    """The value at ``source`` read by its own expression, never through a binding."""

    source: Source

    def render(self, r):
        return self.source.expr()


# The builtins as they were at import: a guard calls type(), len() and id() even
# while the program has replaced one (``builtins.len = lru_cache(4)(len)``).
_BUILTINS = dict(builtins.__dict__)


class Consts:
    """Names for the non-literal constants a guard function refers to: ``namespace``
    is the function's globals."""

    def __init__(self):
        self.namespace: Dict[str, Any] = {"__builtins__": _BUILTINS}
        self._by_id: Dict[int, str] = {}
        self._count = itertools.count()

    def __call__(self, value) -> str:
        literal = type(value) in (bool, int, str, bytes, type(None))
        if literal or type(value) is float and math.isfinite(value):
            return repr(value)
        key = id(value)
        if key not in self._by_id:
            name = f"___c{next(self._count)}"
            self.namespace[name] = value
            self._by_id[key] = name
        return self._by_id[key]


class Const(Node):
    """An object the check compares with: a literal, or a name in the function's globals."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def render(self, r):
        return r.consts(self.value)


class _Rendered(Source):
    """A base already written (a name bound earlier), to write a source over it."""

    def __init__(self, text: str):
        self.text = text

    def expr(self) -> str:
        return self.text


class Render:
    """Writes the parts of one guard function, in the order they run.

    ``leaves`` are the values reader calls return (source -> ``Leaf``);
    ``counted`` every source the parts evaluate, each once per part: one that
    two or more reads go through (``L['self']._modules`` is under every
    submodule and parameter) is bound at its first read and reused by name.
    A source read twice by one part is bound at its first read too.
    """

    def __init__(self, consts, leaves: Dict[Source, "Node"], counted: Iterable[Source]):
        self.consts = consts
        self._names: Dict[Source, str] = {s: leaf.render(self) for s, leaf in leaves.items()}
        self._count = itertools.count()
        self._uses: Dict[Source, int] = {}
        for source in counted:
            while isinstance(source, Source):
                self._uses[source] = self._uses.get(source, 0) + 1
                source = getattr(source, "base", None)
        self._again: frozenset = frozenset()
        self._skippable = 0

    def part(self, node: Node) -> str:
        """One part of the ``and`` chain."""
        self._again = frozenset(s for s, n in Counter(node.reads()).items() if n > 1)
        return node.render(self)

    def skippable(self, render) -> str:
        """``render()`` for members that may be skipped: their reads bind nothing."""
        self._skippable += 1
        try:
            return render()
        finally:
            self._skippable -= 1

    def read(self, source: Source, bind: bool = False) -> str:
        """An expression reading ``source``, binding it (or reusing its binding);
        ``bind``: bind it even if no other part reads it (this part reads it again)."""
        name = self._names.get(source)
        if name is not None:
            return name
        base = getattr(source, "base", None)
        if isinstance(base, Source) and dataclasses.is_dataclass(source):
            text = dataclasses.replace(source, base=_Rendered(self.read(base))).expr()
        else:
            text = source.expr()
        bind = bind or source in self._again or self._uses.get(source, 0) >= 2
        if text.isidentifier() or not bind or self._skippable:
            return text
        name = self._names[source] = f"___t{next(self._count)}"
        return f"({name} := {text})"


class Leaf(Node):
    """Value ``index`` of what reader call ``call`` (skips._ReaderCall) returns."""

    __slots__ = ("call", "index")

    def __init__(self, call, index: int):
        self.call, self.index = call, index

    def __eq__(self, other):
        return type(other) is Leaf and other.call is self.call and other.index == self.index

    def __hash__(self):
        return hash((id(self.call), self.index))

    def render(self, r):
        call = self.call
        return f"{call.name if self.index < call.reader.nhot else call.all_name}[{self.index}]"


@dataclasses.dataclass(frozen=True)
class Star(Node):
    """``*___r0`` (or ``*___r0[:n]``): the first ``n`` values a reader call returns, as arguments."""

    call: object
    n: int

    def render(self, r):
        return f"*{self.call.name}" if self.n == self.call.reader.nhot else f"*{self.call.name}[:{self.n}]"
