"""A library's own torch.compile call, run by framegraph through install().

transformers' ``generate()`` with a static cache compiles the model's forward
itself (``PreTrainedModel.get_compiled_call``: ``torch.compile(self.__call__,
**compile_config.to_dict())``); nothing in the library is changed here. On a
CPU it compiles only when the compile config says so for every device.
"""
import pytest
import torch

import framegraph

transformers = pytest.importorskip("transformers")
from transformers.generation.configuration_utils import CompileConfig  # noqa: E402


def tiny_llama():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return transformers.LlamaForCausalLM(config).eval()


def test_generate_with_a_static_cache_compiles_through_framegraph(framegraph_trace):
    model = tiny_llama()
    prompt = torch.randint(0, 128, (1, 5))
    kwargs = dict(max_new_tokens=6, do_sample=False, cache_implementation="static")
    eager = model.generate(prompt, **kwargs, disable_compile=True)

    graphs = []

    def counting(gm, example_inputs, **options):  # torch.compile hands it mode="reduce-overhead"
        graphs.append(options)
        return gm.forward

    compile_config = CompileConfig(backend=counting)  # the library's defaults otherwise
    compile_config._compile_all_devices = True
    with framegraph.install():
        tokens = model.generate(prompt, **kwargs, compile_config=compile_config)
    assert torch.equal(tokens, eager)
    # one decode-step graph, reused for the five later tokens (the prefill runs uncompiled)
    assert graphs == [{"mode": "reduce-overhead"}] and framegraph_trace.graphs == 1
