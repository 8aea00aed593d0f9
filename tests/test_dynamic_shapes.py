"""Dynamic shapes and recompiles: automatic dynamic, dynamic=True/False, mark_dynamic,
shape guards, the recompile log in words, and the recompile limit."""
import logging

import pytest
import torch

import framegraph
from framegraph.runtime import cache
from helpers import CountingBackend, assert_same


@pytest.fixture(autouse=True)
def _fresh():
    framegraph.reset()
    yield
    framegraph.reset()


class Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture
def recompiles():
    handler = Capture()
    logger = logging.getLogger("framegraph")
    logger.addHandler(handler)
    framegraph.set_logs(recompiles=True)
    yield handler.messages
    framegraph.set_logs(all=False)
    logger.removeHandler(handler)


def flatten_view(x):
    n = x.size(0)
    return (x * 2).view(n * x.shape[1], -1).sum(0) + n


def call_sizes(fn, sizes, **options):
    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt, **options)
    for b in sizes:
        x = torch.randn(b, 3, 4)
        assert_same(compiled(x), fn(x))
    return cnt


def test_twenty_batch_sizes_compile_twice():
    cnt = call_sizes(flatten_view, range(2, 22))
    assert cnt.frame_count == 2
    nodes = [n.target for n in cnt.graphs[1].graph.nodes]
    assert "size" in nodes  # the second graph reads the batch size at run time


def test_size_one_is_specialised():
    cnt = call_sizes(flatten_view, [1, 2, 3, 4, 5])
    assert cnt.frame_count == 2  # 1 (static), then one graph for every size >= 2
    framegraph.reset()
    cnt = call_sizes(flatten_view, [4, 5, 1, 6])
    assert cnt.frame_count == 3  # a symbol's range is >= 2: size 1 gets its own graph


def test_dynamic_true_is_symbolic_from_the_start():
    assert call_sizes(flatten_view, [2, 3, 4, 5], dynamic=True).frame_count == 1


def test_dynamic_false_never_is():
    framegraph.config.recompile_limit = 20
    try:
        assert call_sizes(flatten_view, range(2, 8), dynamic=False).frame_count == 6
    finally:
        framegraph.config.recompile_limit = 8


def test_mark_dynamic_up_front():
    cnt = CountingBackend()
    compiled = framegraph.compile(flatten_view, backend=cnt, dynamic=False)
    for b in (2, 5, 9):
        x = torch.randn(b, 3, 4)
        framegraph.mark_dynamic(x, 0)
        assert_same(compiled(x), flatten_view(x))
    assert cnt.frame_count == 1
    with pytest.raises(IndexError):
        framegraph.mark_dynamic(torch.ones(2), 3)


def test_shape_relations_are_guarded():
    def f(x, y):
        if x.size(0) > 3:
            return x + y
        return x - y

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, dynamic=True)
    for b in (5, 6, 2, 3, 7):
        x, y = torch.randn(b, 4), torch.randn(b, 4)
        assert_same(compiled(x, y), f(x, y))
    assert cnt.frame_count == 2  # one graph for sizes > 3, one for 2..3
    lines = cache.entries(f)[0].guard_lines[-1]
    assert "L['x'].size(0) == L['y'].size(0)" in lines
    with pytest.raises(RuntimeError):
        compiled(torch.randn(5, 4), torch.randn(6, 4))  # eager's error, not a stale graph's


def test_module_with_changing_batch():
    m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    cnt = CountingBackend()
    compiled = framegraph.compile(m, backend=cnt)
    for b in range(2, 12):
        x = torch.randn(b, 4)
        assert_same(compiled(x), m(x))
    assert cnt.frame_count == 2


def test_size_used_as_python_value_is_specialised():
    def f(x):
        return x * len(range(x.size(0)))  # range() needs a real int

    cnt = call_sizes(f, [2, 3, 3, 4], dynamic=True)
    assert cnt.frame_count == 3  # each size specialised by a guard, never a wrong answer


def test_recompile_log_names_the_size_change(recompiles):
    call_sizes(flatten_view, [8, 16])
    text = "\n".join(recompiles)
    assert "size of L['x'] dim 0 changed from 8 to 16" in text
    assert "framegraph.mark_dynamic(x, 0)" in text


def test_recompile_log_names_a_float_change(recompiles, framegraph_trace):
    def f(x, scale):
        return x * scale

    compiled = framegraph.compile(f, backend="eager")
    compiled(torch.ones(2), 2.0)
    compiled(torch.ones(2), 3.0)
    assert ("L['scale'] changed from 2.0 to 3.0 (a Python float: pass a tensor to avoid recompiling)"
            in "\n".join(recompiles))
    assert framegraph_trace.graphs == 2  # floats are guarded constants


def replaceable(x):
    return x + 1


def calls_replaceable(x):
    return replaceable(x)


