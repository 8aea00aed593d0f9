"""The public entry points: compile(), disable(), reset() and their errors."""
import subprocess
import sys
import threading

import pytest
import torch

import framegraph
from framegraph import _C
from helpers import CountingBackend


def test_import_does_not_load_torch_dynamo():
    code = "import framegraph, sys; print('torch._dynamo' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_bad_input_is_a_clear_error():
    with pytest.raises(TypeError, match="function or nn.Module"):
        framegraph.compile(42)
    with pytest.raises(ValueError, match="registered backends: aot_eager, eager, inductor"):
        framegraph.compile(lambda x: x, backend="nope")
    with pytest.raises(ValueError, match="unknown mode"):
        framegraph.compile(lambda x: x, mode="fastest")
    with pytest.raises(TypeError, match="options must be a dict"):
        framegraph.compile(lambda x: x, options=[1])
    with pytest.raises(TypeError, match="fullgraph must be a bool"):
        framegraph.compile(lambda x: x, fullgraph="yes")
    with pytest.raises(TypeError, match="dynamic must be None or a bool"):
        framegraph.compile(lambda x: x, dynamic=1)
    with pytest.raises(TypeError, match="expects a callable"):
        framegraph.disable(3)
    with pytest.raises(AttributeError, match="no option 'nope'"):
        framegraph.config.nope = 1
    with pytest.raises(TypeError, match="must be int"):
        framegraph.config.recompile_limit = "8"


@pytest.mark.framegraph_graphs(2)  # eager's (shared by two wrappers) and inductor's
def test_three_ways_to_compile_keep_the_function_metadata():
    def scale(x):
        """Doubles x."""
        return x * 2

    as_call = framegraph.compile(scale, backend="eager")
    as_bare_decorator = framegraph.compile(scale)
    as_decorator = framegraph.compile(backend="eager")(scale)
    x = torch.randn(3)
    for compiled in (as_call, as_bare_decorator, as_decorator):
        assert compiled.__name__ == "scale" and compiled.__doc__ == "Doubles x."
        assert compiled.__wrapped__ is scale
        assert torch.equal(compiled(x), x * 2)
    assert framegraph.compile(scale, disable=True) is scale


def test_a_module_compiles_to_one_graph_that_equals_eager(framegraph_trace):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    out = framegraph_trace.assert_compiles(model, torch.randn(5, 3), graphs=1)
    assert out.shape == (5, 2)


def test_one_function_compiled_with_two_backends_is_compiled_by_each():
    def f(x):
        return x + 1

    first, second = CountingBackend(), CountingBackend()
    x = torch.ones(2)
    assert torch.equal(framegraph.compile(f, backend=first)(x), x + 1)
    assert torch.equal(framegraph.compile(f, backend=second)(x), x + 1)
    assert torch.equal(framegraph.compile(f, backend=second)(x), x + 1)
    assert (first.frame_count, second.frame_count) == (1, 1)


@pytest.mark.expect_fallback("exception")  # boom() raises: it runs unmodified
@pytest.mark.framegraph_graphs(0, breaks=1)  # a break at the C call, no tensor work
def test_callback_set_only_while_the_wrapper_runs(framegraph_trace):
    def peek():
        return _C.get_callback()

    compiled = framegraph.compile(peek, backend="eager")
    assert _C.get_callback() is None
    assert compiled() is not None
    assert framegraph_trace.frames == 2  # peek and the resume function after the break
    assert _C.get_callback() is None and not _C.is_installed()

    def boom():
        raise RuntimeError("user error")

    with pytest.raises(RuntimeError, match="user error"):
        framegraph.compile(boom, backend="eager")()
    assert _C.get_callback() is None and not _C.is_installed()


@pytest.mark.framegraph_graphs(1)  # inner is inlined into outer (as torch.compile does)
def test_nested_compiled_functions_with_different_backends():
    seen = []

    def inner_backend(gm, example_inputs):
        seen.append("inner")
        return gm.forward

    inner = framegraph.compile(lambda x: x + 1, backend=inner_backend)

    def outer(x):
        return inner(x) * 2

    x = torch.randn(4)
    assert torch.equal(framegraph.compile(outer, backend="eager")(x), (x + 1) * 2)
    assert _C.get_callback() is None
    assert seen == []  # inner's backend never sees a graph


@pytest.mark.framegraph_graphs(0, breaks=2)  # breaks at set() and wait(); no tensor work
def test_other_threads_are_not_affected(framegraph_trace):
    seen_in_thread = []
    started, release = threading.Event(), threading.Event()

    def other_thread():
        started.wait()
        seen_in_thread.append(_C.get_callback())
        release.set()

    def f(x):
        started.set()
        release.wait(5)
        return x

    t = threading.Thread(target=other_thread)
    t.start()
    framegraph.compile(f, backend="eager")(torch.ones(1))
    t.join()
    assert seen_in_thread == [None]
    assert framegraph_trace.frames == 3  # f and the resume functions after its two breaks


