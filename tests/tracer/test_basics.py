"""The brief's example and arithmetic on tensors and Python numbers."""
import dis
import operator

import torch

import framegraph
from framegraph.runtime.pipeline import trace_frame
from framegraph.config import CompileOptions
from helpers import CountingBackend, check


def test_brief_example_one_graph_two_ops():
    def f(x):
        return torch.sin(x) + 1

    cnt = check(f, torch.randn(8), ops=2)
    assert cnt.targets() == [torch.sin, operator.add]


def test_brief_example_modified_bytecode():
    def f(x):
        return torch.sin(x) + 1

    x = torch.randn(8)
    frame = trace_frame(f, f.__code__, {"x": x}, CompileOptions(backend=CountingBackend(), backend_name="c"))
    ops = [(i.opname, i.argval) for i in dis.get_instructions(frame.code) if i.opname != "CACHE"]
    assert ops == [
        ("RESUME", 0), ("LOAD_GLOBAL", frame.compiled_fn_name), ("LOAD_FAST", "x"),
        *[(name, 1) for name in framegraph.pyver.CALL_OPNAMES],  # 3.11: PRECALL 1; CALL 1. 3.12: CALL 1
        ("STORE_FAST", "graph_out_0"), ("LOAD_FAST", "graph_out_0"),
        ("LOAD_CONST", 0), ("BINARY_SUBSCR", None), ("RETURN_VALUE", None),
    ]
    assert frame.code.co_filename == f.__code__.co_filename
    assert frame.code.co_name == "f" and frame.code.co_firstlineno == f.__code__.co_firstlineno


def test_second_call_hits_the_cache():
    cnt = CountingBackend()

    def f(x):
        return torch.cos(x) * 2

    fn = framegraph.compile(f, backend=cnt)
    x = torch.randn(3)
    for _ in range(3):
        torch.testing.assert_close(fn(x), f(x))
    assert cnt.frame_count == 1


def test_tensor_arithmetic_and_comparison():
    def f(x, y):
        a = (x + y) * (x - y) / (y.abs() + 1)
        b = x @ y.T
        c = -a ** 2 // 3 % 5
        return a, b, c, x < y, x >= 0.5, (x == y) | (x != y), ~(x > 0)

    check(f, torch.randn(4, 4), torch.randn(4, 4))


def test_python_numbers_fold_at_trace_time():
    def f(x, n, scale):
        k = (n * 3 + 1) // 2 - n % 2
        if n > 2 and scale != 0.5:
            k = k ** 2
        return x * k + scale * float(n) / abs(-4)

    cnt = check(f, torch.randn(3), 3, 1.5, ops=2)
    assert cnt.targets() == [operator.mul, operator.add]


def test_inplace_operators():
    def f(x):
        y = x * 1
        y += 2
        y *= x
        n = 1
        n += 5
        return y, n

    check(f, torch.randn(5))


def test_tensor_metadata_is_static():
    def f(x):
        n, m = x.shape
        return x.view(m, n) * x.size(0) + x.dim() + x.ndim + len(x) + x.numel(), x.dtype, x.device

    check(f, torch.randn(2, 3), ops=6)  # view, mul and four adds: sizes are constants


def test_unary_and_builtin_ops_on_tensors():
    def f(x):
        return -x, +x, abs(x), x.T, x.mT, x.real, x[0], x[:, 1:], x[..., None]

    check(f, torch.randn(3, 3))


def test_torch_functions_and_tensor_methods():
    def f(x):
        y = torch.nn.functional.relu(x).sum(dim=1, keepdim=True)
        z = torch.cat([x, y], dim=1).softmax(-1)
        values, indices = torch.max(z, dim=1)
        return torch.where(z > 0.1, z, torch.zeros_like(z)), values, indices, z.to(torch.float64)

    check(f, torch.randn(4, 5))


def test_returning_input_and_constants_needs_no_graph():
    def f(x, n):
        return x, n + 1, "done", None

    check(f, torch.randn(2), 4, frames=0)


def test_factory_functions():
    def f(x):
        return x + torch.ones(3) * torch.arange(3) + torch.full((3,), 2.0)

    check(f, torch.randn(3))


def test_setitem_on_a_tensor_made_in_the_graph():
    def f(x):
        y = x.clone()
        y[0] = 5.0
        y[1:] *= 2
        return y

    check(f, torch.randn(4))
