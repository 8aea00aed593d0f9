"""Hugging Face models from the zoo (benchmarks/zoo.py): captured whole, equal to eager.

Every zoo model's inference forward under ``torch.no_grad()`` is one graph
with no break (``fullgraph=True``), returns what eager returns over two calls,
and again after the batch size and sequence length change (a recompile is
allowed). Two models also run training steps (forward, loss, ``backward()``,
``optimizer.step()``) compiled with ``aot_eager``: the parameters after the
steps equal eager's, and the break at ``backward()`` is the only kind of
break the frame has.
"""
import copy
import os
import sys

import pytest
import torch

import framegraph
from framegraph.diagnostics.records import observing
from helpers import CountingBackend

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
zoo = pytest.importorskip("zoo")
pytest.importorskip("transformers")

TOL = dict(rtol=1e-4, atol=1e-5)


def _resized(inputs, batch=3, trim=4):
    """The same kind of inputs with another batch size and a shorter sequence."""
    gen = torch.Generator().manual_seed(1)
    out = {}
    for name, value in inputs.items():
        if value.dtype == torch.long:
            out[name] = torch.randint(0, zoo.VOCAB, (batch, value.shape[1] - trim), generator=gen)
        else:
            out[name] = torch.randn(batch, *value.shape[1:], generator=gen)
    return out


@pytest.mark.parametrize("name", list(zoo.ZOO))
def test_inference_is_one_graph(name):
    model, inputs = zoo.build(name)
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt, fullgraph=True)
    with torch.no_grad():
        expected = zoo.output_tensor(model(**inputs))
        for _ in range(2):
            torch.testing.assert_close(zoo.output_tensor(compiled(**inputs)), expected, **TOL)
        assert cnt.frame_count == 1, f"{cnt.frame_count} graphs"
        other = _resized(inputs)
        torch.testing.assert_close(zoo.output_tensor(compiled(**other)),
                                   zoo.output_tensor(model(**other)), **TOL)
    assert cnt.frame_count == 2  # the new sizes recompile once, with symbolic sizes


def test_model_output_is_rebuilt(framegraph_trace):
    """The compiled call returns the model's own ModelOutput class, keys and attributes."""
    model, inputs = zoo.build("gpt2")
    with torch.no_grad():
        expected = model(**inputs)
        actual = framegraph.compile(model, backend="eager", fullgraph=True)(**inputs)
    assert type(actual) is type(expected)
    assert list(actual.keys()) == list(expected.keys())
    torch.testing.assert_close(actual["logits"], expected.logits)
    torch.testing.assert_close(actual[0], expected[0])
    assert actual.hidden_states is None and actual.attentions is None
    assert framegraph_trace.graphs == 1


def train_step(model, opt, inputs):
    out = model(**inputs, labels=inputs["input_ids"])
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    return out.loss


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_training_steps_match_eager(name):
    model, inputs = zoo.build(name)
    twin = copy.deepcopy(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    twin_opt = torch.optim.AdamW(twin.parameters(), lr=1e-2)
    records = []
    with observing(records.append):
        step = framegraph.compile(train_step, backend="aot_eager")
        for _ in range(2):
            expected = train_step(model, opt, inputs)
            torch.testing.assert_close(step(twin, twin_opt, inputs), expected, **TOL)
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(q, p, **TOL)
    # known: backward() runs in CPython after the break, and the hook also traces
    # aot_eager's backward graph module (fx code) when autograd calls it; not counted
    graphs = sum(r.compiled.graph_count for r in records
                 if r.compiled and not r.code.co_filename.startswith("<eval_with_key>"))
    # the forward and loss, captured through AOTAutograd (gpt2's breaks at the
    # loss_function property: logger.warning_once, an lru_cache wrapper); and from the
    # second step on opt.step(), its state filled, whose step counts are unbacked
    # scalars of the graph (step.item(), optim.py)
    assert graphs == {"gpt2": 3, "llama": 2}[name]
