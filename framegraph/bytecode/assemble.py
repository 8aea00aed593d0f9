"""assemble(instructions, template_code, **fields): Instructions back to code.

The steps, in order:

1. *Tables.* Every name, constant and variable an instruction mentions gets
   an index in ``co_names``/``co_consts``/localsplus. The tables start from
   the template's (or the caller's) so decoded code keeps its indexes; new
   entries are appended. Constants are matched by an identity-aware key, so
   ``1``, ``1.0``, ``True`` and ``-0.0`` stay distinct, as in CPython.
2. *Jump direction.* A forward jump whose target lies behind it becomes the
   backward variant (and vice versa), so generated code need not care.
3. *Layout.* Offsets depend on EXTENDED_ARG prefixes, which depend on jump
   distances, which depend on offsets: start with no prefixes on jumps and
   grow until nothing changes. Sizes only grow, so this terminates, and it
   finds the smallest layout, which is what CPython's compiler emits.
4. *Emit* co_code (prefixes, opcode, arg, zeroed CACHE units), the exception
   table from the instructions' ``exn_entry`` runs, the location table from
   ``positions`` and ``co_stacksize`` from ``analysis.max_stack_depth``.

The instructions are updated in place with what was computed: ``arg``,
``offset`` (of the opcode unit, like ``dis``) and the jump ``opname``.
"""

import dataclasses
import struct

from framegraph import pyver

from .analysis import max_stack_depth

# Computed here; a caller cannot override them.
_COMPUTED = frozenset({"co_code", "co_linetable", "co_exceptiontable",
                       "co_stacksize", "co_nlocals"})


def assemble(instructions, template_code, **fields):
    """Build a code object from ``instructions``; other fields from ``template_code``.

    ``fields`` are ``code.replace`` keywords (co_varnames, co_cellvars,
    co_freevars, co_argcount, co_flags, co_name, co_names, co_consts...);
    names/consts/varnames given here are the starting tables.
    """
    bad = set(fields) - (pyver.CODE_FIELDS - _COMPUTED)
    if bad:
        raise TypeError(f"assemble() cannot set {sorted(bad)}")
    get = lambda key: fields.get(key, getattr(template_code, key))  # noqa: E731
    tables = _Tables(get)
    tables.resolve(instructions)
    _fix_jump_directions(instructions)
    starts = _layout(instructions)
    firstlineno = get("co_firstlineno")
    fields.update(
        co_code=_emit_code(instructions),
        co_consts=tuple(tables.consts), co_names=tuple(tables.names),
        co_varnames=tuple(tables.varnames), co_nlocals=len(tables.varnames),
        co_exceptiontable=_exception_table(instructions, starts),
        co_linetable=pyver.encode_linetable(_line_spans(instructions, firstlineno),
                                            firstlineno),
        co_stacksize=max_stack_depth(instructions),
    )
    return template_code.replace(**fields)


def const_key(value):
    """A hashable key equal only for constants CPython would merge.

    Type is part of the key (1 vs 1.0 vs True); floats compare by bit pattern
    (-0.0 vs 0.0, NaN equal to itself); containers recurse; anything else
    (code objects, arbitrary objects) by identity.
    """
    kind = type(value)
    if value is None or value is Ellipsis or kind in (bool, int, str, bytes):
        return (kind, value)
    if kind is float:
        return (kind, struct.pack("<d", value))
    if kind is complex:
        return (kind, struct.pack("<dd", value.real, value.imag))
    if kind in (tuple, frozenset):
        types_ = tuple(map(type, value))
        if all(t in _EXACT_EQUAL for t in types_):  # a long tuple of ints: no key per item
            return (kind, types_, value) if kind is tuple else (kind, frozenset(zip(types_, value)))
        return (kind, kind(const_key(item) for item in value))
    return (kind, id(value))


_EXACT_EQUAL = (bool, int, str, bytes, type(None))  # == tells them apart within one type


