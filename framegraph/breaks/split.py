"""Graph breaks: stop before an instruction the tracer cannot model, resume after it.

The brief's graph-break paragraph, in three steps:

1. **Find the break.** ``run_root`` steps the root translator. When stepping
   root instruction number S raises ``Unsupported`` (also from deep inside an
   inlined call: the break is then at the root's CALL), the trace restarts
   from scratch and stops right *before* step S. Restarting instead of
   rolling back keeps the state exact: trackers mutated in place by the
   failed step, iterators it advanced, nodes it added, side effects it
   recorded simply never happen in the second run. Tracing is deterministic,
   so the second run reaches the same point. Dynamo restarts the same way.
2. **Break-site code** (``emit_break``), after the graph call: rebuild every
   value on the stack, in live locals and in the side-effect ledger into
   temporaries (``rebuild.FrameCodegen``: once each, so identity holds),
   replay the side effects, push the break instruction's inputs, run the
   instruction itself in CPython, then for each successor (the next
   instruction, and the target of a conditional jump) call the resume
   function with the stack below, the instruction's outputs and the live
   locals, and return what it returns.
3. **Resume.** ``resume.resume_code`` builds the code that continues at the
   successor; the hook sees it as a new frame and traces it again, so the
   rest of the function becomes the next graph.

Whatever cannot be handed over (an instruction whose stack shape is not in
``_SHAPES``, a value that cannot be rebuilt) makes the whole frame
``Unsupported`` with the ``cannot_resume`` entry: it then runs unmodified,
and convert_frame logs why. Under ``fullgraph=True`` the first break raises
``Unsupported`` with the catalogue text and the user's source line instead.
"""
import dataclasses
import itertools
import linecache
import types
from typing import List, Optional

import torch

from .. import _C, bytecode, pyver
from ..codegen.pycodegen import GRAPH_OUT
from ..codegen.rebuild import FrameCodegen
from ..diagnostics import logs
from ..errors import CATALOGUE, NO_BREAK, RETRY, Entry, InternalError, Unsupported, unsupported
from ..tracer.frame import LazyVariable
from ..variables.core.base import NULL, finalizable
from ..variables.callables.functions import CellVariable
from ..variables.iteration.iterators import checked_rest, remaining_items
from ..variables.core.iterator import IteratorVariable
from ..variables.containers.lists import TupleVariable
from . import resume

_resume_names = itertools.count(1)
_logged = set()  # (file, line, entry id, context): each break site is logged once per process

# Stack shapes of the instructions a break can happen at (3.11 and 3.12
# names; a name a version lacks never matches): opname -> (values popped,
# {jumped: values pushed}).
_SHAPES = {
    **{name: (2, {False: 1}) for name in ("BINARY_OP", "COMPARE_OP", "BINARY_SUBSCR",
                                          "CONTAINS_OP", "IS_OP")},
    **{name: (1, {False: 1}) for name in ("UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT",
                                          "UNARY_NOT", "GET_ITER", "LOAD_ATTR")},
    "LOAD_METHOD": (1, {False: 1}),  # run as LOAD_ATTR: the resume function gets NULL, attr
    "STORE_ATTR": (2, {False: 0}), "STORE_SUBSCR": (3, {False: 0}), "DELETE_SUBSCR": (2, {False: 0}),
    "JUMP_IF_TRUE_OR_POP": (1, {False: 0, True: 1}), "JUMP_IF_FALSE_OR_POP": (1, {False: 0, True: 1}),
    **{f"POP_JUMP_{d}IF_{c}": (1, {False: 0, True: 0})
       for d in ("FORWARD_", "BACKWARD_", "") for c in ("TRUE", "FALSE", "NONE", "NOT_NONE")},
    "BINARY_SLICE": (3, {False: 1}), "STORE_SLICE": (4, {False: 0}), "TO_BOOL": (1, {False: 1}),
}


def _is_method_load(inst) -> bool:
    """LOAD_METHOD (3.11) or LOAD_ATTR with the method bit (3.12): run as a plain
    LOAD_ATTR at a break, the resume function gets (NULL, attr)."""
    return inst.opname == "LOAD_METHOD" or inst.opname == "LOAD_ATTR" and pyver.attr_is_method(inst.arg or 0)


