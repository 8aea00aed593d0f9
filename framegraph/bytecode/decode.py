"""decode(code): a code object to a list of mutable Instructions.

``dis.get_instructions`` already resolves names, constants and locals; on
top of it we fold EXTENDED_ARG prefixes into the instruction they extend
(CACHE entries are never listed by ``dis``), turn jump offsets into object
references, and attach the decoded exception table to every instruction a
range covers. Offsets survive only as the informational ``offset`` field.

An offset in a jump or in the exception table names the *first* code unit
of its instruction, which is the EXTENDED_ARG prefix when there is one; we
map those offsets to the prefixed instruction.
"""

import dis

from framegraph import pyver

from .instruction import ExceptionTableEntry, Instruction


def decode(code):
    """Decode ``code`` into Instructions with object-reference jumps and handlers."""
    instructions, by_start, starts = _read(code)
    for inst in instructions:
        if inst.opname in pyver.JUMPS:
            where = pyver.jump_target_offset(inst.opname, inst.offset, inst.arg)
            inst.target = inst.argval = by_start[where]
    _attach_exception_table(code, instructions, by_start, starts)
    return instructions


def _read(code):
    """Instructions without EXTENDED_ARG, plus a first-code-unit offset index."""
    instructions, by_start, starts = [], {}, []
    prefix = None  # the first EXTENDED_ARG before the current instruction
    for raw in dis.get_instructions(code):
        if raw.opcode == pyver.EXTENDED_ARG:
            prefix = prefix or raw
            continue
        first = prefix or raw
        line = raw.starts_line if first.starts_line is None else first.starts_line
        argval = raw.argval
        if pyver.arg_kind(raw.opname) == pyver.ARG_CONST:
            argval = code.co_consts[raw.arg]  # dis leaves KW_NAMES unresolved
        inst = Instruction(opname=raw.opname, arg=raw.arg, argval=argval,
                           offset=raw.offset, starts_line=line,
                           positions=raw.positions)
        instructions.append(inst)
        by_start[first.offset] = inst
        starts.append(first.offset)
        prefix = None
    return instructions, by_start, starts


def _attach_exception_table(code, instructions, by_start, starts):
    """Point each covered instruction's ``exn_entry`` at its range's entry."""
    for start, end, target, depth, lasti in pyver.parse_exception_table(
            code.co_exceptiontable):
        covered = [inst for inst, off in zip(instructions, starts) if start <= off < end]
        entry = ExceptionTableEntry(start=covered[0], end=covered[-1],
                                    target=by_start[target], depth=depth, lasti=lasti)
        for inst in covered:
            inst.exn_entry = entry
