"""NumPy code in a compiled function is traced as torch operations (``torch._numpy``).

An ndarray is the tensor holding its data: ``x.numpy()``, ``torch.from_numpy(a)``
and NumPy's functions, methods and operators on arrays are graph nodes; an ndarray
passed in is a graph input; the program gets back ndarrays (and NumPy scalars)
where it made them. What needs an array's data in Python is a break, as for tensors.
"""
import numpy as np
import pytest
import torch

import framegraph

from helpers import CountingBackend, assert_same, check, check_breaks


def numpy_nodes(cnt, index=-1):
    return [getattr(t, "__name__", t) for t in cnt.targets(index) if getattr(t, "__module__", "").endswith("numpy_arrays")]


def test_a_tensor_round_trip_through_numpy_is_one_graph():
    def f(x):
        a = x.numpy()
        b = np.sin(a) * 2 + np.sum(a, axis=0)
        return torch.from_numpy(b)

    cnt = check(f, torch.randn(3, 4))
    assert numpy_nodes(cnt) == ["np_sin", "np_mul", "np_sum", "np_add"]


def test_ndarrays_passed_in_are_graph_inputs_and_the_result_is_an_ndarray():
    def f(a, b):
        return np.dot(a, b.T) + np.exp(a).mean(axis=1, keepdims=True)

    a, b = np.random.randn(3, 4).astype(np.float32), np.random.randn(5, 4).astype(np.float32)
    cnt = check(f, a, b)
    assert len(cnt.example_inputs[0]) == 2 and all(isinstance(t, torch.Tensor) for t in cnt.example_inputs[0])


def test_ndarray_methods_and_attributes():
    def f(a):
        b = a.reshape(2, -1).T.clip(-0.5, 0.5)
        return b.sum(axis=0), b.argmax(axis=1), a.max(axis=0), b.astype("float64").cumsum(axis=0), a.shape, a.ndim

    check(f, np.random.randn(4, 3))


def test_numpy_between_torch_operations_fuses_with_them():
    def f(x):
        a = (torch.relu(x) + 0.1).numpy()
        a = np.where(a > 0.5, np.log(a), a ** 2)
        return torch.from_numpy(a) * x

    cnt = check(f, torch.randn(4, 4))
    assert "relu" in [getattr(t, "__name__", t) for t in cnt.targets()]


def test_results_numpy_gives_as_scalars_come_back_as_numpy_scalars():
    def f(a):
        return a.sum(), np.max(a), a[0, 1], a.reshape(()) if a.size == 1 else a.copy()

    out = framegraph.compile(f, backend=CountingBackend(), fullgraph=True)(np.ones((2, 3), dtype=np.float32))
    assert type(out[0]) is np.float32 and type(out[2]) is np.float32 and type(out[3]) is np.ndarray
    check(f, np.ones((2, 3), dtype=np.float32))


def test_numpys_dtype_rules_not_torchs():
    def f(a, b):
        return a / 2, np.arctan2(a, 3), a + b, np.sqrt(a), a.mean(), np.float32(2) * a

    ints, floats = np.arange(4), np.linspace(0, 1, 4, dtype=np.float32)
    out = framegraph.compile(f, backend="inductor", fullgraph=True)(ints, floats)
    assert [o.dtype for o in out] == [o.dtype for o in f(ints, floats)] == [np.float64] * 6
    check(f, ints, floats)


def test_writes_to_an_ndarray_passed_in_reach_the_callers_array():
    def f(a):
        a[0] = 7.0
        a += 1
        np.add(a, 1, out=a)
        return a

    check_breaks(f, lambda: (np.arange(6.0).reshape(2, 3),), graphs=1, breaks=0)
    a = np.arange(3.0)
    assert framegraph.compile(f, backend=CountingBackend(), fullgraph=True)(a) is a


def test_an_ndarray_from_a_tensor_shares_its_memory_as_in_eager():
    def f(x):
        a = x.numpy()
        a[0] = -1.0
        return x + 1

    check_breaks(f, lambda: (torch.zeros(3),), graphs=1, breaks=0)


def test_constants_alone_run_now_or_become_arrays():
    def f(a):
        z = np.zeros(3) + np.sqrt(2.0)
        return a + z, np.issubdtype(a.dtype, np.floating), a.dtype == np.float64, type(a), isinstance(a, np.ndarray)

    check(f, np.ones(3))


def test_lists_of_arrays_linalg_and_fft():
    def f(a, b):
        return np.stack([a[0], b]), np.concatenate((a, b[None]), axis=0), np.linalg.norm(a), np.fft.rfft(b)

    check(f, np.arange(6.0).reshape(2, 3), np.arange(3.0))


def test_a_new_dtype_or_shape_of_an_input_array_recompiles():
    cnt = CountingBackend()
    compiled = framegraph.compile(lambda a: a * 2, backend=cnt)
    for a in (np.arange(4.0), np.arange(4.0), np.arange(4, dtype=np.int32), np.ones((2, 2))):
        assert_same(compiled(a), a * 2)
    assert cnt.frame_count == 3


@pytest.mark.expect_fallback("unsupported_value")
def test_arrays_torch_cannot_view_run_unmodified():
    cnt = CountingBackend()
    compiled = framegraph.compile(lambda a: a * 2, backend=cnt)
    for a in (np.arange(8.0)[::-1], np.array(["x", "y"], dtype=object)):
        assert list(compiled(a)) == list(a * 2)
    assert cnt.frame_count == 0


def test_what_needs_the_data_is_a_break():
    def branch(a):
        if a.sum() > 2:
            return a * 2
        return a

    def item(a):
        return a.max().item() + 1

    check_breaks(branch, lambda: (np.arange(4.0),), graphs=2, breaks=1)
    check_breaks(item, lambda: (np.arange(4.0),), graphs=1, breaks=1)


def test_numpy_random_is_not_traced():
    def f(a):
        return a + np.random.rand(4)

    np.random.seed(0)
    expected = f(np.arange(4.0))
    np.random.seed(0)
    result = framegraph.compile(f, backend=CountingBackend())(np.arange(4.0))
    assert_same(result, expected)


def test_numpy_of_a_tensor_that_requires_grad_raises_as_in_eager():
    def f(x):
        return x.numpy()

    with pytest.raises(RuntimeError, match="requires grad"):
        framegraph.compile(f, backend=CountingBackend())(torch.ones(2, requires_grad=True))


def test_torch_tensor_of_an_array_is_a_copy_and_as_tensor_a_view():
    def f(a, t):
        copied, viewed = torch.tensor(a), torch.as_tensor(a)
        a += 1
        return copied, viewed, torch.as_tensor(a, dtype=torch.float32) * t

    check_breaks(f, lambda: (np.arange(4.0), torch.ones(4)), graphs=1, breaks=0)
