"""Bytecode facts of CPython 3.11.

Everything here is data or a small pure function about the 3.11 format; the
rest of framegraph reads it through ``framegraph.pyver``. The facts:

* opcode families: which opcodes jump (all 3.11 jumps are *relative*, counted
  in 2-byte code units from the end of the jump instruction), which jump
  backward, which never fall through, and what each opcode's argument refers
  to (``ARG_KIND``: a name, a constant, a local slot, a jump target...);
* inline caches: 3.11 puts ``CACHE`` code units after some instructions;
* the call protocol (``PRECALL n; CALL n``) and the LOAD_GLOBAL null bit;
* the "localsplus" layout of locals, cells and free variables;
* the exception table (``co_exceptiontable``) and location table
  (``co_linetable``) encodings, both from CPython's Objects/locations.md,
  Objects/exception_handling_notes.txt and Python/compile.c.

The per-version modules share the names in ``__all__`` so that callers can
switch versions without code changes.
"""

import dis
import opcode

__all__ = [
    "HAVE_ARGUMENT", "EXTENDED_ARG", "CACHE", "opcode_of", "inline_cache_entries",
    "ARG_NONE", "ARG_RAW", "ARG_NAME", "ARG_GLOBAL", "ARG_CONST", "ARG_LOCAL",
    "ARG_LOCALSPLUS", "ARG_JUMP", "ARG_COMPARE", "arg_kind",
    "JUMPS", "BACKWARD_JUMPS", "UNCONDITIONAL_JUMPS", "TERMINATORS",
    "JUMP_ALIASES", "jump_variant", "jump_arg", "jump_target_offset",
    "CALL_OPNAMES", "load_global_arg", "load_global_push_null",
    "localsplus_names", "parse_exception_table", "encode_exception_table",
    "handler_depth", "encode_linetable", "stack_effect", "CODE_UNIT",
    "CODE_FIELDS",
]

CODE_UNIT = 2  # bytes per instruction word (opcode byte + arg byte)
HAVE_ARGUMENT = opcode.HAVE_ARGUMENT
EXTENDED_ARG = opcode.EXTENDED_ARG
CACHE = opcode.opmap["CACHE"]


def opcode_of(opname):
    """The opcode number of ``opname``; KeyError names the bad opname."""
    try:
        return opcode.opmap[opname]
    except KeyError:
        raise KeyError(f"unknown opname {opname!r} for Python 3.11") from None


def inline_cache_entries(opname):
    """How many CACHE code units follow ``opname`` in co_code."""
    return opcode._inline_cache_entries[opcode.opmap[opname]]


# --- what an argument refers to -----------------------------------------
ARG_NONE = "none"            # opcode takes no argument
ARG_RAW = "raw"              # a plain integer (counts, flags, BINARY_OP kind...)
ARG_NAME = "name"            # index into co_names
ARG_GLOBAL = "global"        # LOAD_GLOBAL: (index into co_names) << 1 | push_null
ARG_CONST = "const"          # index into co_consts (LOAD_CONST, KW_NAMES)
ARG_LOCAL = "local"          # index of a plain local in localsplus
ARG_LOCALSPLUS = "localsplus"  # index of a cell/free var in localsplus
ARG_JUMP = "jump"            # relative jump distance
ARG_COMPARE = "compare"      # index into dis.cmp_op


def _build_arg_kinds():
    # Table, not branches: each opcode family maps to its kind once.
    kinds = {}
    for name, num in opcode.opmap.items():
        kinds[name] = ARG_RAW if num >= HAVE_ARGUMENT else ARG_NONE
    families = [
        (opcode.hasname, ARG_NAME), (opcode.hasconst, ARG_CONST),
        (opcode.haslocal, ARG_LOCAL), (opcode.hasfree, ARG_LOCALSPLUS),
        (opcode.hasjrel, ARG_JUMP), (opcode.hasjabs, ARG_JUMP),
        (opcode.hascompare, ARG_COMPARE), ([opcode.opmap["LOAD_GLOBAL"]], ARG_GLOBAL),
    ]
    for ops, kind in families:
        for num in ops:
            kinds[opcode.opname[num]] = kind
    return kinds


ARG_KINDS = _build_arg_kinds()


def arg_kind(opname):
    """One of the ARG_* constants: what ``opname``'s argument indexes."""
    return ARG_KINDS[opname]


# --- jumps --------------------------------------------------------------
JUMPS = frozenset(opcode.opname[n] for n in opcode.hasjrel + opcode.hasjabs)
BACKWARD_JUMPS = frozenset(n for n in JUMPS if "BACKWARD" in n)
UNCONDITIONAL_JUMPS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})
# Instructions after which control never falls through to the next one.
TERMINATORS = UNCONDITIONAL_JUMPS | {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}

