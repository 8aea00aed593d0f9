"""Decode loops: ``model.forward = compile(model.forward)``, then ``generate``.

    python benchmarks/decode.py [--tokens 32] [--repeats 3]

For Llama-style and GPT-2-style tiny models, with the default DynamicCache
and with StaticCache, both compilers (backend "eager", the same counting
pass-through) in one process: whether the tokens equal eager's, the graphs
compiled, the first generate's time and the steady per-token latency (the
median over repeats of a second generate, divided by the new tokens), as
ratios to torch._dynamo's, and eager's per-token time for scale.
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.dirname(__file__))

import logging  # noqa: E402

import torch  # noqa: E402

import framegraph  # noqa: E402
import zoo  # noqa: E402

logging.disable(logging.WARNING)


def counting():
    def backend(gm, example_inputs):
        backend.graphs += 1
        return gm.forward
    backend.graphs = 0
    return backend


def run(name, cache, frontend, tokens, repeats):
    model, inputs = zoo.build(name)
    prompt = inputs["input_ids"][:1, :6]
    options = dict(max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False, pad_token_id=0)
    if cache == "static":
        options["cache_implementation"] = "static"
    with torch.no_grad():
        expected = model.generate(prompt, **options)
        start = time.perf_counter()
        model.generate(prompt, **options)
        eager = (time.perf_counter() - start) / tokens
        backend = counting()
        if frontend == "framegraph":
            framegraph.reset()
            model.forward = framegraph.compile(model.forward, backend=backend)
        else:
            import torch._dynamo as dynamo

            dynamo.reset()
            model.forward = torch.compile(model.forward, backend=backend)
        start = time.perf_counter()
        same = torch.equal(model.generate(prompt, **options), expected)
        first = time.perf_counter() - start
        steady = []
        for _ in range(repeats):
            start = time.perf_counter()
            same &= torch.equal(model.generate(prompt, **options), expected)
            steady.append((time.perf_counter() - start) / tokens)
    return same, backend.graphs, first, statistics.median(steady), eager


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'model':6} {'cache':8} {'tokens ok':>9} {'graphs fg/dyn':>13} {'1st fg/dyn s':>14} "
          f"{'ratio':>6} {'ms/token fg/dyn':>16} {'ratio':>6} {'eager ms/token':>14}")
    for name in ("llama", "gpt2"):
        for cache in ("dynamic", "static"):
            fg = run(name, cache, "framegraph", args.tokens, args.repeats)
            dy = run(name, cache, "dynamo", args.tokens, args.repeats)
            print(f"{name:6} {cache:8} {str(fg[0] and dy[0]):>9} {fg[1]:>6}/{dy[1]:<6} "
                  f"{fg[2]:>6.2f}/{dy[2]:<7.2f} {fg[2] / dy[2]:>6.2f} "
                  f"{fg[3] * 1e3:>7.2f}/{dy[3] * 1e3:<8.2f} {fg[3] / dy[3]:>6.2f} {fg[4] * 1e3:>14.2f}", flush=True)


if __name__ == "__main__":
    main()
