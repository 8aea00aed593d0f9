"""`FRAMEGRAPH_TRACE=<dir>`: a structured log (JSON lines) of every compile.

One line per trace attempt of one frame, written as it happens to
`<dir>/framegraph_trace_<pid>.jsonl`: the frame (name, file, line), the
attempt number (1 = first compile, more = recompiles, with the reasons),
the outcome (compiled, graph break, fell back to eager), timings per phase,
the graphs as code, the guard lines, every graph break with its catalogue
entry and user location, and the generated code as Python. `framegraph
report <dir>` turns these files into an HTML report (report.py).
"""
import json
import os
import time

from .records import CompileRecord, observers

_writer = None


def _frame_info(code):
    # a resume function's name is its original's; its qualname ends in _resume_at_<line>
    return {"name": code.co_qualname.rsplit(".", 1)[-1], "qualname": code.co_qualname, "file": code.co_filename,
            "line": code.co_firstlineno}


def record_to_json(record: CompileRecord) -> dict:
    """Everything about one trace attempt, as JSON-able data."""
    from .decompile import decompile

    out = {
        "time": time.time(),
        "frame": _frame_info(record.code),
        "attempt": record.entries_before + 1,
        "recompile_reasons": list(record.reasons),
        "seconds": record.seconds,
        "phases": dict(getattr(record.compiled, "times", None) or {"total": record.seconds}),
    }
    compiled = record.compiled
    if record.error is not None:
        entry = getattr(record.error, "entry", None)
        out["outcome"] = "eager"
        out["error"] = {"type": type(record.error).__name__, "message": str(record.error),
                        "title": getattr(entry, "title", None), "where": getattr(record.error, "where", None)}
        return out
    breaks = list(getattr(compiled, "breaks", ()) or ())
    out["outcome"] = "graph_break" if breaks else "compiled"
    gm = getattr(compiled, "graph_module", None)
    out["graphs"] = [gm.code.strip()] if gm is not None else []
    out["op_count"] = getattr(compiled, "op_count", 0)
    out["guards"] = list(getattr(compiled, "guard_lines", None) or [])
    out["breaks"] = [{"title": b.entry.title, "explanation": b.entry.explanation, "hint": b.entry.hint,
                      "context": b.context, "user_stack": list(b.user_stack)} for b in breaks]
    try:
        out["generated_source"] = decompile(compiled.code)
    except Exception as e:  # a diagnostic must not fail the compile
        out["generated_source"] = f"# could not decompile: {e!r}"
    return out


class _Writer:
    def __init__(self, directory):
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(directory, f"framegraph_trace_{os.getpid()}.jsonl")

    def __call__(self, record):
        line = json.dumps(record_to_json(record), default=str)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def enable(directory):
    """Start writing the structured log into `directory` (what FRAMEGRAPH_TRACE does)."""
    global _writer
    disable()
    _writer = _Writer(directory)
    observers.append(_writer)
    return _writer.path


def disable():
    """Stop writing the structured log."""
    global _writer
    if _writer is not None and _writer in observers:
        observers.remove(_writer)
    _writer = None


def configure_from_env(environ=os.environ):
    """Apply `FRAMEGRAPH_TRACE` (called once at import)."""
    directory = environ.get("FRAMEGRAPH_TRACE")
    if directory:
        enable(directory)
