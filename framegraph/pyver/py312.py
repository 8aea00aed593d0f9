"""Bytecode facts of CPython 3.12.

The same names as ``py311.py``; what differs from 3.11 (``Doc/library/dis.rst``
and ``Python/bytecodes.c`` of 3.12):

* calls are ``CALL n`` alone (no ``PRECALL``), on the same
  ``[NULL|callable, callable|self, *args]`` stack;
* ``LOAD_ATTR``'s oparg is ``namei << 1 | method`` (``LOAD_METHOD`` is gone)
  and ``LOAD_SUPER_ATTR``'s is ``namei << 2 | method << 0 | two_args << 1``;
* ``COMPARE_OP``'s oparg is ``cmp << 4 | mask``; the mask is what the
  specialised forms test, so generated code must carry the compiler's mask;
* conditional jumps are forward only (``POP_JUMP_IF_*``); only
  ``JUMP_BACKWARD`` and ``JUMP_BACKWARD_NO_INTERRUPT`` go back;
* ``opcode.opmap`` also lists the compiler's pseudo-ops (numbers >= 256),
  which never appear in ``co_code``.

* the location table has 3.11's format, but the compiler writes one entry
  for a run of instructions at the same position (3.11: one per instruction).

The exception table and the localsplus order are 3.11's (``tables.py``).
"""

import dis
import opcode

from . import tables
from .forward_jumps import (  # noqa: F401  (re-exported)
    BACKWARD_JUMPS, JUMP_ALIASES, JUMPS, TERMINATORS, UNCONDITIONAL_JUMPS, jump_helpers,
)
from .tables import (  # noqa: F401  (re-exported: unchanged since 3.11)
    CODE_FIELDS, CODE_UNIT, encode_exception_table, handler_depth, localsplus_names,
    parse_exception_table,
)

__all__ = [
    "HAVE_ARGUMENT", "HAS_ARG", "EXTENDED_ARG", "CACHE", "opcode_of", "inline_cache_entries",
    "ARG_NONE", "ARG_RAW", "ARG_NAME", "ARG_GLOBAL", "ARG_CONST", "ARG_LOCAL",
    "ARG_LOCALSPLUS", "ARG_JUMP", "ARG_COMPARE", "arg_kind",
    "JUMPS", "BACKWARD_JUMPS", "UNCONDITIONAL_JUMPS", "TERMINATORS",
    "JUMP_ALIASES", "jump_variant", "jump_arg", "jump_target_offset",
    "CALL_OPNAMES", "load_global_arg", "load_global_push_null",
    "localsplus_names", "parse_exception_table", "encode_exception_table",
    "handler_depth", "encode_linetable", "stack_effect", "CODE_UNIT",
    "CODE_FIELDS", "name_arg", "name_index", "compare_arg", "compare_op",
    "attr_is_method", "VERSION_NAME", "OPNAMES", "LOAD_METHOD_FORM",
    "FOR_ITER_EXIT", "SEND_KEEPS_RECEIVER", "ARG_LOCAL_PAIR", "OPNAME_ALIASES", "NULL_ABOVE_CALLABLE",
    "compare_to_bool", "CALL_KW_OPNAME", "ODICT_CLEAR_BUMPS_STATE", "super_check_message",
]

VERSION_NAME = "3.12"

# OrderedDict.clear() counts as a mutation for its iterators (od_state): from 3.13 on
# ("OrderedDict mutated during iteration"; 3.11 and 3.12 say "changed size")
ODICT_CLEAR_BUMPS_STATE = False


def super_check_message(obj_is_class: bool, name: str, klass: type) -> str:
    """supercheck's TypeError (3.13 names the object's type and ``klass``)."""
    return "super(type, obj): obj must be an instance or subtype of type"


HAVE_ARGUMENT = opcode.HAVE_ARGUMENT
# Opcode numbers whose argument byte means something.
HAS_ARG = frozenset(range(HAVE_ARGUMENT, 256))
EXTENDED_ARG = opcode.EXTENDED_ARG
CACHE = opcode.opmap["CACHE"]

# Real opcodes only: the pseudo-ops (SETUP_FINALLY, JUMP, LOAD_METHOD...) are
# compiler-internal and never in co_code.
OPMAP = {name: num for name, num in opcode.opmap.items() if num < 256}
# Every opcode co_code can hold: co_code hides the INSTRUMENTED_* forms that
# sys.monitoring writes into the live bytecode.
OPNAMES = frozenset(name for name in OPMAP if not name.startswith("INSTRUMENTED_"))


def opcode_of(opname):
    """The opcode number of ``opname``; KeyError names the bad opname."""
    try:
        return OPMAP[opname]
    except KeyError:
        raise KeyError(f"unknown opname {opname!r} for Python 3.12") from None


def inline_cache_entries(opname):
    """How many CACHE code units follow ``opname`` in co_code."""
    return opcode._inline_cache_entries[opcode_of(opname)]


# --- what an argument refers to -----------------------------------------
ARG_NONE = "none"
ARG_RAW = "raw"
ARG_NAME = "name"
ARG_GLOBAL = "global"        # a co_names index with flag bits below it (name_index)
ARG_CONST = "const"
ARG_LOCAL = "local"
ARG_LOCALSPLUS = "localsplus"
ARG_JUMP = "jump"
ARG_LOCAL_PAIR = "local_pair"  # two plain locals in one oparg (3.13 superinstructions)
OPNAME_ALIASES = {}  # names code generators may use that this version spells otherwise
ARG_COMPARE = "compare"      # cmp << 4 | mask (compare_op, compare_arg)

