"""decode reads co_code itself: it must resolve every argument as dis does."""
import dis

import pytest

from framegraph import pyver
from framegraph.bytecode.decode import _read
from test_roundtrip import MODULES, code_objects, module_code


def _starts_line(raw):
    """The line an instruction starts, else None (3.13's dis has a bool and line_number)."""
    if isinstance(raw.starts_line, bool):
        return raw.line_number if raw.starts_line else None
    return raw.starts_line


def dis_view(code):
    """(opname, arg, argval, offset, starts_line, positions) per instruction, from dis,
    with EXTENDED_ARG folded into the instruction it extends (as decode does)."""
    out, prefix = [], None
    for raw in dis.get_instructions(code):
        if raw.opname == "EXTENDED_ARG":
            prefix = prefix or raw
            continue
        first = prefix or raw
        line = _starts_line(raw) if _starts_line(first) is None else _starts_line(first)
        argval = raw.argval
        kind = pyver.arg_kind(raw.opname)
        if kind == pyver.ARG_CONST:
            argval = code.co_consts[raw.arg]  # dis leaves KW_NAMES unresolved
        if kind == pyver.ARG_JUMP:
            argval = None  # decode resolves jumps to instructions
        out.append((raw.opname, raw.arg, argval, raw.offset, line, raw.positions))
        prefix = None
    return out


@pytest.mark.parametrize("module", MODULES)
def test_read_agrees_with_dis(module):
    for code in code_objects(module_code(module)):
        ours = [(i.opname, i.arg, i.argval, i.offset, i.starts_line, i.positions) for i in _read(code)[0]]
        theirs = dis_view(code)
        assert len(ours) == len(theirs), code.co_qualname
        for a, b in zip(ours, theirs):
            assert a[:2] == b[:2] and a[3:] == b[3:], (code.co_qualname, a, b)
            assert a[2] is b[2] or a[2] == b[2] and type(a[2]) is type(b[2]), (code.co_qualname, a, b)


def test_extended_args_and_format_values():
    names = ", ".join(f"v{i}" for i in range(300))
    src = f"def f({names}):\n    return f'{{v299!r:>{{v1}}}}' + str(v299)\n"
    ns = {}
    exec(compile(src, "<gen>", "exec"), ns)
    code = ns["f"].__code__
    ours = [(i.opname, i.arg, i.argval) for i in _read(code)[0]]
    assert ours == [t[:3] for t in dis_view(code)]
    assert ("LOAD_FAST", 299, "v299") in ours
    if pyver.VERSION >= (3, 13):  # CONVERT_VALUE then FORMAT_WITH_SPEC
        assert ("CONVERT_VALUE", 2, repr) in ours and any(op == "FORMAT_WITH_SPEC" for op, _, _ in ours)
    else:
        assert any(op == "FORMAT_VALUE" and val == (repr, True) for op, _, val in ours)


@pytest.mark.parametrize("module", MODULES[:3])
def test_decoding_for_the_tracer_only_leaves_out_positions(module):
    # the tracer never assembles what it decodes: the column table is not read
    from framegraph.bytecode import decode

    for code in code_objects(module_code(module)):
        full, traced = decode(code), decode(code, positions=False)
        assert [i.positions for i in traced] == [None] * len(full)
        strip = lambda insts: [(i.opname, i.arg, i.offset, i.starts_line, i.target and i.target.offset,
                                i.exn_entry and i.exn_entry.target.offset) for i in insts]
        assert strip(full) == strip(traced)