class _Tables:
    """co_names, co_consts and localsplus, grown as instructions need them."""

    def __init__(self, get):
        self.names = list(get("co_names"))
        self.consts = list(get("co_consts"))
        self.varnames = list(get("co_varnames"))
        self.cellvars, self.freevars = tuple(get("co_cellvars")), tuple(get("co_freevars"))
        self._name_index = {}
        for i, name in enumerate(self.names):
            self._name_index.setdefault(name, i)
        self._const_index = {}
        for i, value in enumerate(self.consts):
            self._const_index.setdefault(const_key(value), i)

    def name(self, name):
        if name not in self._name_index:
            self._name_index[name] = len(self.names)
            self.names.append(name)
        return self._name_index[name]

    def const(self, value, arg):
        # Keep a decoded index when it still holds this very object.
        if arg is not None and arg < len(self.consts) and self.consts[arg] is value:
            return arg
        key = const_key(value)
        if key not in self._const_index:
            self._const_index[key] = len(self.consts)
            self.consts.append(value)
        return self._const_index[key]

    def resolve(self, instructions):
        """Set ``arg`` of every instruction whose argument is a table index."""
        for inst in instructions:  # new plain locals first: they shift cell slots
            if (pyver.arg_kind(inst.opname) == pyver.ARG_LOCAL
                    and inst.argval not in self.varnames
                    and inst.argval not in self.cellvars + self.freevars):
                self.varnames.append(inst.argval)
        slots = {}
        for i, name in enumerate(pyver.localsplus_names(
                self.varnames, self.cellvars, self.freevars)):
            slots.setdefault(name, i)
        _split_far_pairs(instructions, slots)
        for inst in instructions:
            inst.arg = self._arg(inst, slots)

    def _arg(self, inst, slots):
        kind = pyver.arg_kind(inst.opname)
        if kind == pyver.ARG_NAME:
            return self.name(inst.argval)
        if kind == pyver.ARG_GLOBAL:
            return pyver.name_arg(inst.opname, self.name(inst.argval), inst.arg or 0)
        if kind == pyver.ARG_CONST:
            return self.const(inst.argval, inst.arg)
        if kind in (pyver.ARG_LOCAL, pyver.ARG_LOCALSPLUS):
            if inst.argval not in slots:
                raise ValueError(f"{inst!r}: {inst.argval!r} is not a local, cell "
                                 f"or free variable of this code")
            return slots[inst.argval]
        if kind == pyver.ARG_LOCAL_PAIR:
            first, second = (slots.get(name, 16) for name in inst.argval)
            if first > 15 or second > 15:
                raise ValueError(f"{inst!r}: a local pair needs two of the first 16 slots")
            return first << 4 | second
        if kind == pyver.ARG_JUMP:
            return 0  # set by _layout
        if kind in (pyver.ARG_RAW, pyver.ARG_COMPARE) and inst.arg is None:
            raise ValueError(f"{inst!r} needs an integer arg")
        return inst.arg


# 3.13's two-local superinstructions, as the two instructions they fuse.
_PAIR_SPLITS = {"LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
                "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
                "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST")}


def _split_far_pairs(instructions, slots):
    """Split a pair whose locals are not both among the first 16 slots (its
    oparg has four bits each): new code may have moved them (a resume
    function's stack arguments come first). In place; jumps to the pair land
    on its first half, which keeps the instruction object."""
    i = 0
    while i < len(instructions):
        inst = instructions[i]
        if inst.opname in _PAIR_SPLITS and any(slots.get(n, 16) > 15 for n in inst.argval):
            first_op, second_op = _PAIR_SPLITS[inst.opname]
            (first, second) = inst.argval
            second_inst = dataclasses.replace(inst, opname=second_op, argval=second, arg=None, target=None,
                                              starts_line=None)
            inst.opname, inst.argval, inst.arg = first_op, first, None
            entry = inst.exn_entry
            if entry is not None and entry.end is inst:
                entry.end = second_inst
            instructions.insert(i + 1, second_inst)
        i += 1