def test_recompile_log_names_a_replaced_function(recompiles, framegraph_trace):
    global replaceable
    compiled = framegraph.compile(calls_replaceable, backend="eager")
    original = replaceable
    compiled(torch.ones(2))
    replaceable = lambda x: x - 1  # noqa: E731
    try:
        assert_same(compiled(torch.ones(2)), torch.zeros(2))
    finally:
        replaceable = original
    assert "id of G['replaceable'] changed (the function replaceable was replaced" in "\n".join(recompiles)
    assert framegraph_trace.graphs == 2


@pytest.mark.parametrize("change, words", [
    (lambda x: x.double(), "dtype of L['x'] changed from torch.float32 to torch.float64"),
    (lambda x: x.requires_grad_(), "requires_grad of L['x'] changed from False to True"),
    (lambda x: x.t().contiguous().t(), "stride of L['x'] changed from [4, 1] to [1, 4]"),
    (lambda x: x[None], "L['x'] now has 3 dimensions, not 2"),
    (lambda x: [x], "L['x'] is now a list, not a tensor"),
])
def test_tensor_reasons_in_words(change, words, framegraph_trace):
    compiled = framegraph.compile(lambda x: x * 2, backend="eager")
    x = torch.ones(4, 4)
    compiled(x)
    assert framegraph_trace.graphs == 1
    code = compiled.__wrapped__.__code__
    reasons = cache.recompile_reasons(compiled.__wrapped__, code, {"x": change(x.clone())})
    assert any(words in r for r in reasons), reasons


def test_shape_guard_reason_in_words(framegraph_trace):
    def f(x, y):
        return x + y

    compiled = framegraph.compile(f, backend="eager", dynamic=True)
    compiled(torch.ones(3, 2), torch.ones(3, 2))
    assert framegraph_trace.graphs == 1
    reasons = cache.recompile_reasons(f, f.__code__, {"x": torch.ones(3, 2), "y": torch.ones(4, 2)})
    assert reasons == ["L['x'].size(0) == L['y'].size(0) no longer holds "
                       "(size of L['x'] dim 0 is 3, size of L['y'] dim 0 is 4)"]


@pytest.mark.expect_fallback("recompile_limit")
def test_recompile_limit_warns_once_with_the_reasons(caplog, framegraph_trace):
    framegraph.config.recompile_limit = 2

    def f(x, n):
        return x + n

    try:
        compiled = framegraph.compile(f, backend="eager")
        with caplog.at_level(logging.WARNING, logger="framegraph"):
            for n in range(5):  # floats stay constants: each value recompiles
                assert_same(compiled(torch.ones(2), n + 0.5), torch.ones(2) + (n + 0.5))
    finally:
        framegraph.config.recompile_limit = 8
    warnings = [r.getMessage() for r in caplog.records if "recompile_limit" in r.getMessage()]
    assert len(warnings) == 1 and "L['n'] changed from" in warnings[0]
    assert framegraph_trace.graphs == 2  # then the limit: n = 2.5, 3.5, 4.5 run unmodified


def test_changing_int_recompiles_once_then_is_symbolic():
    def f(x, n):
        return x * n + n * 2

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    x = torch.randn(3)
    for n in range(2, 12):
        assert_same(compiled(x, n), f(x, n))
    assert cnt.frame_count == 2
    assert_same(compiled(x, 2.5), f(x, 2.5))  # a float is not the int the graph takes
    assert cnt.frame_count == 3


def test_an_int_in_a_tuple_of_constants_recompiles_once_then_is_symbolic():
    """``(n, 3)`` is checked as one constant while its ints stay the same; an int of it that
    changed becomes symbolic, as an int argument does."""
    def f(x, pair):
        return x * pair[0] + pair[1]

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    x = torch.randn(3)
    for n in range(2, 8):
        assert_same(compiled(x, (n, 3)), f(x, (n, 3)))
    assert cnt.frame_count == 2
    assert_same(compiled(x, (2, 3.5)), f(x, (2, 3.5)))  # another item type: traced anew
    assert cnt.frame_count == 3


def test_int_that_python_needs_is_specialised():
    def f(x, n):
        for _ in range(n):
            x = x + 1
        return x

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    x = torch.zeros(2)
    for n in (2, 3, 4, 3, 2):
        assert_same(compiled(x, n), f(x, n))
    assert cnt.frame_count == 3  # one per loop count, each guarded: never a stale unrolling


def size_arithmetic(x):
    s = x.shape
    y = x.reshape(s[:-1] + (-1, 2)) * 2
    return s[1:], s[:-1] + (2,), (1,) + s, s * 2, torch.Size(list(s)), y.shape, s.numel(), y


def test_a_symbolic_size_sliced_or_added_stays_a_torch_size():
    cnt = CountingBackend()
    compiled = framegraph.compile(size_arithmetic, backend=cnt)
    for b in (2, 3, 4):
        x = torch.randn(b, 3, 4)
        got, want = compiled(x), size_arithmetic(x)
        assert [type(v) for v in got] == [type(v) for v in want] and got[:-1] == want[:-1]
        assert_same(got[-1], want[-1])
    assert cnt.frame_count == 2  # the second graph is symbolic in the batch size
