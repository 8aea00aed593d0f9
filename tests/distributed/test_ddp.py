"""DistributedDataParallel on 2 gloo processes, compiled in both wrapping orders.

Each process trains eager DDP and compiled DDP from the same seed for three
SGD steps (tests/distributed/ddp_workers.py); gradients and parameters after
every step must be bitwise equal. With an AOTAutograd backend (aot_eager) the
graph is split at DDP's bucket boundaries (framegraph/backends/distributed.py):
one piece per bucket, holding the parameters DDP puts in that bucket.

In ``compile(DDP(model))`` framegraph traces DDP.forward itself: it breaks at
DDP's C++ bookkeeping (Logger/Reducer methods, its torch._disable_dynamo'd
context manager) and resumes, so the frame is compiled as DDP.forward plus
three resume functions with no tensor work, and the module's forward, traced
as its own frame, is the one graph: 5 frames, 1 graph. ``DDP(compile(model))``
compiles only the module: 1 frame, 1 graph.
"""
import pytest
import torch.distributed as dist

from procs import run_ranks

pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="needs torch.distributed with gloo")

ORDERS = {"compile(DDP(model))": 5, "DDP(compile(model))": 1}  # frames each order compiles


@pytest.fixture(scope="module")
def ranks():
    import ddp_workers

    return run_ranks(ddp_workers.ddp_worker)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("order", list(ORDERS))
def test_ddp_trains_bitwise_like_eager_ddp(ranks, order, backend):
    for rank, results in enumerate(ranks):
        r = results[(order, backend)]
        assert r["problems"] == [], f"rank {rank}: {r['problems']}"
        assert (r["frames"], r["graphs"]) == (ORDERS[order], 1), f"rank {rank}"
        assert r["same"], f"rank {rank}: gradients or parameters differ from eager DDP's"


@pytest.mark.parametrize("order", list(ORDERS))
def test_aot_backend_graph_is_split_at_ddp_buckets(ranks, order):
    for results in ranks:
        split = results[(order, "aot_eager")]
        assert split["pieces"] == [3]  # one graph, split once, into three pieces
        assert split["piece_bytes"][0][::-1] == split["ddp_buckets"] == [1040, 16640, 4352]
        assert results[(order, "eager")]["pieces"] == []  # no AOTAutograd: no split


def test_split_with_buffers_two_outputs_and_a_symbolic_batch(ranks):
    """compile(DDP(NormNet)), aot_eager, batches of 8, 6, 4, 6 rows: BatchNorm's running
    statistics (buffers DDP broadcasts before each forward), a tuple-and-dict output,
    and a recompile with a symbolic batch size at the second step (a second graph,
    split like the first): gradients, parameters and buffers bitwise like eager DDP's."""
    for rank, results in enumerate(ranks):
        r = results["varied"]
        assert r["problems"] == [], f"rank {rank}: {r['problems']}"
        assert (r["frames"], r["graphs"]) == (6, 2)  # DDP.forward + 3 resumes, NormNet.forward twice
        assert r["same"], f"rank {rank}"
        assert r["pieces"] == [2, 2] and r["symbolic"] == [False, True]
        assert [b[::-1] for b in r["piece_bytes"]] == [r["ddp_buckets"]] * 2 == [[1040, 4864]] * 2


@pytest.mark.parametrize("option", ["find_unused_parameters", "static_graph", "gradient_as_bucket_view"])
def test_ddp_options_with_the_split(ranks, option):
    """DDP's unused-parameter search (its _DDPSink over the outputs), static graph and
    gradients as bucket views run in CPython at DDP.forward's breaks, around the
    split graph: bitwise like eager DDP with the same option."""
    for rank, results in enumerate(ranks):
        r = results[option]
        assert r["problems"] == [], f"rank {rank}: {r['problems']}"
        assert (r["frames"], r["graphs"], r["pieces"]) == (5, 1, [3]) and r["same"], f"rank {rank}: {r}"


def test_ddp_of_an_nn_sequential(ranks):
    """compile(DDP(nn.Sequential(...))): the Sequential's forward is torch's own code,
    which the quick filter skips; compiling the DDP module makes it a root too,
    so it is the one graph, split at the buckets like Net's."""
    for rank, results in enumerate(ranks):
        r = results["sequential"]
        assert r["problems"] == [], f"rank {rank}: {r['problems']}"
        assert (r["frames"], r["graphs"], r["pieces"]) == (5, 1, [3]) and r["same"], f"rank {rank}: {r}"
        assert r["piece_bytes"][0][::-1] == r["ddp_buckets"] == [1040, 16640, 4352]
