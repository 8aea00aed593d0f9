"""torch.optim: step counters stay Python numbers inside the graph.

An optimizer keeps its step count as a 0-d CPU tensor per parameter
(``state[p]["step"]``). Eager PyTorch reads it with ``_get_value(step)``,
i.e. ``step.item()``, and computes the bias corrections in Python floats;
under a compiler (``is_compiling()`` is True) ``_get_value`` returns the
tensor, and every ``1 - beta1 ** step`` becomes a handful of 0-d tensor ops
per parameter (torch._dynamo's compiled Adam step runs ~4x slower than eager
on CPU with the eager backend because of them).

framegraph models ``_get_value`` as its eager branch instead: ``step.item()``
is one graph node whose trace-time value is an *unbacked* SymFloat (a number
the tracer does not know). The arithmetic on it becomes Python-float nodes
(``operator.pow``, ``operator.sub``) that cost nanoseconds when the graph
runs, and the result is passed to ``addcdiv_(..., value=...)`` exactly as in
eager, so the graph computes bitwise what eager computes. Nothing is guarded
on the value, so one graph serves every step. Branching on such a number is
a graph break (``symint.py``). ``_stack_if_compiling`` likewise keeps its
eager branch: the list of Python numbers.
"""
from torch.optim import optimizer

from ...errors import unsupported
from .symint import unbacked_item
from .tensor import TensorVariable


def without_dynamo_patch(fn):
    """``fn`` itself, or, where ``torch._dynamo``'s import-time patch of ``torch.optim``
    (its TorchPatcher) replaced an optimizer's own function (``_init_group``, the step of
    SparseAdam and LBFGS) by a ``torch.compiler.disable`` wrapper, the function it wraps:
    torch._dynamo models those itself, and a trace must not depend on whether something
    in the process imported it. A wrapper a user applied stays (a break, as asked)."""
    inner = getattr(fn, "_torchdynamo_orig_callable", None)
    if (getattr(fn, "_torchdynamo_disable", False) and callable(inner)
            and (getattr(inner, "__module__", None) or "").startswith("torch.optim")
            and str(getattr(fn, "_torchdynamo_disable_msg", "")).startswith("optimizer ")):
        return inner
    return fn


def _get_value(tx, x):
    """``torch.optim.optimizer._get_value``: ``x.item()`` as a graph scalar, or ``x``."""
    if not isinstance(x, TensorVariable):
        return x
    fake = x.fake
    if fake.dim() != 0 or fake.is_complex():
        unsupported("data_dependent_value", "_get_value() of a tensor that is not a real 0-d tensor")
    return unbacked_item(tx, x)


def _stack_if_compiling(tx, x):
    """``torch.optim.optimizer._stack_if_compiling``: its eager branch, the list itself."""
    return x


def _models():
    table = {}
    for name, model in (("_get_value", _get_value), ("_stack_if_compiling", _stack_if_compiling)):
        fn = getattr(optimizer, name, None)
        if fn is not None:
            table[fn] = model
    return table


OPTIM_MODELS = _models()
