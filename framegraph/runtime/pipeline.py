"""One frame through the pipeline: a guarded replacement code object out.

``trace_frame(func, code, f_locals, options)`` runs steps 1 to 6 of the brief
for one frame, each in its own package:

1. and 2. ``breaks.split.run_root`` runs the root ``tracer`` translator to
   RETURN_VALUE, or to right before its first graph break; the frame's
   arguments and cells are wrapped lazily, recorded tensor work goes into the
   ``graph`` OutputGraph, mutations of outside objects into the side-effect
   ledger;
3. to 6. ``codegen.finish.finish_frame`` compiles the graph with the backend
   (unless it is empty), installs it as the global ``__compiled_fn_<n>`` of
   ``func``, generates the replacement code (``codegen.finish.return_code``,
   or the break site's ``breaks.split.break_code``) and compiles the guards.

convert_frame imports this module on the first trace only: it loads the
torch.fx machinery. It raises ``Unsupported`` when the frame cannot be captured.
"""
import time

from ..breaks.api import is_compiling
from ..breaks.split import break_code, run_root
from ..codegen.finish import CompiledFrame, finish_frame, return_code
from ..graph.output_graph import OutputGraph
from ..side_effects import SideEffects
from ..tracer.translator import InstructionTranslator
from ..variables.tensors.torch_fn import TRACE_TIME
from . import skip

# framegraph.is_compiling() is the constant True in a trace, like torch.compiler's
TRACE_TIME[is_compiling] = lambda tx: True


def trace_frame(func, code, f_locals, options) -> CompiledFrame:
    """Trace one frame to its return, or to its first graph break (see breaks/split.py)."""

    def make_translator():
        output = OutputGraph(options)
        output.shapes.bind(code)  # sizes seen by earlier traces of this code (automatic dynamic)
        output.side_effects = SideEffects(func.__globals__)
        return InstructionTranslator(output, func, code, f_locals)

    start = time.perf_counter()
    tx, brk = run_root(make_translator, options)
    traced = time.perf_counter()
    cg = return_code(tx) if brk is None else break_code(func, tx, brk)
    frame = finish_frame(func, code, tx, cg, brk)
    for rcode in brk.resume_codes if brk is not None else ():
        skip.add_user_root(rcode)  # the rest of the frame is traced, wherever it lives
    backend = getattr(tx.output, "backend_seconds", 0.0)
    frame.times = {"trace": traced - start, "backend": backend,
                   "guards+codegen": time.perf_counter() - traced - backend}
    return frame
