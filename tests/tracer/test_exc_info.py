"""sys.exc_info() and sys.exception() inside compiled code: the exception the
trace handles; outside any except block of the trace, the caller's, which a
guard requires to be none (called from an except block, the frame runs its
own way)."""
import sys

import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, check_breaks


def cleanup(x):
    """What contextlib.ExitStack.__exit__ and logging handlers do with sys.exc_info()."""
    before = sys.exc_info()
    try:
        raise KeyError("missing")
    except KeyError:
        kind, value, tb = sys.exc_info()
        inside = (kind, value.args, tb is not None, sys.exception() is value)
    return x + 1, before, inside, sys.exc_info()


def test_exc_info_in_and_out_of_an_except_block_is_one_graph():
    check_breaks(cleanup, lambda: (torch.ones(2),), graphs=1, breaks=0)


def test_called_from_an_except_block_it_sees_the_callers_exception():
    cnt = CountingBackend()
    compiled = framegraph.compile(cleanup, backend=cnt)
    assert_same(compiled(torch.ones(2)), cleanup(torch.ones(2)))
    try:
        raise ValueError("outer")
    except ValueError:
        expected, actual = cleanup(torch.ones(2)), compiled(torch.ones(2))
    assert actual[1][1] is expected[1][1] and actual[3][1] is expected[3][1]  # the ValueError
    assert_same(actual[2], expected[2])


def bare_raise(x):
    try:
        raise                            # no exception handled anywhere: do_raise's RuntimeError
    except RuntimeError as e:
        return x + 1, str(e)


def context_of_a_first_exception(x):
    try:
        raise KeyError("k")
    except KeyError as e:
        return x + 1, repr(e.__context__)  # what the caller handles: none, guarded


def test_a_bare_raise_with_nothing_handled_is_a_runtime_error():
    check_breaks(bare_raise, lambda: (torch.ones(2),), graphs=1, breaks=0)


@pytest.mark.expect_fallback("exception")  # called inside an except block: the guard fails, CPython runs it
def test_the_context_of_a_first_exception_is_what_the_caller_handles():
    cnt = CountingBackend()
    compiled = framegraph.compile(context_of_a_first_exception, backend=cnt)
    assert_same(compiled(torch.ones(2)), (torch.ones(2) + 1, "None"))
    assert cnt.frame_count == 1
    try:
        raise ValueError("outer")
    except ValueError:
        assert_same(compiled(torch.ones(2)), (torch.ones(2) + 1, "ValueError('outer')"))
