"""Generation with a compiled decode step: ``model.forward = compile(model.forward)``
then ``model.generate(...)``, as users compile decoding.

Tokens equal eager's, with the default DynamicCache and with StaticCache (the
configuration transformers recommends for torch.compile). The graph counts
are torch._dynamo's: with the dynamic cache, the prefill, the first decode
step and a decode step with a symbolic cache length; with the static cache,
the prefill and one decode step. A second ``generate`` compiles nothing new.
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

GRAPHS = {"dynamic": 3, "static": 2}


@pytest.mark.parametrize("cache", list(GRAPHS))
@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_generate_with_a_compiled_forward_matches_eager_token_for_token(name, cache):
    model, inputs = zoo.build(name)
    prompt = inputs["input_ids"][:1, :6]
    options = dict(max_new_tokens=12, do_sample=False, pad_token_id=0)
    if cache == "static":
        options["cache_implementation"] = "static"
    with torch.no_grad():
        expected = model.generate(prompt, **options)
        cnt = CountingBackend()
        model.forward = framegraph.compile(model.forward, backend=cnt)
        assert torch.equal(model.generate(prompt, **options), expected)
        assert cnt.frame_count == GRAPHS[cache]
        assert torch.equal(model.generate(prompt, **options), expected)
    assert cnt.frame_count == GRAPHS[cache]  # no recompile per token, nor per generate
