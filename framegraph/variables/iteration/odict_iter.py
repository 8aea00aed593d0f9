"""Iterators over an OrderedDict made in the trace (``iter(od)``, ``od.items()``, ``reversed(od)``).

CPython's ``odictiter_nextkey`` (Objects/odictobject.c) checks, at each step,
in this order: the iterator already reached the end (then it stays exhausted,
whatever happened to the dict since); the dict's ``od_state`` changed since
``iter()`` (every key added or removed, ``move_to_end`` of a key not already
there: "OrderedDict mutated during iteration", and the iterator is then
exhausted); its size changed (``clear()``: "OrderedDict changed size during
iteration", and it stays failing). A plain dict's iterator only checks the
size, which is what the generic iterator models; this one keeps the dict
tracker's ``od_state`` counter (dicts.py) and checks both.

While neither changed the keys are those of ``iter()``'s time, in order, so
the iterator walks a snapshot of the hash keys and reads each value live.
At a graph break it is rebuilt as the real iterator at its position, when the
dict is unchanged; handing a loop's rest over as a tuple would lose the check,
so that is a break that cannot resume.
"""
import collections

from ...errors import unsupported
from ..containers.lists import TupleVariable
from ..core import space
from ..core.exceptions import raise_in_trace
from ..core.iterator import IteratorVariable, builtin_iterator_type, resume_iterator

_ITERATOR_TYPE = type(iter(collections.OrderedDict()))


class OrderedDictIteratorVariable(IteratorVariable):
    py_type = _ITERATOR_TYPE

    def __init__(self, dict_var, kind="keys", reverse=False, container=None, **kwargs):
        super().__init__(**kwargs)
        self.dict_var, self.kind, self.reverse = dict_var, kind, reverse
        self.container = container if container is not None else dict_var  # what iter() was given
        keys = list(dict_var.items)
        self.keys = keys[::-1] if reverse else keys
        self.state, self.size = dict_var.od_state, len(dict_var.items)
        self.index, self.done = 0, False

    def next(self, tx):
        if self.done or self.index >= len(self.keys):
            self.done = True
            return None
        if self.dict_var.od_state != self.state:
            self.done = True
            raise_in_trace(RuntimeError, "OrderedDict mutated during iteration")
        if len(self.dict_var.items) != self.size:
            self.size = -1  # sticky, as CPython's di_size = -1
            raise_in_trace(RuntimeError, "OrderedDict changed size during iteration")
        key, value = self.dict_var.items[self.keys[self.index]]
        self.index += 1
        if self.kind == "keys":
            return key
        if self.kind == "values":
            return value
        return TupleVariable([key, value])

    def _unchanged(self):
        return self.dict_var.od_state == self.state and len(self.dict_var.items) == self.size

    def remaining(self):
        unsupported("cannot_resume", "the rest of a loop over an OrderedDict, whose iterator checks for changes")

    def reconstruct(self, cg):
        if not (self.done or self._unchanged()):
            unsupported("cannot_resume", "an iterator over an OrderedDict that changed since iter()")
        cg.emit_op("PUSH_NULL")
        cg.load_const(resume_iterator)
        cg.load_const(reversed if self.reverse else iter)
        cg(self.container)
        cg.load_const(0 if self.done else self.index)
        cg.load_const(self.done)
        cg.call(4)

    def __repr__(self):
        return f"OrderedDictIteratorVariable({self.kind}, {self.index}/{len(self.keys)})"


@space.register
def odict_iterator(container, dict_var, kind, reverse=False):
    """The iterator tracker over ``container`` (an OrderedDict tracker or one of its
    views) when its dict is an OrderedDict that keeps the C iteration; else None."""
    cls = dict_var.python_type()
    if not issubclass(cls, collections.OrderedDict) or builtin_iterator_type(cls) is None:
        return None
    return OrderedDictIteratorVariable(dict_var, kind, reverse, container)
