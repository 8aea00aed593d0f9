"""FSDP2: a two-block transformer sharded with ``fully_shard`` on 2 gloo processes
(CPU mesh), compiled, trains to eager's loss curve over 10 AdamW steps, bitwise.

Each FSDP-wrapped block has module hooks (its all-gather before forward, the
reshard after): the root forward breaks at each block's call and resumes, the
hooks run in CPython, and each block's forward is traced as its own frame. So
the root's embedding, the two blocks (the second a recompile of Block.forward
for another module) and the head are four graphs, over seven compiled frames:
the compiled module's call (its root has FSDP's hooks, so the whole call is
traced from one frame, which breaks at the hooks and resumes after the call),
the root's forward and its two resume functions, and the two blocks. What
FSDP's hooks call runs as it is: FSDP marks those functions with
torch.compiler.disable, and code inside an import is never traced.
"""
import pytest
import torch
import torch.distributed as dist

from procs import run_ranks

pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="needs torch.distributed with gloo")


@pytest.fixture(scope="module")
def ranks():
    import fsdp_workers

    return run_ranks(fsdp_workers.fsdp_worker)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_fsdp2_transformer_trains_to_eagers_loss_curve(ranks, backend):
    for rank, results in enumerate(ranks):
        r = results[backend]
        assert r["problems"] == [], f"rank {rank}: {r['problems']}"
        assert (r["frames"], r["graphs"]) == (7, 4), f"rank {rank}"
        assert len(r["eager"]) == 10 and torch.equal(r["compiled"], r["eager"]), \
            f"rank {rank}: {r['compiled']} != {r['eager']}"
    assert not torch.equal(ranks[0][backend]["eager"], ranks[1][backend]["eager"])  # own batches
