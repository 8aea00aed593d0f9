"""Graphs, breaks, fallbacks and recompiles per tiny Hugging Face model, framegraph vs torch._dynamo.

    python benchmarks/zoo_breaks.py [--dynamo] [names...]

Each model is built from a tiny config (random weights, nothing downloaded),
called once under torch.no_grad() with a counting backend, then three more
times with the same inputs: "graphs" is the count after the first call,
"steady" what three more calls added (recompiles). framegraph also reports
frames that ran unmodified (fallbacks) and the reasons of graph breaks. Every
compiled result is compared with eager. ``--dynamo`` counts torch.compile
instead; run it in its own process (it is not imported otherwise).
"""
import collections
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402

import zoo  # noqa: E402

V = zoo.VOCAB


def _auto(config_name, **kw):
    def build():
        import transformers
        from transformers import AutoModel

        cfg = getattr(transformers, config_name)(**kw)
        return AutoModel.from_config(cfg), {"input_ids": zoo._ids(), "use_cache": False}
    return build


_DECODER = dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=64, intermediate_size=128,
                vocab_size=V, max_position_embeddings=64)

EXTRA = {
    "opt": _auto("OPTConfig", num_hidden_layers=2, num_attention_heads=2, hidden_size=64, ffn_dim=128,
                 word_embed_proj_dim=64, vocab_size=V, max_position_embeddings=64),
    "phi": _auto("PhiConfig", **_DECODER),
    "gpt_neox": _auto("GPTNeoXConfig", **_DECODER),
    "gemma": _auto("GemmaConfig", num_key_value_heads=1, head_dim=32, **_DECODER),
    "starcoder2": _auto("Starcoder2Config", num_key_value_heads=1, **_DECODER),
    "gpt_bigcode": _auto("GPTBigCodeConfig", n_layer=2, n_head=2, n_embd=64, vocab_size=V, n_positions=64),
    "codegen": _auto("CodeGenConfig", n_layer=2, n_head=2, n_embd=64, vocab_size=V, n_positions=64,
                     rotary_dim=16),
    "qwen2_moe": _auto("Qwen2MoeConfig", num_key_value_heads=1, moe_intermediate_size=32,
                       shared_expert_intermediate_size=32, num_experts=4, num_experts_per_tok=2, **_DECODER),
    "mpt": _auto("MptConfig", n_layers=2, n_heads=2, d_model=64, vocab_size=V, max_seq_len=64),
    "gemma3": _auto("Gemma3TextConfig", num_key_value_heads=1, head_dim=32, sliding_window=8, **_DECODER),
    "exaone4": _auto("Exaone4Config", num_key_value_heads=1, sliding_window=8, **_DECODER),
}


def build(name):
    if name in EXTRA:
        torch.manual_seed(0)
        model, inputs = EXTRA[name]()
        return model.eval(), inputs
    return zoo.build(name)


class Counter:
    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


def _main_tensor(out):
    return out.last_hidden_state if hasattr(out, "last_hidden_state") else zoo.output_tensor(out)


def measure(name, dynamo=False):
    """(graphs after one call, graphs added by three more, fallbacks, break reasons, equal)."""
    model, inputs = build(name)
    cnt = Counter()
    records = []
    if dynamo:
        import torch._dynamo as dynamo_module

        dynamo_module.reset()
        compiled = torch.compile(model, backend=cnt)
        ctx = _Null()
    else:
        import framegraph
        from framegraph.diagnostics.records import observing

        framegraph.reset()
        compiled = framegraph.compile(model, backend=cnt)
        ctx = observing(records.append)
    equal = True
    with torch.no_grad(), ctx:
        expected = _main_tensor(model(**inputs))
        equal &= torch.equal(_main_tensor(compiled(**inputs)), expected)
        first = cnt.graphs
        for _ in range(3):
            equal &= torch.equal(_main_tensor(compiled(**inputs)), expected)
    reasons = collections.Counter()
    fallbacks = collections.Counter()
    for r in records:
        for brk in getattr(r.compiled, "breaks", None) or ():
            reasons[f"break: {brk.entry.id}: {brk.context[:110]}"] += 1
        if r.fallback:
            reasons[f"fallback({r.fallback}) {r.code.co_name}: {str(r.error)[:150]}"] += 1
            fallbacks[r.fallback] += 1
    return first, cnt.graphs - first, sum(fallbacks.values()), reasons, equal


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main(argv):
    dynamo = "--dynamo" in argv
    verbose = "-v" in argv
    names = [a for a in argv if not a.startswith("-")] or list(zoo.MORE) + list(EXTRA)
    print(f"{'model':12} {'graphs':>6} {'steady':>6} {'fallb':>5} equal  ({'torch._dynamo' if dynamo else 'framegraph'})")
    for name in names:
        try:
            first, more, fallbacks, reasons, equal = measure(name, dynamo)
        except Exception as e:  # a model this transformers version cannot build
            print(f"{name:12} error: {type(e).__name__}: {str(e)[:200]}")
            continue
        print(f"{name:12} {first:6} {more:6} {fallbacks:5} {equal}", flush=True)
        if verbose:
            for reason, n in reasons.most_common(12):
                print(f"    {n:3} x {reason}")


if __name__ == "__main__":
    main(sys.argv[1:])