def _shape(inst):
    if inst.opname == "CALL":
        return inst.arg + 2, {False: 1}
    if inst.opname == "CALL_KW":  # 3.13: the keyword names are on the stack too
        return inst.arg + 3, {False: 1}
    if inst.opname == "CALL_FUNCTION_EX":
        return 3 + (inst.arg & 1), {False: 1}
    return _SHAPES.get(inst.opname)


@dataclasses.dataclass
class GraphBreak:
    """One graph break: what the catalogue says, where it happened (outermost first)."""

    entry: Entry
    context: str
    frames: list                 # [(code, line)] from the traced frame to the innermost call
    instruction: object = None   # the root instruction the frame breaks at
    # guards the failed step added, kept for a break that running the frame in
    # CPython makes go away (errors.RETRY: a missing key the step creates)
    guards: list = dataclasses.field(default_factory=list)
    # the resume functions' codes the hook traces (runtime keeps them past its quick filter)
    resume_codes: list = dataclasses.field(default_factory=list)

    @property
    def user_stack(self) -> List[str]:
        return [f"{code.co_filename}:{line} in {code.co_name}" for code, line in self.frames]

    def render(self) -> str:
        """The text of the graph_breaks log, and of the fullgraph=True error."""
        code, line = self.frames[-1]
        lines = [f"Graph break in user code at {code.co_filename}:{line}",
                 f"Graph Break Reason: {self.entry.render(self.context)}",
                 "User code traceback:"]
        for code, line in self.frames:
            lines.append(f'  File "{code.co_filename}", line {line}, in {code.co_name}')
            source = linecache.getline(code.co_filename, line).strip() if isinstance(line, int) else ""
            if source:
                lines.append(f"    {source}")
        return "\n".join(lines)

    def log_once(self):
        code, line = self.frames[-1]
        key = (code.co_filename, line, self.entry.id, self.context)
        if key not in _logged:
            _logged.add(key)
            logs.getLogger("graph_breaks").info("%s", self.render())


def _describe(tx, error: Unsupported) -> GraphBreak:
    entry = error.entry or CATALOGUE["unsupported_opcode"]
    root = (tx.code, bytecode.line_of(tx.instructions, tx.ip - 1))
    frames = [root] + list(getattr(error, "user_frames", []))
    return GraphBreak(entry, error.context or str(error), frames)


class _Restart(Exception):
    def __init__(self, step: int, brk: GraphBreak):
        super().__init__(step)
        self.step, self.brk = step, brk


def run_root(make_tx, options):
    """Trace a frame: ``(tx, None)`` after RETURN_VALUE, or ``(tx, GraphBreak)``
    with ``tx`` stopped right before the instruction to break at."""
    stop, brk = None, None
    while True:
        tx = make_tx()
        try:
            _run(tx, stop, options)
            for guard in brk.guards if brk else ():  # so the next call traces the filled dict
                tx.output.guards.setdefault(guard, None)
            return tx, brk
        except _Restart as restart:
            if stop is not None:  # the second run must stop before this point
                # tracing is deterministic (see above): a second break is a tracer bug
                raise InternalError("the trace did not repeat itself after a graph break") from restart
            stop, brk = restart.step, restart.brk
        finally:
            tx.output.close_states()
            torch._C._set_grad_enabled(tx.output.initial_grad_mode)


def _run(tx, stop: Optional[int], options):
    for step in itertools.count():
        if tx.done or step == stop:
            return
        inst = tx.instructions[tx.ip]
        guards_before = len(tx.output.guards)
        try:
            tx.step()
        except Unsupported as e:
            if e.entry is not None and e.entry.id in NO_BREAK:
                raise
            brk = _describe(tx, e)
            if options.fullgraph:
                raise Unsupported(brk.render(), entry=brk.entry, context=brk.context) from e
            step, inst = _break_point(tx, e, step, inst)
            if _shape(inst) is None:
                e.where = getattr(e, "where", None) or tx.where()
                raise
            brk.instruction = inst
            if brk.entry.id in RETRY:
                brk.guards = list(tx.output.guards)[guards_before:]
            raise _Restart(step, brk) from e


