"""FrameCodegen: rebuild the trace's values after the graph ran, once each.

At the end of a frame (a return, or a graph break) the replacement code must
hand real objects to CPython: the return value, the values on the stack and
in live locals at a break, and the values that side effects write. This
code generator extends ``codegen.PyCodegen`` with what that needs:

* **Graph outputs are chosen as it goes.** A tensor computed in the graph is
  loaded as ``graph_out_0[i]``; the first time one is met it gets the next
  index, and ``outputs`` lists them in order, so the graph is finished after
  the code that reads it is generated.
* **Identity.** A container or object made during the trace is rebuilt once
  and kept in a temporary; every later reference loads that temporary, so a
  list that is both on the stack and in a local is one list, as in CPython.
* **One way to rebuild.** Everything but a graph output is rebuilt by its
  tracker's own ``reconstruct(cg)`` (variables/): read again from its source,
  loaded as a constant, or built anew (iterators at their position, bound
  methods, objects created in the trace, grad-mode ``__exit__``s), with this
  code generator's emitters.

``materialize(value)`` stores a value in a temporary and returns its name;
the break and return code (``breaks/split.py``, ``finish.py``) materialize
everything before side effects are replayed (see ``side_effects.py``).
"""
import itertools
from typing import Dict, List

import torch

from .. import bytecode
from ..errors import unsupported
from ..variables.core.base import VariableTracker
from ..variables.core.constant import ConstantVariable
from ..variables.tensors.symint import SymNodeVariable, is_symbolic
from ..variables.tensors.tensor import TensorVariable
from .pycodegen import GRAPH_OUT, PyCodegen

_names = itertools.count()  # temporaries get process-unique names (readable in listings)


