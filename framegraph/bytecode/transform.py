"""transform_code: the one entry point for rewriting a code object.

``transform_code(code, fn)`` decodes ``code``, lets ``fn(instructions,
code_options)`` edit the instruction list and the code-object fields in
place, and assembles the result. ``round_trip`` (decode then assemble with
no edits) and ``compare_code`` exist so that tests and debug checks can prove
the decode/assemble pair loses nothing: same co_code, same exception table,
same line and position mapping.
"""

import dis

from framegraph import pyver

from .assemble import assemble
from .decode import decode

# Fields fn may edit; the rest are computed by assemble().
_OPTION_FIELDS = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount",
                  "co_flags", "co_firstlineno", "co_consts", "co_names",
                  "co_varnames", "co_freevars", "co_cellvars", "co_filename",
                  "co_name", "co_qualname")


def transform_code(code, fn):
    """Decode ``code``, call ``fn(instructions, code_options)``, assemble.

    ``code_options`` maps co_* field names to values (lists for the name and
    const tables); ``fn`` may change any of them and the instruction list.
    """
    instructions = decode(code)
    code_options = {key: getattr(code, key) for key in _OPTION_FIELDS}
    for key in ("co_consts", "co_names", "co_varnames"):
        code_options[key] = list(code_options[key])
    fn(instructions, code_options)
    return assemble(instructions, code, **code_options)


def round_trip(code):
    """``assemble(decode(code), code)``: should equal ``code`` in every way."""
    return assemble(decode(code), code)


def _units(code, pairs):
    """Expand (start, end, value) ranges to one value per code unit."""
    per_unit = [None] * (len(code.co_code) // pyver.CODE_UNIT)
    for start, end, value in pairs:
        for unit in range(start // pyver.CODE_UNIT, end // pyver.CODE_UNIT):
            per_unit[unit] = value
    return per_unit


def compare_code(old, new):
    """Differences between two code objects that should be equivalent, as text.

    Compares co_code, decoded exception tables, the line of every code unit
    (``co_lines``), ``co_positions``, the tables and the stack size (``new``
    may need more stack, never less).
    """
    problems = []
    for field in ("co_code", "co_consts", "co_names", "co_varnames",
                  "co_cellvars", "co_freevars", "co_nlocals"):
        if getattr(old, field) != getattr(new, field):
            problems.append(f"{field} differs")
    if pyver.parse_exception_table(old.co_exceptiontable) != \
            pyver.parse_exception_table(new.co_exceptiontable):
        problems.append("exception table differs")
    if _units(old, old.co_lines()) != _units(new, new.co_lines()):
        problems.append("co_lines differs")
    if list(old.co_positions()) != list(new.co_positions()):
        problems.append("co_positions differs")
    if new.co_stacksize < old.co_stacksize:
        problems.append(f"co_stacksize {new.co_stacksize} < {old.co_stacksize}")
    if problems:
        problems.insert(0, f"{old.co_qualname} ({old.co_filename}:{old.co_firstlineno}):")
        problems.append(dis.Bytecode(old).dis())
    return problems
