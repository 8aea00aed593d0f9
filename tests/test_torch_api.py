"""torch.compile's public API under framegraph: install(), set_stance, the tracing
decorators, the shape marks, default backends, guard filters and cache artifacts."""
import operator
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import framegraph
from framegraph.runtime import install as install_module
from helpers import CountingBackend, assert_same


@pytest.fixture(autouse=True)
def _default_stance_and_backend():
    yield
    framegraph.set_stance("default")
    framegraph.set_default_backend(None)
    while install_module.is_installed():
        framegraph.uninstall()


def double_sin(x):
    return torch.sin(x) * 2


# ---- install(): torch.compile is framegraph's

def test_install_makes_torch_compile_and_module_compile_framegraphs():
    cnt = CountingBackend()
    model = torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    with framegraph.install():
        assert torch.compile is install_module.torch_compile
        compiled = torch.compile(double_sin, backend=cnt)
        assert_same(compiled(x), double_sin(x))
        model.compile(backend=cnt)  # nn.Module.compile calls torch.compile
        assert_same(model(x), torch.nn.functional.linear(x, model.weight, model.bias))
    assert cnt.frame_count == 2
    assert torch.compile is not install_module.torch_compile and not install_module.is_installed()


def test_install_nests_and_the_block_form_uninstalls():
    framegraph.install()
    with framegraph.install():
        pass
    assert install_module.is_installed()  # one install() is still open
    framegraph.uninstall()
    assert not install_module.is_installed()
    assert torch.compiler.disable.__module__.startswith("torch")


def test_installed_torch_compiler_disable_and_allow_in_graph_are_framegraphs():
    cnt = CountingBackend()
    with framegraph.install():
        @torch.compiler.disable
        def outside(x):
            return x + 1

        @torch.compiler.allow_in_graph
        def opaque(x):
            return x * 3

        def f(x):
            return opaque(outside(x.cos()))

        x = torch.randn(3)
        assert_same(torch.compile(f, backend=cnt)(x), f(x))
    assert cnt.frame_count == 2  # the disabled call splits the graph
    assert opaque in cnt.targets(-1)


def _run(script, **env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)


_UNMODIFIED_SCRIPT = """
    import sys, torch
    graphs = []
    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    f = torch.compile(lambda x: torch.cos(x) * 2, backend=counting)
    x = torch.randn(3)
    assert torch.equal(f(x), torch.cos(x) * 2)
    print(len(graphs), "framegraph" in sys.modules, torch.compile.__module__)
"""


def test_the_environment_variable_installs_framegraph_in_an_unmodified_script():
    out = _run(_UNMODIFIED_SCRIPT, FRAMEGRAPH_INSTALL="1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "True", "framegraph.runtime.install"]


def test_without_the_variable_torch_compile_stays_torchs():
    out = _run(_UNMODIFIED_SCRIPT, FRAMEGRAPH_INSTALL="0")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "False", "torch"]


def test_a_bad_value_of_the_variable_is_a_clear_error():
    out = _run("import torch", FRAMEGRAPH_INSTALL="yes")
    assert out.returncode != 0 and "FRAMEGRAPH_INSTALL must be 0 or 1, got 'yes'" in out.stderr


# ---- set_stance

def test_force_eager_ignores_compiled_code_and_default_brings_it_back():
    cnt = CountingBackend()
    f = framegraph.compile(double_sin, backend=cnt)
    x = torch.randn(3)
    with framegraph.set_stance("force_eager"):
        assert_same(f(x), double_sin(x))
    assert cnt.frame_count == 0
    f(x)
    assert cnt.frame_count == 1
    framegraph.set_stance("force_eager")  # the function form: from now on
    f(x)
    framegraph.set_stance("default")
    assert cnt.frame_count == 1


def test_the_decorator_form_holds_only_during_the_call():
    cnt = CountingBackend()
    f = framegraph.compile(double_sin, backend=cnt)

    @framegraph.set_stance("force_eager")
    def run_eagerly(x):
        return f(x)

    x = torch.randn(3)
    assert_same(run_eagerly(x), double_sin(x))
    assert cnt.frame_count == 0
    f(x)
    assert cnt.frame_count == 1