def _break_point(tx, error, step, inst):
    """(step, instruction) to break at. Where an exception escapes the frame, or
    the break happens while an ``except`` block handles one, CPython must run
    from the root instruction that raised (tracer/exceptions.py): a resume
    function cannot start inside a handler (the exception being handled, what
    a bare ``raise`` re-raises, is not handed over)."""
    where = getattr(error, "break_at", None)
    if where is None and tx.exc_stack:
        where = tx.exc_stack[0].root_raise
    return where if where is not None else (step, inst)


# ---- the code at the break site
@dataclasses.dataclass
class _Successor:
    """Where execution may go after the break instruction, and what it hands over."""

    inst: object           # the instruction the resume function starts at
    pushed: int            # values the break instruction leaves on the stack for it
    depth: int             # how many of the values below the inputs it keeps
    handler: bool = False  # an exception handler: the stack holds [lasti] exc
    null: bool = False     # a NULL goes with the pushed values (a method load; below them, 3.13: above)


def break_code(func, tx, brk):
    """The code after the graph at a break (``emit_break``), for ``codegen.finish``.

    The graph ends in the grad mode the frame started in; the break site sets
    the mode the instruction must run in (see rebuild._with_exit)."""
    output = tx.output
    mode = output.grad_mode
    output.set_grad_mode(output.initial_grad_mode)
    torch._C._set_grad_enabled(output.initial_grad_mode)
    cg = FrameCodegen(output.initial_grad_mode)
    try:
        emit_break(cg, tx, brk, func, mode)
    except Unsupported as e:
        raise cannot_resume(brk, e) from e
    return cg


def emit_break(cg, tx, brk: GraphBreak, func, grad_mode: bool):
    """Everything after the graph call: rebuild, replay, the instruction, resume calls."""
    inst = tx.instructions[tx.ip]
    assert inst is brk.instruction or inst.offset == brk.instruction.offset
    popped, pushed = _shape(inst)
    below, consumed = tx.stack[:len(tx.stack) - popped], tx.stack[len(tx.stack) - popped:]
    successors = _successors(tx, inst, pushed, len(below))
    lives = [_live_locals(tx, succ.inst) for succ in successors]
    # a value the resume function also gets elsewhere (a loop's iterator held in a local too)
    held = [id(v) for v in below + consumed] + [id(_contents(v)) for live in lives for v in live.values()]
    cg.expect_replay(tx.output.side_effects)  # list iterators built below are advanced after it
    below_slots = [_stack_slot(cg, v, shared=held.count(id(v)) > 1) for v in below]
    consumed_slots = [(resume.NULL, None) if v is NULL else (resume.VALUE, cg.materialize(v))
                      for v in consumed]
    live_temps = {name: cg.materialize(var) for live in lives for name, var in live.items()
                  if not isinstance(var, CellVariable)}
    tx.output.side_effects.prepare(cg)
    cell_temps, shared_cells = _hand_over_cells(cg, lives)
    live_temps.update(cell_temps)
    lives = [{name: var for name, var in live.items() if name in live_temps} for live in lives]
    cg.set_grad_mode(grad_mode)
    cg.replay_side_effects(tx.output.side_effects)
    if any(_reads_the_frame(v) for v in consumed):
        _store_locals(cg, tx)
    for kind, temp in consumed_slots:
        cg.emit_op("PUSH_NULL") if kind == resume.NULL else cg.load_fast(temp)
    blocks = [_resume_block(cg, tx, func, brk, succ, below_slots, live, live_temps, shared_cells)
              for succ, live in zip(successors, lives)]
    jump_block = next((b for s, b in zip(successors, blocks) if s.inst is inst.target), None)
    copy = _copy_of(tx, inst, jump_block[0] if jump_block else None)
    if successors[-1].handler:
        _catch(copy, blocks[-1][0], inst.exn_entry)
    keep = _fast_reads([copy] + blocks) | (set(tx.code.co_varnames) if any(map(_reads_the_frame, consumed)) else set())
    _drop_references(cg, tx.code, cg.instructions, keep)
    cg.emit(copy)
    for block in blocks:
        cg.emit(block)


# Builtins that read the calling frame's local variables when CPython runs them.
_FRAME_READERS = (locals, vars, dir, eval, exec)


