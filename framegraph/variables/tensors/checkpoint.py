"""Activation checkpointing in the graph: ``torch.utils.checkpoint.checkpoint``.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` without keeping its
intermediate tensors and runs it again in backward to recompute them. In a
trace ``fn`` is traced into a body (``graph/bodies.py``) and the call is one
``tag_activation_checkpoint`` node holding it, the operator torch defines for
this (``torch._higher_order_ops.wrap``): run eagerly it checkpoints the body's
GraphModule, and AOTAutograd and Inductor mark the body's nodes to be
recomputed in backward. The frame around the call stays one graph.

What stays a break, and why:

* ``use_reentrant=True`` or not given (torch 2.13 then warns and uses the
  reentrant variant): the reentrant variant computes no gradient when no
  input requires grad and refuses ``torch.autograd.grad``; the operator always
  runs the non-reentrant one, so its gradients could differ from eager's.
* a ``context_fn`` (selective checkpointing policies): not modelled.
* a body that draws random numbers under the ``eager`` backend or a user's:
  the operator run as it is does not preserve the RNG state, so the
  recomputation would draw other numbers than forward did and the gradients
  would not be eager's. Under ``aot_eager`` and ``inductor`` the backend
  keeps the draws (AOTAutograd saves a random op's output, Inductor
  functionalizes the RNG).
* a body that breaks the graph or has side effects (as for ``torch.cond``).

Where the call breaks, CPython runs ``checkpoint`` with its whole call tree
untraced (``runtime/skip.py``), as before.
"""
import functools
import inspect
import sys

from ...errors import unsupported
from ..core.base import VariableTracker
from .control_flow import examples_of, flatten, share_operands, trace_body, unflatten

_NOT_MODELLED = "unsupported_call"
# Backends whose run of the operator draws in backward what forward drew: Inductor
# functionalizes the RNG, AOTAutograd's partitioner saves a random op's output
_REPLAYS_RNG = ("aot_eager", "inductor")


@functools.lru_cache(maxsize=None)
def _checkpoint_options():
    """The names ``checkpoint`` itself takes; every other keyword goes to the function."""
    from torch.utils.checkpoint import checkpoint  # torch.utils.checkpoint imports slowly: on first use

    names = {n for n in inspect.signature(checkpoint).parameters if n not in ("function", "args", "kwargs")}
    return names | {"preserve_rng_state"}  # read from **kwargs by checkpoint


class CheckpointVariable(VariableTracker):
    """``torch.utils.checkpoint.checkpoint`` itself."""

    def python_type(self):
        return type(lambda: None)

    def call(self, tx, args, kwargs):
        from torch._higher_order_ops.wrap import tag_activation_checkpoint  # imports torch.utils.checkpoint
        from torch.utils.checkpoint import noop_context_fn  # the same module: only when checkpoint is met

        if not args:
            unsupported(_NOT_MODELLED, "checkpoint() without a function")
        fn, fn_args = args[0], list(args[1:])
        names = _checkpoint_options()
        options = {k: v for k, v in kwargs.items() if k in names}
        fn_kwargs = {k: v for k, v in kwargs.items() if k not in names}
        constants = {}
        for name, value in options.items():
            if not value.is_python_constant():
                unsupported(_NOT_MODELLED, f"checkpoint's {name} is not a constant")
            constants[name] = value.as_python_constant()
        if constants.get("use_reentrant", None) is not False:
            unsupported(_NOT_MODELLED, "checkpoint with use_reentrant=True (or not given, which means True): "
                                       "only use_reentrant=False is traced")
        if constants.pop("context_fn", noop_context_fn) is not noop_context_fn:
            unsupported(_NOT_MODELLED, "checkpoint with a context_fn (a selective checkpointing policy)")
        what = "the function checkpoint runs"
        slots = _Slots(fn, fn_args, fn_kwargs, what)
        traced = trace_body(tx, slots, slots.examples, "checkpoint_body", what)
        if any(map(tx.output.draws_random, traced.body.graph.nodes)) and tx.output.options.backend_name not in _REPLAYS_RNG:
            unsupported(_NOT_MODELLED, f"{what} draws random numbers: the recomputation in backward would draw "
                                       f"others under backend {tx.output.options.backend_name!r} (aot_eager and inductor keep "
                                       "the draws)")
        lifted, lifted_fakes = share_operands([traced])
        result = tx.output.call_operator(
            tx, tag_activation_checkpoint,
            (traced.body, *(leaf.node for leaf in slots.leaves), *lifted),
            (traced.body, *(leaf.fake for leaf in slots.leaves), *lifted_fakes), constants)
        return unflatten(iter(result.items), traced.spec)

    def __repr__(self):
        return "CheckpointVariable()"


class _Slots(VariableTracker):
    """``fn`` with its constant arguments bound: called with the tensor arguments only
    (the body's inputs), it calls ``fn`` with every argument in its place."""

    def __init__(self, fn, args, kwargs, what):
        super().__init__()
        self.fn, self.what = fn, what
        self.places = []  # per argument (positional, then keyword): its tracker or None for a tensor input
        self.leaves, self.examples = [], []
        for value in [*args, *kwargs.values()]:
            if value.is_python_constant():
                self.places.append(value)
                continue
            leaves, _ = flatten(value, f"{what}'s arguments")  # tensors in tuples, lists, dicts
            self.leaves += leaves
            self.examples.append(examples_of(value, what))
            self.places.append(None)
        self.n_args, self.kw_names = len(args), list(kwargs)

    def call(self, tx, args, kwargs):
        inputs = iter(args)
        values = [next(inputs) if place is None else place for place in self.places]
        return self.fn.call(tx, values[:self.n_args], dict(zip(self.kw_names, values[self.n_args:])))


def is_checkpoint(value) -> bool:
    """``value`` is ``torch.utils.checkpoint.checkpoint`` (without importing it first)."""
    module = sys.modules.get("torch.utils.checkpoint")
    return module is not None and value is module.checkpoint
