"""Mutable instructions: the unit every bytecode rewrite works on.

An ``Instruction`` is one CPython instruction with its argument already
*resolved*: ``argval`` is the name, the constant or the local variable name,
and a jump's ``target`` is the ``Instruction`` object it lands on. There are
no CACHE entries and no EXTENDED_ARG in an instruction list: ``decode`` folds
them away and ``assemble`` re-creates them. So code generators insert, delete
and reorder instructions freely, and only the assembler deals with offsets,
indexes into ``co_names``/``co_consts``/localsplus and jump distances.

Exception handling follows the same rule: each instruction covered by a try
range points (``exn_entry``) at a shared ``ExceptionTableEntry`` whose
``target`` is the handler instruction. We chose per-instruction entries over
TryBegin/TryEnd markers because inserted code inherits a range by copying its
neighbour's ``exn_entry``, and the tracer can ask any instruction which
handler is active without scanning for markers.

``arg`` stays meaningful for opcodes whose argument is a plain number (CALL n,
BINARY_OP kind, BUILD_TUPLE n...). For LOAD_GLOBAL its low bit is the
push-NULL flag (see ``pyver.load_global_arg``); the assembler fills in the rest.
"""

import dataclasses
from typing import Any, Optional

from framegraph import pyver

_UNSET = object()


@dataclasses.dataclass(eq=False)
class ExceptionTableEntry:
    """A try range: instructions ``start``..``end`` (inclusive) go to ``target``.

    ``depth`` is the stack depth the handler unwinds to; ``lasti`` asks the
    interpreter to push the offset of the raising instruction first. After
    decode, the instructions' own ``exn_entry`` fields are what the assembler
    reads; ``start``/``end`` record the range as decoded.
    """

    start: "Instruction"
    end: "Instruction"
    target: "Instruction"
    depth: int
    lasti: bool

    def __repr__(self):
        return (f"ExceptionTableEntry({_short(self.start)}..{_short(self.end)} -> "
                f"{_short(self.target)}, depth={self.depth}, lasti={self.lasti})")


@dataclasses.dataclass(eq=False, slots=True)
class Instruction:
    """One instruction; compared by identity so it can be a jump target. ``positions``
    is the ``(lineno, end_lineno, col_offset, end_col_offset)`` tuple of ``co_positions()``."""

    opname: str
    arg: Optional[int] = None
    argval: Any = None
    offset: Optional[int] = None
    starts_line: Optional[int] = None
    positions: Optional[tuple] = None
    target: Optional["Instruction"] = None
    exn_entry: Optional[ExceptionTableEntry] = None

    @property
    def opcode(self):
        return pyver.opcode_of(self.opname)

    def is_jump(self):
        return self.opname in pyver.JUMPS

    def __repr__(self):
        if self.target is not None:
            shown = f"to {_short(self.target)}"
        elif self.argval is None and self.arg is None:
            shown = ""
        else:
            shown = repr(self.argval if self.argval is not None else self.arg)
        where = "" if self.offset is None else f"@{self.offset}"
        return f"Instruction({self.opname}{where} {shown})".replace(" )", ")")


def _short(inst):
    if inst is None:
        return "None"
    return inst.opname if inst.offset is None else f"{inst.opname}@{inst.offset}"


def create_instruction(opname, *, arg=None, argval=_UNSET, target=None):
    """Build an instruction for generated code.

    ``opname`` may be a version-neutral jump alias (``JUMP``,
    ``POP_JUMP_IF_FALSE``...); the assembler flips a forward jump whose
    target ends up behind it to the backward variant. Give ``argval`` for
    name/const/local opcodes and ``arg`` for counted ones (CALL n); an int
    ``argval`` of a counted opcode is taken as its ``arg``.
    """
    opname = pyver.JUMP_ALIASES.get(opname, opname)
    opname = pyver.OPNAME_ALIASES.get(opname, opname)
    kind = pyver.arg_kind(opname)  # KeyError names a bad opname
    if kind == pyver.ARG_JUMP:
        if target is None and isinstance(argval, Instruction):
            target = argval
        if target is None:
            raise ValueError(f"{opname} needs a target instruction")
        argval = target
    elif argval is _UNSET:
        argval = arg
    if kind == pyver.ARG_RAW and arg is None and isinstance(argval, int):
        arg = argval
    if kind == pyver.ARG_COMPARE and arg is None:
        arg = pyver.compare_arg(argval)
    return Instruction(opname=opname, arg=arg, argval=argval, target=target)


