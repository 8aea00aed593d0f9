"""Guard soundness: each change below must not reuse a stale graph.

Every test calls the compiled function, changes one thing the trace relied
on, calls it again and checks eager's result and that exactly one more
graph was compiled.
"""
import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same

SCALE = 2.0


@pytest.fixture(autouse=True)
def _fresh():
    framegraph.reset()
    yield
    framegraph.reset()


def run_twice(fn, args, change, args2=None, frames=2, undo=None):
    """Call, change, call again: both results equal eager, ``frames`` graphs in all."""
    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt)
    try:
        assert_same(compiled(*args), fn(*args))
        change()
        args2 = args if args2 is None else args2
        assert_same(compiled(*args2), fn(*args2))
        assert cnt.frame_count == frames, f"{cnt.frame_count} graphs, expected {frames}"
    finally:
        if undo is not None:
            undo()
    return cnt


def uses_global(x):
    return x * SCALE


def test_global_constant_changed():
    def change():
        global SCALE
        SCALE = 3.0

    def undo():
        global SCALE
        SCALE = 2.0

    run_twice(uses_global, (torch.ones(3),), change, undo=undo)


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.scale = 2.0
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.lin(x) * self.scale)


def test_module_attribute_changed():
    m = Scaled().eval()
    run_twice(m, (torch.ones(2, 3),), lambda: setattr(m, "scale", 3.0))


def test_train_eval_flipped():
    m = Scaled().eval()
    cnt = CountingBackend()
    compiled = framegraph.compile(m, backend=cnt)
    x = torch.ones(2, 3)
    assert_same(compiled(x), m(x))
    m.train()
    torch.manual_seed(0)
    actual = compiled(x)
    torch.manual_seed(0)
    assert_same(actual, m(x))
    assert cnt.frame_count == 2
    assert (actual == 0).any()  # dropout is active: not the eval graph


def helper(x):
    return x + 1


def calls_helper(x):
    return helper(x) * 2


def test_function_replaced():
    global helper
    original = helper

    def change():
        global helper
        helper = lambda x: x - 1  # noqa: E731

    def undo():
        global helper
        helper = original

    run_twice(calls_helper, (torch.ones(3),), change, undo=undo)


def double(x):
    return x * 2


def test_requires_grad_flipped():
    x = torch.ones(3)
    run_twice(double, (x,), lambda: None, args2=(torch.ones(3, requires_grad=True),))


@pytest.mark.parametrize("other", [
    torch.ones(4, 3, dtype=torch.float64),      # dtype
    torch.ones(4, 3, device="meta"),            # device
    torch.ones(5, 3),                           # shape
    torch.ones(3, 4).t(),                       # stride
], ids=["dtype", "device", "shape", "stride"])
def test_tensor_property_changed(other):
    def f(x):
        return x.sum(0) + x.stride(0)

    if other.is_meta:
        cnt = CountingBackend()
        compiled = framegraph.compile(f, backend=cnt)
        compiled(torch.ones(4, 3))
        out = compiled(other)
        assert out.is_meta and cnt.frame_count == 2
        return
    run_twice(f, (torch.ones(4, 3),), lambda: None, args2=(other,))


def test_list_input_grown():
    def f(xs):
        return sum(xs)

    x = torch.ones(2)
    run_twice(f, ([x, x],), lambda: None, args2=([x, x, x],))


def make_closure():
    k = 2

    def g(x):
        return x * k

    def rebind():
        nonlocal k
        k = 3

    return g, rebind


def test_closure_variable_rebound():
    g, rebind = make_closure()
    run_twice(g, (torch.ones(3),), rebind)


def test_closure_of_called_function_rebound():
    inner, rebind = make_closure()

    def f(x):
        return inner(x) + 1

    run_twice(f, (torch.ones(3),), rebind)


def branches_on_grad(x):
    return x * 2 if torch.is_grad_enabled() else x * 3


