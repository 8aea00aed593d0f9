"""InstructionTranslator: symbolic execution of one frame's bytecode.

The translator is a small bytecode interpreter. Its state is exactly what a
CPython frame has, with trackers instead of values, and it is kept
inspectable between instructions (the graph-break issue resumes from it):

    instructions / ip / current_instruction   where execution is
    stack                                     the value stack (VariableTrackers)
    symbolic_locals                           name -> tracker (cells: CellVariable)
    output                                    the shared OutputGraph (graph, guards)

``step()`` runs one instruction through the dispatch table built by
``registry.py`` from ``handlers/*``; ``run()`` steps until RETURN_VALUE.
With ``config.debug_stack_effect`` every step checks that the handler moved
the stack by ``dis.stack_effect``.

``InstructionTranslator`` is the root of a trace (its arguments and cells:
``frame.py``); ``InliningTranslator`` runs an inlined user function on the
same OutputGraph, ``GeneratorTranslator`` a generator body one ``yield`` at a time.
"""
import builtins
import inspect
import logging
import types
import weakref
from typing import Dict, List, Optional

from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

from .. import bytecode, pyver
from ..config import config
from ..diagnostics import logs
from ..errors import InternalError, Unsupported, unsupported
from ..guards.sources import AttrSource, BuiltinSource, GetItemSource, GlobalSource
from ..side_effects import written_global
from ..variables.core.aliases import remember_cell
from ..variables.core.base import NULL, VariableTracker, stable_module
from ..variables.builder import wrap_value
from ..variables.core.exceptions import TracedException
from ..variables.callables.functions import CellVariable
from ..variables.iteration.generators import GeneratorVariable
from . import handlers  # noqa: F401  (registers every handler)
from .exceptions import unwind
from .frame import LazyVariable, frame_cells, frame_locals
from .memo import getattribute_call
from .registry import dispatch_table

DISPATCH = dispatch_table()
_OPCODES = {name: pyver.opcode_of(name) for name in pyver.OPNAMES}
_TRACE_LOG = logs.getLogger("trace")


def _log_step(tx, inst):
    """The `trace` channel: one line per instruction, with the stack before it."""
    arg = "" if inst.argval is None else f" {inst.argval!r}"[:60]
    stack = ", ".join(type(v).__name__ for v in tx.stack)
    _TRACE_LOG.info("%s%s:%s %s%s  [%s]", "  " * tx.depth, tx.code.co_name, tx.current_line(),
                    inst.opname, arg, stack)
# Steps whose work the tracer does in the following CALL.
_DEFERRED_CHECKS = frozenset({"PRECALL", "KW_NAMES"})


_decode_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _decoded(code: types.CodeType):
    """(instructions, id -> index, handlers) of ``code``, decoded once per code object: a
    transformer inlines the same few functions hundreds of times, and decoding
    was a third of a first trace. Translators only read the instructions."""
    found = _decode_cache.get(code)
    if found is None:
        instructions = bytecode.decode(code, positions=False)  # traced, never assembled
        found = _decode_cache[code] = (instructions, {id(inst): i for i, inst in enumerate(instructions)},
                                       [DISPATCH[_OPCODES[inst.opname]] for inst in instructions])
    return found


