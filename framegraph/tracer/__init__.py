"""The tracer: one frame in, a guarded replacement code object out.

``trace_frame(func, code, f_locals, options)`` runs the pipeline steps 1, 2,
3, 5 and 6 of the brief for one frame:

1. wrap the frame's arguments and closure cells (lazily: each is wrapped,
   and guarded, the first time the code reads it);
2. run ``InstructionTranslator`` to RETURN_VALUE, inlining user calls,
   recording tensor work in the OutputGraph and mutations of outside
   objects in the side-effect ledger; or up to a graph break (breaks.py);
3. compile the graph with the backend (unless it is empty) and install the
   result as the global ``__compiled_fn_<n>`` of ``func``;
4. generate the replacement code and the guard (finish.py, guards.py).

It raises ``Unsupported`` when the frame cannot be captured.
"""
import dataclasses
import time
import types
from typing import Any, List, Optional

import torch

from ..guards.compile import CompiledGuard
from ..graph.output_graph import OutputGraph
from .translator import InstructionTranslator


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
    guard_lines: List[str]
    compiled_fn: Any = None
    breaks: List[Any] = dataclasses.field(default_factory=list)  # breaks.GraphBreak
    times: dict = dataclasses.field(default_factory=dict)  # seconds per phase, for reports

    @property
    def graph_count(self) -> int:
        return int(self.graph_module is not None)


def trace_frame(func, code, f_locals, options) -> CompiledFrame:
    """Trace one frame to its return, or to its first graph break (see breaks.py)."""
    from ..side_effects import SideEffects
    from ..breaks.split import run_root
    from ..codegen.finish import finish_frame

    def make_translator():
        output = OutputGraph(options)
        output.shapes.bind(code)  # sizes seen by earlier traces of this code (automatic dynamic)
        output.side_effects = SideEffects(func.__globals__)
        return InstructionTranslator(output, func, code, f_locals)

    start = time.perf_counter()
    tx, brk = run_root(make_translator, options)
    traced = time.perf_counter()
    frame = finish_frame(func, code, tx, brk)
    backend = getattr(tx.output, "backend_seconds", 0.0)
    frame.times = {"trace": traced - start, "backend": backend,
                   "guards+codegen": time.perf_counter() - traced - backend}
    return frame


__all__ = ["trace_frame", "CompiledFrame", "InstructionTranslator"]
