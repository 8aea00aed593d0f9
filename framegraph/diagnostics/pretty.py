"""Readable renderings of what the compiler made: graphs, bytecode, guards.

Used by the log channels (`logs.py`) and by `explain()`. Each function
returns a string; nothing here runs on the per-call path.
"""
import linecache

import torch

from ..bytecode import format_bytecode
from .decompile import decompile


def describe_value(value) -> str:
    """`f32[8, 3]` for a tensor (fake or real), repr for anything else."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace("torch.", "")
        short = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                 "int64": "i64", "int32": "i32", "bool": "b8"}.get(dtype, dtype)
        dims = ", ".join(str(d) for d in value.shape)
        return f"{short}[{dims}]"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(describe_value(v) for v in value) + ")"
    return type(value).__name__


def format_graph(gm, name="graph") -> str:
    """The graph as Python, each line with its value's shape and dtype and the user line it came from."""
    out = [f"{name}:"]
    code_lines = {}
    for line in gm.code.strip().splitlines():
        stripped = line.strip()
        key = stripped.split(" = ", 1)[0] if " = " in stripped else None
        code_lines[key] = line
    out.append(gm.code.strip().splitlines()[0] if gm.code.strip() else "def forward(self):")
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            note = describe_value(node.meta.get("example_value"))
            out.append(f"    # input {node.name}: {note}")
            continue
        line = code_lines.get(node.name)
        if node.op == "output":
            out.append(f"    return {node.args[0]}")
            continue
        if line is None:
            continue
        text = line.rstrip()
        note = describe_value(node.meta.get("example_value"))
        where = node.meta.get("location")
        if where:
            filename, lineno = where
            src = linecache.getline(filename, lineno).strip() if isinstance(lineno, int) else ""
            note += f"  ({filename.rsplit('/', 1)[-1]}:{lineno}: {src})"
        out.append(f"{text.split(';')[0]}  # {note}")
    return "\n".join(out)


def format_code_change(original, modified) -> str:
    """ORIGINAL and MODIFIED BYTECODE listings, then the modified code as Python."""
    return "\n".join([
        format_bytecode("ORIGINAL BYTECODE", original),
        format_bytecode("MODIFIED BYTECODE", modified),
        "MODIFIED CODE AS PYTHON (decompiled)",
        decompile(modified),
    ])


def format_guards(name, lines) -> str:
    """`GUARDS f` then one guard per line."""
    return "\n".join([f"GUARDS {name}"] + [f"  {line}" for line in lines])