class TranslatorBase:
    """State and stepping shared by the root translator and inlined calls."""

    def __init__(self, output, code: types.CodeType, f_globals: dict,
                 symbolic_locals: Dict[str, VariableTracker], parent=None, fn_var=None):
        self.output = output
        self.code = code
        output.traced_files.add(code.co_filename)  # a stored trace is stale once one of them changes
        self.f_globals = f_globals
        self.symbolic_locals = symbolic_locals
        self.parent = parent
        self.fn_var = fn_var
        self.instructions, self.index_of, self.handlers = _decoded(code)
        self.stack: List[VariableTracker] = []
        self.ip = 0
        self.current_instruction = None
        self.kw_names: Optional[tuple] = None
        self.return_value: Optional[VariableTracker] = None
        self.done = False
        self.paused = False  # a generator body stopped at a yield (GeneratorTranslator)
        self.exc_stack: List[VariableTracker] = []  # exceptions being handled (PUSH_EXC_INFO)
        self._expected_depth: Optional[int] = 0
        self.steps = 0  # instructions stepped (the root's count names a step to break at)
        # the `trace` log or the stack-effect check asked for (once per translator, not per step)
        self.watched = _TRACE_LOG.isEnabledFor(logging.INFO) or config.debug_stack_effect

    # ---- the value stack
    def push(self, value: VariableTracker):
        assert isinstance(value, VariableTracker), f"pushed {value!r}"
        self.stack.append(value)

    def push_callable(self, value: VariableTracker, null: bool):
        """Push a callable, with the NULL of the call shape when ``null``, on
        the side the running Python wants it (pyver.NULL_ABOVE_CALLABLE)."""
        if null and not pyver.NULL_ABOVE_CALLABLE:
            self.push(NULL)
        self.push(value)
        if null and pyver.NULL_ABOVE_CALLABLE:
            self.push(NULL)

    def pop(self) -> VariableTracker:
        return self.stack.pop()

    def popn(self, n: int) -> List[VariableTracker]:
        if n == 0:
            return []
        values = self.stack[-n:]
        del self.stack[-n:]
        return values

    def peek(self, depth: int = 1) -> VariableTracker:
        return self.stack[-depth]

    # ---- control
    def jump(self, inst):
        self.ip = self.index_of[id(inst.target)]

    def step(self):
        ip = self.ip
        inst = self.instructions[ip]
        fn = self.handlers[ip]
        self.current_instruction = inst
        self.ip = ip + 1
        self.steps += 1
        output = self.output
        output.steps += 1
        if output.steps > config.max_trace_steps:
            unsupported("trace_too_long", f"{config.max_trace_steps} instructions")
        if fn is None:
            unsupported("unsupported_opcode", inst.opname)
        if not self.watched:
            self._dispatch(fn, inst)
            return
        if _TRACE_LOG.isEnabledFor(logging.INFO):
            _log_step(self, inst)
        if not config.debug_stack_effect:
            self._dispatch(fn, inst)
            return
        next_ip = self.ip
        self._dispatch(fn, inst)
        if not (self.done or self.paused):  # a paused yield gets its value when resumed
            self._check_stack_effect(inst, jumped=self.ip != next_ip)

    def _dispatch(self, fn, inst):
        try:
            fn(self, inst)
        except TracedException as error:  # raised in traced code: find its handler
            unwind(self, inst, error)
        except GuardOnDataDependentSymNode as error:  # a decision on an unbacked size or scalar
            unsupported("data_dependent_value", f"Python needs a value known only when the graph runs: "
                                                f"{str(error).splitlines()[0]}")

    def _check_stack_effect(self, inst, jumped):
        """Debug mode: the stack depth is what the dis.stack_effect of each step adds up to.

        Compared cumulatively because the tracer does PRECALL's work in CALL.
        """
        arg = inst.arg if inst.arg is not None else 0
        if self._expected_depth is None:
            self._expected_depth = len(self.stack)
        else:
            effect = pyver.stack_effect(inst.opname, arg, jump=jumped if inst.is_jump() else None)
            self._expected_depth += effect
        if inst.opname in _DEFERRED_CHECKS:
            return
        if len(self.stack) != self._expected_depth:
            raise InternalError(f"{inst.opname} left {len(self.stack)} values on the stack, "
                                f"dis.stack_effect says {self._expected_depth} ({self.where()})")

    def run(self):
        try:
            while not (self.done or self.paused):
                self.step()
        except Unsupported as e:
            if not getattr(e, "where", None):
                e.where = self.where()
            # outermost first: a graph break reports the whole chain of inlined calls
            e.user_frames = [(self.code, bytecode.line_of(self.instructions, self.ip - 1))] + getattr(e, "user_frames", [])
            raise

    def current_line(self):
        """The source line number of the instruction being run."""
        return bytecode.line_of(self.instructions, self.ip - 1)

    def where(self) -> str:
        inst = self.current_instruction
        line = bytecode.line_of(self.instructions, self.ip - 1)
        op = inst.opname if inst is not None else "?"
        return f"{self.code.co_filename}:{line} in {self.code.co_name} ({op})"

    # ---- names
    def global_source(self, name):
        """Where global ``name`` of this code is re-read from (None: assumed stable)."""
        if self.f_globals is self.output.root_globals:
            return GlobalSource(name)
        fn_source = getattr(self.fn_var, "source", None)
        if stable_module(self.f_globals.get("__name__")) or fn_source is None:
            return None
        return GetItemSource(AttrSource(fn_source, "__globals__"), name)

    def load_global(self, name) -> VariableTracker:
        written = written_global(self, name)  # assigned earlier in this trace
        if written is not None:
            return written
        if name in self.f_globals:
            value = self.f_globals[name]
            source = self.global_source(name)
            return wrap_value(self, value, source, guard=source is not None)
        builtins_dict = self.f_globals.get("__builtins__", builtins)
        builtins_dict = getattr(builtins_dict, "__dict__", builtins_dict)
        if name not in builtins_dict:
            unsupported("exception", f"NameError: name {name!r} is not defined")
        if self.f_globals is self.output.root_globals:
            self.output.add_guard("NOT_IN_GLOBALS", None, name)
            return wrap_value(self, builtins_dict[name], BuiltinSource(name), guard=False)
        return wrap_value(self, builtins_dict[name])

    def load_local(self, name) -> VariableTracker:
        if name not in self.symbolic_locals:
            unsupported("exception", f"UnboundLocalError: {name!r}")
        value = self.symbolic_locals[name]
        if isinstance(value, LazyVariable):
            value = self.symbolic_locals[name] = value.realize(self)
        return value

    def cell(self, name) -> CellVariable:
        cell = self.symbolic_locals.get(name)
        if not isinstance(cell, CellVariable):
            raise InternalError(f"{name} is not a cell ({self.where()})")
        if isinstance(cell.contents, LazyVariable):
            cell.contents = cell.contents.realize(self)
        return cell

    def wrap(self, value, source=None, guard: bool = True) -> VariableTracker:
        """The tracker of ``value`` read from ``source`` (None: made in the trace); how
        trackers reach the builder (variables/builder.py) without importing it."""
        return wrap_value(self, value, source, guard=guard)

    # ---- calls
    def inline_call(self, fn_var, args, kwargs) -> VariableTracker:
        """Trace the call ``fn_var(*args, **kwargs)`` of a user function inline."""
        return inline_call(self, fn_var, args, kwargs)

    def raise_at(self, inst, error: TracedException):
        """Raise the traced ``error`` at ``inst``, for the code's exception table to
        find a handler (a generator's ``throw()`` raises where its body is paused)."""
        unwind(self, inst, error)

    def zero_arg_super(self):
        """(class, self) for ``super()`` without arguments, as CPython finds them."""
        if "__class__" not in self.code.co_freevars or not self.code.co_argcount:
            unsupported("unsupported_call", "super() outside a method")
        first = self.code.co_varnames[0]
        obj = self.load_local(first)  # realizes an argument not read yet
        if first in self.code.co_cellvars and isinstance(obj, CellVariable):  # self captured by a closure
            obj = obj.contents  # (a cell passed as self is not opened: super_init_without_args)
        return self.cell("__class__").contents.as_python_constant(), obj

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1


