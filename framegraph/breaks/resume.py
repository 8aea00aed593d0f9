"""Resume functions: the rest of a frame after a graph break, as a new code object.

When tracing stops at an instruction it cannot model, the graph so far runs,
CPython runs that instruction on real values, and the rest of the function
continues in a *resume function*: a copy of the original code with a short
prefix that

  1. runs the prologue (COPY_FREE_VARS, MAKE_CELL, RESUME) the original had,
  2. pushes the live stack values, received as leading arguments
     (``___stack0``, ...) and unbound once pushed, and a NULL where the stack held one; an iterator
     (a ``for`` loop's) arrives as a tuple of the items it had left and is
     pushed as ``iter(tuple)`` (``ITER``), so tracing the resume function
     unrolls the rest of the loop,
  3. jumps to the instruction after the break.

The live locals are the remaining arguments, under their original names, so
the copied code reads them unchanged. Everything else in the copy, including
its exception table and line numbers, is the original's: tracebacks point at
the user's file and lines, and a ``try`` around the break still catches. The
hook sees the resume function as a new frame and traces it again.

Resume codes are cached per (code, offset, stack layout, live names).
"""
import inspect
import re
import weakref

from .. import bytecode

NULL = "null"
VALUE = "value"
ITER = "iter"

_cache = weakref.WeakKeyDictionary()  # code -> {key: resume code}
_depth = weakref.WeakKeyDictionary()  # resume code -> how many resume functions deep it is
MAX_DEPTH = 16
_PROLOGUE = frozenset({"COPY_FREE_VARS", "MAKE_CELL", "RESUME"})


def stack_arg_names(layout):
    """Argument names for the stack slots of `layout` that hold values."""
    return [f"___stack{i}" for i, kind in enumerate(layout) if kind != NULL]


def argument_names(code, layout, live_locals):
    """The resume function's parameters, in order: the stack values, then the live locals.

    A method that uses zero-argument ``super()`` (a ``__class__`` free
    variable) keeps its first argument first: CPython's ``super()`` reads the
    first local of the frame, so the resume function's must be ``self`` too.
    """
    names = stack_arg_names(layout) + list(live_locals)
    if "__class__" in code.co_freevars and code.co_argcount and code.co_varnames[0] in live_locals:
        first = code.co_varnames[0]
        names.remove(first)
        names.insert(0, first)
    return names


def resume_code(code, offset, layout, live_locals, cell_args=()):
    """The code object that continues `code` at the instruction at `offset`.

    `layout` is the stack at that point, bottom first, one of `VALUE`,
    `ITER` or `NULL` per slot; `live_locals` are the local names whose values the rest
    of the function reads. The result takes the stack values, then the live
    locals, as positional arguments (see ``argument_names``). A cell variable
    arrives as its value, which MAKE_CELL wraps in a new cell, except those in
    `cell_args`: they arrive as the cell itself (shared with a function made
    before the break), and get no MAKE_CELL.
    """
    key = (offset, tuple(layout), tuple(live_locals), tuple(cell_args))
    per_code = _cache.setdefault(code, {})
    if key not in per_code:
        depth = _depth.get(code, 0) + 1
        if depth > MAX_DEPTH:
            # a loop that breaks at every iteration makes a resume function of a resume
            # function each time, each traced and built anew: the rest runs unmodified
            from ..errors import unsupported

            unsupported("trace_too_long", f"a chain of {MAX_DEPTH} resume functions")
        built = per_code[key] = _build(code, offset, tuple(layout), tuple(live_locals), frozenset(cell_args))
        _depth[built] = depth
    return per_code[key]


def _build(code, offset, layout, live_locals, cell_args):
    insts = bytecode.decode(code)
    target = next((i for i in insts if i.offset == offset), None)
    if target is None:
        raise ValueError(f"no instruction at offset {offset} in {code.co_name}")
    args = argument_names(code, layout, live_locals)
    prefix = _prologue(code, cell_args) + _push_stack(layout) + [bytecode.create_jump("JUMP_FORWARD", target)]
    for inst in prefix:
        inst.positions = target.positions
        inst.starts_line = None
    body = [_neutralise(i) for i in insts]
    varnames = args + [v for v in code.co_varnames if v not in args]
    line = target.positions[0] if target.positions and target.positions[0] else code.co_firstlineno
    # co_name stays the function's own, as CPython's tracebacks show it
    # (traceback.extract_tb(...).name); the qualname says where it resumes
    return bytecode.assemble(
        prefix + body, code,
        co_varnames=tuple(varnames), co_argcount=len(args), co_posonlyargcount=0,
        co_kwonlyargcount=0, co_flags=code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS),
        co_name=code.co_name, co_qualname=f"{_base_name(code.co_qualname)}_resume_at_{line}",
    )


def _base_name(name):
    """A resume function of a resume function is named after the original."""
    return re.sub(r"_resume_at_\d+$", "", name)


def _prologue(code, cell_args):
    """COPY_FREE_VARS, MAKE_CELL per cell (not for cells received), RESUME: what the original ran first."""
    out = []
    if code.co_freevars:
        out.append(bytecode.create_instruction("COPY_FREE_VARS", arg=len(code.co_freevars)))
    for name in code.co_cellvars:
        if name not in cell_args:
            out.append(bytecode.create_instruction("MAKE_CELL", argval=name))
    out.append(bytecode.create_instruction("RESUME", arg=0))
    return out


def _push_stack(layout):
    """Push the stack, then unbind the arguments it came in: on the stack a value lives as
    long as the original frame kept it there (an exception being handled, a call's
    operand), not for the rest of the resume function."""
    out = []
    names = stack_arg_names(layout)
    pending = iter(names)
    for kind in layout:
        if kind == NULL:
            out.append(bytecode.create_instruction("PUSH_NULL"))
        else:
            out.append(bytecode.create_load_fast(next(pending)))
            if kind == ITER:
                out.append(bytecode.create_instruction("GET_ITER"))
    return out + [bytecode.create_instruction("DELETE_FAST", argval=name) for name in names]


def _neutralise(inst):
    """The copied prologue must not run twice: turn it into NOPs (kept as jump targets)."""
    if inst.opname in _PROLOGUE:
        inst.opname, inst.arg, inst.argval = "NOP", None, None
    return inst
