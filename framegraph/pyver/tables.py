"""Code-object formats that did not change from CPython 3.11 to 3.13.

The exception table (``co_exceptiontable``), the location table
(``co_linetable``) and the "localsplus" slot order are the same in 3.11, 3.12
and 3.13 (CPython's Objects/locations.md, Objects/exception_handling_notes.txt,
Python/compile.c and Objects/codeobject.c of each). The per-version modules
re-export them; a version that changes one overrides it there.
"""

__all__ = [
    "CODE_UNIT", "CODE_FIELDS", "localsplus_names", "parse_exception_table",
    "encode_exception_table", "handler_depth", "encode_linetable",
]

CODE_UNIT = 2  # bytes per instruction word (opcode byte + arg byte)


def localsplus_names(varnames, cellvars, freevars):
    """The names of the frame's "fast" slots, in slot order.

    Plain locals first; then cells, except cells that are also arguments (they
    share the argument's slot); then free variables. Mirrors
    code_new/compute_localsplus_info, so slot indexes agree with CPython.
    """
    cells = [c for c in cellvars if c not in varnames]
    return tuple(varnames) + tuple(cells) + tuple(freevars)


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
