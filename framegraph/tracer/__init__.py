"""The tracer: one frame in, a guarded replacement code object out.

``trace_frame(func, code, f_locals, options)`` runs the pipeline steps 1, 2,
3, 5 and 6 of the brief for one frame:

1. wrap the frame's arguments and closure cells (lazily: each is wrapped,
   and guarded, the first time the code reads it);
2. run ``InstructionTranslator`` to RETURN_VALUE, inlining user calls,
   recording tensor work in the OutputGraph;
3. compile the graph with the backend (unless it is empty) and install the
   result as the global ``__compiled_fn_<n>`` of ``func``;
4. generate the replacement code (codegen.py) and the guard (guards.py).

It raises ``Unsupported`` when the frame cannot be captured.
"""
import dataclasses
import itertools
import types
from typing import Any, List, Optional

import torch

from ..codegen import PyCodegen, assemble_frame_code, graph_call
from ..guards import CompiledGuard
from ..output_graph import OutputGraph
from ..variables.dicts import ConstDictVariable
from ..variables.lists import BaseListVariable
from ..variables.tensor import TensorVariable
from .translator import InstructionTranslator

_compiled_names = itertools.count(1)  # process-wide, so global names never collide


@dataclasses.dataclass
class CompiledFrame:
    """What the cache stores for one trace (``guard``, ``code``) plus diagnostics."""

    guard: CompiledGuard
    code: types.CodeType
    original_code: types.CodeType
    graph_module: Optional[torch.fx.GraphModule]
    compiled_fn_name: Optional[str]
    op_count: int
    guard_lines: List[str]
    compiled_fn: Any = None

    @property
    def graph_count(self) -> int:
        return int(self.graph_module is not None)


def _graph_tensors(value, found):
    """Tensors in a returned structure that the graph must output (by node id)."""
    if isinstance(value, TensorVariable):
        if value.node.op != "placeholder":
            found.setdefault(id(value.node), value)
    elif isinstance(value, BaseListVariable):
        for item in value.items:
            _graph_tensors(item, found)
    elif isinstance(value, ConstDictVariable):
        for _, item in value.items.values():
            _graph_tensors(item, found)
    return found


def trace_frame(func, code, f_locals, options) -> CompiledFrame:
    output = OutputGraph(options)
    tx = InstructionTranslator(output, func, code, f_locals)
    try:
        tx.run()
    finally:
        torch._C._set_grad_enabled(output.initial_grad_mode)
    result = tx.return_value
    outputs = list(_graph_tensors(result, {}).values())
    cg = PyCodegen({id(t.node): i for i, t in enumerate(outputs)})
    cg(result)  # raises Unsupported before compiling if the result cannot be rebuilt
    rebuild = cg.instructions
    name = f"__compiled_fn_{next(_compiled_names)}"
    op_count = output.op_count()
    compiled, gm = output.compile(outputs, name)
    body = PyCodegen()
    if compiled is not None:
        graph_call(body, name, [v.source for v in output.inputs])
        func.__globals__[name] = _run_untraced(compiled)
    else:
        name, op_count = None, 0
    body.emit(rebuild)
    body.emit(_return_value())
    line = tx.current_instruction.starts_line or code.co_firstlineno
    new_code = assemble_frame_code(code, body.instructions, tx.arg_names, _line(tx, line))
    guard = CompiledGuard(list(output.guards), tx.arg_names)
    return CompiledFrame(guard, new_code, code, gm, name, gm and _count_ops(gm) or op_count * 0,
                         guard.lines, compiled)


def _run_untraced(compiled):
    """The compiled graph runs with the frame hook off (its frames are not user code)."""
    from .. import _C

    return _C.Wrapper(compiled, None)


def _count_ops(gm) -> int:
    return sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output"))


def _return_value():
    from ..bytecode import create_instruction

    return create_instruction("RETURN_VALUE")


def _line(tx, default):
    from .translator import _line_of

    line = _line_of(tx.instructions, tx.ip - 1)
    return line if isinstance(line, int) else default


__all__ = ["trace_frame", "CompiledFrame", "InstructionTranslator"]