def test_grad_mode_switched():
    run_twice(branches_on_grad, (torch.ones(3),), lambda: torch.set_grad_enabled(False),
              undo=lambda: torch.set_grad_enabled(True))


def makes_ones(x):
    return x + torch.ones(3)


def test_default_dtype_changed():
    cnt = run_twice(makes_ones, (torch.ones(3),), lambda: torch.set_default_dtype(torch.float64),
                    undo=lambda: torch.set_default_dtype(torch.float32))
    ones = [n for n in cnt.graphs[1].graph.nodes if n.target is torch.ones][0]
    assert ones.meta["example_value"].dtype == torch.float64  # the new graph knows the new dtype


def test_deterministic_mode_switched():
    def f(x):
        return x * 2 if torch.are_deterministic_algorithms_enabled() else x * 3

    run_twice(f, (torch.ones(3),), lambda: torch.use_deterministic_algorithms(True),
              undo=lambda: torch.use_deterministic_algorithms(False))


def test_python_scalar_argument_changed():
    def f(x, scale):
        return x * scale

    run_twice(f, (torch.ones(3), 2.0), lambda: None, args2=(torch.ones(3), 3.0))


# ---- the cheap guard paths: lazily read dicts and dict-version groups (guards/)
TABLE = {"a": 1.0, "b": 2.0}


class Settings:
    def __init__(self):
        self.scale = 2.0


SETTINGS = Settings()


def reads_table(x):
    extra = 10.0 if "c" in TABLE else 0.0
    return x * TABLE["a"] + extra


def test_lazy_dict_value_changed():
    run_twice(reads_table, (torch.ones(3),), lambda: TABLE.__setitem__("a", 5.0),
              undo=lambda: TABLE.__setitem__("a", 1.0))


def test_lazy_dict_key_added():
    run_twice(reads_table, (torch.ones(3),), lambda: TABLE.__setitem__("c", 0.0),
              undo=lambda: TABLE.pop("c"))


def test_lazy_dict_unread_key_changed_keeps_the_graph():
    run_twice(reads_table, (torch.ones(3),), lambda: TABLE.__setitem__("b", 7.0), frames=1,
              undo=lambda: TABLE.__setitem__("b", 2.0))


def reads_instance_dict(x):
    d = SETTINGS.__dict__
    offset = d.get("offset")
    return x * d["scale"] + (0.0 if offset is None else offset)


def test_instance_dict_key_added_and_value_changed():
    def undo():
        SETTINGS.__dict__.pop("offset", None)
        SETTINGS.scale = 2.0

    run_twice(reads_instance_dict, (torch.ones(3),), lambda: setattr(SETTINGS, "offset", 1.0), undo=undo)
    framegraph.reset()
    run_twice(reads_instance_dict, (torch.ones(3),), lambda: setattr(SETTINGS, "scale", 4.0), undo=undo)


def helper_b(x):
    return x - 1


def calls_two_helpers(x):
    return helper_b(helper(x)) * SCALE


def test_function_replaced_after_unrelated_global_write():
    """The globals' version changes on any write: the item checks run again and
    pass (no recompile), re-arm on the new version, and still catch a rebind."""
    global helper_b
    original = helper_b
    cnt = CountingBackend()
    compiled = framegraph.compile(calls_two_helpers, backend=cnt)
    x = torch.ones(3)
    try:
        for _ in range(2):
            assert_same(compiled(x), calls_two_helpers(x))
        globals()["UNRELATED"] = object()  # a new version of this module's globals
        for _ in range(2):
            assert_same(compiled(x), calls_two_helpers(x))
        assert cnt.frame_count == 1
        helper_b = lambda x: x + 100  # noqa: E731
        assert_same(compiled(x), calls_two_helpers(x))
        assert cnt.frame_count == 2
    finally:
        helper_b = original


class TwoBranches(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 3)
        self.b = torch.nn.Linear(3, 3)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(self.a(x)) + self.b(x)


