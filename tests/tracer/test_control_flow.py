"""torch's control-flow operators compile into one graph, each body a graph of its own.

The brief's data-dependent branch, written with ``torch.cond``, is one graph
under ``fullgraph=True``; so are ``while_loop``, ``scan`` and ``map``. What a body
reads from outside (a closure's tensor, a module's parameter) is handed to it
as an operand, and a body that breaks torch's rules is a clear break.
"""
import pytest
import torch
from torch._higher_order_ops import associative_scan, map as hop_map, scan, while_loop

import framegraph
from framegraph.errors import Unsupported

from helpers import CountingBackend, assert_same, check

HOP = torch.ops.higher_order


def operators(cnt, index=-1):
    return [t for t in cnt.targets(index) if isinstance(t, torch._ops.HigherOrderOperator)]


def both_signs(shape=(4,)):
    x = torch.randn(shape)
    return [x.abs() + 0.1, -x.abs() - 0.1]


def test_the_briefs_branch_with_torch_cond_is_one_graph_for_either_sign():
    def g(x):
        return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,)) * 2

    cnt = CountingBackend()
    compiled = framegraph.compile(g, backend=cnt, fullgraph=True)
    for x in both_signs():
        assert_same(compiled(x), g(x))
    assert cnt.frame_count == 1 and operators(cnt) == [HOP.cond]
    true_body, false_body = (cnt.graphs[0].get_submodule(n) for n in ("cond_true_0", "cond_false_0"))
    assert [n.target for n in true_body.graph.nodes if n.op == "call_method"] == ["sin"]
    assert [n.target for n in false_body.graph.nodes if n.op == "call_method"] == ["cos"]


def test_closed_over_tensors_become_operands_of_both_branches():
    w = torch.randn(4)

    def f(x):
        y = x + 1
        return torch.cond(x.sum() > 0, lambda x: x * y, lambda x: x - w, (x,))

    for x in both_signs():
        cnt = check(f, x)
        cond = next(n for n in cnt.graphs[0].graph.nodes if n.target is HOP.cond)
        assert len(cond.args[3]) == 3  # x, then y and w, which the branches read


def test_a_modules_parameters_in_a_branch_are_graph_inputs_read_on_every_call():
    class Gate(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: self.lin(x), lambda x: x * 2, (x,))

    gate = Gate()
    cnt = CountingBackend()
    compiled = framegraph.compile(gate, backend=cnt, fullgraph=True)
    x = both_signs()[0]
    assert_same(compiled(x), gate(x))
    with torch.no_grad():
        gate.lin.weight.add_(1.0)  # updated in place: the same graph sees the new values
    assert_same(compiled(x), gate(x))
    assert cnt.frame_count == 1


def test_nested_conds_lift_through_each_level():
    w = torch.randn(4)

    def f(x):
        def inner(x):
            return torch.cond(x.mean() > 0.5, lambda x: x + w, lambda x: x - w, (x,))
        return torch.cond(x.sum() > 0, inner, lambda x: x.cos(), (x,))

    for x in [torch.full((4,), 2.0), torch.full((4,), 0.2), -torch.ones(4)]:
        cnt = check(f, x)
        assert operators(cnt) == [HOP.cond]


def test_branches_return_the_same_structure_of_tensors():
    def f(x):
        return torch.cond(x.sum() > 0, lambda a, b: (a + b, [a - b]), lambda a, b: (a * b, [a / 2]), (x, x * 2))

    for x in both_signs():
        check(f, x)


def test_a_predicate_known_while_tracing_picks_its_branch_inline():
    def f(x):
        return torch.cond(x.shape[0] > 2, lambda x: x + 1, lambda x: x - 1, (x,))

    cnt = check(f, torch.randn(4))
    assert operators(cnt) == [] and cnt.op_count == 1


def test_while_loop_carries_a_counter_and_a_tensor():
    w = torch.randn(4)

    def f(x):
        return while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, x * 2 + w), (torch.tensor(0), x))

    cnt = check(f, torch.randn(4))
    assert operators(cnt) == [HOP.while_loop]


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_runs_its_combine_function_over_the_first_dimension(reverse):
    def f(xs):
        return scan(lambda carry, x: (carry + x, (carry * x).sin()), torch.zeros(4), xs, reverse=reverse)

    cnt = check(f, torch.randn(3, 4))
    assert operators(cnt) == [HOP.scan]


def test_scan_carries_a_dict():
    def step(carry, xs):
        a, b = xs
        new = {"sum": carry["sum"] + a, "prod": carry["prod"] * b.sigmoid()}
        return new, (new["sum"] - new["prod"], a * b)

    def f(s, p, a, b):
        return scan(step, {"sum": s, "prod": p}, (a, b))

    cnt = check(f, torch.zeros(3), torch.ones(3), torch.randn(4, 3), torch.randn(4, 3))
    assert operators(cnt) == [HOP.scan]


