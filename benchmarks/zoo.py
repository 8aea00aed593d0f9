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


# The parity zoo (benchmarks/zoo_parity.py): many architectures, each a config
# class, the keyword arguments that make it tiny, the model class and the kind
# of inputs it takes. Keyword names the config does not declare are resolved
# through its attribute_map (GPT-2's n_embd is hidden_size).

DEC = dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128, vocab_size=VOCAB,
           max_position_embeddings=64, bos_token_id=0, eos_token_id=0, pad_token_id=0)
GQA = dict(DEC, num_key_value_heads=1)
ENC = dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128, vocab_size=VOCAB,
           max_position_embeddings=64, pad_token_id=0)
S2S = dict(encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2, d_model=64,
           encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=VOCAB, max_position_embeddings=64,
           pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
VIS = dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128, image_size=32,
           patch_size=8, num_channels=3)
IMG = 32


class Arch:
    """One architecture of the parity zoo: how to build it tiny and what to call it with."""

    def __init__(self, family, config, inputs="text", model="AutoModel", **kwargs):
        self.family, self.config, self.inputs, self.model, self.kwargs = family, config, inputs, model, kwargs


def _pixels(size=IMG, channels=3):
    return torch.randn(BATCH, channels, size, size, generator=torch.Generator().manual_seed(0))


def _inputs(arch, cfg):
    """The call arguments for an architecture's input kind."""
    gen = torch.Generator().manual_seed(0)
    kind = arch.inputs
    if kind == "text":
        return {"input_ids": _ids()}
    if kind == "seq2seq":
        return {"input_ids": _ids(), "decoder_input_ids": _ids(seq=8)}
    if kind == "image":
        size = arch.kwargs.get("image_size", IMG)
        return {"pixel_values": _pixels(size[0] if isinstance(size, list) else size, arch.kwargs.get("num_channels", 3))}
    if kind == "whisper":
        frames = 2 * cfg.max_source_positions
        return {"input_features": torch.randn(BATCH, cfg.num_mel_bins, frames, generator=gen),
                "decoder_input_ids": _ids(seq=8)}
    if kind == "speech2text":
        return {"input_features": torch.randn(BATCH, 32, cfg.input_feat_per_channel * cfg.input_channels,
                                              generator=gen), "decoder_input_ids": _ids(seq=8)}
    if kind == "audio":
        return {"input_values": torch.randn(BATCH, 1600, generator=gen)}
    if kind == "clip":
        return {"input_ids": _ids(), "pixel_values": _pixels(cfg.vision_config.image_size)}
    raise ValueError(kind)


def _tiny_audio(**kw):
    base = dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128,
                conv_dim=(32, 32), conv_kernel=(10, 3), conv_stride=(5, 2), num_conv_pos_embeddings=16,
                num_conv_pos_embedding_groups=4, vocab_size=VOCAB)
    return {**base, **kw}


def _clip(text, vision):
    text = {**dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128,
                   vocab_size=VOCAB, max_position_embeddings=64), **text}
    vision = {**dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128,
                     image_size=IMG, patch_size=8), **vision}
    return dict(text_config=text, vision_config=vision, projection_dim=32)


