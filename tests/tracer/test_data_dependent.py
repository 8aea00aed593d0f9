"""Values known only when the graph runs, with torch's two options for them.

``config.capture_scalar_outputs``: ``t.item()`` is a graph node whose value is an
unbacked SymInt/SymFloat, so arithmetic and tensor ops on it stay in the graph.
``config.capture_dynamic_output_shape_ops``: ``nonzero``, boolean indexing and
``unique`` are traced with unbacked sizes. Both are off by default, as in torch:
then each of these is a graph break. With them on, Python still cannot branch on
such a value: that stays a break.
"""
import pytest
import torch

import framegraph

from helpers import check, check_breaks


@pytest.fixture
def capture(monkeypatch):
    monkeypatch.setattr(framegraph.config, "capture_scalar_outputs", True)
    monkeypatch.setattr(framegraph.config, "capture_dynamic_output_shape_ops", True)


def data():
    return (torch.tensor([1.0, -2.0, 3.0, 3.0]),)


def item_arithmetic(x):
    s = x.sum().item()
    return x * s + 1, s * 2


def sized_by_a_scalar(x):
    n = x.sum().int().item()
    return torch.zeros(n) + 1, x[:n]


def a_range_of_a_count(x):
    n = int((x > 0).sum().item())  # int() of the captured count keeps it symbolic
    return torch.arange(n) * x.max(), n + 1


def nonzero_and_masks(x):
    idx = torch.nonzero(x > 0)
    return idx, x[x > 0] * 2, idx.shape[0] + 1


def unique_counts(x):
    return torch.unique(x, return_counts=True)


def test_off_by_default_each_is_a_break():
    assert not framegraph.config.capture_scalar_outputs
    assert not framegraph.config.capture_dynamic_output_shape_ops
    check_breaks(item_arithmetic, data, graphs=2, breaks=1)
    check_breaks(nonzero_and_masks, data, graphs=3, breaks=2)


@pytest.mark.parametrize("fn", [item_arithmetic, sized_by_a_scalar, a_range_of_a_count, nonzero_and_masks,
                                unique_counts])
def test_captured_they_are_one_graph(capture, fn):
    check(fn, *data())


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_captured_graphs_run_under_aot_backends(capture, backend):
    for fn in (item_arithmetic, nonzero_and_masks):
        framegraph.reset()
        x, = data()
        result = framegraph.compile(fn, backend=backend, fullgraph=True)(x)
        for got, want in zip(result, fn(x)):
            assert str(got) == str(want)


def test_one_graph_serves_every_value(capture):
    from helpers import CountingBackend

    cnt = CountingBackend()
    compiled = framegraph.compile(item_arithmetic, backend=cnt, fullgraph=True)
    for x in (torch.tensor([1.0, 2.0]), torch.tensor([5.0, -1.0])):
        got, want = compiled(x), item_arithmetic(x)
        assert torch.equal(got[0], want[0]) and got[1] == want[1]
    assert cnt.frame_count == 1


def test_branching_on_a_captured_value_still_breaks(capture):
    def f(x):
        if x.sum().item() > 0:
            return x + 1
        return x - 1

    def loop(x):
        return [i for i in range(x.sum().int().item())]

    def length(x):
        return len(x[x > 0])

    check_breaks(f, data, graphs=2, breaks=1)
    check_breaks(loop, data, graphs=1, breaks=1)
    check_breaks(length, data, graphs=1, breaks=1)
