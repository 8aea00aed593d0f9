"""``functools.partial``: made, called and read in the trace like CPython's.

A partial made in the trace flattens a partial of a partial, merges keywords
(those given at the call win) and, when it leaves the trace, is rebuilt as a
real ``functools.partial``. One from outside (an argument, a module's
``self.act``) is read through ``p.func``, ``p.args`` and ``p.keywords``, which
are guarded: changing any of them makes a new trace.
"""
import functools

import torch
from torch import nn

import framegraph
from helpers import CountingBackend, assert_same, check, check_breaks


def scaled(t, scale=1.0, *, shift=0.0):
    return t * scale + shift


def test_partial_made_and_called_in_the_trace():
    def f(x):
        double = functools.partial(scaled, scale=2.0)
        return double(x), double(x, shift=1.0), double(x, scale=3.0)  # call keywords override

    check(f, torch.ones(2), ops=6)


def test_partial_of_a_torch_function_with_a_keyword():
    def f(x):
        gelu = functools.partial(torch.nn.functional.gelu, approximate="tanh")
        add2 = functools.partial(torch.add, alpha=2)
        return gelu(x), add2(x, x)

    check(f, torch.randn(3), ops=2)


def test_partial_of_a_partial_flattens_like_cpython():
    def f(x):
        inner = functools.partial(scaled, x, shift=1.0)
        outer = functools.partial(inner, 3.0, shift=2.0)
        return outer(), outer.func is scaled, len(outer.args), outer.keywords, inner.keywords

    check(f, torch.ones(2))


def test_partial_members_from_outside_are_guarded():
    def f(x, p):
        return p(x)

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    p = functools.partial(scaled, scale=2.0)
    calls = [p, None, functools.partial(scaled, shift=5.0), functools.partial(torch.mul, 3.0)]
    for q in calls:
        if q is None:
            p.keywords["scale"] = 4.0  # the partial's own dict changes: a new trace
            q = p
        assert_same(compiled(torch.ones(2), q), f(torch.ones(2), q))
    assert cnt.frame_count == 4


def test_partial_of_a_partial_from_outside_calls_through_it():
    def f(x, p):
        outer = functools.partial(p, scale=3.0)
        return outer(x), outer(x, shift=0.0)

    check(f, torch.ones(2), functools.partial(scaled, shift=1.0))


def test_partial_of_a_module_and_of_a_method():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(2, 2)

        def mix(self, t, weight):
            return self.proj(t) * weight

        def forward(self, t):
            first = functools.partial(self.mix, weight=0.5)
            second = functools.partial(self.proj)
            return second(first(t))

    check(Block(), torch.ones(1, 2))


def test_activation_stored_as_a_partial_on_a_module():
    class MLP(nn.Module):  # the shape of transformers' activations (Gemma-2's gelu_pytorch_tanh)
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = functools.partial(nn.functional.gelu, approximate="tanh")

        def forward(self, t):
            return self.act(self.fc(t))

    check(MLP(), torch.randn(2, 4))


def test_partial_returned_from_the_trace_is_a_real_partial():
    def f(x):
        return functools.partial(scaled, x + 1, shift=2.0)

    cnt = CountingBackend()
    p = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    expected = f(torch.ones(2))
    assert type(p) is functools.partial and p.func is scaled and p.keywords == {"shift": 2.0}
    assert_same(p(), expected())
    assert cnt.frame_count == 1


def test_partial_live_across_a_graph_break_is_rebuilt():
    def f(x, log):
        p = functools.partial(scaled, x + 1, scale=2.0)
        log.append(p.args[0].shape[0])
        print("a graph break")
        return p(shift=1.0)

    check_breaks(f, lambda: (torch.ones(2), []), graphs=2, breaks=1)