def test_eager_on_recompile_keeps_the_cached_entry_and_runs_new_shapes_eagerly():
    cnt = CountingBackend()
    f = framegraph.compile(double_sin, backend=cnt, dynamic=False)
    f(torch.randn(3))
    with framegraph.set_stance("eager_on_recompile"):
        x = torch.randn(5)
        assert_same(f(x), double_sin(x))
        f(torch.randn(3))
    assert cnt.frame_count == 1


def test_fail_on_recompile_raises_with_the_reason():
    f = framegraph.compile(double_sin, backend=CountingBackend(), dynamic=False)
    f(torch.randn(3))
    with framegraph.set_stance("fail_on_recompile"):
        f(torch.randn(3))  # a cache hit is no recompile
        with pytest.raises(framegraph.RecompileError, match=r"size of L\['x'\] dim 0|L\['x'\]"):
            f(torch.randn(2, 2))


def test_eager_then_compile_compiles_the_second_call_dynamic_where_sizes_changed():
    cnt = CountingBackend()
    f = framegraph.compile(double_sin, backend=cnt)
    with framegraph.set_stance("eager_then_compile"):
        for n in (3, 4, 7):
            x = torch.randn(n)
            assert_same(f(x), double_sin(x))
    assert cnt.frame_count == 1  # the first call ran eagerly; 4 and 7 share one dynamic graph


def test_force_backend_replaces_each_compiles_backend():
    forced = CountingBackend()
    f = framegraph.compile(double_sin, backend="eager")
    with framegraph.set_stance("default", force_backend=forced):
        f(torch.randn(3))
    assert forced.frame_count == 1


def test_stance_errors_name_what_to_use():
    with pytest.raises(ValueError, match="unknown stance 'fast'"):
        framegraph.set_stance("fast")
    with pytest.raises(ValueError, match="use 'eager_then_compile'"):
        framegraph.set_stance("aot_eager_then_compile")
    with pytest.raises(ValueError, match="force_backend needs the 'default' stance"):
        framegraph.set_stance("force_eager", force_backend="eager")


# ---- the tracing decorators

def test_allow_in_graph_makes_a_call_one_node():
    @framegraph.allow_in_graph
    def opaque(x, y):
        return x * y + 1

    def f(x):
        return opaque(x, x).sin()

    cnt = CountingBackend()
    x = torch.randn(3)
    assert_same(framegraph.compile(f, backend=cnt, fullgraph=True)(x), f(x))
    assert cnt.targets() == [opaque, "sin"]


def test_nonstrict_trace_takes_a_pytree_and_constants():
    @framegraph.nonstrict_trace
    def combine(pair, scale):
        return pair[0] * scale + pair[1]

    def f(x):
        return combine((x, x.cos()), 2.0)

    cnt = CountingBackend()
    x = torch.randn(3)
    assert_same(framegraph.compile(f, backend=cnt, fullgraph=True)(x), f(x))
    assert combine in cnt.targets()


def test_disallow_in_graph_breaks_at_a_torch_op():
    framegraph.disallow_in_graph(torch.sub)
    try:
        def f(x):
            return torch.sub(x * 2, 1) * 3

        cnt = CountingBackend()
        x = torch.randn(3)
        assert_same(framegraph.compile(f, backend=cnt)(x), f(x))
        assert cnt.frame_count == 2 and torch.sub not in cnt.targets(0) + cnt.targets(1)
        with pytest.raises(framegraph.Unsupported, match="disallow_in_graph"):
            framegraph.compile(f, backend="eager", fullgraph=True)(x)
    finally:
        from framegraph.variables.tensors.torch_fn import DISALLOWED

        DISALLOWED.discard(torch.sub)


