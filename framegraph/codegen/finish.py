"""The end of a trace: compile the graph, generate the replacement code, guard it.

``finish_frame`` turns a stopped translator into a ``CompiledFrame``. The
replacement code is, in order:

    COPY_FREE_VARS / RESUME                 (codegen.assemble_frame_code)
    graph_out_0 = __compiled_fn_N(*inputs)  (if the graph did any work)
    rebuild values into temporaries         (rebuild.FrameCodegen)
    replay side effects                     (side_effects.py)
    return the rebuilt return value  -- or, at a graph break --
    the break instruction and the resume calls (breaks.emit_break)

The rebuilding code is generated first: it decides which tensors the graph
must output, and only then is the graph finished and compiled.
"""
import itertools
import time

import torch

from . import pycodegen as codegen
from .pycodegen import PyCodegen, graph_call
from ..errors import Unsupported
from ..guards.compile import CompiledGuard
from ..breaks.split import cannot_resume, emit_break
from .rebuild import FrameCodegen

_compiled_names = itertools.count(1)  # process-wide, so global names never collide


def finish_frame(func, code, tx, brk):
    """The CompiledFrame of a trace that returned (``brk`` None) or stopped at ``brk``."""
    from ..tracer import CompiledFrame

    output = tx.output
    if brk is None:
        cg = _return_code(tx)
    else:
        cg = _break_code(func, tx, brk)
    name = f"__compiled_fn_{next(_compiled_names)}"
    start = time.perf_counter()
    compiled, gm = output.compile(cg.outputs, name)
    output.backend_seconds = time.perf_counter() - start
    body = PyCodegen()
    if compiled is not None:
        graph_call(body, name, output.direct_input_sources, output.input_readers)
        func.__globals__[name] = _run_untraced(compiled)
    else:
        name = None
    body.emit(cg.instructions)
    new_code = codegen.assemble_frame_code(code, body.instructions, tx.arg_names, _line(tx, code))
    output.add_guard("SAME_GLOBALS", None, id(func.__globals__))
    guard = CompiledGuard(list(output.guards), tx.arg_names)
    op_count = sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output")) if gm else 0
    frame = CompiledFrame(guard.fn, guard, new_code, code, gm, name, op_count, guard.lines, compiled)
    frame.breaks = [brk] if brk is not None else []
    if brk is not None:
        brk.log_once()
    return frame


def _return_code(tx):
    """Rebuild the return value, replay side effects, return."""
    cg = FrameCodegen(tx.output.grad_mode)
    if not tx.output.side_effects:  # the brief's shape: ``return graph_out_0[0]``
        cg(tx.return_value)  # raises Unsupported before compiling
        cg.emit_op("RETURN_VALUE")
        return cg
    cg.expect_replay(tx.output.side_effects)
    result = cg.materialize(tx.return_value)
    tx.output.side_effects.prepare(cg)
    cg.replay_side_effects(tx.output.side_effects)
    cg.load_fast(result)
    cg.emit_op("RETURN_VALUE")
    return cg


def _break_code(func, tx, brk):
    """The graph ends in the grad mode the frame started in; the break site sets
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


def _run_untraced(compiled):
    """The compiled graph runs with the frame hook off (its frames are not user code)."""
    from .. import _C

    return _C.Wrapper(compiled, None)


def _line(tx, code):
    """The line the replacement code reports: the break's, or the return's."""
    from ..tracer.translator import _line_of

    index = tx.ip if not tx.done else tx.ip - 1
    line = _line_of(tx.instructions, index)
    return line if isinstance(line, int) else code.co_firstlineno
