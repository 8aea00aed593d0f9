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
* **More trackers.** Iterators (as ``iter(tuple(rest))``), bound methods,
  objects created in the trace, grad-mode ``__exit__``s and trace-time
  constants, each by a small rule in ``RULES``, without touching the
  trackers themselves.

``materialize(value)`` stores a value in a temporary and returns its name;
the break and return code (``breaks.py``, ``finish.py``) materialize
everything before side effects are replayed (see ``side_effects.py``).
"""
import contextlib
import functools
import itertools
import types
from typing import Dict, List

import torch

from .. import bytecode
from ..codegen import GRAPH_OUT, PyCodegen
from ..graph_breaks import unsupported
from ..variables.base import BoundMethodVariable, VariableTracker
from ..variables.constant import ConstantVariable
from ..variables.ctx_managers import GradModeVariable, WithExitVariable
from ..variables.functions import UserMethodVariable
from ..variables.iterators import EnumerateVariable, IteratorVariable, ListIteratorVariable, ZipVariable
from ..variables.lists import TupleVariable
from ..variables.nn_module import ModuleMadeInTraceVariable
from ..variables.symint import SymNodeVariable, is_symbolic
from ..variables.tensor import TensorMethodVariable, TensorVariable
from ..variables.trace_time import NullContextVariable
from ..variables.user_defined import UserDefinedObjectVariable

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

    def expect_replay(self, side_effects):
        """Values built from here on are built before ``side_effects`` are replayed."""
        self.after_replay = []
        self.replayed = frozenset(id(m.target) for m in side_effects.entries if m.kind in ("list", "dict", "set"))

    def replay_side_effects(self, side_effects):
        """Replay the trace's side effects, then advance the iterators that waited for them."""
        from ..variables.iterators import advance_iterator

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
            rule = next((fn for kind, fn in RULES if isinstance(value, kind)), None)
            (rule or _default)(self, value)
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


def _default(cg, value):
    """The tracker's own ``reconstruct``; a source-less constant as LOAD_CONST."""
    if value.source is None and type(value).reconstruct is VariableTracker.reconstruct:
        if value.is_python_constant():
            constant = value.as_python_constant()
            if type(constant) not in (list, dict, set):
                cg.load_const(constant)
                return
    value.reconstruct(cg)


def remaining_items(it) -> List[VariableTracker]:
    """What iterating ``it`` to the end would produce, without advancing it."""
    if isinstance(it, ListIteratorVariable):  # a live list iterator continues as a snapshot
        return list(it.items[it.index:])
    if type(it) is EnumerateVariable:
        rest = remaining_items(it.inner)
        return [TupleVariable([ConstantVariable(it.count + i), x]) for i, x in enumerate(rest)]
    if type(it) is ZipVariable and not it.strict:
        return [TupleVariable(list(t)) for t in zip(*(remaining_items(i) for i in it.inners))]
    unsupported("cannot_resume", f"the iterator {it} cannot be rebuilt")


def _iterator(cg, it):
    if getattr(it, "from_generator", False):
        unsupported("generator", "a generator object outlives the graph (it would be a tuple iterator)")
    it.reconstruct(cg)  # its own type and position (variables/iterators.py)


def _user_method(cg, method):
    """``types.MethodType(function, self)``; a function that cannot be rebuilt says so itself."""
    cg.emit_op("PUSH_NULL")
    cg.load_const(types.MethodType)
    cg(method.fn_var)
    cg(method.obj)
    cg.call(2)


def _attribute_of(owner_attr):
    def rule(cg, value):
        cg(getattr(value, owner_attr))
        cg.load_attr(value.name)
    return rule


def _new_object(cg, obj):
    """An object created in the trace: ``object.__new__(cls)``, then its attributes."""
    if obj.source is not None or obj.value is not None:
        return obj.reconstruct(cg)
    temp = cg.new_temp()
    cg.call_constant(object.__new__, obj.cls)
    cg.store_fast(temp)
    cg.temps[id(obj)] = temp  # attributes may refer back to the object
    cg._alive.append(obj)
    for name, value in obj.attrs.items():
        cg(value)
        cg.store_attr_of(temp, name, obj.overrides_setattr)
    cg.load_fast(temp)


def _with_exit(cg, exit_var):
    """A grad-mode ``__exit__`` on the stack, as a real context's ``__exit__``.

    ``torch.set_grad_enabled(mode)`` switches the mode when built and records
    the mode it found, which its ``__exit__`` restores: so set the mode found
    on entry to the ``with`` first, then build it.
    """
    ctx = exit_var.ctx
    if isinstance(ctx, NullContextVariable) and exit_var.name == "__exit__":
        cg.call_constant(contextlib.nullcontext)  # entering did nothing, so leaving does nothing
        cg.load_attr("__exit__")
        return
    if not isinstance(ctx, GradModeVariable) or ctx.previous is None or exit_var.name != "__exit__":
        unsupported("cannot_resume", f"the context manager {ctx} is active")
    cg.set_grad_mode(ctx.previous)
    cg.call_constant(torch.set_grad_enabled, ctx.mode)
    cg.grad_mode = ctx.mode
    cg.load_attr("__exit__")


def _module_made_in_trace(cg, var):
    """A module built in the trace, built again: ``cls(*args, **kwargs)``."""
    cls = type(var.module)
    cg.call_constant(functools.partial(cls, **var.ctor_kwargs) if var.ctor_kwargs else cls, *var.ctor_args)


RULES = (
    (ModuleMadeInTraceVariable, _module_made_in_trace),
    (IteratorVariable, _iterator),
    (UserMethodVariable, _user_method),
    (TensorMethodVariable, _attribute_of("tensor")),
    (UserDefinedObjectVariable, _new_object),
    (WithExitVariable, _with_exit),
    (BoundMethodVariable, _attribute_of("obj")),
)
