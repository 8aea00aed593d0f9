"""flex_attention with score_mod and block_mask closures: one graph, eager's answer.

The score_mod and the block mask's mask_mod are traced into bodies of their
own; a tensor a score_mod reads from outside (a bias table) is handed to the
operator as a buffer, so the graph reads it on every call.
"""
import pytest
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

import framegraph

from helpers import CountingBackend

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # eager flex_attention warns that it is unfused


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def qkv():
    return [torch.randn(1, 2, 8, 16) for _ in range(3)]


def compiled_once(fn, backend=None):
    cnt = CountingBackend()
    return framegraph.compile(fn, backend=backend or cnt, fullgraph=True), cnt


def test_a_score_mod_reading_a_bias_table_is_one_graph_that_reads_the_table_each_call():
    bias = torch.randn(8, 8)

    def attend(q, k, v):
        def score_mod(score, b, h, q_idx, kv_idx):
            return score + bias[q_idx, kv_idx]
        return flex_attention(q, k, v, score_mod=score_mod)

    compiled, cnt = compiled_once(attend)
    q, k, v = qkv()
    torch.testing.assert_close(compiled(q, k, v), attend(q, k, v))
    bias.mul_(3)  # the buffer is an input of the graph, not a constant
    torch.testing.assert_close(compiled(q, k, v), attend(q, k, v))
    assert cnt.frame_count == 1
    assert torch.ops.higher_order.flex_attention in cnt.targets()


def test_a_block_mask_and_a_score_mod_together():
    mask = create_block_mask(causal, 1, 1, 8, 8, device="cpu")

    def attend(q, k, v):
        return flex_attention(q, k, v, block_mask=mask, score_mod=lambda s, b, h, qi, ki: s * 2)

    compiled, cnt = compiled_once(attend)
    q, k, v = qkv()
    torch.testing.assert_close(compiled(q, k, v), attend(q, k, v))
    assert cnt.frame_count == 1


def test_relative_position_without_a_block_mask_builds_the_empty_mask_in_the_graph():
    def attend(q, k, v):
        return flex_attention(q, k, v, score_mod=lambda s, b, h, qi, ki: s + (qi - ki))

    compiled, cnt = compiled_once(attend)
    q, k, v = qkv()
    torch.testing.assert_close(compiled(q, k, v), attend(q, k, v))
    assert cnt.frame_count == 1


def test_flex_attention_runs_under_inductor():
    mask = create_block_mask(causal, 1, 1, 8, 8, device="cpu")
    bias = torch.randn(8, 8)

    def attend(q, k, v):
        return flex_attention(q, k, v, block_mask=mask, score_mod=lambda s, b, h, qi, ki: s + bias[qi, ki])

    graphs = []

    def inductor(gm, example_inputs):
        graphs.append(gm)
        return framegraph.backends.lookup_backend("inductor")[0](gm, example_inputs)

    compiled = framegraph.compile(attend, backend=inductor, fullgraph=True)
    q, k, v = qkv()
    torch.testing.assert_close(compiled(q, k, v), attend(q, k, v), atol=1e-5, rtol=1e-5)
    assert len(graphs) == 1
