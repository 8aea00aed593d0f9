"""torch.func transforms inside compiled code are one node of the graph.

``torch.vmap(f)(x)``, ``grad``, ``grad_and_value``, ``jacrev``, ``jacfwd``,
``hessian``, ``jvp`` and ``vjp`` (with ``has_aux``, per-output ``out_dims``,
per-item ``in_dims``) trace ``f`` into a body of its own and call the transform on it, so
the whole function is one graph; what ``f`` reads from outside is handed to it.
A function the tracer cannot capture is a break, and the transform runs in
CPython; a compiled function called inside a transform runs unmodified (its
tensors are functorch wrappers).
"""
import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, check, check_breaks

W = torch.randn(4)
MLP = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 2))


def batched_double(x):
    return torch.func.vmap(lambda row: row * 2)(x.view(2, 2)) + 1


def test_vmap_inside_compiled_code_is_one_graph():
    check(batched_double, torch.arange(4.0))


def gradient(x):
    return torch.func.grad(lambda t: (t * t).sum())(x) * 3


def test_grad_inside_compiled_code_is_one_graph():
    check(gradient, torch.arange(4.0))


def _vjp_both(x, v):
    out, pullback = torch.func.vjp(lambda a, b: (a * b).sin() * W, x, x.cos())
    return out, pullback(v)


CASES = {
    "in_dims with None": (lambda x, y: torch.vmap(lambda a, b: (a * b).sum() + a.sin(), in_dims=(0, None))(x, y),
                          (torch.randn(3, 4), torch.randn(4))),
    "a closed-over tensor": (lambda x: torch.vmap(lambda a: a * W)(x), (torch.randn(3, 4),)),
    "vmap of vmap": (lambda x: torch.vmap(torch.vmap(lambda a: a.sin() * 2))(x), (torch.randn(2, 3, 4),)),
    "a tuple of outputs": (lambda x: torch.func.vmap(lambda a: (a + 1, a.sum()))(x), (torch.randn(3, 4),)),
    "in_dims and out_dims 1": (lambda x: torch.vmap(lambda a: a * 2, in_dims=1, out_dims=1)(x),
                               (torch.randn(3, 4),)),
    "grad_and_value": (lambda x: torch.func.grad_and_value(lambda a: (a.sin() ** 2).sum())(x), (torch.randn(4),)),
    "grad over two argnums": (lambda x, y: torch.func.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, y),
                              (torch.randn(4), torch.randn(4))),
    "jacrev": (lambda x: torch.func.jacrev(lambda a: a.sin() * W)(x), (torch.randn(4),)),
    "jacfwd": (lambda x: torch.func.jacfwd(lambda a: a.sin() * W)(x), (torch.randn(4),)),
    "hessian": (lambda x: torch.func.hessian(lambda a: (a ** 3).sum())(x), (torch.randn(4),)),
    "per-example gradients, vmap of grad": (lambda x: torch.vmap(torch.func.grad(lambda a: a.sin().sum()))(x),
                                            (torch.randn(3, 4),)),
    "vmap of a module": (lambda x: torch.vmap(MLP)(x), (torch.randn(3, 2, 4),)),
    "vjp and its pullback": (lambda x, v: _vjp_both(x, v), (torch.randn(4), torch.randn(4))),
    "jvp": (lambda x, t: torch.func.jvp(lambda a: a.sin() * a.cos() * W, (x,), (t,)), (torch.randn(4), torch.ones(4))),
    "grad with has_aux": (lambda x: torch.func.grad(lambda t: ((t * t).sum(), t.detach() * 2), has_aux=True)(x),
                          (torch.randn(4),)),
    "grad_and_value with a dict as aux": (
        lambda x, y: torch.func.grad_and_value(lambda a, b: ((a * b).sum(), {"norm": a.norm(), "b": [b * 2]}),
                                               argnums=(0, 1), has_aux=True)(x, y),
        (torch.randn(4), torch.randn(4))),
    "jacrev with has_aux": (lambda x: torch.func.jacrev(lambda a: (a.sin() * W, a.sum()), has_aux=True)(x),
                            (torch.randn(4),)),
    "jacfwd with has_aux": (lambda x: torch.func.jacfwd(lambda a: (a.exp(), (a.cos(), a.max())), has_aux=True)(x),
                            (torch.randn(4),)),
    "vjp with has_aux": (lambda x, v: _vjp_aux(x, v), (torch.randn(4), torch.randn(4))),
    "vmap with one out_dims per output": (
        lambda x: torch.vmap(lambda r: (r.sum(), r.unsqueeze(0) * 2), out_dims=(0, 1))(x), (torch.randn(3, 4),)),
    "vmap with in_dims per item of a dict": (
        lambda a, b: torch.vmap(lambda d: d["a"] + d["b"].sum(), in_dims=({"a": 0, "b": 1},))({"a": a, "b": b}),
        (torch.randn(3), torch.randn(2, 3))),
    "vmap with in_dims per item of a tuple": (
        lambda a, b: torch.vmap(lambda p, s: p[0] * p[1] + s, in_dims=((0, 1), None))((a, b), W),
        (torch.randn(3, 4), torch.randn(4, 3))),
}


