"""Stack depths, live variables and listings of instruction lists."""

import pytest
from framegraph import pyver
from framegraph.bytecode import (
    create_instruction, create_load_const, decode, format_bytecode,
    format_instructions, livevars_at, max_stack_depth, stack_depths,
)


def branchy(a, b):
    c = a + 1
    if b:
        return c
    return a


# 3.11 spells a forward conditional jump POP_JUMP_FORWARD_IF_FALSE; 3.12 has one direction.
JUMP_IF_FALSE = {(3, 11): "POP_JUMP_FORWARD_IF_FALSE"}.get(pyver.VERSION, "POP_JUMP_IF_FALSE")
BRANCHY_LISTING = """\
  11         0 RESUME                           0
  12         1 LOAD_FAST                        0 ('a')
             2 LOAD_CONST                       1 (1)
             3 BINARY_OP                        0
             4 STORE_FAST                       2 ('c')
  13         5 LOAD_FAST                        1 ('b')
             6 {POP_JUMP_IF_FALSE:<32} 2 (to #9)
  14         7 LOAD_FAST                        2 ('c')
             8 RETURN_VALUE
  15  >>     9 LOAD_FAST                        0 ('a')
            10 RETURN_VALUE
""".replace("{POP_JUMP_IF_FALSE:<32}", f"{JUMP_IF_FALSE:<32}")
# 3.13 converts the condition with TO_BOOL before the jump.
TO_BOOL = pyver.VERSION >= (3, 13)
if TO_BOOL:
    BRANCHY_LISTING = """\
  11         0 RESUME                           0
  12         1 LOAD_FAST                        0 ('a')
             2 LOAD_CONST                       1 (1)
             3 BINARY_OP                        0
             4 STORE_FAST                       2 ('c')
  13         5 LOAD_FAST                        1 ('b')
             6 TO_BOOL
             7 POP_JUMP_IF_FALSE                2 (to #10)
  14         8 LOAD_FAST                        2 ('c')
             9 RETURN_VALUE
  15  >>    10 LOAD_FAST                        0 ('a')
            11 RETURN_VALUE
"""


def with_to_bool(expected, value):
    """``expected`` with ``value`` for 3.13's TO_BOOL at index 6."""
    return expected[:6] + [value] + expected[6:] if TO_BOOL else expected


def test_listing_of_instructions():
    assert format_instructions(decode(branchy.__code__)) == BRANCHY_LISTING


def test_listing_of_code_has_header():
    text = format_bytecode("MODIFIED BYTECODE", branchy.__code__)
    first, rest = text.split("\n", 1)
    assert first == f"MODIFIED BYTECODE branchy {__file__} line 11"
    assert JUMP_IF_FALSE in rest and ("(to L1)" if TO_BOOL else "(to 20)") in rest  # 3.13's dis: labels


def test_stack_depths():
    instructions = decode(branchy.__code__)
    assert stack_depths(instructions) == with_to_bool([0, 0, 1, 2, 1, 0, 1, 0, 1, 0, 1], 1)
    assert max_stack_depth(instructions) == branchy.__code__.co_stacksize == 2


def test_stack_depths_reach_exception_handlers():
    def f(x):
        try:
            return [1, 2, x][0] / x
        except ZeroDivisionError:
            return None

    instructions = decode(f.__code__)
    depths = dict(zip(map(id, instructions), stack_depths(instructions)))
    handler = next(i for i in instructions if i.opname == "PUSH_EXC_INFO")
    assert depths[id(handler)] == 1  # the exception
    cleanup = next(i for i in instructions if i.opname == "COPY")
    assert depths[id(cleanup)] == 3  # exception, lasti, the previous exc_info


def test_inconsistent_stack_is_reported():
    join = create_instruction("RETURN_VALUE")
    bad = [
        create_instruction("RESUME", arg=0), create_load_const(True),
        create_instruction("POP_JUMP_IF_TRUE", target=join),
        create_load_const(1), join,  # depth 0 on one path, 1 on the other
    ]
    with pytest.raises(ValueError, match="inconsistent stack depth"):
        stack_depths(bad)


def test_livevars():
    instructions = decode(branchy.__code__)
    live = [sorted(livevars_at(instructions, inst)) for inst in instructions]
    assert live == with_to_bool([
        ["a", "b"], ["a", "b"], ["a", "b"], ["a", "b"], ["a", "b"],  # before c =
        ["a", "b", "c"], ["a", "c"],    # the branch needs c on one side, a on the other
        ["c"], [],                      # return c
        ["a"], [],                      # return a
    ], ["a", "c"])


def test_livevars_through_loops_and_handlers():
    def f(n, fallback):
        total = 0
        for i in range(n):
            try:
                total += 10 // i
            except ZeroDivisionError:
                total += fallback
        return total

    instructions = decode(f.__code__)
    divide = next(i for i in instructions if i.opname == "BINARY_OP" and i.arg == 2)
    # fallback is only read in the handler; total is read later; i is dead
    # after the division but the handler edge does not need it either.
    assert livevars_at(instructions, divide) == {"total", "fallback"}
    assert livevars_at(instructions, instructions[0]) == {"n", "fallback"}
