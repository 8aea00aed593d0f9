"""Version facts: the table encodings and the one-place-for-versions rule."""

import dis
import pathlib
import types

import pytest

from framegraph import pyver
from framegraph.bytecode import assemble, create_instruction, decode

FRAMEGRAPH = pathlib.Path(pyver.__file__).resolve().parent.parent


def test_only_pyver_knows_the_python_version():
    offenders = [str(path.relative_to(FRAMEGRAPH)) for path in FRAMEGRAPH.rglob("*.py")
                 if "sys.version_info" in path.read_text()
                 and path.parent.name != "pyver"]
    assert offenders == []


def test_exception_table_encoding_round_trips():
    entries = [(0, 2, 4, 0, False), (4, 200, 202, 3, True),
               (300, 2 ** 20, 2 ** 20 + 2, 70, False), (2 ** 25, 2 ** 26, 2, 1, True)]
    raw = pyver.encode_exception_table(entries)
    assert pyver.parse_exception_table(raw) == entries
    assert [tuple(e) for e in pyver.parse_exception_table(raw)] == [
        (e.start, e.end, e.target, e.depth, e.lasti)
        for e in dis._parse_exception_table(types.SimpleNamespace(co_exceptiontable=raw))]


def test_jump_arithmetic():
    assert pyver.jump_arg("JUMP_FORWARD", 10, 20) == 4
    back = 4 + pyver.inline_cache_entries("JUMP_BACKWARD")  # 3.13's JUMP_BACKWARD has a cache
    assert pyver.jump_arg("JUMP_BACKWARD", 10, 4) == back
    assert pyver.jump_target_offset("JUMP_BACKWARD", 10, back) == 4
    if pyver.VERSION == (3, 11):
        assert pyver.jump_variant("POP_JUMP_IF_NONE", backward=True) == "POP_JUMP_BACKWARD_IF_NONE"
    else:  # 3.12 has forward conditional jumps only
        assert pyver.jump_variant("POP_JUMP_FORWARD_IF_NONE", backward=False) == "POP_JUMP_IF_NONE"
        with pytest.raises(ValueError):
            pyver.jump_variant("POP_JUMP_IF_NONE", backward=True)
    assert pyver.jump_variant("JUMP_BACKWARD", backward=False) == "JUMP_FORWARD"
    with pytest.raises(ValueError):
        pyver.jump_variant("JUMP_BACKWARD_NO_INTERRUPT", backward=False)


def test_arg_kinds_and_caches():
    assert pyver.arg_kind("LOAD_GLOBAL") == pyver.ARG_GLOBAL
    assert pyver.arg_kind("LOAD_CONST") == pyver.ARG_CONST
    assert pyver.arg_kind("LOAD_DEREF") == pyver.ARG_LOCALSPLUS
    assert pyver.arg_kind("RETURN_VALUE") == pyver.ARG_NONE
    assert pyver.inline_cache_entries("LOAD_GLOBAL") == {(3, 11): 5, (3, 12): 4, (3, 13): 4}[pyver.VERSION]
    assert pyver.load_global_arg(3, True) == 7 and pyver.load_global_push_null(7)
    assert pyver.name_index("LOAD_GLOBAL", 7) == 3 and pyver.name_arg("LOAD_GLOBAL", 3, 7) == 7
    assert pyver.compare_op(pyver.compare_arg("<=")) == "<="
    assert pyver.localsplus_names(("a", "b"), ("b", "c"), ("d",)) == ("a", "b", "c", "d")


POSITIONS = [
    dis.Positions(3, 3, 4, 9),        # short form
    dis.Positions(4, 4, 100, 120),    # one-line form, line + 1
    dis.Positions(4, 6, 0, 2),        # long form: spans lines
    dis.Positions(2, 2, None, None),  # no columns, line goes back
    dis.Positions(None, None, None, None),  # no location
    dis.Positions(900, 900, 300, 400),      # long form: big jump, wide columns
]


def test_positions_survive_assembly():
    def f():
        pass

    instructions = [create_instruction("RESUME", arg=0)]
    for pos in POSITIONS:
        inst = create_instruction("NOP")
        inst.positions = pos
        instructions.append(inst)
    instructions.append(create_instruction("LOAD_CONST", argval=None))
    instructions.append(create_instruction("RETURN_VALUE"))
    code = assemble(instructions, f.__code__, co_firstlineno=1)
    got = list(code.co_positions())
    assert got[1:1 + len(POSITIONS)] == [tuple(p) for p in POSITIONS]
    # an instruction without positions inherits its predecessor's
    assert got[-1] == got[-2] == tuple(POSITIONS[-1])
    assert [tuple(i.positions) for i in decode(code)][1:7] == [tuple(p) for p in POSITIONS]