def test_substitute_in_graph_traces_a_python_version_of_a_c_function():
    @framegraph.substitute_in_graph(operator.countOf)
    def count_of(a, b, /):
        return sum(1 for item in a if item is b or item == b)

    assert count_of([1, 2, 1], 1) == 2  # outside a trace: the C function itself

    def f(x, items):
        return x * operator.countOf(items, 3)

    cnt = CountingBackend()
    x = torch.randn(2)
    assert_same(framegraph.compile(f, backend=cnt, fullgraph=True)(x, [3, 1, 3]), f(x, [3, 1, 3]))
    assert cnt.frame_count == 1
    with pytest.raises(TypeError, match="Signature mismatch"):
        framegraph.substitute_in_graph(operator.truth)(lambda a, b: True)
    with pytest.raises(ValueError, match="already has a substitute"):
        framegraph.substitute_in_graph(operator.countOf)(count_of.__wrapped__)


def test_assume_constant_result_is_answered_while_tracing():
    calls = []

    @framegraph.assume_constant_result
    def world_size():
        calls.append(1)
        return 4

    def f(x):
        return x / world_size()

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    x = torch.randn(3)
    assert_same(compiled(x), x / 4)
    calls.clear()
    compiled(x)
    assert calls == [] and cnt.op_count == 1  # the graph holds the 4, not the call


def test_nested_compile_regions_of_framegraph_and_of_torch_are_traced_inline():
    @framegraph.nested_compile_region
    def ours(x):
        return x.sin()

    @torch.compiler.nested_compile_region
    def torchs(x):
        return x.cos()

    def f(x):
        return ours(x) + torchs(x) + ours(x)

    cnt = CountingBackend()
    x = torch.randn(3)
    assert_same(framegraph.compile(f, backend=cnt, fullgraph=True)(x), f(x))
    assert cnt.frame_count == 1


def test_wrap_numpy_hands_tensors_to_numpy_and_back():
    @framegraph.wrap_numpy
    def numpy_fn(a):
        return np.sin(a) * 2

    x = torch.randn(3)
    eager = numpy_fn(x)
    assert isinstance(eager, torch.Tensor)

    cnt = CountingBackend()
    assert_same(framegraph.compile(lambda x: numpy_fn(x) + 1, backend=cnt, fullgraph=True)(x), eager + 1,
                rtol=1e-6, atol=1e-6)
    assert cnt.frame_count == 1


def test_is_exporting_is_false_in_and_out_of_a_trace():
    def f(x):
        return x + (1 if torch.compiler.is_exporting() or framegraph.is_exporting() else 2)

    cnt = CountingBackend()
    x = torch.randn(2)
    assert_same(framegraph.compile(f, backend=cnt, fullgraph=True)(x), x + 2)
    assert framegraph.is_exporting() is False and cnt.frame_count == 1


# ---- shape marks

def sum_rows(x):
    return (x * 2).sum(0)


# (mark, compile's dynamic, sizes called with, graphs): a static mark holds even with
# dynamic=True; a dynamic one makes one graph from the first call
@pytest.mark.parametrize("mark, dynamic, sizes, graphs", [
    (lambda t: framegraph.mark_static(t, 0), True, (3, 4, 5), 3),
    (lambda t: framegraph.maybe_mark_dynamic(t, 0), None, (3, 4, 5), 1),
    (lambda t: framegraph.mark_unbacked(t, 0), None, (0, 2, 5), 1),   # 0 is not specialised
    (lambda t: framegraph.mark_static_address(t), True, (3, 4, 5), 3),
    (lambda t: torch._dynamo.mark_dynamic(t, 0), None, (3, 4, 5), 1),  # torch's marks are read too
    (lambda t: torch._dynamo.mark_static(t, 0), True, (3, 4, 5), 3),
], ids=["mark_static", "maybe_mark_dynamic", "mark_unbacked", "mark_static_address",
        "torch_mark_dynamic", "torch_mark_static"])
def test_shape_marks(mark, dynamic, sizes, graphs):
    cnt = CountingBackend()
    compiled = framegraph.compile(sum_rows, backend=cnt, dynamic=dynamic)
    for n in sizes:
        x = torch.randn(n, 2)
        mark(x)
        assert_same(compiled(x), sum_rows(x))
    assert cnt.frame_count == graphs


