"""``y.register_hook(hook)`` on a tensor made in the graph.

The hook is traced into a body of its own (a pure function of the gradient
and the tensors it reads from outside, which become extra operands, as a
control-flow body's do), and one node calls torch's ``register_hook`` operator
on ``y`` (``torch._higher_order_ops.register_hook``): when the graph runs it
registers the body on the real intermediate tensor, which it hands back, so
the hook sees the whole gradient of ``y`` (from uses before the registration
too) as in eager; AOTAutograd traces the registration into the backward. The
node returns its argument, so the trace keeps ``y``'s tracker and the node is
impure (dead code elimination keeps it).

A hook with a side effect (appending to a list, printing), one that returns
None, and a hook on a tensor from outside the frame (its hook outlives the
call, which the graph cannot register) are breaks; so is any use of the
handle the call returns.
"""
import torch
from torch._higher_order_ops.register_hook import register_hook_op

from ...errors import unsupported
from ..core import space
from ..core.base import VariableTracker
from .control_flow import share_operands, trace_body


@space.register
def register_hook_in_graph(tx, tensor, hook):
    """``tensor.register_hook(hook)`` for a tensor made in the trace that requires grad."""
    what = "the hook Tensor.register_hook registers"
    traced = trace_body(tx, hook, [tensor.fake], "hook_body", what, returns=None)
    lifted, lifted_fakes = share_operands([traced])
    hooked = tx.output.call_operator(tx, register_hook_op, (tensor.node, traced.body, *lifted),
                                     (tensor.fake, traced.body, *lifted_fakes))
    hooked.node.meta["returns_argument"] = True  # it registered a hook: kept, and the tensor is ``tensor``
    return HookHandleVariable()


class HookHandleVariable(VariableTracker):
    """The ``RemovableHandle`` of a hook the graph registers: any use of it is a break."""

    def python_type(self):
        return torch.utils.hooks.RemovableHandle

    def getattr(self, tx, name):
        unsupported("unsupported_call", f"RemovableHandle.{name} of a hook registered in the graph")

    def reconstruct(self, cg):
        unsupported("cannot_resume", "the handle of a hook registered in the graph")
