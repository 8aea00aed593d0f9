"""Guards: structured, readable, cheap first, sound, and never holding arguments."""
import functools
import gc
import weakref

import pytest
import torch

import framegraph
from framegraph.config import CompileOptions
from framegraph.guards.kinds import Guard, TensorSpec
from framegraph.guards.compile import CompiledGuard
from framegraph.guards.sources import AttrSource, GlobalSource, LocalSource
from framegraph.runtime.pipeline import trace_frame
from helpers import CountingBackend

THRESHOLD = 2


@pytest.fixture(autouse=True)
def _fresh():
    framegraph.reset()
    yield
    framegraph.reset()


def trace(fn, **f_locals):
    return trace_frame(fn, fn.__code__, f_locals, CompileOptions(backend=CountingBackend(), backend_name="c"))


def f_scaled(x, n):
    return torch.relu(x) * n * THRESHOLD


def test_guard_lines_are_readable():
    frame = trace(f_scaled, x=torch.randn(8), n=3)
    assert frame.guard_lines == [
        "torch.is_grad_enabled() is True",
        "torch.get_default_dtype() is torch.float32; torch.are_deterministic_algorithms_enabled() is False; "
        "autocast enabled is False",
        "G is the globals dict the code was traced with",
        f"id(G['torch']) == {id(torch)}  # module torch",
        "L['n'] == 3",
        "G['THRESHOLD'] == 2",
        "L['x']: Tensor(dtype=torch.float32, device=cpu, size=[8], stride=[1], requires_grad=False)",
    ]


def test_guard_accepts_same_and_rejects_changed_inputs_with_a_reason():
    x = torch.randn(8)
    frame = trace(f_scaled, x=x, n=3)
    g = frame.guards
    assert g(f_scaled, torch.randn(8), 3)
    assert not g(f_scaled, x.double(), 3)
    assert not g(f_scaled, torch.randn(9), 3)
    assert not g(f_scaled, x, 4)
    assert not g(f_scaled, x, 3.0)  # 3.0 == 3 but is not an int
    assert not g(f_scaled, x.t() if x.dim() > 1 else x.requires_grad_(True), 3)
    x.requires_grad_(False)
    assert g.failure(f_scaled, x.double(), 3) == "dtype of L['x'] changed from torch.float32 to torch.float64"
    assert g.failure(f_scaled, x, 4).startswith("L['n'] changed from 3 to 4 (a Python int")
    assert g.failure(f_scaled, x, 3) is None


def test_guard_never_raises():
    frame = trace(f_scaled, x=torch.randn(8), n=3)
    assert frame.guard(f_scaled, object(), None) is False
    assert frame.guard(f_scaled, "not a tensor", 3) is False


def test_guard_does_not_keep_arguments_alive():
    x = torch.randn(8)
    ref = weakref.ref(x)
    frame = trace(f_scaled, x=x, n=3)
    del x
    gc.collect()
    assert ref() is None
    assert frame.guard is not None


def test_cheap_guards_come_first():
    frame = trace(f_scaled, x=torch.randn(8), n=3)
    kinds = [g.kind for g in frame.guards.guards]
    assert kinds.index("GRAD_MODE") < kinds.index("CONSTANT_MATCH") < kinds.index("TENSOR_MATCH")


def test_global_change_and_dtype_change_make_new_cache_entries():
    global THRESHOLD
    cnt = CountingBackend()
    fn = framegraph.compile(f_scaled, backend=cnt)
    x = torch.randn(8)
    torch.testing.assert_close(fn(x, 3), f_scaled(x, 3))
    torch.testing.assert_close(fn(x.double(), 3), f_scaled(x.double(), 3))
    assert cnt.frame_count == 2
    THRESHOLD = 5
    try:
        torch.testing.assert_close(fn(x, 3), f_scaled(x, 3))
    finally:
        THRESHOLD = 2
    assert cnt.frame_count == 3
    torch.testing.assert_close(fn(x, 3), f_scaled(x, 3))
    assert cnt.frame_count == 3  # back to the first entry