def create_load_global(name, push_null):
    """LOAD_GLOBAL ``name``; ``push_null`` also pushes the NULL a call needs."""
    return create_instruction("LOAD_GLOBAL", arg=int(bool(push_null)), argval=name)


def create_load_const(value):
    """LOAD_CONST ``value`` (any object; the assembler adds it to co_consts)."""
    return create_instruction("LOAD_CONST", argval=value)


def create_load_fast(name):
    return create_instruction("LOAD_FAST", argval=name)


def create_store_fast(name):
    return create_instruction("STORE_FAST", argval=name)


def create_load_attr(name):
    return create_instruction("LOAD_ATTR", argval=name)


def create_load_method(name):
    """Load method ``name`` of the object on top of the stack for a call:
    (obj -- method self) or (obj -- NULL attribute). LOAD_METHOD on 3.11,
    LOAD_ATTR with the method bit on 3.12."""
    opname, flags = pyver.LOAD_METHOD_FORM
    return create_instruction(opname, arg=flags, argval=name)


def create_for_iter(exit_code):
    """FOR_ITER leaving the loop for ``exit_code`` (the instructions after the
    loop). Returns ``(for_iter, prefix)``: put ``prefix`` (3.12: END_FOR, the
    FOR_ITER's target) right before ``exit_code``."""
    prefix = [create_instruction(name) for name in pyver.FOR_ITER_EXIT]
    return create_jump("FOR_ITER", (prefix + exit_code)[0]), prefix


def create_null_first_fix(nargs):
    """The SWAPs that turn ``[NULL, fn, *args]`` into the call shape of the
    running Python: none before 3.13; on 3.13 ``[fn, NULL, *args]``. Code
    generators push the NULL first (PUSH_NULL, then the callable) on every
    version and emit this before the call."""
    if not pyver.NULL_ABOVE_CALLABLE:
        return []
    if nargs == 0:
        return [create_swap(2)]
    # exchange the slots nargs+2 (NULL) and nargs+1 (fn) through the top of stack
    return [create_swap(nargs + 1), create_swap(nargs + 2), create_swap(nargs + 1)]


def create_make_closure():
    """MAKE_FUNCTION of (closure_tuple code -- function): 3.13 makes the function
    and sets the closure with SET_FUNCTION_ATTRIBUTE."""
    if "SET_FUNCTION_ATTRIBUTE" in pyver.OPNAMES:
        return [create_instruction("MAKE_FUNCTION"), create_instruction("SET_FUNCTION_ATTRIBUTE", arg=0x08)]
    return [create_instruction("MAKE_FUNCTION", arg=0x08)]


def create_call(nargs):
    """Call with ``nargs`` positional arguments: stack [NULL|fn, fn|self, *args]."""
    return [create_instruction(name, arg=nargs) for name in pyver.CALL_OPNAMES]


def create_call_kw(nargs, kw_names):
    """Call with ``nargs`` arguments, the last ``len(kw_names)`` by keyword."""
    if pyver.CALL_KW_OPNAME:  # 3.13: the names are a constant on the stack
        return [create_load_const(tuple(kw_names)), create_instruction(pyver.CALL_KW_OPNAME, arg=nargs)]
    kw = create_instruction("KW_NAMES", argval=tuple(kw_names))
    return [kw] + create_call(nargs)


def create_jump(opname, target):
    """A jump to ``target`` (an Instruction); see ``create_instruction``."""
    return create_instruction(opname, target=target)


def create_swap(n):
    """SWAP n: exchange the top of stack with the n-th item."""
    return create_instruction("SWAP", arg=n)


def create_dup_top():
    return create_instruction("COPY", arg=1)


def create_rot_n(n):
    """Move the top of stack down to position ``n`` (the old ROT_N)."""
    # SWAP n, SWAP n-1, ..., SWAP 2 turns [a, b, ..., z] into [z, a, b, ...].
    return [create_swap(i) for i in range(n, 1, -1)]
