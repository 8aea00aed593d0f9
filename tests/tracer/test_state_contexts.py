"""``torch.autocast`` and ``torch.inference_mode`` inside compiled code: one
graph that switches the state where eager does (enter/exit nodes), with the
dtypes and inference tensors eager gives."""
import contextlib

import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, check, run_counted

lin = torch.nn.Linear(8, 8)


def test_autocast_block_is_one_graph_with_eager_dtypes():
    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = lin(x)
            z = y.relu() @ y.t()
        return z.float().sum(), y.dtype, z.dtype

    cnt = check(f, torch.randn(4, 8))
    targets = cnt.targets()
    assert targets[0] is torch.amp.autocast_mode._enter_autocast
    assert torch.amp.autocast_mode._exit_autocast in targets


def test_autocast_disabled_inside_autocast_and_is_autocast_enabled():
    def f(x):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            a = x @ x.t()
            inside = torch.is_autocast_enabled("cpu")
            with torch.autocast(device_type="cpu", enabled=False):
                b = x @ x.t()
                off = torch.is_autocast_enabled("cpu")
        return a.dtype, b.dtype, inside, off, torch.is_autocast_enabled("cpu")

    check(f, torch.randn(3, 3))


def test_autocast_as_a_variable_and_with_no_grad():
    def f(x, w):
        ctx = torch.autocast("cpu", dtype=torch.bfloat16)
        with torch.no_grad(), ctx as entered:
            y = x @ w
        return y, entered is ctx, y.requires_grad

    check(f, torch.randn(3, 4), torch.randn(4, 2, requires_grad=True))


def test_autocast_training_step_gradients_match_eager_with_aot_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 6), torch.nn.ReLU(), torch.nn.Linear(6, 1))

    def step(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x).float().pow(2).mean()
        return loss

    x = torch.randn(5, 6)
    step(x).backward()
    want = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    cnt = CountingBackend()
    from torch._functorch.aot_autograd import aot_module_simplified
    from functorch.compile import make_boxed_func

    def aot(gm, inputs):
        cnt(gm, inputs)
        return aot_module_simplified(gm, inputs, fw_compiler=lambda g, _: make_boxed_func(g.forward))

    loss = framegraph.compile(step, backend=aot, fullgraph=True)(x)
    loss.backward()
    assert cnt.frame_count == 1
    for p, g in zip(model.parameters(), want):
        torch.testing.assert_close(p.grad, g)


def test_called_under_an_outer_autocast_recompiles_and_matches():
    def f(x):
        return (x @ x.t()).sum(), torch.is_autocast_enabled("cpu")

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    x = torch.randn(3, 3)
    assert_same(compiled(x), f(x))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = f(x)
        assert_same(compiled(x), expected)
    assert cnt.frame_count == 2


def test_inference_mode_block_is_one_graph():
    def f(x):
        with torch.inference_mode():
            y = x * 2
        return y + 1, y.is_inference(), torch.is_inference_mode_enabled()

    cnt = check(f, torch.randn(3))
    assert torch.autograd.grad_mode._enter_inference_mode in cnt.targets()


# The resume function would have to re-enter the block: not yet, so the frame
# runs as it is, and returns what eager returns.
@pytest.mark.expect_fallback("cannot_resume")
def test_a_break_inside_an_autocast_block_runs_the_frame_unmodified():
    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = x @ x.t()
            framegraph.graph_break()
            z = y @ y
        return z.dtype, z.float().sum()

    x = torch.randn(3, 3)
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, f(x))
    assert cnt.frame_count == 0 and not torch.is_autocast_enabled("cpu")


w = torch.randn(3, 3, requires_grad=True)


def test_no_grad_as_a_decorator_on_a_nested_function():
    def f(x):
        @torch.no_grad()
        def project(a):
            return a @ w

        y = project(x)
        return y * 2, y.requires_grad, (x @ w).requires_grad

    check(f, torch.randn(2, 3))


def test_set_grad_enabled_false_applied_to_a_function():
    def f(x):
        project = torch.set_grad_enabled(False)(lambda a: a @ w)
        inside = project(x)
        return inside + 1, inside.requires_grad, (x @ w).requires_grad, torch.is_grad_enabled()

    check(f, torch.randn(2, 3))


def test_autocast_and_inference_mode_as_decorators():
    def f(x):
        @torch.autocast("cpu", dtype=torch.bfloat16)
        def mm(a):
            return a @ a.t()

        @torch.inference_mode()
        def double(a):
            return a * 2

        return mm(x).dtype, (x @ x.t()).dtype, double(x).is_inference()

    check(f, torch.randn(3, 3))


# A context modelled as doing nothing (record_function, nullcontext) leaves
# nothing to undo: the resume function continues in a `with nullcontext()`
# (DistributedDataParallel.forward breaks inside its record_function block).
@pytest.mark.parametrize("make", [lambda: torch.autograd.profiler.record_function("step"),
                                  lambda: contextlib.nullcontext()], ids=["record_function", "nullcontext"])
def test_a_break_inside_a_null_context_resumes_inside_it(make):
    def f(x):
        with make():
            y = x * 2
            framegraph.graph_break()
            z = y + 1
        return z

    x = torch.randn(3)
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, f(x))
    assert (cnt.frame_count, len(breaks), errors) == (2, 1, [])


@pytest.mark.expect_fallback("exception")  # the resume function raises: it runs as it is
def test_an_exception_after_a_break_inside_a_null_context_leaves_it():
    def f(x):
        with contextlib.nullcontext():
            y = x * 2
            framegraph.graph_break()
            raise ValueError("inside")
        return y

    compiled = framegraph.compile(f, backend=CountingBackend())
    with pytest.raises(ValueError, match="inside"):
        compiled(torch.randn(3))
