"""Questions about an instruction list: stack depths, live variables, listings.

All three walk the control-flow graph implied by the instructions: an
instruction flows to the next one unless it is a terminator (return, raise,
unconditional jump), to its jump target, and, if it sits in a try range, to
the range's handler (which starts at the depth ``pyver.handler_depth`` gives).

``stack_depths`` is what the assembler uses for ``co_stacksize`` and what a
code generator uses to check itself; ``livevars_at`` tells resume-function
generation which locals must be passed on at a graph break.
"""

import dis
import types

from framegraph import pyver

# Opcodes whose argval (a variable name) is read / written. DELETE reads too:
# it raises if the variable is unbound, and it leaves it unbound afterwards.
# Names of several versions: one a version lacks never occurs in its code.
_READS = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_CLASSDEREF",
                    "DELETE_FAST", "DELETE_DEREF", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR",
                    "LOAD_FROM_DICT_OR_DEREF"})
_WRITES = frozenset({"STORE_FAST", "STORE_DEREF", "DELETE_FAST", "DELETE_DEREF"})
# 3.13's pairs of local accesses in one instruction: (first, second) read or written.
_PAIRS = {"LOAD_FAST_LOAD_FAST": ("r", "r"), "STORE_FAST_LOAD_FAST": ("w", "r"),
          "STORE_FAST_STORE_FAST": ("w", "w")}


def _successors(instructions, index, i):
    """Normal-flow successors of instruction ``i`` as ``(index, jumped)`` pairs.

    ``index`` maps ``id(instruction)`` to its position (see ``_index_map``).
    """
    inst = instructions[i]
    succ = []
    if inst.opname not in pyver.TERMINATORS and i + 1 < len(instructions):
        succ.append((i + 1, False))
    if inst.target is not None:
        if id(inst.target) not in index:
            raise ValueError(f"jump target of {inst!r} is not in the instruction list")
        succ.append((index[id(inst.target)], True))
    return succ


def _index_map(instructions):
    return {id(inst): i for i, inst in enumerate(instructions)}


def _index_of(instructions, inst):
    for i, candidate in enumerate(instructions):
        if candidate is inst:
            return i
    raise ValueError(f"{inst!r} is not in the instruction list")


def _effect(inst, jump):
    # Only LOAD_GLOBAL's low bit and counted args change stack effects; for
    # name/const/local opcodes the index is irrelevant, so 0 stands in.
    arg = inst.arg if inst.arg is not None else 0
    return pyver.stack_effect(inst.opname, arg, jump)


def stack_depths(instructions):
    """Stack depth before each instruction (None where unreachable).

    Raises ValueError when two paths reach an instruction with different
    depths, or a path pops below zero: both mean broken generated code.
    """
    index = _index_map(instructions)
    depths = [None] * len(instructions)
    pending = [(0, 0)] if instructions else []

    def reach(i, depth, why):
        if depth < 0:
            raise ValueError(f"negative stack depth at {instructions[i]!r} ({why})")
        if depths[i] is None:
            depths[i] = depth
            pending.append((i, depth))
        elif depths[i] != depth:
            raise ValueError(f"inconsistent stack depth at {instructions[i]!r}: "
                             f"{depths[i]} vs {depth} ({why})")

    depths[0] = 0
    while pending:
        i, depth = pending.pop()
        inst = instructions[i]
        if inst.exn_entry is not None:
            entry = inst.exn_entry
            reach(index[id(entry.target)], pyver.handler_depth(entry.depth, entry.lasti),
                  f"handler of {inst!r}")
        for succ, jump in _successors(instructions, index, i):
            reach(succ, depth + _effect(inst, jump), f"from {inst!r}")
    return depths


def max_stack_depth(instructions):
    """The co_stacksize the instructions need: the deepest point on any path."""
    deepest = 0
    for inst, depth in zip(instructions, stack_depths(instructions)):
        if depth is None:
            continue
        after = [depth + _effect(inst, False)]
        if inst.target is not None:
            after.append(depth + _effect(inst, True))
        deepest = max(deepest, depth, *after)
    return deepest


def _liveness(instructions):
    """Live-in variable sets per instruction, by backward fixpoint iteration."""
    index = _index_map(instructions)
    succs = [[s for s, _ in _successors(instructions, index, i)]
             for i in range(len(instructions))]
    live = [frozenset()] * len(instructions)
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(instructions))):
            inst = instructions[i]
            out = set()
            for succ in succs[i]:
                out |= live[succ]
            if inst.opname in _PAIRS:  # 3.13 superinstructions: two locals, in order
                (first, second), (first_kind, second_kind) = inst.argval, _PAIRS[inst.opname]
                out.discard(second) if second_kind == "w" else out.add(second)
                out.discard(first) if first_kind == "w" else out.add(first)
            if inst.opname in _WRITES:
                out.discard(inst.argval)
            if inst.opname in _READS:
                out.add(inst.argval)
            if inst.exn_entry is not None:
                # The exception may fire before this instruction's write.
                out |= live[index[id(inst.exn_entry.target)]]
            if out != live[i]:
                live[i], changed = frozenset(out), True
    return live


def livevars_at(instructions, inst):
    """Variables read before being written on some path starting at ``inst``."""
    return set(_liveness(instructions)[_index_of(instructions, inst)])


def format_instructions(code_or_instructions):
    """A ``dis``-style listing of a code object or of an instruction list.

    For an instruction list (possibly never assembled) jump targets are
    shown by their list index, since offsets may not exist yet.
    """
    if isinstance(code_or_instructions, types.CodeType):
        return dis.Bytecode(code_or_instructions).dis()
    instructions = list(code_or_instructions)
    index = _index_map(instructions)
    targets = {id(inst.target) for inst in instructions if inst.target is not None}
    targets |= {id(inst.exn_entry.target) for inst in instructions if inst.exn_entry}
    lines = []
    for i, inst in enumerate(instructions):
        line = "" if inst.starts_line is None else str(inst.starts_line)
        mark = ">>" if id(inst) in targets else ""
        arg = "" if inst.arg is None else str(inst.arg)
        lines.append(f"{line:>4} {mark:>3} {i:>5} {inst.opname:<28} {arg:>5} "
                     f"{_describe(inst, index)}".rstrip())
    return "\n".join(lines) + "\n"


def _describe(inst, index):
    if inst.target is not None:
        text = f"(to #{index.get(id(inst.target), '?')})"
    elif pyver.arg_kind(inst.opname) in (pyver.ARG_NONE, pyver.ARG_RAW):
        text = ""  # no argument, or a plain count already shown as arg
    else:
        text = f"({inst.argval!r})"
    if inst.exn_entry is not None:
        text += f"  [exc -> #{index.get(id(inst.exn_entry.target), '?')}]"
    return text


def format_bytecode(title, code):
    """``title name file line n`` and a listing, e.g. for MODIFIED BYTECODE logs."""
    return (f"{title} {code.co_name} {code.co_filename} line {code.co_firstlineno}\n"
            f"{format_instructions(code)}")


def line_of(instructions, index):
    """The source line of ``instructions[index]``: the nearest line start at or before it, or "?"."""
    for inst in reversed(instructions[: index + 1]):
        if inst.starts_line is not None:
            return inst.starts_line
    return "?"
