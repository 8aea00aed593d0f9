"""Methods of torch's C++ (pybind11) objects and functions torch marks as not
to be compiled: each call is a graph break at the CALL, with the name of what
was called, and the frame resumes after it (DistributedDataParallel.forward
calls its Reducer's and Logger's methods; tests/distributed/ runs it)."""
import pytest
import torch
import torch.distributed as dist

import framegraph
from helpers import assert_same, run_counted

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch without torch.distributed")


def test_a_pybind_method_call_breaks_and_runs_once_per_call():
    store = dist.HashStore()

    def f(x):
        y = x * 2
        n = store.add("calls", 1)  # Store.add: a C++ method (pybind11's instancemethod)
        return y + n

    x = torch.ones(3)
    expected = f(x)  # calls == 1
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, expected + 1)  # calls == 2: the break ran it once, in CPython
    assert store.add("calls", 0) == 2
    assert (cnt.frame_count, errors) == (2, [])
    assert len(breaks) == 1 and "C++ method HashStore.add" in str(breaks[0])


def _marked(x):
    return x + 1


marked = torch._disable_dynamo(_marked)


def test_a_function_marked_by_torch_disable_dynamo_runs_in_cpython():
    """The wrapper (torch/_compile.py) runs in CPython, not traced into torch._dynamo;
    at the call it wraps the function with torch.compiler.disable, which framegraph
    honours too: the function runs as it is, and the graphs are before and after."""
    def f(x):
        return marked(x * 2) * 3

    x = torch.ones(3)
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, f(x))
    assert (cnt.frame_count, errors) == (2, [])
    assert len(breaks) == 1 and "marked by torch._disable_dynamo" in str(breaks[0])


def _times_three(x):
    return x * 3


@torch.compiler.disable
def _never_compiled(x):
    return _times_three(x).cos() + 1


def _own_frame_only(x):
    return _times_three(x) + 1


_own_frame_disabled = torch.compiler.disable(_own_frame_only, recursive=False)


def test_torch_compiler_disable_keeps_the_function_and_what_it_calls_out_of_graphs():
    def f(x):
        return _never_compiled(x.sin()) * 2

    x = torch.randn(5)
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, f(x))
    assert (cnt.frame_count, errors) == (2, [])  # before and after the call, as torch.compile makes
    assert len(breaks) == 1 and "marked by torch.compiler.disable" in str(breaks[0])


def test_torch_compiler_disable_not_recursive_keeps_only_the_functions_own_frame_out():
    def f(x):
        return _own_frame_disabled(x.sin()) * 2

    x = torch.randn(5)
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, f(x))
    assert (cnt.frame_count, errors) == (3, [])  # before, the callee it calls, after