_FORWARD_TO_BACKWARD = {
    "JUMP_FORWARD": "JUMP_BACKWARD",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_BACKWARD_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_BACKWARD_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_BACKWARD_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_BACKWARD_IF_NOT_NONE",
}
_BACKWARD_TO_FORWARD = {b: f for f, b in _FORWARD_TO_BACKWARD.items()}

# Version-neutral names code generators may use; the assembler picks the
# direction. (3.12 spells most of these natively.)
JUMP_ALIASES = {
    "JUMP": "JUMP_FORWARD",
    "JUMP_ABSOLUTE": "JUMP_FORWARD",
    "POP_JUMP_IF_FALSE": "POP_JUMP_FORWARD_IF_FALSE",
    "POP_JUMP_IF_TRUE": "POP_JUMP_FORWARD_IF_TRUE",
    "POP_JUMP_IF_NONE": "POP_JUMP_FORWARD_IF_NONE",
    "POP_JUMP_IF_NOT_NONE": "POP_JUMP_FORWARD_IF_NOT_NONE",
}


def jump_variant(opname, backward):
    """The spelling of jump ``opname`` that goes backward/forward.

    Raises ValueError for a jump that exists in one direction only (FOR_ITER,
    SEND, JUMP_IF_*_OR_POP are forward-only; JUMP_BACKWARD_NO_INTERRUPT is
    backward-only) when asked for the other direction.
    """
    opname = JUMP_ALIASES.get(opname, opname)
    if backward and opname in _FORWARD_TO_BACKWARD:
        return _FORWARD_TO_BACKWARD[opname]
    if not backward and opname in _BACKWARD_TO_FORWARD:
        return _BACKWARD_TO_FORWARD[opname]
    if (opname in BACKWARD_JUMPS) != backward:
        direction = "backward" if backward else "forward"
        raise ValueError(f"{opname} cannot jump {direction} in Python 3.11")
    return opname


def _jump_base(offset, opname):
    # ceval's JUMPBY counts from the code unit after the jump's opcode unit
    # (no 3.11 jump has inline caches, but stay correct if one did).
    return offset + CODE_UNIT * (1 + inline_cache_entries(opname))


def jump_arg(opname, offset, target_offset):
    """The oparg of jump ``opname`` at byte ``offset`` reaching ``target_offset``.

    ``offset`` is that of the opcode unit itself, after any EXTENDED_ARG.
    """
    delta = target_offset - _jump_base(offset, opname)
    if opname in BACKWARD_JUMPS:
        delta = -delta
    if delta < 0 or delta % CODE_UNIT:
        raise ValueError(f"{opname} at {offset} cannot reach {target_offset}")
    return delta // CODE_UNIT


def jump_target_offset(opname, offset, arg):
    """Byte offset that jump ``opname`` at ``offset`` with ``arg`` lands on."""
    sign = -1 if opname in BACKWARD_JUMPS else 1
    return _jump_base(offset, opname) + sign * arg * CODE_UNIT


# --- calls and globals --------------------------------------------------
# A call with n positional args: [NULL|callable, callable|self, *args] -> result.
CALL_OPNAMES = ("PRECALL", "CALL")


def load_global_arg(name_index, push_null):
    """LOAD_GLOBAL's oparg: the low bit asks to push NULL before the value."""
    return (name_index << 1) | int(bool(push_null))


def load_global_push_null(arg):
    """Whether a LOAD_GLOBAL oparg pushes NULL (the bit ``load_global_arg`` sets)."""
    return bool(arg & 1)


def localsplus_names(varnames, cellvars, freevars):
    """The names of the frame's "fast" slots, in slot order.

    Plain locals first; then cells, except cells that are also arguments (they
    share the argument's slot); then free variables. Mirrors 3.11's
    code_new/compute_localsplus_info, so slot indexes agree with CPython.
    """
    cells = [c for c in cellvars if c not in varnames]
    return tuple(varnames) + tuple(cells) + tuple(freevars)


# Where dis.stack_effect disagrees with what the frame sees. RETURN_GENERATOR:
# the generator frame resumes with the first sent value (None) pushed, which
# the compiler's prologue pops; compile.c adds that prologue after its own
# stack-depth pass, so dis never needed the +1.
_STACK_EFFECT_FIXES = {"RETURN_GENERATOR": 1}


def stack_effect(opname, arg, jump):
    """``dis.stack_effect`` by name; ``arg`` is ignored for no-arg opcodes."""
    if opname in _STACK_EFFECT_FIXES:
        return _STACK_EFFECT_FIXES[opname]
    num = opcode.opmap[opname]
    return dis.stack_effect(num, arg if num >= HAVE_ARGUMENT else None, jump=jump)


