"""Guards a graph gets once it is finished, from its final inputs and nodes.

* ``MODULE_HOOKS``: the hook dicts of every module the graph calls hold the
  hooks the trace ran.
* ``STORAGE_GROUPS``: where the graph writes a frame argument's tensor in place,
  which of the frame arguments' tensors share a storage, as at trace time. A
  functionalizing backend (AOTAutograd) compiles the graph for the aliasing it
  was traced with: traced on two tensors and called with one tensor twice (or
  two views of one storage), ``x.add_(1); y * 2`` would read ``y`` before the
  write. Only tensors the frame was called with are compared (a module's
  parameters and an optimizer's state are its own, and an optimizer step writes
  every parameter: a check per call over all of them would cost the step).
"""
import torch.fx

from ..guards.kinds import HookDicts, storage_groups
from ..guards.sources import LocalSource


def add_final_guards(output, mutated) -> None:
    """Add the guards above to ``output``; ``mutated(node)``: does the node write its first argument?"""
    if output.hook_dicts:
        output.add_guard("MODULE_HOOKS", None, HookDicts(output.hook_dicts.values()))
    arguments = [(var, real) for var, real in zip(output.inputs, output.example_inputs)
                 if var.source is not None and isinstance(var.source.root(), LocalSource)
                 and hasattr(real, "untyped_storage")]
    if len(arguments) < 2:
        return
    placeholders = {id(var.node) for var, _ in arguments}
    written = any(mutated(node) and node.args and isinstance(node.args[0], torch.fx.Node)
                  and id(node.args[0]) in placeholders for node in output.graph.nodes)
    if written:
        sources = tuple(var.source for var, _ in arguments)
        output.add_guard("STORAGE_GROUPS", None, (sources, storage_groups([real for _, real in arguments])))