class FrameCodegen(PyCodegen):
    """PyCodegen with on-demand graph outputs, temporaries and object identity."""

    def __init__(self, grad_mode: bool):
        super().__init__({})
        self.outputs: List[TensorVariable] = []
        self.temps: Dict[int, str] = {}
        self._alive: List[VariableTracker] = []  # keeps ids in `temps` unique
        self._building = set()
        self._later = []  # (temp, attribute, value): stores that wait for value's temporary
        self.grad_mode = grad_mode  # the real grad mode at this point of the generated code
        # (temp, consumed, done) of list iterators built before the side effects are
        # replayed and advanced after them (variables/iterators.py); None: no replay follows
        self.after_replay = None
        self.replayed = frozenset()  # ids of the containers the replay will change
        # temporary of a dict's or set's remaining items -> (its container's temporary,
        # size, message): checked after a break instruction (breaks/split.py)
        self.size_checks: Dict[str, tuple] = {}

    def expect_replay(self, side_effects):
        """Values built from here on are built before ``side_effects`` are replayed."""
        self.after_replay = []
        self.replayed = frozenset(id(m.target) for m in side_effects.entries if m.kind in ("list", "dict", "set"))

    def replay_side_effects(self, side_effects):
        """Replay the trace's side effects, then advance the iterators that waited for them."""
        from ..variables.core.iterator import advance_iterator

        side_effects.replay(self)
        for temp, consumed, done in self.after_replay or ():
            self.emit_op("PUSH_NULL")
            self.load_const(advance_iterator)
            self.load_fast(temp)
            self.load_const(consumed)
            self.load_const(done)
            self.call(3)
            self.emit_op("POP_TOP")
        self.after_replay, self.replayed = None, frozenset()

    # ---- small emitters
    def emit_op(self, opname, **kwargs):
        self.emit(bytecode.create_instruction(opname, **kwargs))

    def new_temp(self) -> str:
        return f"___tmp{next(_names)}"

    def call_method_of(self, temp: str, name: str, arg_temps):
        """``temp.name(*arg_temps)``, result dropped."""
        self.emit_op("PUSH_NULL")
        self.load_fast(temp)
        self.load_attr(name)
        for arg in arg_temps:
            self.load_fast(arg)
        self.call(len(arg_temps))
        self.emit_op("POP_TOP")

    def store_attr_of(self, temp: str, attr: str, raw: bool):
        """Pop a value into ``temp.attr``. ``raw``: through ``object.__setattr__``,
        for an object whose class overrides ``__setattr__``: the trace ran the
        override already (its checks, its other writes), so only its final
        store is replayed; STORE_ATTR would run the override a second time."""
        if not raw:
            self.load_fast(temp)
            self.emit_op("STORE_ATTR", argval=attr)
            return
        value = self.new_temp()
        self.store_fast(value)
        self.emit_op("PUSH_NULL")
        self.load_const(object.__setattr__)
        self.load_fast(temp)
        self.load_const(attr)
        self.load_fast(value)
        self.call(3)
        self.emit_op("POP_TOP")

    def call_constant(self, fn, *consts):
        """Push ``fn(*consts)`` for Python objects ``fn`` and ``consts``."""
        self.emit_op("PUSH_NULL")
        self.load_const(fn)
        for c in consts:
            self.load_const(c)
        self.call(len(consts))

    def set_grad_mode(self, mode: bool):
        if mode != self.grad_mode:
            self.call_constant(torch._C._set_grad_enabled, mode)
            self.emit_op("POP_TOP")
            self.grad_mode = mode

    # ---- values
    def materialize(self, value: VariableTracker) -> str:
        """Rebuild ``value`` (once) into a temporary; returns its name."""
        name = self.temps.get(id(value))
        if name is None:
            self(value)
            name = self.remember(value)
        return name

    def materialize_items(self, items, kind) -> str:
        """A new ``kind`` (list, set; dict from flat key/value items) in a temporary."""
        for item in items:
            self(item)
        self.build(kind, len(items) // 2 if kind is dict else len(items))
        name = self.new_temp()
        self.store_fast(name)
        return name

    def remember(self, value) -> str:
        """Store the value on top of the stack in a new temporary that stands for
        ``value`` from now on (so it is rebuilt once, and may refer to itself)."""
        name = self.new_temp()
        self.store_fast(name)
        self.temps[id(value)] = name
        self._alive.append(value)
        return name

    def __call__(self, value: VariableTracker):
        name = self.temps.get(id(value))
        if name is not None:
            self.load_fast(name)
            return
        if isinstance(value, TensorVariable) and value.source is None:
            self._graph_output(value)
            return
        if isinstance(value, SymNodeVariable) and value.source is None and is_symbolic(value.value):
            self._graph_output(value)  # a size returned as the graph computes it: no specialising
            return
        if id(value) in self._building:
            unsupported("graph_output", f"{value} contains itself")
        self._building.add(id(value))
        try:
            value.reconstruct(self)
        finally:
            self._building.discard(id(value))
        if _keeps_identity(value):
            self.emit(bytecode.create_dup_top())
            self.remember(value)
            self._store_waiting()

    def store_attr_later(self, temp: str, attr: str, value: VariableTracker):
        """``temp.attr = value``, now if ``value`` can be rebuilt now, else as soon as
        it has its temporary: a cell that holds the function being rebuilt around
        it is filled after the function exists, as CPython's STORE_DEREF does."""
        if id(value) in self._building and id(value) not in self.temps:
            self._later.append((temp, attr, value))
            return
        self(value)
        self.load_fast(temp)
        self.emit_op("STORE_ATTR", argval=attr)

    def _store_waiting(self):
        ready = [item for item in self._later if id(item[2]) in self.temps]
        for item in ready:
            self._later.remove(item)
            temp, attr, value = item
            self.load_fast(self.temps[id(value)])
            self.load_fast(temp)
            self.emit_op("STORE_ATTR", argval=attr)

    def _graph_output(self, value):
        key = id(value.node)
        if key not in self.graph_outputs:
            self.graph_outputs[key] = len(self.outputs)
            self.outputs.append(value)
        self.load_fast(GRAPH_OUT)
        self.load_const(self.graph_outputs[key])
        self.binary_subscr()


def _keeps_identity(value) -> bool:
    """Made in the trace and not a constant: rebuild once, share by temporary."""
    return value.source is None and not isinstance(value, (ConstantVariable, TensorVariable))
