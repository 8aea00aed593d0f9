"""explain(): the brief's summary of graphs, breaks, ops, guards and compile times."""
import torch

import framegraph


def g(x):
    if x.sum() > 0:
        return x * 2
    return x + 1


def f(x):
    return torch.sin(x) + 1


def test_the_briefs_g_is_two_graphs_and_one_break():
    for sign in (1, -1):
        x = sign * torch.ones(4)
        out = framegraph.explain(g)(x)
        assert torch.equal(out.result, g(x))
        assert (out.graph_count, out.graph_break_count) == (2, 1)
        assert out.ops_per_graph[0] == ["Tensor.sum", "operator.gt"]
        assert out.op_count == 3 and len(out.graphs) == 2
        [reason] = out.break_reasons
        assert reason.reason == "Data-dependent branching"
        assert reason.hint == "Use `torch.cond` to express dynamic control flow."
        assert reason.context == "attempted to jump with TensorVariable()"
        assert reason.user_stack[0].startswith(f"{__file__}:8")
        assert any("L['x']" in line for line in out.guards)
        assert [name for name, _ in out.compile_times][0] == "g"
        text = str(out)
        assert "Graph Count: 2\nGraph Break Count: 1\nOp Count: 3" in text
        assert "Reason: Data-dependent branching" in text and "Compile Times: g:" in text


def test_the_briefs_f_is_one_graph_with_two_ops():
    out = framegraph.explain(f)(torch.randn(8))
    assert (out.graph_count, out.graph_break_count, out.op_count) == (1, 0, 2)
    assert out.ops_per_graph == [["torch.sin", "operator.add"]]
    assert "Break Reasons" not in str(out)


def test_a_frame_that_cannot_be_captured_is_explained():
    def odd(x):
        values = x.tolist()  # a tensor's data as Python: the graph breaks here
        return x * len(values)

    out = framegraph.explain(odd)(torch.ones(2))
    assert torch.equal(out.result, torch.ones(2) * 2)
    assert out.graph_break_count == 1 and out.break_reasons[0].user_stack


def test_explain_rejects_a_non_callable():
    import pytest

    with pytest.raises(TypeError, match="expects a callable"):
        framegraph.explain(3)