# --- exception table ----------------------------------------------------
# Entries are (start, length, target, depth << 1 | lasti), each a varint of
# 6-bit groups, most significant first, 0x40 = "more follows"; the first byte
# of an entry carries 0x80. Offsets and lengths are in code units.
def _read_varint(raw, pos):
    byte = raw[pos]
    value = byte & 63
    while byte & 64:
        pos += 1
        byte = raw[pos]
        value = (value << 6) | (byte & 63)
    return value, pos + 1


def parse_exception_table(raw):
    """Decode co_exceptiontable to ``(start, end, target, depth, lasti)`` tuples.

    Offsets are in bytes; ``end`` is exclusive.
    """
    entries, pos = [], 0
    while pos < len(raw):
        start, pos = _read_varint(raw, pos)
        length, pos = _read_varint(raw, pos)
        target, pos = _read_varint(raw, pos)
        depth_lasti, pos = _read_varint(raw, pos)
        entries.append((start * CODE_UNIT, (start + length) * CODE_UNIT,
                        target * CODE_UNIT, depth_lasti >> 1, bool(depth_lasti & 1)))
    return entries


def _write_varint(out, value, first):
    groups = [value & 63]
    value >>= 6
    while value:
        groups.append(value & 63)
        value >>= 6
    groups.reverse()
    for i, group in enumerate(groups):
        more = 64 if i < len(groups) - 1 else 0
        out.append(group | more | (128 if first and i == 0 else 0))


def encode_exception_table(entries):
    """Inverse of ``parse_exception_table`` (same tuples, byte offsets)."""
    out = bytearray()
    for start, end, target, depth, lasti in entries:
        _write_varint(out, start // CODE_UNIT, True)
        _write_varint(out, (end - start) // CODE_UNIT, False)
        _write_varint(out, target // CODE_UNIT, False)
        _write_varint(out, (depth << 1) | int(lasti), False)
    return bytes(out)


def handler_depth(depth, lasti):
    """Stack depth at an exception handler: the entry's depth, then lasti
    (if requested), then the exception itself."""
    return depth + int(lasti) + 1


# --- location table -----------------------------------------------------
# One entry per instruction (1-8 code units each): a first byte
# 0x80 | code << 3 | (units - 1), then code-specific data. Codes 0-9 "short"
# (same line, small columns), 10-12 "one line" (line delta 0-2, columns < 128),
# 13 "no columns", 14 "long", 15 "no location". Same choices as compile.c's
# write_location_info_entry, so recompiled tables match byte for byte.
_LOC_ONE_LINE0, _LOC_NO_COLUMNS, _LOC_LONG, _LOC_NONE = 10, 13, 14, 15


def _loc_varint(out, value):
    while value >= 64:
        out.append((value & 63) | 64)
        value >>= 6
    out.append(value)


def _loc_svarint(out, value):
    _loc_varint(out, ((-value) << 1) | 1 if value < 0 else value << 1)


def _loc_entry(out, units, pos, prev_line):
    """Append one entry for ``units`` code units at ``pos``; return the new line."""
    head = 0x80 | (units - 1)
    line, end_line, col, end_col = pos
    if line is None:
        out.append(head | _LOC_NONE << 3)
        return prev_line
    delta = line - prev_line
    end_delta = max(0, (end_line if end_line is not None else line) - line)
    if end_delta == 0 and col is None and end_col is None:
        out.append(head | _LOC_NO_COLUMNS << 3)
        _loc_svarint(out, delta)
    elif end_delta == 0 and col is not None and end_col is not None and (
            delta == 0 and col < 80 and 0 <= end_col - col < 16):
        out.append(head | (col >> 3) << 3)
        out.append(((col & 7) << 4) | (end_col - col))
    elif end_delta == 0 and col is not None and end_col is not None and (
            0 <= delta < 3 and col < 128 and end_col < 128):
        out.extend((head | (_LOC_ONE_LINE0 + delta) << 3, col, end_col))
    else:
        out.append(head | _LOC_LONG << 3)
        _loc_svarint(out, delta)
        _loc_varint(out, end_delta)
        _loc_varint(out, 0 if col is None else col + 1)
        _loc_varint(out, 0 if end_col is None else end_col + 1)
    return line


def encode_linetable(spans, firstlineno):
    """Encode co_linetable from ``(code_units, (line, end_line, col, end_col))``.

    ``spans`` cover co_code in order; a position of all None means "no
    location". Spans longer than 8 units are split, like the compiler does.
    """
    out, prev_line = bytearray(), firstlineno
    for units, pos in spans:
        while units > 0:
            chunk = min(units, 8)
            prev_line = _loc_entry(out, chunk, pos, prev_line)
            units -= chunk
    return bytes(out)


# Code-object fields a caller of assemble() may set (code.replace keywords).
CODE_FIELDS = frozenset({
    "co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals",
    "co_stacksize", "co_flags", "co_firstlineno", "co_code", "co_consts",
    "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_filename",
    "co_name", "co_qualname", "co_linetable", "co_exceptiontable",
})