def _vjp_aux(x, v):
    out, pullback, aux = torch.func.vjp(lambda a: (a.exp() * W, {"sum": a.sum()}), x, has_aux=True)
    return out, pullback(v), aux


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_transform_is_one_graph(case):
    fn, args = CASES[case]
    check(fn, *args)


def test_backward_through_vmap_under_aot_eager_gives_eagers_gradients():
    def f(x):
        return torch.vmap(lambda r: (r * r).sum())(x).sum()

    x = torch.randn(3, 4, requires_grad=True)
    f(x).backward()
    expected, x.grad = x.grad, None
    cnt = CountingBackend()

    def counted(gm, example_inputs):
        cnt(gm, example_inputs)
        return framegraph.backends.lookup_backend("aot_eager")[0](gm, example_inputs)

    framegraph.compile(f, backend=counted, fullgraph=True)(x).backward()
    torch.testing.assert_close(x.grad, expected)
    assert cnt.frame_count == 1


def printing_vmap(x):
    def row_sum(row):
        print("row")
        return row.sum()
    return torch.func.vmap(row_sum)(x) + 1


def test_a_function_with_a_side_effect_breaks_and_vmap_runs_in_cpython():
    check_breaks(printing_vmap, lambda: (torch.arange(4.0).view(2, 2),), graphs=1, breaks=1)


def printing_with_aux(x):
    def loss(t):
        print("loss")
        return (t * t).sum(), t.detach()
    return torch.func.grad(loss, has_aux=True)(x)


def test_has_aux_with_a_side_effect_breaks_and_matches_eager():
    check_breaks(printing_with_aux, lambda: (torch.arange(4.0),), graphs=0, breaks=1)  # at the transform


def test_a_compiled_function_vmapped_runs_unmodified_inside():
    cnt = CountingBackend()
    compiled = framegraph.compile(lambda row: row.sin() * 2, backend=cnt)
    x = torch.randn(3, 4)
    assert_same(torch.func.vmap(compiled)(x), torch.func.vmap(lambda row: row.sin() * 2)(x))
    assert cnt.frame_count == 0
    assert_same(compiled(x), x.sin() * 2)  # outside the transform it compiles as usual
    assert cnt.frame_count == 1


def test_functional_call_computes_with_the_tensors_it_is_given():
    model = torch.nn.Linear(3, 3)
    new = {"weight": torch.ones(3, 3), "bias": torch.zeros(3)}

    def f(x):
        return torch.func.functional_call(model, new, (x,)), model(x)

    check(f, torch.randn(2, 3))


def test_functional_call_follows_tied_weights():
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(3, 3, bias=False)
            self.b = torch.nn.Linear(3, 3, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    model = Tied()
    check(lambda x: torch.func.functional_call(model, {"a.weight": torch.eye(3) * 2}, x), torch.randn(2, 3))


def test_per_sample_gradients_with_vmap_grad_and_functional_call_are_one_graph():
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = torch.func.functional_call(model, p, (x.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, y.unsqueeze(0))

    def per_sample_grads(x, y):
        return torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    check(per_sample_grads, torch.randn(4, 6), torch.randint(0, 3, (4,)))
