"""Jumps as 3.12 and 3.13 encode them: relative, one direction per opcode.

From 3.12 every conditional jump (and FOR_ITER, SEND) jumps forward only,
JUMP_BACKWARD and JUMP_BACKWARD_NO_INTERRUPT backward only, and an oparg
counts code units from the end of the instruction's inline caches. Only the
cache counts differ between the versions, so each version module builds its
helpers from its own ``inline_cache_entries`` (``jump_helpers``).
"""
import opcode

from .tables import CODE_UNIT

JUMPS = frozenset(opcode.opname[n] for n in opcode.hasjrel if n < 256)
BACKWARD_JUMPS = frozenset({"JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})
UNCONDITIONAL_JUMPS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})
TERMINATORS = UNCONDITIONAL_JUMPS | {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}

# Version-neutral names code generators may use, and 3.11's spellings (so one
# code generator serves every version); the assembler picks the direction.
JUMP_ALIASES = {
    "JUMP": "JUMP_FORWARD",
    "JUMP_ABSOLUTE": "JUMP_FORWARD",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
}


def jump_helpers(version_name, inline_cache_entries):
    """``(jump_variant, jump_arg, jump_target_offset)`` for a version whose inline
    caches ``inline_cache_entries(opname)`` counts."""

    def jump_variant(opname, backward):
        """The spelling of jump ``opname`` that goes backward/forward.

        Raises ValueError where the version has no such jump: every conditional
        jump and FOR_ITER/SEND are forward-only, JUMP_BACKWARD_NO_INTERRUPT
        backward-only.
        """
        opname = JUMP_ALIASES.get(opname, opname)
        if opname in ("JUMP_FORWARD", "JUMP_BACKWARD"):
            return "JUMP_BACKWARD" if backward else "JUMP_FORWARD"
        if (opname in BACKWARD_JUMPS) != backward:
            direction = "backward" if backward else "forward"
            raise ValueError(f"{opname} cannot jump {direction} in Python {version_name}")
        return opname

    def _jump_base(offset, opname):
        # JUMPBY counts from the code unit after the instruction's inline caches
        return offset + CODE_UNIT * (1 + inline_cache_entries(opname))

    def jump_arg(opname, offset, target_offset):
        """The oparg of jump ``opname`` at byte ``offset`` reaching ``target_offset``."""
        delta = target_offset - _jump_base(offset, opname)
        if opname in BACKWARD_JUMPS:
            delta = -delta
        if delta < 0 or delta % CODE_UNIT:
            raise ValueError(f"{opname} at {offset} cannot reach {target_offset}")
        return delta // CODE_UNIT

    def jump_target_offset(opname, offset, arg):
        """Byte offset that jump ``opname`` at ``offset`` with ``arg`` lands on.

        FOR_ITER's target is its END_FOR, as ``dis`` shows it; at run time an
        exhausted loop skips that END_FOR too (and 3.13's POP_TOP after it).
        """
        sign = -1 if opname in BACKWARD_JUMPS else 1
        return _jump_base(offset, opname) + sign * arg * CODE_UNIT

    return jump_variant, jump_arg, jump_target_offset