def _reads_the_frame(value) -> bool:
    from ..variables.callables.builtins import BuiltinVariable

    return isinstance(value, BuiltinVariable) and value.fn in _FRAME_READERS


def _store_locals(cg, tx):
    """Store the traced locals in their own slots, for ``locals()``, ``eval(s)``...
    run at the break: the compiled frame otherwise holds them in temporaries only."""
    for name in tx.code.co_varnames:
        var = tx.symbolic_locals.get(name)
        if isinstance(var, CellVariable) or var is None or var is NULL:
            continue
        cg.load_fast(cg.materialize(var))
        cg.store_fast(name)


def _successors(tx, inst, pushed, n_below):
    out = [_Successor(tx.instructions[tx.ip + 1], pushed[False], n_below,
                      null=_is_method_load(inst))]
    if True in pushed:
        out.append(_Successor(inst.target, pushed[True], n_below))
    entry = inst.exn_entry
    if entry is not None:  # inside try/with: if the instruction raises, the handler runs
        if entry.depth > n_below:
            unsupported("cannot_resume", "an exception handler keeps the instruction's inputs")
        out.append(_Successor(entry.target, int(entry.lasti) + 1, entry.depth, handler=True))
    return out


def _catch(copy, handler_start, entry):
    """Route exceptions of the copied instruction to the handler block."""
    caught = bytecode.ExceptionTableEntry(copy[0], copy[-1], handler_start, 0, entry.lasti)
    for inst in copy:
        inst.exn_entry = caught


def _stack_slot(cg, value, shared=False):
    """(layout kind, temporary) of a value below the break instruction's inputs."""
    if value is NULL:
        return resume.NULL, None
    if isinstance(value, IteratorVariable) and not shared:  # shared: one real iterator for both
        # the resume function gets the rest as a tuple and iterates it
        # (resume.ITER): its trace unrolls the rest of the loop
        rest = cg.materialize(TupleVariable(remaining_items(value)))
        check = value.size_check()
        if check is not None:
            container, size, message = check
            cg.size_checks[rest] = (cg.materialize(container), size, message)
        return resume.ITER, rest
    return resume.VALUE, cg.materialize(value)


def _live_locals(tx, inst) -> dict:
    """name -> tracker of the locals the code from ``inst`` on may read (a cell
    variable as its CellVariable: ``_hand_over_cells`` decides what goes)."""
    live = {}
    names = set(bytecode.livevars_at(tx.instructions, inst))
    # a cell is live while a closure holds it, even when the frame writes it next
    # (``def g(): return state`` then ``state = []`` after the break)
    names.update(tx.code.co_cellvars)
    if set(tx.code.co_names) & {fn.__name__ for fn in _FRAME_READERS}:
        # `eval("x + 1")` reads locals no bytecode names (not a resume function's own stack)
        names.update(n for n in tx.code.co_varnames if not n.startswith("___"))
    for name in sorted(names):
        var = tx.symbolic_locals.get(name)
        if name in tx.code.co_freevars or var is None:
            continue  # free variables travel in the closure; unbound ones stay unbound
        live[name] = var
    for name in tx.code.co_varnames:
        # a local the rest never reads is still bound in eager, holding its object until
        # the frame returns or rebinds it: one the trace got from outside goes along
        var = tx.symbolic_locals.get(name)
        if name not in live and not name.startswith("___") and _kept_while_bound(var):
            live[name] = var
    code = tx.code
    if "__class__" in code.co_freevars and code.co_argcount:  # zero-argument super() reads it
        first = code.co_varnames[0]
        var = tx.symbolic_locals.get(first)
        var = var.contents if isinstance(var, CellVariable) else var
        if var is not None and first not in live:
            live[first] = var
    return live


def _kept_while_bound(var) -> bool:
    """Does a local the rest never reads go to the resume function anyway? An object from
    outside does (it costs a load; one made in the trace would cost a rebuild, and is left
    to die at the break), unless it is a number or string, whose lifetime nothing sees and
    whose value would only feed guards, or has a Python ``__del__``, whose run the trace of
    the rest could not place where CPython runs it (a rebinding drops it)."""
    if var is None or isinstance(var, CellVariable) or var.source is None:
        return False
    try:
        kind = type(var.value) if isinstance(var, LazyVariable) else var.python_type()
    except Exception:  # noqa: BLE001 - a tracker that cannot say its type stays behind
        return False
    return kind not in _VALUE_TYPES and not finalizable(kind)


