"""Which recorded nodes have effects beyond their result, for dead code elimination and the guards.

A node is kept although nothing reads it when it writes to a tensor (``add_``,
``out=``, ``inplace=True``, ``x[i] = v``, ``x += v`` in any spelling, a
schema's ``Tensor(a!)``), switches global state (grad mode, autocast,
inference mode) or draws from torch's RNG, whose draws must happen as in eager.
"""
import operator

import torch
from torch.amp.autocast_mode import _enter_autocast, _exit_autocast
from torch.autograd.grad_mode import _enter_inference_mode, _exit_inference_mode

from . import meta_ops

GRAD_TOGGLE = torch._C._set_grad_enabled
# Entering and leaving autocast / inference mode (variables/ctx_managers.py): kept by DCE.
STATE_TARGETS = frozenset({_enter_autocast, _exit_autocast, _enter_inference_mode, _exit_inference_mode})


def is_impure(node: torch.fx.Node) -> bool:
    """Nodes DCE must keep: mutations (``add_``, ``out=``, ``inplace=True``, ``x[i] = v``,
    ``x += v`` in any spelling, any op that returns its own argument), global-state
    changes and random ops, whose RNG draws must happen as in eager even when the
    result is unused."""
    if node.op in ("placeholder", "output") or node.meta.get("returns_argument"):
        return True
    if writes_in_place(node) or mutates_by_schema(node) or (  # training batch norm: its running stats
            node.op == "call_function" and meta_ops.writes_arguments(node.target, node.args, node.kwargs)):
        return True
    if node.op == "call_function" and (node.target is GRAD_TOGGLE or node.target in STATE_TARGETS):
        return True
    if node.meta.get("no_op"):  # it handed back its argument untouched: it drew nothing either
        return False
    return draws_random(node)


def mutates_by_schema(node: torch.fx.Node) -> bool:
    """An operator whose schema says it writes to an argument (``Tensor(a!)``): a
    ``torch.library.custom_op`` with ``mutates_args``, an aten ``out=`` overload."""
    target = node.target
    if isinstance(target, torch._ops.OpOverloadPacket):  # its out= overloads: writes_in_place sees out=
        return any(getattr(target, name)._schema.is_mutable for name in target.overloads() if "out" not in name)
    return isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable


def draws_random(node: torch.fx.Node) -> bool:
    """A node that draws from torch's RNG (``randn``, ``dropout``, ``x.bernoulli_()``)."""
    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    return node.op in ("call_function", "call_method") and name.lstrip("_").rstrip("_") in _RANDOM


def writes_in_place(node: torch.fx.Node) -> bool:
    """Does ``node`` write to its first argument (``x.add_(1)``, ``x[i] = v``, ``x += v``,
    ``out=x``, ``inplace=True``)? A ``contiguous()`` that returns its argument does not."""
    if node.kwargs.get("inplace") is True or "out" in node.kwargs:
        return True
    target = node.target
    name = target if node.op == "call_method" else getattr(target, "__name__", "")
    if node.op == "call_function" and target in _OPERATOR_FUNCTIONS:
        # operator's names end in "_" where they would clash with keywords: and_ or_ not_ is_
        return target is operator.setitem or target in _INPLACE_OPERATORS
    if name in _INPLACE_DUNDERS:
        return True
    return name.endswith("_") and not name.endswith("__")


_INPLACE_DUNDERS = {"__setitem__", "__delitem__"} | {
    f"__i{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift",
                            "rshift", "and", "or", "xor")}
_RANDOM = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
           "multinomial", "normal", "poisson", "dropout", "dropout1d", "dropout2d", "dropout3d",
           "alpha_dropout", "feature_alpha_dropout", "rrelu", "gumbel_softmax", "native_dropout",
           "uniform", "exponential", "geometric", "cauchy", "log_normal", "random"}  # the last: x.uniform_()...
_INPLACE_OPERATORS = {getattr(operator, n) for n in dir(operator) if n.startswith("i") and
                      n not in ("index", "indexOf", "is_", "is_not", "itemgetter", "invert", "is_none",
                                "is_not_none")}
_OPERATOR_FUNCTIONS = {f for n, f in vars(operator).items() if not n.startswith("_") and callable(f)
                       and not isinstance(f, type)}
