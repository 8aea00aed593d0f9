"""The end of a trace: compile the graph, generate the replacement code, guard it.

``finish_frame`` turns a stopped translator into a ``CompiledFrame``. The
replacement code is, in order:

    COPY_FREE_VARS / RESUME                 (pycodegen.assemble_frame_code)
    graph_out_0 = __compiled_fn_N(*inputs)  (if the graph did any work)
    rebuild values into temporaries         (rebuild.FrameCodegen)
    replay side effects                     (side_effects.py)
    return the rebuilt return value         (``return_code``) -- or, at a graph break --
    the break instruction and the resume calls (``breaks.split.break_code``)

The rebuilding code is generated first: it decides which tensors the graph
must output, and only then is the graph finished and compiled.
"""
import dataclasses
import itertools
import time
import types
from typing import Any, List, Optional

import torch

from .. import bytecode
from ..guards.compile import CompiledGuard
from ..guards.filter import apply_filter
from . import pycodegen as codegen
from .pycodegen import PyCodegen, graph_call
from .rebuild import FrameCodegen

_compiled_names = itertools.count(1)  # process-wide, so global names never collide


def fresh_compiled_name() -> str:
    """A global name for a compiled graph that no other graph of this process has."""
    return f"__compiled_fn_{next(_compiled_names)}"


@dataclasses.dataclass
class CompiledFrame:
    """What the cache stores for one trace (``guard``, ``code``) plus diagnostics.

    ``guard`` is the bare check function the C hook calls; ``guards`` the
    CompiledGuard it came from (readable lines, ``failure()``).
    """

    guard: Any
    guards: CompiledGuard
    code: types.CodeType
    original_code: types.CodeType
    graph_module: Optional[torch.fx.GraphModule]
    compiled_fn_name: Optional[str]
    op_count: int
    compiled_fn: Any = None
    breaks: List[Any] = dataclasses.field(default_factory=list)  # breaks.split.GraphBreak
    input_readers: List[Any] = dataclasses.field(default_factory=list)  # guards.reader.Reader the code calls
    traced_files: Any = frozenset()  # the files of the code the trace stepped through
    constant_results: List[Any] = dataclasses.field(default_factory=list)  # calls answered at trace time
    times: dict = dataclasses.field(default_factory=dict)  # seconds per phase, for reports

    @property
    def guard_lines(self) -> List[str]:
        """The guards in words, one line each (written when first asked for)."""
        return self.guards.lines

    @property
    def graph_count(self) -> int:
        return int(self.graph_module is not None)


def finish_frame(func, code, tx, cg, brk):
    """The CompiledFrame of a trace that returned (``brk`` None) or stopped at ``brk``;
    ``cg`` holds the code that runs after the graph (``return_code``, or the break
    site's code from ``breaks.split.break_code``)."""
    output = tx.output
    name = fresh_compiled_name()
    start = time.perf_counter()
    compiled, gm = output.compile(cg.outputs, name)
    output.backend_seconds = time.perf_counter() - start
    body = PyCodegen()
    if compiled is not None:
        graph_call(body, name, output.direct_input_sources, output.input_readers)
        func.__globals__[name] = run_untraced(compiled)
    else:
        name = None
    body.emit(cg.instructions)
    new_code = codegen.assemble_frame_code(code, body.instructions, tx.arg_names, _line(tx, code))
    output.add_guard("SAME_GLOBALS", None, id(func.__globals__))
    guards = list(output.guards)
    keep = getattr(output.options, "guard_filter_fn", None)  # options={"guard_filter_fn": ...}
    if keep is not None:
        guards = apply_filter(guards, keep)
    guard = CompiledGuard(guards, tx.arg_names)
    op_count = sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output")) if gm else 0
    frame = CompiledFrame(guard.fn, guard, new_code, code, gm, name, op_count, compiled)
    frame.breaks = [brk] if brk is not None else []
    frame.input_readers = list(getattr(output, "input_readers", None) or ())
    frame.traced_files = frozenset(output.traced_files)
    frame.constant_results = list(output.constant_results)
    if brk is not None:
        brk.log_once()
    return frame


def return_code(tx):
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


def run_untraced(compiled):
    """The compiled graph runs with the frame hook off (its frames are not user code)."""
    from .. import _C

    return _C.Wrapper(compiled, None)


def _line(tx, code):
    """The line the replacement code reports: the break's, or the return's."""
    index = tx.ip if not tx.done else tx.ip - 1
    line = bytecode.line_of(tx.instructions, index)
    return line if isinstance(line, int) else code.co_firstlineno