_VALUE_TYPES = (int, float, complex, bool, str, bytes, type(None), torch.SymInt, torch.SymFloat, torch.SymBool)


def _contents(var):
    return var.contents if isinstance(var, CellVariable) else var


def _hand_over_cells(cg, lives):
    """(name -> temporary, names handed over as cells) for the live cell variables.

    A cell goes to the resume function as its contents, and the resume
    function's MAKE_CELL makes a new cell, unless the cell itself outlives the
    graph: a function rebuilt here holds it (``CellVariable.reconstruct``), or
    it came in as a cell. Then the cell itself is handed over, so a write on
    either side (the frame's STORE_DEREF, a closure's ``nonlocal``) is seen by
    the other. Everything the contents rebuild comes first: a closure among
    them may hold another of these cells.
    """
    cells = {name: var for live in lives for name, var in live.items() if isinstance(var, CellVariable)}
    for var in cells.values():
        if var.cell_source is None and var.contents is not None:
            cg.materialize(var.contents)
    temps, shared = {}, set()
    for name, var in cells.items():
        if var.cell_source is not None or id(var) in cg.temps:
            temps[name] = cg.materialize(var)
            shared.add(name)
        elif var.contents is not None:  # an empty cell stays unbound
            temps[name] = cg.materialize(var.contents)
    return temps, shared


def _copy_of(tx, inst, jump_block_start):
    """The break instruction for CPython to run (CALL with its PRECALL and KW_NAMES)."""
    if inst.opname == "CALL_KW":
        return [bytecode.create_instruction("CALL_KW", arg=inst.arg)]
    if inst.opname == "CALL":
        if tx.kw_names:
            return bytecode.create_call_kw(inst.arg, tx.kw_names)
        return bytecode.create_call(inst.arg)
    if inst.opname in _NEEDS_BOOL and "TO_BOOL" in pyver.OPNAMES:
        # 3.13's jumps and `not` take an exact bool; the traced TO_BOOL left a
        # tensor as it was, so CPython converts it here (a no-op on a bool)
        return [bytecode.create_instruction("TO_BOOL")] + _copy_of_plain(tx, inst, jump_block_start)
    return _copy_of_plain(tx, inst, jump_block_start)


# What 3.13 runs on an exact bool only (Python/bytecodes.c asserts it).
_NEEDS_BOOL = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "UNARY_NOT"})


def _copy_of_plain(tx, inst, jump_block_start):
    if inst.target is not None:
        return [bytecode.create_jump(inst.opname, jump_block_start)]
    if _is_method_load(inst):  # always (NULL, attr) for the resume function
        return [bytecode.create_load_attr(inst.argval)]
    return [bytecode.create_instruction(inst.opname, arg=inst.arg, argval=inst.argval)]


