"""framegraph.bytecode: read, edit and write CPython code objects.

The pipeline is ``decode`` (code -> list of mutable Instructions with object
references for jumps and exception handlers), edits by a code generator, and
``assemble`` (Instructions -> code object: offsets, EXTENDED_ARG, caches,
names/consts/locals tables, stack size, line and exception tables).
``transform_code`` wraps the three steps; ``analysis`` answers questions about
an instruction list (stack depths, live variables) and prints listings.

Everything version-specific comes from ``framegraph.pyver``; the rest of
framegraph only imports this package for bytecode work.
"""

from .instruction import (
    ExceptionTableEntry, Instruction, create_call, create_call_kw,
    create_dup_top, create_for_iter, create_instruction, create_jump, create_load_attr,
    create_load_const, create_load_fast, create_load_global, create_load_method,
    create_make_closure, create_null_first_fix, create_rot_n, create_store_fast, create_swap,
)
from .decode import decode

__all__ = [
    "ExceptionTableEntry", "Instruction", "create_call", "create_call_kw",
    "create_dup_top", "create_instruction", "create_jump", "create_load_attr",
    "create_load_const", "create_load_fast", "create_load_global",
    "create_rot_n", "create_store_fast", "create_swap", "decode",
    "create_for_iter", "create_load_method", "create_null_first_fix",
    "create_make_closure",
]
from .assemble import assemble, const_key
from .analysis import (
    format_bytecode, format_instructions, line_of, livevars_at, max_stack_depth, stack_depths,
)
from .transform import compare_code, round_trip, transform_code

__all__ += [
    "assemble", "const_key", "format_bytecode", "format_instructions",
    "line_of", "livevars_at", "max_stack_depth", "stack_depths", "compare_code",
    "round_trip", "transform_code",
]