ARCHS = {
    # decoders
    "gpt2": Arch("decoder", "GPT2Config", n_inner=128, **DEC),
    "gpt_neo": Arch("decoder", "GPTNeoConfig", attention_types=[[["global", "local"], 1]], window_size=8, **DEC),
    "gpt_neox": Arch("decoder", "GPTNeoXConfig", **DEC),
    "gptj": Arch("decoder", "GPTJConfig", rotary_dim=16, n_inner=128, **DEC),
    "llama": Arch("decoder", "LlamaConfig", **GQA),
    "mistral": Arch("decoder", "MistralConfig", sliding_window=8, **GQA),
    "mixtral": Arch("decoder", "MixtralConfig", num_local_experts=4, num_experts_per_tok=2, **GQA),
    "qwen2": Arch("decoder", "Qwen2Config", **GQA),
    "qwen2_moe": Arch("decoder", "Qwen2MoeConfig", moe_intermediate_size=32, shared_expert_intermediate_size=32,
                      num_experts=4, num_experts_per_tok=2, **GQA),
    "qwen3": Arch("decoder", "Qwen3Config", head_dim=32, **GQA),
    "qwen3_moe": Arch("decoder", "Qwen3MoeConfig", head_dim=32, moe_intermediate_size=32, num_experts=4,
                      num_experts_per_tok=2, **GQA),
    "phi": Arch("decoder", "PhiConfig", **DEC),
    "phi3": Arch("decoder", "Phi3Config", **GQA),
    "gemma": Arch("decoder", "GemmaConfig", head_dim=32, **GQA),
    "gemma2": Arch("decoder", "Gemma2Config", head_dim=32, sliding_window=8, **GQA),
    "gemma3": Arch("decoder", "Gemma3TextConfig", head_dim=32, sliding_window=8, **GQA),
    "olmo": Arch("decoder", "OlmoConfig", **DEC),
    "olmo2": Arch("decoder", "Olmo2Config", **DEC),
    "olmoe": Arch("decoder", "OlmoeConfig", num_experts=4, num_experts_per_tok=2, **DEC),
    "cohere": Arch("decoder", "CohereConfig", **GQA),
    "granite": Arch("decoder", "GraniteConfig", **GQA),
    "biogpt": Arch("decoder", "BioGptConfig", **DEC),
    "persimmon": Arch("decoder", "PersimmonConfig", **DEC),
    "glm": Arch("decoder", "GlmConfig", head_dim=32, **GQA),
    "stablelm": Arch("decoder", "StableLmConfig", **GQA),
    "starcoder2": Arch("decoder", "Starcoder2Config", **GQA),
    "gpt_bigcode": Arch("decoder", "GPTBigCodeConfig", n_inner=128, **DEC),
    "codegen": Arch("decoder", "CodeGenConfig", rotary_dim=16, n_inner=128, **DEC),
    "opt": Arch("decoder", "OPTConfig", ffn_dim=128, word_embed_proj_dim=64, **DEC),
    "bloom": Arch("decoder", "BloomConfig", **DEC),
    "falcon": Arch("decoder", "FalconConfig", **DEC),
    "mpt": Arch("decoder", "MptConfig", max_seq_len=64, **DEC),
    "xglm": Arch("decoder", "XGLMConfig", ffn_dim=128, **DEC),
    "exaone4": Arch("decoder", "Exaone4Config", sliding_window=8, **GQA),
    "helium": Arch("decoder", "HeliumConfig", head_dim=32, **GQA),
    "smollm3": Arch("decoder", "SmolLM3Config", **GQA),
    "nemotron": Arch("decoder", "NemotronConfig", **GQA),
    "cohere2": Arch("decoder", "Cohere2Config", sliding_window=8, **GQA),
    "granitemoe": Arch("decoder", "GraniteMoeConfig", num_local_experts=4, num_experts_per_tok=2, **GQA),
    # encoders
    "bert": Arch("encoder", "BertConfig", **ENC),
    "roberta": Arch("encoder", "RobertaConfig", **dict(ENC, pad_token_id=1)),
    "distilbert": Arch("encoder", "DistilBertConfig", n_layers=2, n_heads=2, dim=64, hidden_dim=128, **ENC),
    "albert": Arch("encoder", "AlbertConfig", embedding_size=32, **ENC),
    "electra": Arch("encoder", "ElectraConfig", embedding_size=32, **ENC),
    "deberta": Arch("encoder", "DebertaConfig", **ENC),
    "deberta_v2": Arch("encoder", "DebertaV2Config", **ENC),
    "xlm_roberta": Arch("encoder", "XLMRobertaConfig", **dict(ENC, pad_token_id=1)),
    "mpnet": Arch("encoder", "MPNetConfig", **dict(ENC, pad_token_id=1)),
    "convbert": Arch("encoder", "ConvBertConfig", embedding_size=64, **ENC),
    "funnel": Arch("encoder", "FunnelConfig", model="FunnelModel", block_sizes=[1, 1], d_model=64, n_head=2, d_head=32, d_inner=128,
                   vocab_size=VOCAB),
    "squeezebert": Arch("encoder", "SqueezeBertConfig", embedding_size=64, **ENC),
    "longformer": Arch("encoder", "LongformerConfig", attention_window=[8, 8], **dict(ENC, max_position_embeddings=80)),
    "canine": Arch("encoder", "CanineConfig", num_hidden_layers=2, num_attention_heads=2, hidden_size=64,
                   intermediate_size=128, downsampling_rate=2, num_hash_buckets=64, num_hash_functions=2),
    "ernie": Arch("encoder", "ErnieConfig", **ENC),
    "megatron_bert": Arch("encoder", "MegatronBertConfig", **ENC),
    "modernbert": Arch("encoder", "ModernBertConfig", global_attn_every_n_layers=2, local_attention=8, **ENC),
    "mobilebert": Arch("encoder", "MobileBertConfig", embedding_size=32, intra_bottleneck_size=32,
                       num_feedforward_networks=1, **dict(ENC, hidden_size=64, intermediate_size=64)),
    "data2vec_text": Arch("encoder", "Data2VecTextConfig", **dict(ENC, pad_token_id=1)),
    "nystromformer": Arch("encoder", "NystromformerConfig", num_landmarks=16, segment_means_seq_len=16,
                          **dict(ENC, max_position_embeddings=66, pad_token_id=1)),
    # encoder-decoders
    "t5": Arch("seq2seq", "T5Config", "seq2seq", num_layers=2, num_decoder_layers=2, num_heads=2, d_model=64,
               d_kv=32, d_ff=128, vocab_size=VOCAB, decoder_start_token_id=0),
    "mt5": Arch("seq2seq", "MT5Config", "seq2seq", num_layers=2, num_decoder_layers=2, num_heads=2, d_model=64,
                d_kv=32, d_ff=128, vocab_size=VOCAB, decoder_start_token_id=0),
    "bart": Arch("seq2seq", "BartConfig", "seq2seq", **S2S),
    "mbart": Arch("seq2seq", "MBartConfig", "seq2seq", **S2S),
    "pegasus": Arch("seq2seq", "PegasusConfig", "seq2seq", **S2S),
    "marian": Arch("seq2seq", "MarianConfig", "seq2seq", **S2S),
    "m2m_100": Arch("seq2seq", "M2M100Config", "seq2seq", **S2S),
    "blenderbot": Arch("seq2seq", "BlenderbotConfig", "seq2seq", **S2S),
    "blenderbot_small": Arch("seq2seq", "BlenderbotSmallConfig", "seq2seq", **S2S),
    "plbart": Arch("seq2seq", "PLBartConfig", "seq2seq", **S2S),
    "led": Arch("seq2seq", "LEDConfig", "seq2seq", attention_window=8, max_encoder_position_embeddings=64,
                max_decoder_position_embeddings=64, **S2S),
    # vision
    "vit": Arch("vision", "ViTConfig", "image", **VIS),
    "deit": Arch("vision", "DeiTConfig", "image", **VIS),
    "beit": Arch("vision", "BeitConfig", "image", **VIS),
    "dinov2": Arch("vision", "Dinov2Config", "image", **VIS),
    "yolos": Arch("vision", "YolosConfig", "image", num_detection_tokens=4, **dict(VIS, image_size=[32, 32])),
    "swin": Arch("vision", "SwinConfig", "image", image_size=IMG, patch_size=4, embed_dim=16, depths=[1, 1],
                 num_heads=[2, 2], window_size=4),
    "swinv2": Arch("vision", "Swinv2Config", "image", image_size=IMG, patch_size=4, embed_dim=16, depths=[1, 1],
                   num_heads=[2, 2], window_size=4),
    "convnext": Arch("vision", "ConvNextConfig", "image", hidden_sizes=[16, 32], depths=[1, 1], num_stages=2),
    "convnextv2": Arch("vision", "ConvNextV2Config", "image", hidden_sizes=[16, 32], depths=[1, 1], num_stages=2),
    "resnet": Arch("vision", "ResNetConfig", "image", embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1]),
    "regnet": Arch("vision", "RegNetConfig", "image", embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1],
                   groups_width=8),
    "mobilevit": Arch("vision", "MobileViTConfig", "image", image_size=IMG, hidden_sizes=[32, 32, 32],
                      neck_hidden_sizes=[8, 8, 16, 16, 16, 32, 64]),
    "cvt": Arch("vision", "CvtConfig", "image", embed_dim=[16, 32], num_heads=[1, 2], depth=[1, 2],
                patch_sizes=[7, 3], patch_stride=[4, 2], patch_padding=[2, 1], mlp_ratio=[2.0, 2.0],
                attention_drop_rate=[0.0, 0.0], drop_rate=[0.0, 0.0], drop_path_rate=[0.0, 0.0],
                qkv_bias=[True, True], cls_token=[False, True], qkv_projection_method=["dw_bn", "dw_bn"],
                kernel_qkv=[3, 3], padding_kv=[1, 1], stride_kv=[2, 2], padding_q=[1, 1], stride_q=[1, 1]),
    "levit": Arch("vision", "LevitConfig", "image", image_size=IMG, hidden_sizes=[32, 48], num_attention_heads=[2, 2],
                  depths=[1, 1], key_dim=[8, 8], mlp_ratio=[2, 2], attention_ratio=[2, 2],
                  down_ops=[["Subsample", 8, 2, 2, 2, 2]]),
    "poolformer": Arch("vision", "PoolFormerConfig", "image", hidden_sizes=[16, 32], depths=[1, 1],
                       num_encoder_blocks=2, patch_sizes=[7, 3], strides=[4, 2], padding=[2, 1]),
    "segformer": Arch("vision", "SegformerConfig", "image", num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                      hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2],
                      mlp_ratios=[2, 2], decoder_hidden_size=32),
    "mobilenet_v2": Arch("vision", "MobileNetV2Config", "image", image_size=IMG, depth_multiplier=0.25),
    # audio
    "whisper": Arch("audio", "WhisperConfig", "whisper", **dict(S2S, num_mel_bins=16, max_source_positions=16,
                    max_target_positions=64, decoder_start_token_id=0)),
    "speech_to_text": Arch("audio", "Speech2TextConfig", "speech2text", input_feat_per_channel=16, input_channels=1,
                           conv_channels=32, max_source_positions=64, max_target_positions=64, **S2S),
    "wav2vec2": Arch("audio", "Wav2Vec2Config", "audio", **_tiny_audio()),
    "hubert": Arch("audio", "HubertConfig", "audio", **_tiny_audio()),
    "wavlm": Arch("audio", "WavLMConfig", "audio", num_buckets=32, max_bucket_distance=64, **_tiny_audio()),
    "data2vec_audio": Arch("audio", "Data2VecAudioConfig", "audio", **_tiny_audio(num_conv_pos_embeddings=4)),
    # multimodal
    "clip": Arch("multimodal", "CLIPConfig", "clip", **_clip({}, {})),
    "siglip": Arch("multimodal", "SiglipConfig", "clip", **_clip({}, {})),
    "owlvit": Arch("multimodal", "OwlViTConfig", "clip", **_clip({}, {})),
    "chinese_clip": Arch("multimodal", "ChineseCLIPConfig", "clip", **_clip({}, {})),
    "groupvit": Arch("multimodal", "GroupViTConfig", "clip", **_clip({}, {"depths": [1, 1],
                     "num_group_tokens": [8, 0], "num_output_groups": [8, 8]})),
}


