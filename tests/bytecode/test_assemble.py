"""assemble() on generated instruction lists: the code a code generator writes.

Each test builds a function from scratch (or edits a decoded one), runs it and
compares with the plain-Python version written next to it.
"""

import builtins
import dis
import math
import types

import pytest

from framegraph.bytecode import (
    ExceptionTableEntry, assemble, const_key, create_call, create_call_kw,
    create_for_iter, create_instruction, create_jump, create_load_attr, create_load_const,
    create_load_fast, create_load_global, create_load_method, create_rot_n, create_store_fast,
    decode, transform_code,
)


def template(a, b):
    pass


def build(instructions, **fields):
    """A function running ``instructions`` with template(a, b)'s signature."""
    code = assemble(instructions, template.__code__, **fields)
    return types.FunctionType(code, {"__builtins__": builtins, "math": math})


def ins(opname, arg=None, **kwargs):
    return create_instruction(opname, arg=arg, **kwargs)


def opnames(fn):
    return [i.opname for i in dis.get_instructions(fn)]


def test_call_a_global_and_index_the_result():
    # def f(a, b): return divmod(a, b)[0]
    f = build([
        ins("RESUME", 0),
        create_load_global("divmod", push_null=True),
        create_load_fast("a"), create_load_fast("b"),
        *create_call(2),
        create_load_const(0), ins("BINARY_SUBSCR"),
        ins("RETURN_VALUE"),
    ])
    assert f(17, 5) == 3
    assert f.__code__.co_names == ("divmod",)


def test_method_call_with_keywords():
    # def f(a, b): return math.isclose(a, b, abs_tol=0.5)
    f = build([
        ins("RESUME", 0),
        create_load_global("math", push_null=False),
        create_load_method("isclose"),
        create_load_fast("a"), create_load_fast("b"), create_load_const(0.5),
        *create_call_kw(3, ["abs_tol"]),
        ins("RETURN_VALUE"),
    ])
    assert f(1.0, 1.4) is True and f(1.0, 1.6) is False


def loop_sum():
    # def f(a, b): total = 0; for i in range(a): total += i * b; return total
    loop_end = create_load_fast("total")
    for_iter, exit_prefix = create_for_iter([loop_end])
    return [
        ins("RESUME", 0),
        create_load_const(0), create_store_fast("total"),
        create_load_global("range", push_null=True), create_load_fast("a"),
        *create_call(1), ins("GET_ITER"),
        for_iter,
        create_store_fast("i"),
        create_load_fast("total"), create_load_fast("i"), create_load_fast("b"),
        ins("BINARY_OP", 5),   # *
        ins("BINARY_OP", 13),  # +=
        create_store_fast("total"),
        create_jump("JUMP", for_iter),  # version-neutral; becomes JUMP_BACKWARD
        *exit_prefix, loop_end, ins("RETURN_VALUE"),
    ]


def test_loop_with_backward_jump():
    f = build(loop_sum())
    assert f(5, 3) == sum(i * 3 for i in range(5))
    assert "JUMP_BACKWARD" in opnames(f)
    assert f.__code__.co_varnames == ("a", "b", "total", "i")  # new locals appended
    assert f.__code__.co_nlocals == 4


def try_except_instructions():
    # def f(a, b):
    #     try: return a / b
    #     except ZeroDivisionError: return "inf"
    handler, reraise, cleanup = ins("PUSH_EXC_INFO"), ins("RERAISE", 0), ins("COPY", 3)
    body = [create_load_fast("a"), create_load_fast("b"), ins("BINARY_OP", 11)]
    in_except = [
        handler,
        create_load_global("ZeroDivisionError", push_null=False),
        ins("CHECK_EXC_MATCH"),
        create_jump("POP_JUMP_IF_FALSE", reraise),
        ins("POP_TOP"),
    ]
    try_entry = ExceptionTableEntry(body[0], body[-1], handler, depth=0, lasti=False)
    except_entry = ExceptionTableEntry(handler, in_except[-1], cleanup, depth=1, lasti=True)
    for inst in body:
        inst.exn_entry = try_entry
    for inst in in_except + [reraise]:
        inst.exn_entry = except_entry
    return [
        ins("RESUME", 0), ins("NOP"), *body, ins("RETURN_VALUE"),
        *in_except,
        ins("POP_EXCEPT"), create_load_const("inf"), ins("RETURN_VALUE"),
        reraise,
        cleanup, ins("POP_EXCEPT"), ins("RERAISE", 1),
    ]


def test_try_except_with_exception_table():
    f = build(try_except_instructions())
    assert f(6, 3) == 2.0
    assert f(1, 0) == "inf"
    with pytest.raises(TypeError):
        f("x", 2)  # not caught: goes through RERAISE
    assert len(list(dis._parse_exception_table(f.__code__))) == 3


def test_many_consts_and_names_need_extended_arg():
    # def f(a, b): return g0 + ... + g299 + 0.0 + 1.0 + ... + 299.0
    body = [create_load_global("g0", push_null=False)]
    for i in range(1, 300):
        body += [create_load_global(f"g{i}", push_null=False), ins("BINARY_OP", 0)]
    for i in range(300):
        body += [create_load_const(float(i)), ins("BINARY_OP", 0)]
    code = assemble([ins("RESUME", 0), *body, ins("RETURN_VALUE")], template.__code__)
    f = types.FunctionType(code, {f"g{i}": i for i in range(300)})
    assert f(0, 0) == sum(range(300)) * 2
    assert "EXTENDED_ARG" in opnames(f)
    assert len(code.co_consts) >= 300 and len(code.co_names) == 300


