"""Module hooks run inside the graph, as nn.Module's call runs them in eager.

Compiling a module traces its whole call: forward pre-hooks, forward, forward
hooks (with kwargs, ``always_call``, global ones). Adding or removing a hook
later is a guard failure and a recompile, never a stale answer. A tensor hook
registered on a tensor the graph makes is part of the graph and shapes the
gradient as in eager.
"""
import pytest
import torch
from torch import nn
from torch.nn.modules import module as module_mod

import framegraph

from helpers import CountingBackend, assert_same, run_counted


def compiled_counting(module):
    cnt = CountingBackend()
    return framegraph.compile(module, backend=cnt, fullgraph=True), cnt


def test_a_linear_with_a_pre_hook_and_a_hook_is_one_graph():
    lin = nn.Linear(4, 4)
    lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    lin.register_forward_hook(lambda m, args, out: out + 1)
    compiled, cnt = compiled_counting(lin)
    x = torch.randn(3, 4)
    assert_same(compiled(x), lin(x))
    assert cnt.frame_count == 1


def test_hooks_of_a_submodule_run_inside_the_parents_graph():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 2)

        def forward(self, x):
            return self.b(self.a(x).relu())

    net = Net()
    net.a.register_forward_hook(lambda m, args, out: out * 0.5)
    net.b.register_forward_pre_hook(lambda m, args: None)  # returns None: the arguments stay
    compiled, cnt = compiled_counting(net)
    x = torch.randn(3, 4)
    assert_same(compiled(x), net(x))
    assert cnt.frame_count == 1


def test_hooks_with_kwargs_see_and_replace_keyword_arguments():
    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    mod = Scale()
    mod.register_forward_pre_hook(lambda m, args, kwargs: (args, {"factor": kwargs["factor"] * 3}),
                                  with_kwargs=True)
    mod.register_forward_hook(lambda m, args, kwargs, out: out + kwargs["factor"], with_kwargs=True)
    compiled, cnt = compiled_counting(mod)
    x = torch.randn(4)
    assert_same(compiled(x, factor=2.0), mod(x, factor=2.0))
    assert cnt.frame_count == 1


def test_an_always_call_hook_runs_like_any_hook_when_forward_returns():
    lin = nn.Linear(4, 4)
    lin.register_forward_hook(lambda m, args, out: out.tanh(), always_call=True)
    compiled, cnt = compiled_counting(lin)
    x = torch.randn(2, 4)
    assert_same(compiled(x), lin(x))
    assert cnt.frame_count == 1


def test_a_global_forward_hook_runs_in_the_graph_and_its_removal_recompiles():
    lin = nn.Linear(4, 4)
    compiled, cnt = compiled_counting(lin)
    x = torch.randn(2, 4)
    handle = module_mod.register_module_forward_hook(lambda m, args, out: out * 10)
    try:
        assert_same(compiled(x), lin(x))
        assert cnt.frame_count == 1
    finally:
        handle.remove()
    assert_same(compiled(x), lin(x))  # the hook is gone: a new graph without it
    assert cnt.frame_count == 2


def test_a_global_hook_writes_what_it_closes_over_and_reads_its_current_values():
    lin = nn.Linear(3, 3)
    log, scale = [], [2.0]

    def hook(module, args, out):
        log.append(type(module).__name__)
        return out * scale[0]

    def f(x):
        return lin(x) + 1

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    x = torch.randn(2, 3)
    handle = module_mod.register_module_forward_hook(hook)
    try:
        out = compiled(x)
        assert log == ["Linear"]
        assert_same(out, f(x))
        scale[0] = 3.0  # a value the hook reads: guarded, so the next call sees it
        out = compiled(x)
        assert log == ["Linear"] * 3
        assert_same(out, f(x))
    finally:
        handle.remove()
    assert cnt.frame_count == 2


def test_adding_or_removing_a_hook_between_calls_recompiles():
    lin = nn.Linear(4, 4)
    compiled, cnt = compiled_counting(lin)
    x = torch.randn(2, 4)
    assert_same(compiled(x), lin(x))
    handle = lin.register_forward_hook(lambda m, args, out: out - 100)
    assert_same(compiled(x), lin(x))
    handle.remove()
    assert_same(compiled(x), lin(x))
    assert cnt.frame_count == 2  # without the hook (cached, reused), with it


def test_replacing_a_hook_by_another_recompiles():
    lin = nn.Linear(4, 4)
    first = lin.register_forward_hook(lambda m, args, out: out + 1)
    compiled, cnt = compiled_counting(lin)
    x = torch.randn(2, 4)
    assert_same(compiled(x), lin(x))
    first.remove()
    lin.register_forward_hook(lambda m, args, out: out + 2)
    assert_same(compiled(x), lin(x))
    assert cnt.frame_count == 2


W = torch.tensor([1.0, -2.0, 0.5])


def hooked_after_a_use(x):
    y = x * 2
    z = y.sin()  # a use before the hook: its gradient goes through the hook too, as in eager
    y.register_hook(lambda g: g * W)
    return (z + y.cos() * 3).sum()


def hooked_then_used(x):
    y = x.exp()
    y.register_hook(lambda g: g.clamp(max=0.5) + 1)
    return (y * y).sum()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("fn", [hooked_after_a_use, hooked_then_used])
def test_a_hook_on_a_tensor_made_in_the_graph_is_one_graph_and_shapes_the_gradient(fn, backend):
    x = torch.randn(3, requires_grad=True)
    fn(x).backward()
    expected, x.grad = x.grad, None
    cnt = CountingBackend()

    def counted(gm, example_inputs):
        cnt(gm, example_inputs)
        return framegraph.backends.lookup_backend(backend)[0](gm, example_inputs)

    out = framegraph.compile(fn, backend=counted, fullgraph=True)(x)
    out.backward()
    assert_same(x.grad, expected)
    assert cnt.frame_count == 1


def test_a_hook_with_a_side_effect_breaks_and_still_runs():
    seen = []

    def f(x):
        y = x * 2
        y.register_hook(lambda g: seen.append(g.sum()) or g)
        return y.sum()

    x = torch.randn(3, requires_grad=True)
    out, cnt, breaks, errors = run_counted(f, x)
    out.backward()
    assert len(seen) == 1 and torch.equal(x.grad, torch.full((3,), 2.0))
    assert cnt.frame_count == 2 and len(breaks) == 1 and not errors  # at the registration
