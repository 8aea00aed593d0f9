"""A fast slice of the parity zoo (benchmarks/zoo.py ARCHS, benchmarks/zoo_parity.py).

One small model per cause fixed for the zoo, compiled as a user would
(``fullgraph=True`` holds because torch._dynamo gives one graph on each),
called with its default cache: one graph, no recompile over three more
identical calls, every output tensor (caches included) equal to eager's.

* bart: an encoder-decoder whose default cache builds an
  ``EncoderDecoderCache`` from a deep copy of its strict config (the replay of
  the copy's writes once recursed through the validating ``__setattr__``
  until RecursionError; its validators look typing origins up in a table
  keyed by objects);
* wav2vec2: ``is_torch_distributed_available()``, an ``lru_cache`` wrapper of a
  function marked as having a constant result;
* mobilevit: ``if self.downsampling_layer:``, the truth of a submodule;
* whisper: audio features in, a decoder with its cache;
* clip: text and image towers in one call.
"""
import os
import sys

import pytest
import torch

import framegraph
from helpers import CountingBackend

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
zoo = pytest.importorskip("zoo")
zoo_parity = pytest.importorskip("zoo_parity")
pytest.importorskip("transformers")

SLICE = ["bart", "wav2vec2", "mobilevit", "whisper", "clip"]


@pytest.mark.parametrize("name", SLICE)
def test_one_graph_no_recompile_equal_to_eager(name):
    framegraph.reset()
    model, inputs, _ = zoo.build_arch(name)
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt, fullgraph=True)
    with torch.no_grad():
        expected = model(**inputs)
        for _ in range(4):
            assert zoo_parity.compare(compiled(**inputs), expected) == "exact"
    assert cnt.frame_count == 1