@pytest.mark.parametrize("replacement", [lambda: torch.nn.Linear(3, 3), lambda: torch.nn.Tanh()])
def test_submodule_replaced(replacement):
    m = TwoBranches()
    new = replacement()

    def change():
        m.act = new

    run_twice(m, (torch.ones(2, 3),), change)


def test_parameter_replaced_in_place_of_another():
    m = TwoBranches()
    run_twice(m, (torch.ones(2, 3),), lambda: setattr(m.a, "weight", torch.nn.Parameter(torch.ones(3, 3))),
              frames=1)  # same spec: the parameter is a graph input, re-read each call


# Globals bound to builtins, torch functions and operator functions: rebinding
# one must not reuse a graph that called the old one.
scale_fn = None
binary_fn = None


def test_a_global_rebound_to_another_builtin_recompiles(framegraph_trace):
    import math
    import operator

    global scale_fn, binary_fn

    def use(x, n):
        return binary_fn(x, scale_fn(n))

    compiled = framegraph.compile(use, backend="eager")
    x = torch.ones(2)
    for scale_fn, binary_fn in ((math.sqrt, operator.add), (math.log, operator.add),
                                (math.log, operator.sub), (torch.tensor, torch.mul)):
        assert torch.equal(compiled(x, 4.0), use(x, 4.0)), (scale_fn, binary_fn)
    assert framegraph_trace.graphs == 4  # one per pair of functions


class Greeter:
    def shout(self, x):
        return x + 1


def test_a_method_replaced_on_the_class_or_shadowed_on_the_instance_recompiles(framegraph_trace):
    original = Greeter.shout

    def use(g, x):
        return g.shout(x)

    compiled = framegraph.compile(use, backend="eager")
    g, x = Greeter(), torch.ones(2)
    try:
        assert torch.equal(compiled(g, x), use(g, x))
        Greeter.shout = lambda self, x: x * 10
        assert torch.equal(compiled(g, x), use(g, x))
        g.shout = lambda x: x - 5
        assert torch.equal(compiled(g, x), use(g, x))
    finally:
        Greeter.shout = original
    assert framegraph_trace.graphs == 3


# Parameters are read by a SourceReader that skips its walk while every dict on
# the way is unchanged. These changes leave the dicts alone and must still be seen.
def test_module_converted_in_place_recompiles():
    m = TwoBranches()
    run_twice(m, (torch.ones(2, 3),), lambda: m.double(), args2=(torch.ones(2, 3, dtype=torch.float64),))


def test_parameter_frozen_in_place_recompiles():
    m = TwoBranches()
    run_twice(m, (torch.ones(2, 3),), lambda: m.b.weight.requires_grad_(False))


def test_parameter_data_swapped_for_a_transposed_tensor_recompiles():
    m = TwoBranches()

    def change():
        with torch.no_grad():
            m.a.weight.data = torch.randn(3, 3).t()

    run_twice(m, (torch.ones(2, 3),), change)


def test_parameter_values_updated_in_place_keep_the_graph():
    m = TwoBranches()

    def change():
        with torch.no_grad():
            for p in m.parameters():
                p.mul_(0.5)

    run_twice(m, (torch.ones(2, 3),), change, frames=1)


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(3, 3)])
        self.seq = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(3, 3)})

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        x = self.seq(x)
        for name, head in self.heads.items():
            x = head(x) + len(name)
        return x, len(self.layers), sum(p.numel() for p in self.parameters())


@pytest.mark.parametrize("change", [
    lambda m: m.layers.append(torch.nn.Linear(3, 3)),
    lambda m: m.seq.append(torch.nn.Tanh()),
    lambda m: m.heads.update({"bb": torch.nn.Linear(3, 3)}),
    lambda m: m.layers[0].register_parameter("extra", torch.nn.Parameter(torch.ones(2))),
], ids=["ModuleList.append", "Sequential.append", "ModuleDict.update", "parameter added"])
def test_a_container_grown_in_place_recompiles(change):
    m = Stack()
    run_twice(m, (torch.ones(2, 3),), lambda: change(m))