def test_moving_a_jump_target_far_away_adds_extended_arg():
    def f(a, b):
        while a > 0:
            b += a
            a -= 1
        return b if b > 10 else -b

    def pad(instructions, options):
        # 300 NOPs at the top of the loop body: the loop's exit jump now
        # needs EXTENDED_ARG.
        where = 1 + next(i for i, inst in enumerate(instructions) if inst.opname.startswith("POP_JUMP"))
        instructions[where:where] = [create_instruction("NOP") for _ in range(300)]

    code = transform_code(f.__code__, pad)
    g = types.FunctionType(code, f.__globals__)
    assert [g(a, 1) for a in range(8)] == [f(a, 1) for a in range(8)]
    # read co_code itself: 3.13's dis folds EXTENDED_ARG into the next instruction
    ops = [dis.opname[op] for op in code.co_code[::2]]
    jumps_after_ext = [b for a, b in zip(ops, ops[1:]) if a == "EXTENDED_ARG"]
    assert any("JUMP" in name for name in jumps_after_ext), jumps_after_ext


def test_forward_jump_to_an_earlier_target_is_flipped():
    instructions = loop_sum()
    back = next(inst for inst in instructions if inst.opname.startswith("JUMP"))
    assert back.opname == "JUMP_FORWARD"  # what create_jump("JUMP", ...) gives
    build(instructions)
    assert back.opname == "JUMP_BACKWARD" and back.arg > 0


def test_forward_only_jump_backward_is_an_error():
    top = ins("NOP")
    with pytest.raises(ValueError, match="FOR_ITER cannot jump backward"):
        build([ins("RESUME", 0), top, create_jump("FOR_ITER", top)])


def test_consts_stay_distinct_by_type_and_sign():
    values = [1, 1.0, True, 0.0, -0.0, (1, 2), (1.0, 2), float("nan"), None]
    keys = {const_key(v) for v in values}
    assert len(keys) == len(values)
    loads = [create_load_const(v) for v in values]
    f = build([ins("RESUME", 0), *loads, ins("BUILD_TUPLE", len(values)),
               ins("RETURN_VALUE")], co_consts=())
    result = f(0, 0)
    assert [type(v) for v in result] == [type(v) for v in values]
    assert math.copysign(1, result[4]) == -1 and math.isnan(result[7])


def test_load_attr_and_rot_n():
    # def f(a, b): return (a.real, b, a) rotated: (a, a.real, b)
    f = build([
        ins("RESUME", 0),
        create_load_fast("a"), create_load_attr("real"), create_load_fast("b"),
        create_load_fast("a"), *create_rot_n(3), ins("BUILD_TUPLE", 3),
        ins("RETURN_VALUE"),
    ])
    assert f(2, 3) == (2, 2, 3)


def test_unknown_free_variable_is_an_error():
    with pytest.raises(ValueError, match="'zz' is not a local, cell or free"):
        build([ins("RESUME", 0), ins("LOAD_DEREF", argval="zz"), ins("RETURN_VALUE")])


def test_transform_code_can_add_a_local():
    def f(a, b):
        return a + b

    def double_result(instructions, options):
        # result = a + b; return result * 2, via a brand-new local
        ret = instructions[-1]
        instructions[-1:] = [create_store_fast("tmp"), create_load_fast("tmp"),
                             create_load_const(2), ins("BINARY_OP", 5), ret]

    g = types.FunctionType(transform_code(f.__code__, double_result), {})
    assert g(2, 3) == 10 and g.__code__.co_varnames == ("a", "b", "tmp")


def test_assemble_rejects_computed_fields():
    with pytest.raises(TypeError, match="co_code"):
        assemble(decode(template.__code__), template.__code__, co_code=b"")


def test_generated_code_gets_line_numbers_and_tracebacks():
    first = ins("RESUME", 0)
    first.starts_line = 40
    divide = ins("BINARY_OP", 11)
    divide.starts_line = 42
    f = build([first, create_load_fast("a"), create_load_fast("b"), divide,
               ins("RETURN_VALUE")], co_firstlineno=40)
    lines = {line for _, _, line in f.__code__.co_lines()}
    assert lines == {40, 42}
    with pytest.raises(ZeroDivisionError) as info:
        f(1, 0)
    assert info.traceback[-1].lineno + 1 == 42  # pytest's lineno is 0-based


def test_cells_and_free_variables():
    # def f(a, b): return a + y, with `a` also a cell and `y` a free variable
    code = assemble([
        ins("COPY_FREE_VARS", 1), ins("MAKE_CELL", argval="a"), ins("RESUME", 0),
        ins("LOAD_DEREF", argval="a"), ins("LOAD_DEREF", argval="y"),
        ins("BINARY_OP", 0), ins("RETURN_VALUE"),
    ], template.__code__, co_cellvars=("a",), co_freevars=("y",))
    f = types.FunctionType(code, {}, "f", None, (types.CellType(5),))
    assert f(2, 0) == 7
    assert [i.arg for i in dis.get_instructions(code)][3:5] == [0, 2]  # a shares slot 0