@pytest.mark.parametrize("combine, dim, reverse", [(lambda a, b: a + b, 0, False), (torch.maximum, 1, True)],
                         ids=["a running sum", "a running maximum, reversed"])
def test_associative_scan_in_generic_mode(combine, dim, reverse):
    def f(xs):
        return associative_scan(combine, xs, dim=dim, reverse=reverse, combine_mode="generic")

    check(f, torch.randn(8, 7))


def test_map_applies_its_function_to_each_slice():
    w = torch.randn(4)

    def f(xs):
        return hop_map(lambda x, y: x * y + w, xs, torch.ones(4))

    cnt = check(f, torch.randn(3, 4))
    assert operators(cnt) == [HOP.map_impl]


def _grads(fn, x, backend):
    eager_x = x.detach().clone().requires_grad_()
    fn(eager_x).backward()
    compiled_x = x.detach().clone().requires_grad_()
    cnt = CountingBackend()

    def counted(gm, example_inputs):
        cnt(gm, example_inputs)
        return framegraph.backends.lookup_backend(backend)[0](gm, example_inputs)

    framegraph.compile(fn, backend=counted, fullgraph=True)(compiled_x).backward()
    assert cnt.frame_count == 1
    return compiled_x.grad, eager_x.grad


def test_backward_through_cond_under_aot_eager_gives_eagers_gradients():
    lin = torch.nn.Linear(4, 4)

    def f(x):
        return torch.cond(x.sum() > 0, lambda x: lin(x).sin(), lambda x: (x * 3).cos(), (x,)).sum()

    for x in both_signs():
        actual, expected = _grads(f, x, "aot_eager")
        torch.testing.assert_close(actual, expected)


def test_backward_through_scan_under_aot_eager_gives_eagers_gradients():
    def f(xs):
        carry, ys = scan(lambda c, x: (c * x + 1, (c + x).sin()), torch.ones(4), xs)
        return carry.sum() + ys.sum()

    actual, expected = _grads(f, torch.randn(3, 4), "aot_eager")
    torch.testing.assert_close(actual, expected)


def test_cond_runs_under_inductor():
    def f(x):
        return torch.cond(x.sum() > 0, lambda x: x.sin() + 1, lambda x: x.cos() * 2, (x,))

    graphs = []

    def inductor(gm, example_inputs):
        graphs.append(gm)
        return framegraph.backends.lookup_backend("inductor")[0](gm, example_inputs)

    compiled = framegraph.compile(f, backend=inductor, fullgraph=True)
    for x in both_signs():
        torch.testing.assert_close(compiled(x), f(x))
    assert len(graphs) == 1 and HOP.cond in [n.target for n in graphs[0].graph.nodes]


# ---- what a body may not do: a break that names the rule
def _refusal(f, x):
    with pytest.raises(Unsupported, match="control-flow operator") as info:
        framegraph.compile(f, backend="eager", fullgraph=True)(x)
    return str(info.value)


def test_a_body_that_appends_to_an_outside_list_is_refused():
    seen = []

    def f(x):
        def true_fn(x):
            seen.append(1)
            return x + 1
        return torch.cond(x.sum() > 0, true_fn, lambda x: x - 1, (x,))

    assert "true_fn changes state outside its result" in _refusal(f, torch.ones(4))


def test_a_body_that_writes_its_operand_in_place_is_refused():
    def f(x):
        def true_fn(x):
            return x.add_(1)
        return torch.cond(x.sum() > 0, true_fn, lambda x: x - 1, (x,))

    assert "writes to an operand in place" in _refusal(f, torch.ones(4))


def test_a_body_may_write_a_tensor_it_made():
    def f(x):
        def true_fn(x):
            y = x.clone()
            y.mul_(2)
            return y
        return torch.cond(x.sum() > 0, true_fn, lambda x: x - 1, (x,))

    for x in both_signs():
        check(f, x)


def test_branches_with_different_structures_are_refused():
    def f(x):
        return torch.cond(x.sum() > 0, lambda x: (x, x), lambda x: x, (x,))

    assert "different structures" in _refusal(f, torch.ones(4))


def test_a_graph_break_inside_a_body_names_the_body():
    def f(x):
        def true_fn(x):
            return x * x.sum().item()
        return torch.cond(x.sum() > 0, true_fn, lambda x: x - 1, (x,))

    assert "torch.cond's true_fn" in _refusal(f, torch.ones(4))
