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

import bisect
import dis

from framegraph import pyver

from .instruction import ExceptionTableEntry, Instruction

_OPNAMES = dis.opname[:256]  # 3.12 lists pseudo-ops above 255; co_code never holds them
_HAS_ARG = [op in pyver.HAS_ARG for op in range(256)]
_CACHES = [pyver.inline_cache_entries(name) if name in pyver.OPNAMES else 0 for name in _OPNAMES]
_SIZE = [2 * (1 + n) for n in _CACHES]  # bytes from one instruction to the next
# FORMAT_VALUE's conversions as dis names them (3.13 has no FORMAT_VALUE).
_FORMAT_CONVERTERS = getattr(dis, "FORMAT_VALUE_CONVERTERS", None)
# What each opcode's argument indexes, by opcode number; the common kinds are
# resolved inline in _read (decoding was a sixth of a first trace of a model).
_KIND = [pyver.arg_kind(name) if name in pyver.OPNAMES else None for name in _OPNAMES]
_CONST, _NAME, _LOCAL = pyver.ARG_CONST, pyver.ARG_NAME, pyver.ARG_LOCAL
_EXTENDED_ARG = pyver.EXTENDED_ARG
# (name, bytes to the next instruction, has an argument, argument kind) by opcode: one lookup a step
_TABLE = list(zip(_OPNAMES, _SIZE, _HAS_ARG, _KIND))


def decode(code, positions=True):
    """Decode ``code`` into Instructions with object-reference jumps and handlers.
    ``positions=False`` leaves each instruction's ``positions`` None: instructions that
    are only traced, never assembled, need no column table."""
    instructions, by_start, starts = _read(code, positions)
    for inst in instructions:
        if inst.opname in pyver.JUMPS:
            where = pyver.jump_target_offset(inst.opname, inst.offset, inst.arg)
            inst.target = inst.argval = by_start[where]
    _attach_exception_table(code, instructions, by_start, starts)
    return instructions


def _read(code, with_positions=True):
    """Instructions without EXTENDED_ARG, plus a first-code-unit offset index.

    Reads ``co_code`` directly, resolving arguments as ``dis.get_instructions``
    does (``tests/bytecode/test_decode.py`` checks they agree): dis also
    builds a repr of every constant and a set of jump labels we never use,
    which made it about 12 us an instruction, a third of a first trace.
    """
    raw, names, consts = code.co_code, code.co_names, code.co_consts
    # one per code unit, caches included
    positions = list(code.co_positions()) if with_positions else None
    linestarts = dict(dis.findlinestarts(code))
    varname = code._varname_from_oparg
    instructions, by_start, starts = [], {}, []
    append, start = instructions.append, starts.append
    line_at = linestarts.get
    prefix = None  # offset of the first EXTENDED_ARG before the current instruction
    extended = offset = 0
    end = len(raw)
    while offset < end:
        op = raw[offset]
        opname, size, has_arg, kind = _TABLE[op]
        here, offset = offset, offset + size  # the next instruction, after this one's caches
        if not has_arg:
            arg = argval = None
        else:
            arg = raw[here + 1] | extended
            if op == _EXTENDED_ARG:
                extended = arg << 8
                if prefix is None:
                    prefix = here
                continue
            if kind == _CONST:
                argval = consts[arg]
            elif kind == _NAME:
                argval = names[arg]
            elif kind == _LOCAL:
                argval = varname(arg)
            else:
                argval = _argval(opname, arg, names, consts, varname)
        extended = 0
        first = here if prefix is None else prefix
        line = line_at(first)
        inst = Instruction(opname, arg, argval, here, line_at(here) if line is None else line,
                           None if positions is None else positions[here >> 1])
        append(inst)
        by_start[first] = inst
        start(first)
        prefix = None
    return instructions, by_start, starts


def _argval(opname, arg, names, consts, varname):
    """What ``arg`` stands for (a jump's target is resolved by ``decode``)."""
    kind = pyver.arg_kind(opname)
    if arg is None or kind == pyver.ARG_JUMP:
        return None if kind == pyver.ARG_JUMP else arg
    if kind == pyver.ARG_CONST:
        return consts[arg]
    if kind == pyver.ARG_NAME:
        return names[arg]
    if kind == pyver.ARG_GLOBAL:
        return names[pyver.name_index(opname, arg)]
    if kind in (pyver.ARG_LOCAL, pyver.ARG_LOCALSPLUS):
        return varname(arg)
    if kind == pyver.ARG_LOCAL_PAIR:
        return varname(arg >> 4), varname(arg & 15)
    if kind == pyver.ARG_COMPARE:
        return pyver.compare_op(arg)
    if opname == "CONVERT_VALUE":  # 3.13: the conversion function, as dis gives it
        return (None, str, repr, ascii)[arg]
    if opname == "FORMAT_VALUE":  # (conversion, has a format spec), as dis gives it
        return (_FORMAT_CONVERTERS[arg & 0x3][0], bool(arg & 0x4))
    return arg


def _attach_exception_table(code, instructions, by_start, starts):
    """Point each covered instruction's ``exn_entry`` at its range's entry."""
    for start, end, target, depth, lasti in pyver.parse_exception_table(
            code.co_exceptiontable):
        covered = instructions[bisect.bisect_left(starts, start):bisect.bisect_left(starts, end)]  # starts ascend
        entry = ExceptionTableEntry(start=covered[0], end=covered[-1],
                                    target=by_start[target], depth=depth, lasti=lasti)
        for inst in covered:
            inst.exn_entry = entry