def helper(x):
    return x + 1


def f_helper(x):
    return helper(x)


def test_replaced_global_function_is_caught():
    global helper
    cnt = CountingBackend()
    fn = framegraph.compile(f_helper, backend=cnt)
    x = torch.zeros(2)
    torch.testing.assert_close(fn(x), x + 1)
    original = helper
    helper = lambda x: x - 1  # noqa: E731
    try:
        torch.testing.assert_close(fn(x), x - 1)
    finally:
        helper = original
    assert cnt.frame_count == 2


def test_unused_tensor_argument_is_not_guarded():
    def f(x, unused):
        return x + 1

    frame = trace(f, x=torch.randn(2), unused=torch.randn(3))
    assert not any("unused" in line for line in frame.guard_lines)


def test_aliased_inputs_are_guarded_by_identity():
    def f(a, b):
        return a + b

    x = torch.randn(2)
    frame = trace(f, a=x, b=x)
    assert "L['b'] is L['a']" in frame.guard_lines
    assert frame.guard(f, x, x)
    assert not frame.guard(f, x, torch.randn(2))


def test_compiled_guard_from_structured_data():
    spec = TensorSpec(torch.Tensor, torch.float32, torch.device("cpu"), (2,), (1,), False)
    g = CompiledGuard([
        Guard("TENSOR_MATCH", LocalSource("x"), spec),
        Guard("CONSTANT_MATCH", AttrSource(LocalSource("cfg"), "n"), 4),
        Guard("NOT_IN_GLOBALS", None, "len"),
        Guard("TYPE_MATCH", GlobalSource("Thing"), type),
    ], ("x", "cfg"))

    class Cfg:
        n = 4

    def fn():
        pass

    fn.__globals__["Thing"] = int
    assert g(fn, torch.zeros(2), Cfg())
    Cfg.n = 5
    assert not g(fn, torch.zeros(2), Cfg())
    assert "L['cfg'].n == 4" in g.lines


def test_dict_keys_guard_keeps_the_dict_type():
    import collections

    def f(x, d):
        return x + len(d)

    d = collections.OrderedDict(a=1)
    frame = trace(f, x=torch.randn(2), d=d)
    assert frame.guard(f, torch.randn(2), collections.OrderedDict(a=1))
    assert not frame.guard(f, torch.randn(2), collections.OrderedDict(a=1, b=2))
    assert not frame.guard(f, torch.randn(2), {"a": 1})


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # a decorator's closure, as transformers wraps forward
        return fn(*args, **kwargs)
    return wrapper


class Layer(torch.nn.Module):
    scale = 2.0

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    @_logged
    def forward(self, x):
        return self.lin(x) * self.scale


class Stack(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(n))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_the_class_of_many_layers_is_guarded_once():
    model, x = Stack(4), torch.randn(2, 4)
    frame = trace(model.forward.__func__, self=model, x=x)
    through_class = [g for g in frame.guards.guards
                     if g.source is not None and ").forward" in g.source.name()]
    assert through_class and all("_modules['0']" in g.source.name() for g in through_class)
    same_class = [g for g in frame.guards.guards if g.kind == "IS_SAME" and g.source.name().startswith("type(")]
    assert {g.source.name() for g in same_class} >= {f"type(L['self']._modules['layers']._modules['{i}'])"
                                                     for i in (1, 2, 3)}


def test_a_class_change_seen_through_any_layer_recompiles(monkeypatch):
    model, x = Stack(3), torch.randn(2, 4)
    backend = CountingBackend()
    compiled = framegraph.compile(model, backend=backend)
    with torch.no_grad():
        assert torch.equal(compiled(x), model(x))
        monkeypatch.setattr(Layer, "scale", 3.0)  # read once, through the first layer's class
        assert torch.equal(compiled(x), model(x))

        class Halved(Layer):
            scale = 0.5

        model.layers[2].__class__ = Halved  # one layer of another class: its own attributes
        assert torch.equal(compiled(x), model(x))
    assert backend.frame_count == 3
