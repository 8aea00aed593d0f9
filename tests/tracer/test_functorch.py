"""torch.func transforms and compiled code: a transform's C layer (its
interpreter stack) is state no graph holds, so calling one inside compiled code
is a graph break and the transform runs in CPython; a compiled function called
inside a transform runs unmodified (its tensors are functorch wrappers)."""
import torch

import framegraph
from helpers import CountingBackend, assert_same, check_breaks


def batched_double(x):
    return torch.func.vmap(lambda row: row * 2)(x.view(2, 2)) + 1


def test_vmap_inside_compiled_code_breaks_and_matches_eager():
    # eager first: vmap's wrapper is cached then, and the trace met its C layer
    batched_double(torch.randn(4))
    check_breaks(batched_double, lambda: (torch.arange(4.0),), graphs=2, breaks=1)


def gradient(x):
    return torch.func.grad(lambda t: (t * t).sum())(x) * 3


def test_grad_inside_compiled_code_breaks_and_matches_eager():
    check_breaks(gradient, lambda: (torch.arange(4.0),), graphs=1, breaks=1)


def test_a_compiled_function_vmapped_runs_unmodified_inside():
    cnt = CountingBackend()
    compiled = framegraph.compile(lambda row: row.sin() * 2, backend=cnt)
    x = torch.randn(3, 4)
    assert_same(torch.func.vmap(compiled)(x), torch.func.vmap(lambda row: row.sin() * 2)(x))
    assert cnt.frame_count == 0
    assert_same(compiled(x), x.sin() * 2)  # outside the transform it compiles as usual
    assert cnt.frame_count == 1
