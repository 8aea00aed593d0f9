"""optimizer.step() under framegraph: one graph per step, bitwise equal to eager.

The first step creates ``optimizer.state`` (a defaultdict keyed by the
parameters) and runs eagerly; every later step is one graph that reads the
state through ``dict.get(state, <parameter source>)``. Step counters stay
Python numbers in the graph (``step.item()`` then float arithmetic, as in
eager), never per-parameter 0-d tensor ops.

With ``foreach=True`` the step is a handful of ``torch._foreach_*`` nodes over
all parameters; torch's code around them (``cast(list[Tensor], ...)``, the
device/dtype grouping, which under a compiler is one group) is traced.
"""
import collections
import operator

import pytest
import torch

import framegraph
from tests.helpers import CountingBackend

N_PARAMS = 50
KINDS = {
    "SGD": (torch.optim.SGD, dict(lr=0.01, momentum=0.9, weight_decay=1e-4)),
    "Adam": (torch.optim.Adam, dict(lr=0.01)),
    "AdamW": (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.01)),
}
# Options that take other branches of the same step code, on top of KINDS' own.
VARIANTS = [
    ("Adam", dict(amsgrad=True)),
    ("AdamW", dict(amsgrad=True)),
    ("SGD", dict(nesterov=True)),  # KINDS' SGD has momentum, which nesterov needs
]
# The first step creates the state: its trace breaks at the missing key, so the
# step runs in CPython and the wrapper resumes after it, inside its
# `with record_function(...)` block (before, it could not resume there).


@pytest.fixture(autouse=True)
def fresh_cache():
    """Optimizers of every class share one step wrapper code: start each test without
    the graphs earlier tests cached for it (they would serve these optimizers too)."""
    framegraph.reset()


def make(kind, n=N_PARAMS, **overrides):
    gen = torch.Generator().manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(4, 3, generator=gen)) for _ in range(n)]
    cls, kwargs = KINDS[kind]
    return params, cls(params, **{**kwargs, **overrides})


def set_grads(step, *param_lists):
    gen = torch.Generator().manual_seed(100 + step)
    grads = [torch.randn(4, 3, generator=gen) for _ in param_lists[0]]
    for params in param_lists:
        for p, g in zip(params, grads):
            p.grad = g.clone()


def assert_bitwise(eager_params, eager_opt, params, opt):
    for a, b in zip(eager_params, params):
        assert torch.equal(a, b)
        assert torch.equal(a.grad, b.grad)  # nesterov and maximize update the grads in place
        for key, value in eager_opt.state[a].items():
            assert torch.equal(value, opt.state[b][key]), key


def run_five_steps(kind, **overrides):
    """Five steps eager and compiled side by side; asserts bitwise equality and
    returns the compiled side's CountingBackend."""
    eager_params, eager_opt = make(kind, **overrides)
    params, opt = make(kind, **overrides)
    cnt = CountingBackend()
    step = framegraph.compile(opt.step, backend=cnt)
    for i in range(5):
        set_grads(i, eager_params, params)
        eager_opt.step()
        step()
    assert_bitwise(eager_params, eager_opt, params, opt)
    return cnt


