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
    the mark is torch._dynamo's, so the marked function's own frame is a frame like
    any other: three graphs, before, inside and after."""
    def f(x):
        return marked(x * 2) * 3

    x = torch.ones(3)
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, f(x))
    assert (cnt.frame_count, errors) == (3, [])
    assert len(breaks) == 1 and "marked by torch._disable_dynamo" in str(breaks[0])
