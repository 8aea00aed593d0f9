"""``flex_attention(q, k, v, score_mod=..., block_mask=...)`` in the graph.

torch's wrapper (``torch.nn.attention.flex_attention``) is traced: in a trace
it validates its inputs and calls the operator ``torch.ops.higher_order.
flex_attention`` with the user's ``score_mod`` and the block mask's
``mask_mod``, Python callables. Each is traced into a body of its own, on the
scalars the kernel hands it (the score, of the query's dtype, and int32
batch, head, query and key indices; indexing a tensor with them is indexing,
as torch's kernels run the bodies), and what it reads from outside (a bias
table, a document-id tensor) becomes the operator's ``score_mod_other_buffers``
or ``mask_mod_other_buffers``, as torch's own tracer builds the node, so that
eager, AOTAutograd and Inductor's flex kernels run it.
"""
import torch
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree

from ...errors import unsupported
from ..containers.lists import BaseListVariable
from .control_flow import HOP, OPERATORS, HigherOrderVariable, bind, dict_pairs, share_operands, trace_body
from .tensor import TensorVariable

_ARGS = ("query", "key", "value", "score_mod", "block_mask", "scale", "kernel_options",
         "score_mod_other_buffers", "mask_mod_other_buffers")


class IndexWithScalarTensors(TorchFunctionMode):
    """While a score_mod or mask_mod is traced, ``bias[q_idx, kv_idx]`` with the 0-d
    index tensors is advanced indexing, as in torch's flex kernels (which run the
    bodies under a mode of their own to that end); a plain ``__getitem__`` would read
    the indices' values. Only the trace's FakeTensor results go through here: the
    graph records the ``getitem`` as written."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.__getitem__:
            indices = pytree.tree_leaves(args[1])
            if all(isinstance(i, (torch.Tensor, int)) for i in indices):
                device = args[0].device
                return torch.ops.aten.index(args[0], [torch.tensor(i, dtype=torch.int64, device=device)
                                                      if isinstance(i, int) else i for i in indices])
        return func(*args, **(kwargs or {}))


def _scalar(output, dtype, device):
    with output.fake_mode:
        return torch.empty((), dtype=dtype, device=device)


def _lowered(var, what):
    """(FX argument, fake argument) of a block-mask entry: a tensor, a constant, None."""
    if isinstance(var, TensorVariable):
        return var.node, var.fake
    if var.is_python_constant():
        value = var.as_python_constant()
        return value, value
    unsupported("control_flow_body", f"{what} holds {var}")


def _constant(var):
    """A constant argument: a number, or a dict of constants (the kernel options)."""
    pairs = dict_pairs(var)
    if pairs is not None and all(v.is_python_constant() for _, v in pairs):
        return {k: v.as_python_constant() for k, v in pairs}
    if var.is_python_constant():
        return var.as_python_constant()
    unsupported("control_flow_body", f"flex_attention's scale and kernel_options must be constants, not {var}")


class FlexAttentionVariable(HigherOrderVariable):
    """``flex_attention(query, key, value, score_mod, block_mask, scale, kernel_options,
    score_mod_other_buffers=(), mask_mod_other_buffers=())``: both callables traced, one node."""

    def call(self, tx, args, kwargs):
        values = dict(zip(_ARGS, bind(args, kwargs, _ARGS, "flex_attention", optional=_ARGS[7:])))
        for name in _ARGS[7:]:  # filled by torch's tracer only: the user's wrapper passes none
            extra = values.get(name)
            if extra is not None and (not isinstance(extra, BaseListVariable) or extra.items):
                unsupported("control_flow_body", f"flex_attention with {name} given")
        q, k, v = values["query"], values["key"], values["value"]
        if not all(isinstance(t, TensorVariable) for t in (q, k, v)):
            unsupported("control_flow_body", "flex_attention of values that are not tensors")
        mask = values["block_mask"]
        if not isinstance(mask, BaseListVariable):
            unsupported("control_flow_body", f"flex_attention's block mask is {mask}")
        output = tx.output
        fq = q.fake
        index = [_scalar(output, torch.int32, fq.device) for _ in range(4)]
        score = trace_body(tx, values["score_mod"], [_scalar(output, fq.dtype, fq.device)] + index,
                           "score_mod", "flex_attention's score_mod", returns=None, mode=IndexWithScalarTensors)
        mask_body = trace_body(tx, mask.items[-1], index, "mask_fn", "flex_attention's mask_mod", returns=None,
                               mode=IndexWithScalarTensors)
        score_extra, score_fakes = share_operands([score])
        mask_extra, mask_fakes = share_operands([mask_body])
        entries = [_lowered(item, "flex_attention's block mask") for item in mask.items[:-1]]
        mask_nodes = tuple(n for n, _ in entries) + (mask_body.body,)
        mask_values = tuple(f for _, f in entries) + (mask_body.body,)
        scale, options = _constant(values["scale"]), _constant(values["kernel_options"])
        result = output.call_operator(
            tx, self.op, (q.node, k.node, v.node, score.body, mask_nodes, scale, options,
                          tuple(score_extra), tuple(mask_extra)),
            (fq, k.fake, v.fake, score.body, mask_values, scale, options, tuple(score_fakes), tuple(mask_fakes)))
        return result


OPERATORS[HOP.flex_attention] = FlexAttentionVariable