@pytest.mark.parametrize("foreach", [False, True], ids=["for_loop", "foreach"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_step_is_one_graph_and_bitwise_eager(kind, foreach):
    cnt = run_five_steps(kind, foreach=foreach)
    assert cnt.frame_count == 1  # the first step ran eagerly (it creates the state)


@pytest.mark.parametrize("foreach", [False, True], ids=["for_loop", "foreach"])
@pytest.mark.parametrize("kind, options", VARIANTS, ids=[f"{k}-{next(iter(o))}" for k, o in VARIANTS])
def test_variant_step_is_one_graph_and_bitwise_eager(kind, options, foreach):
    cnt = run_five_steps(kind, foreach=foreach, **options)
    assert cnt.frame_count == 1


@pytest.mark.parametrize("kind", list(KINDS))
def test_foreach_step_has_no_per_parameter_tensor_ops(kind):
    """The tensor work is a few foreach nodes over all parameters; what is per
    parameter is only list indexing, ``step.item()`` and Python-float math."""
    cnt = run_five_steps(kind, foreach=True)
    nodes = [n for n in cnt.graphs[0].graph.nodes if n.op.startswith("call")]
    foreach = [n for n in nodes if getattr(n.target, "__name__", "").startswith("_foreach_")]
    assert 2 <= len(foreach) <= 10
    assert all(n.target == "item" for n in nodes if n.op == "call_method")


def test_adam_step_counter_is_a_python_number():
    params, opt = make("Adam")
    cnt = CountingBackend()
    step = framegraph.compile(opt.step, backend=cnt)
    set_grads(0, params)
    step()
    step()
    graph = cnt.graphs[0].graph
    items = [n for n in graph.nodes if n.op == "call_method" and n.target == "item"]
    assert len(items) == N_PARAMS
    pows = [n for n in graph.nodes if n.target in (operator.pow, torch.pow, "pow")]
    assert pows and not any(isinstance(n.meta.get("example_value"), torch.Tensor) for n in pows)
    assert cnt.op_count <= 17 * N_PARAMS + 2  # 10 tensor ops + item + 5 float ops per parameter


def test_function_calling_step():
    eager_params, eager_opt = make("Adam", n=5)
    params, opt = make("Adam", n=5)

    def train_step(opt, scale):
        for p in opt.param_groups[0]["params"]:
            p.grad = p.grad * scale
        opt.step()

    cnt = CountingBackend()
    compiled = framegraph.compile(train_step, backend=cnt)
    for i in range(4):
        set_grads(i, eager_params, params)
        train_step(eager_opt, 0.5)
        compiled(opt, 0.5)
    assert_bitwise(eager_params, eager_opt, params, opt)
    # the first call: one graph of the five `p.grad = ...` writes (replayed after it),
    # then a break at the missing state inside opt.step() (the step runs in CPython);
    # the second call sees the state filled: writes and step are one more graph
    assert cnt.frame_count == 2


def test_changed_lr_recompiles():
    eager_params, eager_opt = make("SGD", n=4)
    params, opt = make("SGD", n=4)
    cnt = CountingBackend()
    step = framegraph.compile(opt.step, backend=cnt)
    for i in range(4):
        if i == 2:
            for o in (eager_opt, opt):
                o.param_groups[0]["lr"] = 0.1
        set_grads(i, eager_params, params)
        eager_opt.step()
        step()
    assert_bitwise(eager_params, eager_opt, params, opt)
    assert cnt.frame_count == 2


def test_dict_keyed_by_tensors():
    a, b = torch.randn(3), torch.randn(3)
    table = {a: torch.ones(3), b: torch.full((3,), 2.0)}

    def f(table, key, x):
        return table[key] * x if key in table else x

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    x = torch.randn(3)
    assert torch.equal(compiled(table, a, x), f(table, a, x))
    assert torch.equal(compiled(table, b, x), f(table, b, x))  # the key guard re-reads `key`
    c = torch.randn(3)
    assert torch.equal(compiled(table, c, x), x)  # not in the dict: a new entry, no graph (returns x)
    assert cnt.frame_count == 1


def test_defaultdict_missing_key_breaks():
    state = collections.defaultdict(dict)
    key = torch.randn(2)

    def f(state, key, x):
        s = state[key]
        if "count" not in s:
            s["count"] = torch.zeros(2)
        s["count"].add_(x)
        return s["count"] * 2

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    x = torch.ones(2)
    for i in range(3):
        assert torch.equal(compiled(state, key, x), torch.full((2,), 2.0 * (i + 1)))
    # first call: a graph break at the missing key (the rest of f is a resume function's
    # graph); the second call is traced against the filled dict: one graph for all of f
    assert cnt.frame_count == 2
    assert torch.equal(compiled(state, key, x), torch.full((2,), 8.0)) and cnt.frame_count == 2


def test_a_step_after_torch_compile_ran_in_the_process():
    # torch._dynamo wraps every optimizer's _init_group in torch.compiler.disable on its
    # first compile (it models them itself): the step is traced as before
    torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))
    assert getattr(torch.optim.Adam._init_group, "_torchdynamo_disable", False)
    for kind in ("SGD", "Adam"):
        framegraph.reset()
        assert run_five_steps(kind).frame_count == 1