def test_marks_check_their_input():
    with pytest.raises(TypeError, match="expects a tensor"):
        framegraph.mark_static([1, 2], 0)
    with pytest.raises(IndexError, match="out of range"):
        framegraph.mark_unbacked(torch.randn(2), 3)


# ---- backends, guard filters, cache artifacts

def test_the_default_backend_is_used_when_compile_names_none():
    cnt = CountingBackend()
    framegraph.set_default_backend(cnt)
    assert framegraph.get_default_backend() is cnt
    framegraph.compile(double_sin)(torch.randn(2))
    assert cnt.frame_count == 1
    framegraph.set_default_backend(None)
    assert framegraph.get_default_backend() == "inductor"
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        framegraph.set_default_backend("nope")


def test_mode_and_options_reach_a_custom_backend_as_torch_passes_them():
    seen = []

    def backend(gm, example_inputs, **kwargs):
        seen.append(kwargs)
        return gm.forward

    framegraph.compile(double_sin, backend=backend, mode="max-autotune")(torch.randn(2))
    framegraph.reset()
    framegraph.compile(double_sin, backend=backend, options={"trace.enabled": False})(torch.randn(2))
    assert seen == [{"mode": "max-autotune"}, {"options": {"trace.enabled": False}}]
    with pytest.raises(ValueError, match="unknown Inductor option 'not_an_option'"):
        framegraph.compile(double_sin, options={"not_an_option": 1})


SCALE = 2


def scaled(x):
    return x * SCALE


@pytest.mark.parametrize("keep", [framegraph.skip_guard_on_globals_unsafe,
                                  torch.compiler.skip_guard_on_globals_unsafe])
def test_a_guard_filter_drops_the_guards_on_globals(keep, monkeypatch):
    cnt = CountingBackend()
    compiled = framegraph.compile(scaled, backend=cnt, options={"guard_filter_fn": keep})
    x = torch.randn(2)
    assert_same(compiled(x), x * 2)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3)
    assert_same(compiled(x), x * 2)  # the promise was broken: the cached code runs on
    assert cnt.frame_count == 1


def test_keeping_tensor_guards_still_recompiles_on_a_new_size():
    cnt = CountingBackend()
    compiled = framegraph.compile(scaled, backend=cnt, dynamic=False,
                                  options={"guard_filter_fn": framegraph.keep_tensor_guards_unsafe})
    compiled(torch.randn(2))
    compiled(torch.randn(3))
    assert cnt.frame_count == 2
    entries = []
    framegraph.reset()
    framegraph.compile(scaled, backend=cnt, options={
        "guard_filter_fn": lambda es: entries.extend(es) or [True] * len(es)})(torch.randn(2))
    kinds = {e.guard_type for e in entries}
    assert {"TENSOR_MATCH", "GLOBAL_STATE"} <= kinds
    assert any(e.is_global for e in entries) and all(isinstance(e, framegraph.GuardFilterEntry) for e in entries)


@pytest.mark.parametrize("keep", [framegraph.skip_guard_on_all_nn_modules_unsafe,
                                  torch.compiler.skip_guard_on_inbuilt_nn_modules_unsafe])
def test_the_nn_module_filters_say_which_filters_work(keep):
    with pytest.raises(ValueError, match="keep_tensor_guards_unsafe or skip_guard_on_globals_unsafe"):
        framegraph.compile(scaled, backend="eager", options={"guard_filter_fn": keep})


def test_cache_artifacts_round_trip_through_torchs_cache_layer():
    compiled = framegraph.compile(double_sin, backend="inductor")
    x = torch.randn(3)
    assert_same(compiled(x), double_sin(x))
    payload, info = framegraph.save_cache_artifacts()
    assert isinstance(payload, bytes) and info.artifacts["inductor"]  # Inductor's compiled graph
    assert framegraph.load_cache_artifacts(payload).artifacts == info.artifacts
    with pytest.raises(TypeError, match="expects bytes"):
        framegraph.load_cache_artifacts("text")