class Settings:
    scale = 2.0


def uses_class_attribute(x):
    return x * Settings.scale


def test_class_attribute_changed():
    def undo():
        Settings.scale = 2.0

    run_twice(uses_class_attribute, (torch.ones(3),), lambda: setattr(Settings, "scale", 3.0), undo=undo)


class Counted:
    made = 0

    def __init__(self):
        type(self).made += 1


def test_class_attribute_incremented_through_type_of_self_each_call(framegraph_trace):
    def f(x):
        Counted()
        return x * Counted.made

    compiled = framegraph.compile(f, backend="eager")
    start = Counted.made
    got = [compiled(torch.ones(1)).item() for _ in range(3)]
    assert got == [start + 1.0, start + 2.0, start + 3.0] and Counted.made == start + 3
    assert framegraph_trace.graphs == 2
    # the write is replayed after the graph (variables/objects/class_attrs.py): one graph with
    # made guarded by value, then one where the count, changed, is symbolic


class Optional_(torch.nn.Module):
    def forward(self, x):
        y = x * getattr(self, "scale", 1.0)
        if hasattr(self, "shift"):
            y = y + self.shift
        return y


@pytest.mark.parametrize("change", [
    lambda m: setattr(m, "scale", 3.0),
    lambda m: setattr(m, "shift", 1.0),
    lambda m: m.register_buffer("shift", torch.ones(1)),
], ids=["getattr default", "hasattr", "buffer"])
def test_an_attribute_that_was_missing_appears(change):
    m = Optional_()
    run_twice(m, (torch.ones(2),), lambda: change(m))


class Plain:
    pass


def test_getattr_default_on_a_plain_object_then_the_attribute_exists():
    def f(x, obj):
        return x * getattr(obj, "k", 1)

    without, with_k = Plain(), Plain()
    with_k.k = 5
    run_twice(f, (torch.ones(1), without), lambda: None, args2=(torch.ones(1), with_k))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.lin(x).relu()


@pytest.mark.parametrize("register", [
    lambda m: m.lin.register_forward_hook(lambda mod, inp, out: out * 0 + 7),
    lambda m: m.lin.register_forward_pre_hook(lambda mod, inp: (inp[0] * 0,)),
    lambda m: torch.nn.modules.module.register_module_forward_hook(lambda mod, inp, out: out + 1),
], ids=["forward hook", "pre-hook", "global hook"])
def test_a_hook_registered_after_compiling_runs(register, framegraph_trace):
    m = Net()
    compiled = framegraph.compile(m, backend="eager")
    x = torch.ones(1, 2)
    assert_same(compiled(x), m(x))
    handle = register(m)
    try:
        assert_same(compiled(x), m(x))  # the hook runs (the module's frames are traced anew)
    finally:
        handle.remove()
    assert framegraph_trace.graphs == 2  # the recompile runs the hook inside its one graph


def test_the_same_code_run_with_other_globals_gets_its_own_entry(framegraph_trace):
    source = ("import torch, framegraph\n"
              "def f(x):\n"
              "    y = x * SCALE\n"
              "    framegraph.graph_break()\n"
              "    return y + 1\n")
    code = compile(source, "<twice>", "exec")
    first, second = {"SCALE": 2.0}, {"SCALE": 3.0}
    exec(code, first)
    exec(code, second)
    assert first["f"].__code__ == second["f"].__code__  # equal code objects share the resume cache
    x = torch.ones(2)
    assert_same(framegraph.compile(first["f"], backend="eager")(x), x * 2 + 1)
    assert_same(framegraph.compile(second["f"], backend="eager")(x), x * 3 + 1)
    assert framegraph_trace.graphs == 4  # two graphs (the break) per globals