@pytest.mark.framegraph_graphs(1)
def test_compiling_a_module_returns_a_wrapper_and_leaves_it_unchanged():
    mod = torch.nn.Linear(3, 2)
    compiled = framegraph.compile(mod, backend="eager")
    assert isinstance(compiled, torch.nn.Module) and compiled is not mod
    assert compiled._orig_mod is mod and compiled.__wrapped__ is mod
    assert compiled.weight is mod.weight and compiled.in_features == 3
    x = torch.randn(5, 3)
    assert torch.allclose(compiled(x), mod(x))
    assert type(mod) is torch.nn.Linear and mod.forward.__func__ is torch.nn.Linear.forward


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.scale = 1.0

    def forward(self, x):
        return self.lin(x) * self.scale


@pytest.mark.framegraph_graphs(3)  # the first call, scale 0.0 (a guarded constant), the copy
def test_the_compiled_module_mirrors_the_module_like_torch_compile():
    import copy

    mod = Scaled()
    compiled = framegraph.compile(mod, backend="eager")
    x = torch.ones(1, 2)
    compiled(x)
    compiled.scale = 0.0  # set on the module
    assert mod.scale == 0.0 and torch.equal(compiled(x), torch.zeros(1, 2))
    assert list(compiled.state_dict()) == ["_orig_mod.lin.weight", "_orig_mod.lin.bias"]
    # what torch.compile's wrapper saves loads here (its keys are `_orig_mod.*` too)
    compiled.load_state_dict({f"_orig_mod.{k}": v for k, v in Scaled().state_dict().items()})
    compiled.eval()
    assert not mod.training and not compiled.training
    twin = copy.deepcopy(compiled)
    assert twin._orig_mod is not mod and torch.equal(twin(x), compiled(x))


def test_disable_runs_the_call_tree_with_the_callback_off():
    seen = []

    @framegraph.disable
    def untouched():
        seen.append(_C.get_callback())
        return 1

    def f(x):
        return x + untouched()

    assert torch.equal(framegraph.compile(f, backend="eager")(torch.zeros(1)), torch.ones(1))
    assert seen == [None]

    def only_this_frame(x):
        return x

    assert framegraph.disable(only_this_frame, recursive=False) is only_this_frame
    assert _C.cache_state(only_this_frame.__code__) == "skip"


def test_reset_drops_every_cache():
    def f(x):
        return x - 1

    compiled = framegraph.compile(f, backend="eager")
    compiled(torch.ones(2))
    assert _C.cache_state(f.__code__) is not None or _C.cache_entries(f.__code__)
    framegraph.reset()
    assert _C.cache_state(f.__code__) is None and _C.cache_entries(f.__code__) == []


def test_is_compiling_is_false_at_run_time():
    assert framegraph.is_compiling() is False


def test_cli_prints_version_and_backends():
    out = subprocess.run([sys.executable, "-m", "framegraph.cli"], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("framegraph 0.1.0") and "eager, inductor" in out


@pytest.mark.framegraph_graphs(2)  # forward alone, then the call with the module's hooks in it
def test_hooks_on_the_compiled_module_and_global_hooks_still_run():
    model = torch.nn.Linear(3, 3)
    compiled = framegraph.compile(model, backend="eager")
    seen = []
    x = torch.ones(2, 3)
    compiled(x)  # the fast path: no hooks anywhere
    handle = compiled.register_forward_hook(lambda mod, args, out: seen.append("wrapper"))
    inner = model.register_forward_pre_hook(lambda mod, args: seen.append("inner"))
    glob = torch.nn.modules.module.register_module_forward_hook(lambda mod, args, out: seen.append(type(mod).__name__))
    try:
        torch.testing.assert_close(compiled(x), model(x))
    finally:
        handle.remove()
        inner.remove()
        glob.remove()
    assert seen == ["inner", "Linear", "OptimizedModule", "wrapper", "inner", "Linear"]
    seen.clear()
    compiled(x)
    assert seen == []


@pytest.mark.framegraph_graphs(3)  # Linear.forward, the lambda, Doubled.forward
def test_a_forward_set_on_the_instance_or_the_class_is_what_runs():
    model = torch.nn.Linear(3, 3)
    compiled = framegraph.compile(model, backend="eager")
    x = torch.ones(2, 3)
    torch.testing.assert_close(compiled(x), model(x))
    model.forward = lambda inp: inp * 7  # as accelerate-style hooks do
    torch.testing.assert_close(compiled(x), x * 7)
    del model.forward

    class Doubled(torch.nn.Linear):
        def forward(self, inp):
            return super().forward(inp) * 2

    model.__class__ = Doubled
    torch.testing.assert_close(compiled(x), model(x))


def test_module_call_and_all_empty_reject_bad_input():
    with pytest.raises(TypeError):
        _C.ModuleCall(1, 2)
    with pytest.raises(TypeError):
        _C.all_empty([("x", "y")])
    with pytest.raises(TypeError):
        _C.all_empty(((1, "real"),))
    ns = type("NS", (), {})()
    ns.a, ns.b, ns.c = None, {}, {1: 2}
    assert _C.all_empty(((ns, "a"), (ns, "b"), (ns, "missing")))
    assert not _C.all_empty(((ns, "c"),))
