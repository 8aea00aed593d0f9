"""Run a function on 2 gloo processes on this machine and collect what each returns.

    results = run_ranks(worker, world_size=2)   # [rank 0's result, rank 1's result]

``worker(rank, world_size)`` runs in a fresh process (torch.multiprocessing,
spawn) after ``init_process_group("gloo")`` on a free loopback port; it
returns something picklable. Inside a worker, ``TraceWatch()`` from
framegraph's pytest plugin (framegraph_pytest.py) counts what
framegraph compiled and lists every fallback, the same strict mode the suite
applies in its own process.
"""
import os
import socket
import sys
import tempfile
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entry(rank, world_size, port, worker, out_dir):
    sys.path[:0] = [os.path.dirname(os.path.dirname(__file__))]  # tests/: helpers
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size)
    try:
        result = ("ok", worker(rank, world_size))
    except BaseException:
        result = ("error", traceback.format_exc())
    torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))  # first: a failed peer may abort us
    dist.destroy_process_group()


def run_ranks(worker, world_size=2):
    """[result of worker(rank, world_size) for each rank]; a worker's exception fails here."""
    with tempfile.TemporaryDirectory() as out_dir:
        try:
            mp.spawn(_entry, args=(world_size, free_port(), worker, out_dir), nprocs=world_size, join=True)
        except mp.ProcessExitedException:  # a rank died: report the tracebacks the others saved
            pass
        paths = [os.path.join(out_dir, f"rank{r}.pt") for r in range(world_size)]
        results = [torch.load(p, weights_only=False) if os.path.exists(p) else ("error", "no result (died)")
                   for p in paths]
    errors = [f"rank {r}:\n{body}" for r, (status, body) in enumerate(results) if status != "ok"]
    assert not errors, "\n".join(errors)
    return [body for _, body in results]
