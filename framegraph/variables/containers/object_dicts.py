"""Dicts keyed by objects (tensors, modules), read lazily through the key's source.

``optimizer.state`` is a ``defaultdict`` from parameters to per-parameter
state; hooks registries and caches keyed by modules look the same. Wrapping
every item up front would need a source for each key (``list(d)[i]``, O(n)
to re-read) and would pin the dict's whole contents. Instead the tracer reads
such a dict the way the program does, one key at a time:

    state[p]      p has a source (``L['self'].param_groups[0]['params'][3]``),
                  so the value's source is ``dict.get(<state>, <p>)`` and the
                  value is wrapped like any other input (a dict of tensors).
                  Guard: ``dict.__contains__(<state>, <p>) is True``.
    p in state    a trace-time bool, guarded the same way (True or False).
    len(state)    a trace-time int, guarded with LENGTH.

Keys are hashed by identity (tensors and modules hash by ``id``), and the key
guard re-reads the key from its own source on every call, so the guard is
exactly the lookup the program makes. Nothing else about the dict is relied
on, so adding unrelated keys does not invalidate the graph.

A missing key of a ``defaultdict`` (the optimizer's first step, which creates
the state) is a graph break: the call runs in CPython, creates the state, and
the next call is traced against the filled dict.

    state[p] = v  a key hashed and compared by identity (a tensor, a module, a user
                  object with object's __hash__ and __eq__): the write goes into an
                  overlay that later reads in the trace see first, and the ledger
                  replays ``state[p] = v`` after the graph (dict_ass_sub keeps an
                  existing key's place, appends a new one: the same as in eager).

Iterating and the other methods are unsupported (graph breaks) for now.
"""
import collections

import torch

from ...errors import unsupported
from ...guards.sources import ConstSource, DictContainsSource, DictGetSource
from ..core import space
from ..core.base import BoundMethodVariable, VariableTracker
from ..core.constant import ConstantVariable, is_constant_value
from .dicts import runs_python_hash

# The dict types read lazily: their lookup is the builtin one (hash + identity).
OBJECT_DICT_TYPES = (dict, collections.defaultdict, collections.OrderedDict)


def is_object_keyed(value) -> bool:
    """A plain dict from outside the frame with a key that is not a constant."""
    return type(value) in OBJECT_DICT_TYPES and any(
        not isinstance(k, (str, int, float, bool, bytes, type(None))) for k in value) \
        and not any(runs_python_hash(type(k)) for k in value)  # the guard's lookup would run it


def _real_key(tx, key: VariableTracker):
    """The real object a key tracker stands for (a guarded input)."""
    if isinstance(key, space.TensorVariable):
        output = tx.output
        if key in output.inputs:
            return output.example_inputs[output.inputs.index(key)]
        unsupported("unsupported_value", "a tensor made in the trace used as a dict key")
    return space.real_value(key)