def _resume_block(cg, tx, func, brk, succ, below_slots, live, live_temps, shared_cells):
    """Store what the instruction left, call the resume function, return its result.

    At a handler the stack holds ``[lasti] exc``; ``lasti`` (where the frame
    raised, for tracebacks) is replaced by the break instruction's offset in
    the resume code, which is the original's shifted by the resume prefix.
    """
    block = type(cg)(cg.grad_mode)
    produced = [cg.new_temp() for _ in range(succ.pushed)]
    for temp in reversed(produced):
        block.store_fast(temp)
    kept = below_slots[:succ.depth]
    nulls, values = [(resume.NULL, None)] * succ.null, [(resume.VALUE, t) for t in produced]
    slots = kept + (values + nulls if pyver.NULL_ABOVE_CALLABLE else nulls + values)
    layout = [kind for kind, _ in slots]
    rcode = resume.resume_code(tx.code, succ.inst.offset, layout, list(live),
                               [name for name in live if name in shared_cells])
    if succ.handler:  # starts with PUSH_EXC_INFO: never traced, so never tried
        _C.mark_skip(rcode)
    else:
        brk.resume_codes.append(rcode)
    # _C.hand_over([resume, *arguments]): the resume function's frame owns its arguments
    block.emit_op("PUSH_NULL")
    block.load_const(_C.hand_over)
    _load_resume_function(block, func, tx.code, rcode, push_null=False)
    temps = dict(live_temps)
    temps.update(zip(resume.stack_arg_names(layout), [t for kind, t in slots if kind != resume.NULL]))
    lasti = produced[0] if succ.handler and succ.pushed == 2 else None
    names = resume.argument_names(tx.code, layout, list(live))
    for name in names:
        if temps[name] == lasti and lasti is not None:
            block.load_const((brk.instruction.offset + len(rcode.co_code) - len(tx.code.co_code)) // 2)
        elif temps[name] in cg.size_checks:  # the instruction may have changed the container's size
            container, size, message = cg.size_checks[temps[name]]
            block.emit_op("PUSH_NULL")
            block.load_const(checked_rest)
            block.load_fast(container)
            block.load_const(size)
            block.load_fast(temps[name])
            block.load_const(message)
            block.call(4)
        else:
            block.load_fast(temps[name])
    _drop_references(block, tx.code, cg.instructions + block.instructions)
    block.build(list, len(names) + 1)
    block.call(1)
    block.emit_op("RETURN_VALUE")
    return block.instructions


def _drop_references(block, code, emitted, keep=frozenset()):
    """Empty the frame's fast locals (its own variables, the temporaries and the
    graph's outputs) but those in ``keep``: before the break instruction, all it
    and the resume calls do not read; then, once the resume function's arguments
    are on the stack, all. The frame only returns after the call, and what the
    function drops (``del obj``, ``x = None``, a value it never reads again) must
    die where it dies in CPython, not when the frame returns (a weakref, a
    ``__del__``, ``gc.collect()`` as the break instruction, a big tensor). None is
    stored rather than deleted: a name may be unbound on this path."""
    names = [n for n in code.co_varnames if n not in code.co_cellvars] + [GRAPH_OUT]
    names += [i.argval for i in emitted if i.opname == "STORE_FAST" and i.argval not in names]
    for name in dict.fromkeys(names):
        if name not in keep:
            block.load_const(None)
            block.store_fast(name)


def _fast_reads(blocks) -> set:
    """The fast locals the instructions of ``blocks`` read (``LOAD_FAST_LOAD_FAST``: two)."""
    names = set()
    for block in blocks:
        for inst in block if isinstance(block, list) else [block]:
            if "FAST" in inst.opname and not inst.opname.startswith("STORE"):
                names.update(inst.argval if isinstance(inst.argval, tuple) else (inst.argval,))
            if inst.opname == "STORE_FAST_LOAD_FAST":
                names.add(inst.argval[1])
    return names


def fresh_resume_name(rcode) -> str:
    """A global name for a resume function of ``rcode`` that no other has in this process."""
    return f"__resume_{next(_resume_names)}_{rcode.co_name}"


def _load_resume_function(cg, func, code, rcode, push_null=True):
    """Push (NULL and) the resume function: a global, or made here when it needs the closure."""
    if not code.co_freevars:
        name = fresh_resume_name(rcode)
        func.__globals__[name] = types.FunctionType(rcode, func.__globals__, rcode.co_name)
        cg.load_global(name, push_null=push_null)
        return
    if push_null:
        cg.emit_op("PUSH_NULL")
    for name in code.co_freevars:
        cg.emit_op("LOAD_CLOSURE", argval=name)
    cg.emit_op("BUILD_TUPLE", arg=len(code.co_freevars))
    cg.load_const(rcode)
    cg.emit(bytecode.create_make_closure())


def cannot_resume(brk: GraphBreak, error: Unsupported) -> Unsupported:
    """The whole-frame error when a break's state cannot be handed over."""
    code, line = brk.frames[-1]
    context = (f"{brk.entry.title} at {code.co_filename}:{line} ({brk.context}); "
               f"cannot resume: {error.context or error}")
    try:
        unsupported("cannot_resume", context)
    except Unsupported as e:
        e.where = f"{code.co_filename}:{line} in {code.co_name}"
        e.break_entry = brk.entry  # the break itself (convert_frame retries some: errors.RETRY)
        return e
