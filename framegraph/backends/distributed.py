"""DDP bucket split: one graph per gradient bucket, so all-reduce overlaps backward.

DistributedDataParallel all-reduces a bucket of gradients as soon as autograd
has produced every gradient in it. A graph compiled through AOTAutograd
(``aot_eager``, ``inductor``) has one backward node that produces every
parameter's gradient at its end, so no bucket is ready before backward ends
and communication cannot overlap computation. torch._dynamo's DDPOptimizer
answers this by splitting the graph at DDP's bucket boundaries; this module
does the same, in its own way:

1. ``bucket_of``: walk the graph from its output back to its inputs, adding
   the bytes of each parameter (a placeholder whose example input is an
   ``nn.Parameter`` that requires grad) at its first use from the end, the
   order in which DDP fills its buckets (parameters in reverse order, each
   bucket closed once it holds ``bucket_bytes_cap`` bytes). Every node joins
   the bucket open when the walk reaches it.
2. ``torch.fx.passes.split_module`` cuts the graph into one submodule per
   bucket (first bucket of the forward = last bucket of the walk), each
   returning a tuple.
3. Each submodule is compiled by the real backend with FakeTensor example
   inputs propagated through the ones before it, and the split module runs
   the compiled pieces in order. Backward then runs piece by piece, last
   first, and each piece's gradients reach DDP's hooks when it finishes.

The split applies when the graph is traced inside a DDP forward
(``DistributedDataParallel._active_ddp_module``, set by DDP around its
module's call, in either wrapping order) with grad mode on, and the backend
is one that runs AOTAutograd; ``framegraph.config.optimize_ddp = False``
turns it off. ``delegates`` tells ``compile()`` which modules a wrapper calls
as frames of their own (DDP's ``.module``), so that their code is traced
even when it is torch's (an ``nn.Sequential``).
"""
import contextlib
from typing import Callable, List

import torch
from torch.fx.passes.split_module import split_module

AOT_BACKENDS = frozenset({"aot_eager", "inductor"})

# Observers of each split (tests and benchmarks read the bucket layout): fn(DDPSplit).
_observers: List[Callable] = []


@contextlib.contextmanager
def observing(fn):
    """Call ``fn(split)`` for every graph split into buckets inside the block."""
    _observers.append(fn)
    try:
        yield
    finally:
        _observers.remove(fn)


def active_ddp_module():
    """The DistributedDataParallel module whose forward is running now, or None."""
    if not torch.distributed.is_available():
        return None
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel._get_active_ddp_module()


def delegates(mod):
    """The modules whose forward a torch wrapper module calls as a frame of its own:
    ``DDP(m)``'s ``m``. ``compile(DDP(m))`` keeps the quick filter away from their
    code as from the wrapper's (an ``nn.Sequential`` is torch's code, skipped
    otherwise, and DDP calls it after a graph break in DDP.forward)."""
    if not torch.distributed.is_available():
        return []
    from torch.nn.parallel import DistributedDataParallel

    return [mod.module] if isinstance(mod, DistributedDataParallel) else []


def backend_for(options):
    """The backend a frame's graph goes to: ``options.backend``, or a bucket
    splitter in front of it inside a DDP forward with an AOTAutograd backend."""
    from ..config import config

    if options.backend_name not in AOT_BACKENDS or not config.optimize_ddp or not torch.is_grad_enabled():
        return options.backend  # (no grad: no backward, nothing to overlap)
    ddp = active_ddp_module()
    if ddp is None:
        return options.backend
    return DDPSplit(ddp.bucket_bytes_cap, options.backend)


def _is_param(example) -> bool:
    return isinstance(example, torch.nn.Parameter) and example.requires_grad


def bucket_of(gm: torch.fx.GraphModule, example_inputs, cap: int):
    """({node: bucket}, [parameter bytes per bucket]): bucket 0 holds the last
    parameters of the forward (the first gradients of backward); a parameter's
    bytes count at its last use."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    params = {n: x for n, x in zip(placeholders, example_inputs) if _is_param(x)}
    buckets, sizes, seen = {}, [0], set()
    for node in reversed(gm.graph.nodes):
        if node.op in ("placeholder", "output"):
            continue
        used = [p for p in node.all_input_nodes if p in params and p not in seen]
        if used and sizes[-1] >= cap:  # the open bucket is full: this node opens the next one
            sizes.append(0)
        buckets[node] = len(sizes) - 1
        for p in used:
            seen.add(p)
            sizes[-1] += params[p].numel() * params[p].element_size()
    return buckets, sizes


def _split(gm, partition):
    """``split_module`` with each piece returning a tuple. Without the nodes'
    ``example_value`` while it runs: split_module expects every symbolic size to
    come from a SymInt placeholder of its own (torch._dynamo's graphs have them),
    while framegraph's symbols come from the input tensors' sizes, which the
    pieces receive as inputs and read again themselves."""
    saved = {node: node.meta.pop("example_value") for node in gm.graph.nodes if "example_value" in node.meta}
    try:
        return split_module(gm, None, partition, tuple_return=True, keep_original_order=True)
    finally:
        for node, value in saved.items():
            node.meta["example_value"] = value


class _Piece(torch.nn.Module):
    """A compiled submodule in the split module's place (it returns a tuple)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class DDPSplit:
    """A backend: split the graph at DDP's bucket boundaries, compile each piece
    with ``backend``, return the split module running the compiled pieces."""

    def __init__(self, bucket_bytes_cap: int, backend):
        self.cap, self.backend = bucket_bytes_cap, backend
        self.pieces: List[torch.fx.GraphModule] = []  # the submodules, in forward order
        self.param_bytes: List[int] = []             # parameter bytes of each piece, in forward order
        self.symbolic = False                         # some input has a symbolic size

    def __call__(self, gm, example_inputs):
        buckets, sizes = bucket_of(gm, example_inputs, self.cap)
        last = len(sizes) - 1
        if last == 0:  # one bucket: nothing to split
            return self.backend(gm, example_inputs)
        self.param_bytes = sizes[::-1]
        split = _split(gm, lambda node: last - buckets[node])
        self._compile_pieces(split, gm, example_inputs)
        for fn in list(_observers):
            fn(self)
        return split.forward

    def _compile_pieces(self, split, gm, example_inputs):
        """Run the split module on the trace's FakeTensors (and SymInts: each placeholder's
        ``example_value``), compiling each piece on the inputs it gets."""
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        fakes = [n.meta.get("example_value", x) for n, x in zip(placeholders, example_inputs)]
        self.symbolic = any(isinstance(d, torch.SymInt) for x in fakes
                            for d in (x.shape if isinstance(x, torch.Tensor) else [x]))
        fake_mode = torch._guards.detect_fake_mode(fakes) or torch._subclasses.FakeTensorMode()
        fakes = [fake_mode.from_tensor(x) if isinstance(x, torch.Tensor) and not
                 isinstance(x, torch._subclasses.FakeTensor) else x for x in fakes]
        splitter = self

        class Compile(torch.fx.Interpreter):
            def call_module(self, target, args, kwargs):
                piece = getattr(self.module, target)
                with fake_mode:
                    out = piece(*args, **kwargs)
                splitter.pieces.append(piece)
                setattr(self.module, target, _Piece(splitter.backend(piece, list(args))))
                return out

        Compile(split).run(*fakes)