def build_arch(name, attn=None, seed=0):
    """(model in eval mode, inputs dict, config) for an entry of ARCHS, random weights.

    ``attn`` picks the attention implementation ("eager", "sdpa"); None keeps
    the model's default.
    """
    return build_from(ARCHS[name], attn, seed)


def build_from(arch, attn=None, seed=0):
    """(model in eval mode, inputs dict, config) for an ``Arch``, random weights."""
    import transformers

    cfg = getattr(transformers, arch.config)(**arch.kwargs)
    torch.manual_seed(seed)
    extra = {} if attn is None else {"attn_implementation": attn}
    cls = getattr(transformers, arch.model)
    model = cls.from_config(cfg, **extra) if arch.model == "AutoModel" else cls._from_config(cfg, **extra)
    return model.eval(), _inputs(arch, cfg), cfg


# Vision models at a depth with 100 or more operators in their graphs (the zoo's
# own vision entries are one or two blocks deep): first_call.py measures these
# where the compile time of real-sized image models is the question.
_STAGES4 = dict(hidden_sizes=[16, 32, 64, 128], depths=[2, 2, 2, 2])
VISION_DEEP = {
    "vit-8": Arch("vision", "ViTConfig", "image", **dict(VIS, num_hidden_layers=8)),
    "deit-8": Arch("vision", "DeiTConfig", "image", **dict(VIS, num_hidden_layers=8)),
    "beit-8": Arch("vision", "BeitConfig", "image", **dict(VIS, num_hidden_layers=8)),
    "dinov2-8": Arch("vision", "Dinov2Config", "image", **dict(VIS, num_hidden_layers=8)),
    "yolos-8": Arch("vision", "YolosConfig", "image", num_detection_tokens=4,
                    **dict(VIS, image_size=[32, 32], num_hidden_layers=8)),
    "swin-4stage": Arch("vision", "SwinConfig", "image", image_size=64, patch_size=2, embed_dim=16,
                        depths=[2, 2, 2, 2], num_heads=[1, 2, 2, 4], window_size=4),
    "swinv2-4stage": Arch("vision", "Swinv2Config", "image", image_size=64, patch_size=2, embed_dim=16,
                          depths=[2, 2, 2, 2], num_heads=[1, 2, 2, 4], window_size=4),
    "convnext-4stage": Arch("vision", "ConvNextConfig", "image", num_stages=4, hidden_sizes=[16, 32, 64, 128],
                            depths=[2, 2, 6, 2]),
    "convnextv2-4stage": Arch("vision", "ConvNextV2Config", "image", num_stages=4, **_STAGES4),
    "resnet-34": Arch("vision", "ResNetConfig", "image", embedding_size=16, layer_type="basic",
                      hidden_sizes=[16, 32, 64, 128], depths=[3, 4, 6, 3]),
    "resnet-50": Arch("vision", "ResNetConfig", "image", embedding_size=16, layer_type="bottleneck",
                      hidden_sizes=[32, 64, 128, 256], depths=[3, 4, 6, 3]),
    "regnet-4stage": Arch("vision", "RegNetConfig", "image", embedding_size=16, groups_width=8, **_STAGES4),
    "bit-4stage": Arch("vision", "BitConfig", "image", embedding_size=16, num_groups=8, **_STAGES4),
    "mobilenet_v1": Arch("vision", "MobileNetV1Config", "image", image_size=IMG, depth_multiplier=0.25),
    "mobilenet_v2": ARCHS["mobilenet_v2"],
    "mobilevit": ARCHS["mobilevit"],
    "efficientnet": Arch("vision", "EfficientNetConfig", "image", image_size=IMG, width_coefficient=0.25,
                         depth_coefficient=0.5, hidden_dim=320),
    "levit-3stage": Arch("vision", "LevitConfig", "image", image_size=IMG, hidden_sizes=[32, 48, 64],
                         num_attention_heads=[2, 2, 2], depths=[2, 2, 2], key_dim=[8, 8, 8], mlp_ratio=[2, 2, 2],
                         attention_ratio=[2, 2, 2]),
    "cvt-3stage": Arch("vision", "CvtConfig", "image", embed_dim=[16, 32, 64], num_heads=[1, 2, 2], depth=[1, 2, 4],
                       patch_sizes=[7, 3, 3], patch_stride=[4, 2, 2], patch_padding=[2, 1, 1],
                       mlp_ratio=[2.0, 2.0, 2.0], attention_drop_rate=[0.0] * 3, drop_rate=[0.0] * 3,
                       drop_path_rate=[0.0] * 3, qkv_bias=[True] * 3, cls_token=[False, False, True],
                       qkv_projection_method=["dw_bn"] * 3, kernel_qkv=[3] * 3, padding_kv=[1] * 3,
                       stride_kv=[2] * 3, padding_q=[1] * 3, stride_q=[1] * 3),
    "poolformer-4stage": Arch("vision", "PoolFormerConfig", "image", num_encoder_blocks=4, patch_sizes=[7, 3, 3, 3],
                              strides=[4, 2, 2, 2], padding=[2, 1, 1, 1], **_STAGES4),
    "segformer-4stage": Arch("vision", "SegformerConfig", "image", num_encoder_blocks=4, depths=[2, 2, 2, 2],
                             sr_ratios=[8, 4, 2, 1], hidden_sizes=[16, 32, 64, 128], patch_sizes=[7, 3, 3, 3],
                             strides=[4, 2, 2, 2], num_attention_heads=[1, 2, 2, 4], mlp_ratios=[2, 2, 2, 2],
                             decoder_hidden_size=32),
    "focalnet-4stage": Arch("vision", "FocalNetConfig", "image", image_size=IMG, patch_size=2, embed_dim=16,
                            depths=[2, 2, 2, 2]),
    "pvt_v2-4stage": Arch("vision", "PvtV2Config", "image", hidden_sizes=[16, 32, 64, 128], depths=[2, 2, 2, 2],
                          num_attention_heads=[1, 2, 2, 4], sr_ratios=[8, 4, 2, 1]),
}