class ObjectKeyedDictVariable(VariableTracker):
    """A dict from outside the frame whose keys are objects; see the module docstring."""

    replay_kind = "dict_items"  # the overlay's writes, each replayed as `d[k] = v`

    def __init__(self, value, **kwargs):
        super().__init__(**kwargs)
        self.value = value
        self.identity = value
        # id(real key) -> (key tracker, value tracker, whether the real dict held the key)
        self.writes = {}

    def python_type(self):
        return type(self.value)

    def _lookup(self, tx, key):
        """(present, real value or None, the key's source), with the guard that makes
        relying on it sound."""
        if self.source is None:
            return self._lookup_unguarded(tx, key) + (key.source,)
        real = _real_key(tx, key)
        key_source = key.source
        if key_source is None:
            # a key the trace computed (``type(first)``) is the same object on every
            # call the other guards admit: the guard holds it
            if not (isinstance(real, type) or is_constant_value(real)):
                unsupported("unsupported_value", f"a dict key that cannot be re-read: {key}")
            key_source = ConstSource.of(real)
        present = dict.__contains__(self.value, real)
        tx.output.add_guard("CONSTANT_MATCH", DictContainsSource(self.source, key_source), present)
        return present, (dict.get(self.value, real) if present else None), key_source

    def _lookup_unguarded(self, tx, key):
        """A dict with no source is one the tracer reached through values it
        assumes stable (a library table such as huggingface_hub's validators by
        typing origin, read from an unguarded function's globals): it is read
        as it is now, like the rest of what holds it, with any key whose object
        the trace knows (a constant: ``None``, a class)."""
        if key.source is not None:
            real = _real_key(tx, key)
        elif key.is_python_constant():
            real = key.as_python_constant()
        else:
            unsupported("unsupported_value", f"a dict key that cannot be re-read: {key}")
        try:
            present = dict.__contains__(self.value, real)
        except TypeError:
            unsupported("operator_error", f"unhashable dict key {key}")
        return present, (dict.get(self.value, real) if present else None)

    def _written(self, tx, key):
        """The overlay's entry of ``key`` (written earlier in this trace), or None."""
        if not self.writes:
            return None
        return self.writes.get(id(_real_key(tx, key)))

    def setitem(self, tx, key, value):
        """``d[key] = value``: see the module docstring."""
        real = _real_key(tx, key)
        kind = type(real)
        if not isinstance(real, torch.Tensor) and (kind.__hash__ is not object.__hash__
                                                   or kind.__eq__ is not object.__eq__):
            unsupported("unsupported_value", f"writing {self}[{key}]: a key not hashed and compared by identity")
        if key.source is None or self.source is None:
            unsupported("unsupported_value", f"writing {self}[{key}]: a key or dict that cannot be re-read")
        entry = self.writes.get(id(real))
        held = entry[2] if entry is not None else self._lookup(tx, key)[0]
        self.check_mutable("dict item assignment", tx)
        self.writes[id(real)] = (key, value, held)

    def getitem(self, tx, key):
        written = self._written(tx, key)
        if written is not None:
            return written[1]
        present, value, key_source = self._lookup(tx, key)
        if not present:
            what = "defaultdict" if type(self.value) is collections.defaultdict else "dict"
            where = f"{self.source.name()}[{key_source.name()}]" if self.source is not None and key_source \
                else f"[{key}]"
            unsupported("missing_dict_key", f"{where} on a {what}")
        source = DictGetSource(self.source, key_source) if self.source is not None else None
        return tx.wrap(value, source)

    def contains(self, tx, item):
        return self._written(tx, item) is not None or self._lookup(tx, item)[0]

    def length(self, tx):
        if self.source is not None:
            tx.output.add_guard("LENGTH", self.source, (type(self.value), len(self.value)))
        return len(self.value) + sum(not held for _, _, held in self.writes.values())

    def truth(self, tx):
        return self.length(tx) > 0

    def call_method(self, tx, name, args, kwargs):
        if name == "__getitem__" and len(args) == 1:
            return self.getitem(tx, args[0])
        if name == "__setitem__" and len(args) == 2 and not kwargs:
            self.setitem(tx, args[0], args[1])
            return ConstantVariable(None)
        if name == "__contains__" and len(args) == 1:
            return ConstantVariable(self.contains(tx, args[0]))
        if name == "__len__" and not args:
            return ConstantVariable(self.length(tx))
        if name == "get" and 1 <= len(args) <= 2 and not kwargs:
            if self.contains(tx, args[0]):
                return self.getitem(tx, args[0])
            return args[1] if len(args) == 2 else ConstantVariable(None)
        unsupported("unsupported_call", f"{type(self.value).__name__}.{name} of a dict keyed by objects")

    def getattr(self, tx, name):
        if name in ("__getitem__", "__setitem__", "__contains__", "__len__", "get"):
            return BoundMethodVariable(self, name)
        unsupported("unsupported_attribute", f"{type(self.value).__name__}.{name} of a dict keyed by objects")

    def __repr__(self):
        return f"ObjectKeyedDictVariable({len(self.value)} items)"


def wrap_object_keyed_dict(tx, value, source):
    """builder rule for a dict with object keys (see ``is_object_keyed``)."""
    if source is not None:
        tx.output.add_guard("TYPE_MATCH", source, type(value))
    return ObjectKeyedDictVariable(value, source=source)
