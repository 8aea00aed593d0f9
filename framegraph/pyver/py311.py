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

from .tables import (  # noqa: F401  (re-exported: unchanged since 3.11)
    CODE_FIELDS, CODE_UNIT, encode_exception_table, encode_linetable, handler_depth,
    localsplus_names, parse_exception_table,
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

VERSION_NAME = "3.11"

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
# Every opcode co_code can hold.
OPNAMES = frozenset(opcode.opmap)


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
ARG_LOCAL_PAIR = "local_pair"  # two plain locals in one oparg (3.13 superinstructions)
OPNAME_ALIASES = {}  # names code generators may use that this version spells otherwise
ARG_COMPARE = "compare"      # index into dis.cmp_op


def _build_arg_kinds():
    # Table, not branches: each opcode family maps to its kind once.
    kinds = {}
    for name, num in opcode.opmap.items():
        kinds[name] = ARG_RAW if num in HAS_ARG else ARG_NONE
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
# How to load a method for a call: (opname, flag bits of the oparg). It pushes
# [method, self] or [NULL, attribute].
LOAD_METHOD_FORM = ("LOAD_METHOD", 0)
# What a FOR_ITER's target must be (3.12: END_FOR, which an exhausted loop
# jumps over); the loop's exit code follows it.
FOR_ITER_EXIT = ()
# SEND on return replaces the receiver with the value (3.11)
SEND_KEEPS_RECEIVER = False

# Where a call's NULL goes: below the callable ([NULL, callable, *args], 3.11
# and 3.12) or above it ([callable, NULL, *args], 3.13).
NULL_ABOVE_CALLABLE = False

# The call that takes its keyword names from the stack (3.13), or None: KW_NAMES
# before the CALL names them.
CALL_KW_OPNAME = None

CALL_OPNAMES = ("PRECALL", "CALL")


def load_global_arg(name_index, push_null):
    """LOAD_GLOBAL's oparg: the low bit asks to push NULL before the value."""
    return (name_index << 1) | int(bool(push_null))


def load_global_push_null(arg):
    """Whether a LOAD_GLOBAL oparg pushes NULL (the bit ``load_global_arg`` sets)."""
    return bool(arg & 1)


# Name opcodes whose oparg keeps flag bits below the co_names index.
_NAME_FLAG_BITS = {"LOAD_GLOBAL": 1}


def name_index(opname, arg):
    """The co_names index in ``opname``'s oparg (ARG_GLOBAL kinds carry flag bits)."""
    return arg >> _NAME_FLAG_BITS.get(opname, 0)


def name_arg(opname, index, flags):
    """The oparg for co_names ``index``, keeping the flag bits of ``flags``
    (an old oparg, or just the flags)."""
    bits = _NAME_FLAG_BITS.get(opname, 0)
    return (index << bits) | (flags & ((1 << bits) - 1))


def attr_is_method(arg):
    """Whether LOAD_ATTR's oparg asks for the method form (3.11 has LOAD_METHOD)."""
    return False


def compare_op(arg):
    """COMPARE_OP's comparison (one of dis.cmp_op) from its oparg."""
    return dis.cmp_op[arg]


def compare_to_bool(arg):
    """Whether COMPARE_OP's oparg also converts the result to bool (3.13)."""
    return False


def compare_arg(op):
    """COMPARE_OP's oparg for comparison ``op`` (one of dis.cmp_op)."""
    return dis.cmp_op.index(op)


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
    return dis.stack_effect(num, arg if num in HAS_ARG else None, jump=jump)