class InstructionTranslator(TranslatorBase):
    """The root translator of one frame: arguments and closure cells come from outside (frame.py)."""

    def __init__(self, output, func, code, f_locals):
        output.root_globals = func.__globals__
        symbolic_locals, nargs = frame_locals(code, f_locals)
        super().__init__(output, code, func.__globals__, symbolic_locals)
        cells = frame_cells(func, code, self.instructions, nargs, f_locals, symbolic_locals)
        for name, cell in cells.items():  # a closure the frame gets may hold them too
            remember_cell(self, cell, symbolic_locals[name])
        self.func = func
        self.arg_names = code.co_varnames[:nargs]


# ---- inlining: a call to a user function is traced into the caller's graph
MAX_INLINE_DEPTH = 32
_ASYNC = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


class InliningTranslator(TranslatorBase):
    """Runs one inlined call; RETURN_VALUE ends it with ``return_value`` set."""

    is_generator = False


class GeneratorTranslator(InliningTranslator):
    """A generator body, run up to each YIELD_VALUE (``paused``) and resumed by its
    ``GeneratorVariable``; RETURN_VALUE finishes it."""

    is_generator = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.yielded_value = None      # what the paused YIELD_VALUE yielded
        self.yield_instruction = None  # where it is paused (throw() raises there)
        self.delegating = False        # paused inside ``yield from`` (a SEND loop)


def inline_call(parent, fn_var, args, kwargs):
    """Trace a call of the user function ``fn_var`` into ``parent``'s graph; its return value.

    Binds the arguments (defaults, ``*args``, ``**kwargs``), gives the callee
    its closure cells and runs a nested translator over the same OutputGraph:
    no frame boundary survives in the graph. A generator function's body does
    not run at the call: the call returns a ``GeneratorVariable`` over a paused
    ``GeneratorTranslator``, which runs one ``yield`` at a time as the consumer
    asks (``variables/generators.py``), so its side effects happen when CPython's would."""
    code = fn_var.get_code()
    if code.co_name == "__getattribute__":  # a configuration's attribute reads (memo.py)
        return getattribute_call(parent.output, fn_var, args, kwargs,
                                 lambda: _inline(parent, fn_var, code, args, kwargs))
    return _inline(parent, fn_var, code, args, kwargs)


def _inline(parent, fn_var, code, args, kwargs):
    if code.co_flags & _ASYNC:
        unsupported("generator", f"calling the coroutine function {code.co_name}")
    if parent.depth >= MAX_INLINE_DEPTH:
        unsupported("inline_limit", f"{code.co_name} at depth {parent.depth}")
    symbolic_locals = fn_var.bind(parent, args, kwargs)
    for name, cell in zip(code.co_freevars, fn_var.closure_cells(parent)):
        symbolic_locals[name] = cell
    generator = bool(code.co_flags & inspect.CO_GENERATOR)
    kind = GeneratorTranslator if generator else InliningTranslator
    tx = kind(parent.output, code, fn_var.get_globals(), symbolic_locals, parent=parent, fn_var=fn_var)
    if generator:  # nothing of the body runs before the first next()
        return GeneratorVariable(tx)
    tx.run()
    return tx.return_value
