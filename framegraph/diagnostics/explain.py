"""The explain report: graphs, breaks, ops and guards of one compiled run.

    out = framegraph.explain(g)(x)
    print(out)          # Graph Count: 2 / Graph Break Count: 1 / Break Reasons / ...

``runtime/explain.py`` runs the function compiled with a recording backend
and collects the ``CompileRecord`` of every trace attempt (``records.py``);
``summarise`` turns them into an ``ExplainOutput``: the captured graphs, each
graph break with its catalogue entry and user location, the guards of each
new cache entry and the time each trace took. Nothing here compiles.
"""
import dataclasses
from typing import Any, List, Optional

import torch

from .records import CompileRecord


@dataclasses.dataclass
class BreakReason:
    """One graph break (or one frame that could not be captured at all)."""

    reason: str                 # the catalogue title, or the error text
    explanation: str = ""
    hint: str = ""
    context: str = ""           # developer debug context
    user_stack: List[str] = dataclasses.field(default_factory=list)  # "file:line in name"

    def __str__(self):
        lines = [f"Reason: {self.reason}"]
        if self.explanation:
            lines.append(f"  Explanation: {self.explanation}")
        if self.hint:
            lines.append(f"  Hint: {self.hint}")
        if self.context:
            lines.append(f"  Developer debug context: {self.context}")
        lines += [f"  User Stack: {where}" for where in self.user_stack]
        return "\n".join(lines)


@dataclasses.dataclass
class ExplainOutput:
    """What `explain(fn)(*args)` found."""

    graphs: List[Any]
    graph_count: int
    graph_break_count: int
    break_reasons: List[BreakReason]
    op_count: int
    ops_per_graph: List[List[str]]
    guards: List[str]
    compile_times: List[tuple]  # (frame name, seconds)
    result: Any = None          # what the call returned

    def __str__(self):
        out = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
               f"Op Count: {self.op_count}"]
        if self.break_reasons:
            out.append("Break Reasons:")
            for i, reason in enumerate(self.break_reasons, 1):
                out.append(f"  Break Reason {i}:")
                out += ["    " + line for line in str(reason).splitlines()]
        if self.ops_per_graph:
            out.append("Ops per Graph:")
            for i, ops in enumerate(self.ops_per_graph, 1):
                out.append(f"  Ops {i}:")
                out += [f"    {op}" for op in ops]
        if self.guards:
            out.append("Out Guards:")
            out += [f"  {g}" for g in self.guards]
        out.append("Compile Times: " + ", ".join(f"{name}: {sec * 1e3:.1f} ms" for name, sec in self.compile_times))
        return "\n".join(out)


def summarise(graphs, records: List[CompileRecord], result) -> "ExplainOutput":
    """The report of one explained run: the graphs the backend got, the records
    of every trace attempt, and what the run returned."""
    ops = [[_op_name(n) for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module")]
           for gm in graphs]
    reasons, guards = [], []
    for record in records:
        if record.error is not None:
            reasons.append(_reason_from_error(record.error, record.code))
        compiled = record.compiled
        if compiled is not None:
            reasons += [_reason_from_break(b) for b in getattr(compiled, "breaks", ())]
            guards += list(_guard_lines(compiled))
    return ExplainOutput(
        graphs=graphs, graph_count=len(graphs), graph_break_count=len(reasons),
        break_reasons=reasons, op_count=sum(map(len, ops)), ops_per_graph=ops, guards=guards,
        compile_times=[(r.code.co_name, r.seconds) for r in records], result=result)


def _namespaces():
    import operator

    import torch

    return (("torch", torch), ("torch.nn.functional", torch.nn.functional), ("operator", operator))


_NAMESPACES = _namespaces()


def _op_name(node):
    """A readable name for a graph node's operation: torch.sin, Tensor.add_, operator.add."""
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module":
        return f"module {node.target}"
    target = node.target
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"torch.ops.higher_order.{target.name()}"
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return f"torch.ops.{target}"  # aten.slice.Tensor
    short = getattr(target, "__name__", None)
    for prefix, namespace in _NAMESPACES:
        if short and getattr(namespace, short, None) is target:
            return f"{prefix}.{short}"
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or short
    if not (module and name):
        return str(target)
    return f"{module.replace('_operator', 'operator')}.{name}"


def _reason_from_error(error, code):
    entry = getattr(error, "entry", None)
    where = getattr(error, "where", None) or f"{code.co_filename}:{code.co_firstlineno} in {code.co_name}"
    if entry is None:
        return BreakReason(reason=f"{type(error).__name__}: {error}", user_stack=[where])
    return BreakReason(reason=entry.title, explanation=entry.explanation, hint=entry.hint,
                       context=getattr(error, "context", ""), user_stack=[where])


def _reason_from_break(brk):
    entry = brk.entry
    return BreakReason(reason=entry.title, explanation=entry.explanation, hint=entry.hint,
                       context=brk.context, user_stack=list(brk.user_stack))


def _guard_lines(compiled) -> Optional[List[str]]:
    lines = getattr(compiled, "guard_lines", None)
    if lines is None:
        lines = getattr(compiled.guard, "lines", [])
    return lines