# Name opcodes whose oparg keeps flag bits below the co_names index.
_NAME_FLAG_BITS = {"LOAD_GLOBAL": 1, "LOAD_ATTR": 1, "LOAD_SUPER_ATTR": 2}


def _build_arg_kinds():
    kinds = {name: ARG_RAW if num in HAS_ARG else ARG_NONE for name, num in OPMAP.items()}
    families = [
        (opcode.hasname, ARG_NAME), (opcode.hasconst, ARG_CONST),
        (opcode.haslocal, ARG_LOCAL), (opcode.hasfree, ARG_LOCALSPLUS),
        (opcode.hasjrel, ARG_JUMP), (opcode.hascompare, ARG_COMPARE),
        ([OPMAP[name] for name in _NAME_FLAG_BITS], ARG_GLOBAL),
    ]
    for ops, kind in families:
        for num in ops:
            if num < 256 and opcode.opname[num] in OPMAP:
                kinds[opcode.opname[num]] = kind
    return kinds


ARG_KINDS = _build_arg_kinds()


def arg_kind(opname):
    """One of the ARG_* constants: what ``opname``'s argument indexes."""
    return ARG_KINDS[opname]


def name_index(opname, arg):
    """The co_names index in ``opname``'s oparg (ARG_GLOBAL kinds carry flag bits)."""
    return arg >> _NAME_FLAG_BITS.get(opname, 0)


def name_arg(opname, index, flags):
    """The oparg for co_names ``index``, keeping the flag bits of ``flags``
    (an old oparg, or just the flags)."""
    bits = _NAME_FLAG_BITS.get(opname, 0)
    return (index << bits) | (flags & ((1 << bits) - 1))


def attr_is_method(arg):
    """Whether LOAD_ATTR's oparg asks for the method form: it then pushes
    ``[method, self]`` or ``[NULL, attribute]``, as 3.11's LOAD_METHOD did."""
    return bool(arg & 1)


# compile.c's compare_masks: which outcomes (unordered 1, less 2, greater 4,
# equal 8) make the comparison true. COMPARE_OP_INT/FLOAT/STR test them.
_COMPARE_MASKS = {"<": 2, "<=": 2 | 8, "==": 8, "!=": 1 | 2 | 4, ">": 4, ">=": 4 | 8}


def compare_op(arg):
    """COMPARE_OP's comparison (one of dis.cmp_op) from its oparg."""
    return dis.cmp_op[arg >> 4]


def compare_to_bool(arg):
    """Whether COMPARE_OP's oparg also converts the result to bool (3.13)."""
    return False


def compare_arg(op):
    """COMPARE_OP's oparg for comparison ``op``, with the compiler's mask."""
    return (dis.cmp_op.index(op) << 4) | _COMPARE_MASKS[op]

# --- jumps (forward_jumps.py: the same encoding on 3.12 and 3.13) -------
jump_variant, jump_arg, jump_target_offset = jump_helpers(VERSION_NAME, inline_cache_entries)

# --- calls and globals --------------------------------------------------
# How to load a method for a call: (opname, flag bits of the oparg). It pushes
# [method, self] or [NULL, attribute].
LOAD_METHOD_FORM = ("LOAD_ATTR", 1)
# What a FOR_ITER's target must be (3.12: END_FOR, which an exhausted loop
# jumps over); the loop's exit code follows it.
FOR_ITER_EXIT = ("END_FOR",)
# SEND on return keeps the receiver under the value; END_SEND pops it
SEND_KEEPS_RECEIVER = True

# Where a call's NULL goes: below the callable ([NULL, callable, *args], 3.11
# and 3.12) or above it ([callable, NULL, *args], 3.13).
NULL_ABOVE_CALLABLE = False

# The call that takes its keyword names from the stack (3.13), or None: KW_NAMES
# before the CALL names them.
CALL_KW_OPNAME = None

CALL_OPNAMES = ("CALL",)


def load_global_arg(name_index, push_null):
    """LOAD_GLOBAL's oparg: the low bit asks to push NULL before the value."""
    return (name_index << 1) | int(bool(push_null))


def load_global_push_null(arg):
    """Whether a LOAD_GLOBAL oparg pushes NULL (the bit ``load_global_arg`` sets)."""
    return bool(arg & 1)


# RETURN_GENERATOR: as in 3.11, the resumed generator frame has the first
# sent value pushed, which the prologue's POP_TOP removes.
_STACK_EFFECT_FIXES = {"RETURN_GENERATOR": 1}


def stack_effect(opname, arg, jump):
    """``dis.stack_effect`` by name; ``arg`` is ignored for no-arg opcodes."""
    if opname in _STACK_EFFECT_FIXES:
        return _STACK_EFFECT_FIXES[opname]
    num = opcode_of(opname)
    return dis.stack_effect(num, arg if num in HAS_ARG else None, jump=jump)


def encode_linetable(spans, firstlineno):
    """co_linetable from ``(code_units, position)`` spans, as 3.12's
    assemble_location_info writes it: a run of equal positions is one span
    before it is split into entries of at most 8 code units."""
    merged = []
    for units, pos in spans:
        if merged and merged[-1][1] == pos:
            merged[-1] = (merged[-1][0] + units, pos)
        else:
            merged.append((units, pos))
    return tables.encode_linetable(merged, firstlineno)
