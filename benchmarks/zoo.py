"""Tiny Hugging Face models with random weights, built from config objects.

Nothing is downloaded (HF_HUB_OFFLINE=1). Each entry builds (model, inputs)
small enough for a 2-core CPU: used by tests/integration/test_hf_models.py
and benchmarks/models.py.
"""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

VOCAB, SEQ, BATCH = 128, 16, 2


def _ids(batch=BATCH, seq=SEQ):
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(0))


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=VOCAB, n_positions=64,
                     bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(cfg), {"input_ids": _ids()}


def bert():
    from transformers import BertConfig, BertForMaskedLM

    cfg = BertConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128,
                     vocab_size=VOCAB, max_position_embeddings=64)
    return BertForMaskedLM(cfg), {"input_ids": _ids()}


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2, hidden_size=64,
                      intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=64)
    return LlamaForCausalLM(cfg), {"input_ids": _ids()}


def t5():
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(num_layers=2, num_decoder_layers=2, num_heads=2, d_model=64, d_kv=32, d_ff=128,
                   vocab_size=VOCAB, decoder_start_token_id=0)
    return T5ForConditionalGeneration(cfg), {"input_ids": _ids(), "decoder_input_ids": _ids(seq=8)}


def vit():
    from transformers import ViTConfig, ViTForImageClassification

    cfg = ViTConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128,
                    image_size=32, patch_size=8, num_labels=10)
    pixels = torch.randn(BATCH, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    return ViTForImageClassification(cfg), {"pixel_values": pixels}


def qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, hidden_size=64,
                      intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=64)
    return Qwen2ForCausalLM(cfg), {"input_ids": _ids()}


ZOO = {"gpt2": gpt2, "bert": bert, "llama": llama, "t5": t5, "vit": vit, "qwen2": qwen2}


# Beyond the six: base models (AutoModel) that once crashed the interpreter or
# break the graph, called with use_cache=False where they have a cache.

def bloom():
    from transformers import AutoModel, BloomConfig

    cfg = BloomConfig(n_layer=2, n_head=2, hidden_size=64, vocab_size=VOCAB)
    return AutoModel.from_config(cfg), {"input_ids": _ids(), "use_cache": False}


def gemma2():
    from transformers import AutoModel, Gemma2Config

    cfg = Gemma2Config(num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, hidden_size=64,
                       intermediate_size=128, vocab_size=VOCAB, head_dim=32, max_position_embeddings=64,
                       sliding_window=8)
    return AutoModel.from_config(cfg), {"input_ids": _ids(), "use_cache": False}


def longformer():
    from transformers import AutoModel, LongformerConfig

    cfg = LongformerConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128,
                           vocab_size=VOCAB, max_position_embeddings=80, attention_window=[8, 8])
    return AutoModel.from_config(cfg), {"input_ids": _ids()}


def mistral():
    from transformers import AutoModel, MistralConfig

    cfg = MistralConfig(num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, hidden_size=64,
                        intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=64, sliding_window=8)
    return AutoModel.from_config(cfg), {"input_ids": _ids(), "use_cache": False}


def gpt_neo():
    from transformers import AutoModel, GPTNeoConfig

    cfg = GPTNeoConfig(num_layers=2, num_heads=2, hidden_size=64, vocab_size=VOCAB, max_position_embeddings=64,
                       attention_types=[[["global", "local"], 1]], window_size=8)
    return AutoModel.from_config(cfg), {"input_ids": _ids(), "use_cache": False}


MORE = {"bloom": bloom, "gemma2": gemma2, "longformer": longformer, "mistral": mistral, "gpt_neo": gpt_neo}


def build(name, seed=0):
    """(model in eval mode, inputs dict) for an entry of ZOO or MORE."""
    torch.manual_seed(seed)
    model, inputs = {**ZOO, **MORE}[name]()
    return model.eval(), inputs


def output_tensor(out):
    """The main tensor of a model output (logits)."""
    return out.logits if hasattr(out, "logits") else out[0]
