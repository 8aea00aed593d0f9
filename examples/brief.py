"""The brief's two examples, for `FRAMEGRAPH_LOGS=bytecode,graph_breaks python examples/brief.py`."""
import torch

import framegraph


def f(x):
    return torch.sin(x) + 1


def g(x):
    if x.sum() > 0:
        return x * 2
    return x + 1


def g_cond(x):
    """``g`` as the break's hint says: the branch in the graph, one graph for either sign."""
    return torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x + 1, (x,))


if __name__ == "__main__":
    x = torch.randn(8)
    assert torch.equal(framegraph.compile(f, backend="eager")(x), f(x))
    compiled_g = framegraph.compile(g, backend="eager")
    for sign in (1, -1):
        assert torch.equal(compiled_g(sign * x.abs()), g(sign * x.abs()))
    print(framegraph.explain(g)(x.abs()))