def _fix_jump_directions(instructions):
    """Give each jump the forward/backward spelling its target position needs."""
    position = {id(inst): i for i, inst in enumerate(instructions)}
    for i, inst in enumerate(instructions):
        if inst.opname in pyver.JUMPS:
            if inst.target is None or id(inst.target) not in position:
                raise ValueError(f"{inst!r}: jump target is not in the instruction list")
            inst.opname = pyver.jump_variant(inst.opname, position[id(inst.target)] <= i)
            inst.argval = inst.target


def _prefixes(arg):
    """How many EXTENDED_ARG units ``arg`` needs."""
    if arg is None or arg < 0x100:
        return 0
    if not 0 <= arg < 1 << 32:
        raise ValueError(f"oparg {arg} out of range")
    return 1 if arg < 1 << 16 else 2 if arg < 1 << 24 else 3


def _layout(instructions):
    """Set jump args and ``offset``s; return each instruction's first-unit offset."""
    position = {id(inst): i for i, inst in enumerate(instructions)}
    prefixes = [_prefixes(inst.arg) for inst in instructions]
    while True:
        starts, offset = [], 0
        for inst, count in zip(instructions, prefixes):
            starts.append(offset)
            inst.offset = offset + count * pyver.CODE_UNIT
            offset = inst.offset + pyver.CODE_UNIT * (1 + pyver.inline_cache_entries(inst.opname))
        grew = False
        for i, inst in enumerate(instructions):
            if inst.opname in pyver.JUMPS:
                target_start = starts[position[id(inst.target)]]
                inst.arg = pyver.jump_arg(inst.opname, inst.offset, target_start)
                if _prefixes(inst.arg) > prefixes[i]:
                    prefixes[i], grew = _prefixes(inst.arg), True
        if not grew:
            return starts


def _emit_code(instructions):
    """co_code bytes; assumes ``_layout`` has set every ``arg``."""
    out = bytearray()
    for inst in instructions:
        arg = inst.arg or 0
        for shift in range(_prefixes(inst.arg), 0, -1):
            out += bytes((pyver.EXTENDED_ARG, (arg >> (8 * shift)) & 0xFF))
        out += bytes((inst.opcode, arg & 0xFF))
        out += bytes((pyver.CACHE, 0)) * pyver.inline_cache_entries(inst.opname)
    return bytes(out)


def _exception_table(instructions, starts):
    """co_exceptiontable from runs of consecutive instructions with one handler."""
    start_of = {id(inst): start for inst, start in zip(instructions, starts)}
    ranges = []  # [start, end, target, depth, lasti], end exclusive
    for i, inst in enumerate(instructions):
        entry = inst.exn_entry
        end = starts[i + 1] if i + 1 < len(instructions) else _code_end(instructions)
        if entry is None:
            continue
        if id(entry.target) not in start_of:
            raise ValueError(f"{inst!r}: exception handler is not in the instruction list")
        key = (start_of[id(entry.target)], entry.depth, bool(entry.lasti))
        if ranges and ranges[-1][1] == starts[i] and tuple(ranges[-1][2:]) == key:
            ranges[-1][1] = end
        else:
            ranges.append([starts[i], end, *key])
    return pyver.encode_exception_table(ranges)


def _code_end(instructions):
    last = instructions[-1]
    return last.offset + pyver.CODE_UNIT * (1 + pyver.inline_cache_entries(last.opname))


def _line_spans(instructions, firstlineno):
    """``(code_units, position)`` per instruction for ``encode_linetable``.

    Decoded instructions carry exact ``positions``; an instruction without
    them uses ``starts_line`` if set, else inherits the previous position.
    """
    spans, previous, last_end = [], (firstlineno, firstlineno, None, None), 0
    for inst in instructions:
        if inst.positions is not None:
            previous = tuple(inst.positions)
        elif inst.starts_line is not None:
            previous = (inst.starts_line, inst.starts_line, None, None)
        end = inst.offset + pyver.CODE_UNIT * (1 + pyver.inline_cache_entries(inst.opname))
        spans.append(((end - last_end) // pyver.CODE_UNIT, previous))
        last_end = end
    return spans
