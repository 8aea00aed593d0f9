"""``itertools.groupby``, lazy as ``groupbyobject`` in ``Modules/itertoolsmodule.c``.

The groupby keeps its C struct's state: the inner iterator, the key
function, ``tgtkey`` (the key of the group handed out last), ``currkey`` and
``currvalue`` (the item read ahead, None once a grouper took it) and
``currgrouper``. ``next()`` of the groupby drops the current grouper (it is
empty from then on), then reads items until one whose key differs from
``tgtkey`` and hands out ``(key, grouper)``; a grouper hands out items while
their key equals its own, reading ahead one item as CPython does. Keys are
compared as ``PyObject_RichCompareBool`` compares (identity first, then
``==``), and the key function runs once per item read, in the program's
order. A groupby or grouper left part way through at a graph break cannot be
rebuilt (its C state is not reachable from Python): that is a break.
"""
import itertools

from ...errors import unsupported
from ..containers.lists import TupleVariable
from ..core.iterator import IteratorVariable
from ..core.ops import compare, is_identical
from .itertools_iters import emit_call

_GROUPER = type(next(itertools.groupby([0]))[1])


def _same(tx, a, b) -> bool:
    return is_identical(a, b) or compare(tx, "==", a, b).truth(tx)


class GroupByVariable(IteratorVariable):
    py_type = itertools.groupby

    def __init__(self, inner, key, **kwargs):
        super().__init__(**kwargs)
        self.inner, self.key = inner, key  # key None: the items are their own keys
        self.tgtkey = self.currkey = self.currvalue = self.currgrouper = None

    def step(self, tx) -> bool:
        """groupby_step: read the next item and its key; False when the inner iterator ends."""
        value = self.inner.next(tx)
        if value is None:
            return False
        self.currkey = value if self.key is None else self.key.call(tx, [value], {})
        self.currvalue = value
        return True

    def next(self, tx):
        self.currgrouper = None
        while True:
            if self.currkey is None:
                pass
            elif self.tgtkey is None or not _same(tx, self.tgtkey, self.currkey):
                break
            if not self.step(tx):
                return None
        self.tgtkey = self.currkey
        self.currgrouper = GrouperVariable(self, self.tgtkey)
        return TupleVariable([self.currkey, self.currgrouper])

    def reconstruct(self, cg):
        if self.currkey is not None:
            unsupported("cannot_resume", "an itertools.groupby part way through")
        emit_call(cg, itertools.groupby, self.inner, self.key)  # a key of None: groupby's own default


class GrouperVariable(IteratorVariable):
    """One group of a groupby: its items while their key equals ``tgtkey``."""

    py_type = _GROUPER

    def __init__(self, parent, tgtkey, **kwargs):
        super().__init__(**kwargs)
        self.parent, self.tgtkey = parent, tgtkey

    def next(self, tx):
        parent = self.parent
        if parent.currgrouper is not self:
            return None
        if parent.currvalue is None and not parent.step(tx):
            return None
        if not _same(tx, self.tgtkey, parent.currkey):
            return None
        value, parent.currvalue = parent.currvalue, None
        return value

    def reconstruct(self, cg):
        unsupported("cannot_resume", "a group of an itertools.groupby")


def _groupby(tx, iterable, key=None):
    if key is not None and key.is_python_constant() and key.as_python_constant() is None:
        key = None
    return GroupByVariable(iterable.iter(tx), key)


MODELS = {itertools.groupby: _groupby}
