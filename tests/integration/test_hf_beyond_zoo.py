"""Base models beyond the zoo's six (benchmarks/zoo.py, MORE): compiled as a
user would (no fullgraph, a counting pass-through backend, torch.no_grad()),
they run to the end and return exactly what eager returns.

BLOOM, Gemma-2 and Longformer once killed the interpreter here: a resume
function of a resume function read freed objects through a guard (a tuple
passed in as the root of a SourceReader), and a tensor check could throw a
C++ exception out of the guard. The graph counts are today's, with the graph
breaks these models still have (more than torch._dynamo's:
`benchmarks/zoo_breaks.py` counts them); a change in either direction should be looked at.
"""
import os
import sys

import pytest
import torch

import framegraph
from helpers import CountingBackend

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
zoo = pytest.importorskip("zoo")
pytest.importorskip("transformers")


# name -> (graphs after the first call, graphs after three more calls); torch._dynamo
# makes 1, 1, 4, 1 and 1 (benchmarks/zoo_breaks.py). Longformer breaks at two
# Tensor.item() calls, as torch._dynamo does; BLOOM's GeLU is a custom
# autograd.Function, one node (variables/tensors/autograd_function.py). Gemma-2's activation is a functools.partial (variables/callables/partials.py) and
# Mistral's sliding-window mask is built from closures made anew on every call
# (guarded by their code and cells, not their identity): one graph each.
EXPECTED = {"bloom": (1, 1), "gemma2": (1, 1), "longformer": (4, 4), "mistral": (1, 1), "gpt_neo": (1, 1)}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_runs_compiled_to_the_end_and_matches_eager(name):
    framegraph.reset()
    model, inputs = zoo.build(name)
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt)
    with torch.no_grad():
        expected = model(**inputs).last_hidden_state
        assert torch.equal(compiled(**inputs).last_hidden_state, expected)
        first = cnt.frame_count
        for _ in range(3):
            assert torch.equal(compiled(**inputs).last_hidden_state, expected)
    assert (first, cnt.frame_count) == EXPECTED[name]
