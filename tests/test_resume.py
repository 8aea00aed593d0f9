"""Resume functions continue a frame after a break, from real values."""
import dis
import types

import pytest

from framegraph import pyver
from framegraph.breaks.resume import NULL, VALUE, resume_code


def offset_after(fn, opname, argval=None, nth=0):
    """Offset of the instruction after the nth `opname` (with `argval`) in fn."""
    insts = [i for i in dis.get_instructions(fn)]
    hits = [k for k, i in enumerate(insts) if i.opname == opname and (argval is None or i.argval == argval)]
    return insts[hits[nth] + 1].offset


def resume(fn, offset, layout, live):
    code = resume_code(fn.__code__, offset, layout, live)
    return types.FunctionType(code, fn.__globals__, code.co_name, None, fn.__closure__)


def test_resume_straight_line_code_with_live_locals():
    def f(x):
        a = x + 1
        b = a * 2
        return b + a

    at = offset_after(f, "STORE_FAST", "b")
    g = resume(f, at, [], ["a", "b"])
    assert g(5, 7) == 12
    assert g.__code__.co_filename == f.__code__.co_filename
    assert g.__name__ == "f"  # what a traceback through it shows, as CPython's would
    assert g.__qualname__.endswith(f"f_resume_at_{f.__code__.co_firstlineno + 3}")


def test_resume_with_a_value_on_the_stack():
    def f(x):
        y = x * 10
        return y + (x - 1)

    at = offset_after(f, "BINARY_OP", nth=1)  # after (x - 1): stack holds y, x - 1
    g = resume(f, at, [VALUE, VALUE], [])
    assert g(30, 2) == 32


def test_resume_with_a_null_on_the_stack():
    def f(x):
        return max(len(x), 2)

    at = offset_after(f, "CALL", nth=0)  # after len(x): [NULL, max, len(x)]; 3.13: [max, NULL, len(x)]
    g = resume(f, at, [VALUE, NULL, VALUE] if pyver.NULL_ABOVE_CALLABLE else [NULL, VALUE, VALUE], [])
    assert g(max, 5) == 5


def test_resume_inside_a_loop_keeps_iterating():
    def f(xs):
        total = 0
        for v in xs:
            total += v
        return total

    at = offset_after(f, "STORE_FAST", "v")  # in the body: the iterator is on the stack
    it = iter([1, 2, 3, 4])
    next(it)
    g = resume(f, at, [VALUE], ["total", "v"])
    assert g(it, 100, 1) == 110  # 100 + 1, then the loop goes on over 2, 3, 4


def test_resume_inside_try_still_catches():
    def f(x):
        try:
            y = x + 1
            return 1 / (y - y)
        except ZeroDivisionError:
            return "caught"

    at = offset_after(f, "STORE_FAST", "y")
    g = resume(f, at, [], ["y"])
    assert g(3) == "caught"


def test_resume_with_cells_and_free_variables():
    def outer():
        k = 3

        def f(x):
            y = x + k
            h = lambda: y * k  # noqa: E731
            return h()

        return f

    f = outer()
    at = offset_after(f, "STORE_DEREF", "y")
    g = resume(f, at, [], ["y"])
    assert g(10) == 30


def test_resume_codes_are_cached_and_bad_offsets_rejected():
    def f(x):
        return x

    at = offset_after(f, "LOAD_FAST")
    assert resume_code(f.__code__, at, [VALUE], []) is resume_code(f.__code__, at, [VALUE], [])
    with pytest.raises(ValueError, match="no instruction at offset 1"):
        resume_code(f.__code__, 1, [], [])


def test_resume_code_keeps_line_numbers():
    def f(x):
        a = x + 1
        raise ValueError(a)

    at = offset_after(f, "STORE_FAST", "a")
    g = resume(f, at, [], ["a"])
    with pytest.raises(ValueError) as info:
        g(1)
    assert info.traceback[-1].lineno + 1 == f.__code__.co_firstlineno + 2
