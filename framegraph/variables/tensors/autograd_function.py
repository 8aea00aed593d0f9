"""``MyFunction.apply(*args)``: a custom ``torch.autograd.Function`` in compiled code.

The graph calls ``MyFunction.apply`` itself, so autograd records the user's
``backward`` exactly as eager does (and AOTAutograd traces that backward when
it builds the joint graph). What the call returns is learnt by running it on
the trace's fake tensors, which runs the user's ``forward`` at trace time: that
is sound only when ``forward`` does nothing but compute its result. So the
tracer first traces ``forward`` inline, with a model of ``ctx``; a graph break
in it, a recorded side effect (a global, a list or an attribute of an object
from outside), or an in-place or random op makes the call a graph break
instead, as before. The inlined ops have no users and dead-code elimination
removes them. Both styles: ``forward(ctx, ...)``, and ``forward(...)`` with a
``setup_context(ctx, inputs, output)`` (traced after it, on the same model of
``ctx``); an overridden ``apply`` is a graph break.
"""
import inspect

import torch

from ...errors import unsupported
from ..containers.lists import TupleVariable
from ..core import space
from ..core.base import BoundMethodVariable, VariableTracker
from ..core.constant import ConstantVariable
from .tensor import TensorVariable

_FUNCTION_APPLY = inspect.getattr_static(torch.autograd.Function, "apply")
_FUNCTION_SETUP = inspect.getattr_static(torch.autograd.Function, "setup_context")

# ctx methods forward may call that change nothing the graph's result depends on
# (marking outputs non-differentiable changes their requires_grad, which the real call on
# fakes gives the graph)
_CTX_NOOPS = frozenset({"save_for_backward", "save_for_forward", "set_materialize_grads",
                        "mark_non_differentiable"})


def is_modelled_apply(cls, name: str) -> bool:
    """Is ``cls.name`` the ``apply`` of a custom autograd.Function, of either style?"""
    return (name == "apply" and isinstance(cls, type) and issubclass(cls, torch.autograd.Function)
            and inspect.getattr_static(cls, "apply") is _FUNCTION_APPLY
            and isinstance(inspect.getattr_static(cls, "forward"), staticmethod)
            and (not _separate_setup(cls) or isinstance(inspect.getattr_static(cls, "setup_context"), staticmethod)))


def _separate_setup(cls) -> bool:
    """Does ``cls`` define ``setup_context`` (so ``forward`` takes no ``ctx``)?"""
    return inspect.getattr_static(cls, "setup_context") is not _FUNCTION_SETUP


class FunctionCtxVariable(VariableTracker):
    """The ``ctx`` forward receives, while forward is traced to check it: attributes
    set on it are read back; saving tensors records nothing (backward runs later,
    from the real ctx of the real call)."""

    def __init__(self, needs_input_grad, **kwargs):
        super().__init__(**kwargs)
        self.attrs = {"needs_input_grad": needs_input_grad}

    def python_type(self):
        return torch.autograd.function.FunctionCtx

    def setattr(self, tx, name, value):
        self.attrs[name] = value

    def getattr(self, tx, name):
        if name in self.attrs:
            return self.attrs[name]
        if name in _CTX_NOOPS:
            return BoundMethodVariable(self, name)
        unsupported("unsupported_attribute", f"ctx.{name} in a custom autograd.Function's forward")

    def call_method(self, tx, name, args, kwargs):
        if name in _CTX_NOOPS:
            return ConstantVariable(None)
        unsupported("unsupported_call", f"ctx.{name}() in a custom autograd.Function's forward")


class AutogradFunctionApplyVariable(VariableTracker):
    """``cls.apply`` of a custom autograd.Function (see the module docstring)."""

    def __init__(self, cls, **kwargs):
        super().__init__(**kwargs)
        self.cls = cls

    def python_type(self):
        return type(self.cls.apply)

    def call(self, tx, args, kwargs):
        if kwargs:
            unsupported("unsupported_call", f"{self.cls.__name__}.apply with keyword arguments")
        output = tx.output
        needs = tuple(ConstantVariable(isinstance(a, TensorVariable) and a.fake.requires_grad
                                       and output.grad_mode) for a in args)
        ctx = FunctionCtxVariable(TupleVariable(list(needs)))
        before = _mark(output)
        forward = inspect.getattr_static(self.cls, "forward").__func__
        if _separate_setup(self.cls):
            result = space.UserFunctionVariable(forward).call(tx, list(args), {})
            setup = inspect.getattr_static(self.cls, "setup_context").__func__
            space.UserFunctionVariable(setup).call(tx, [ctx, TupleVariable(list(args)), result], {})
        else:
            space.UserFunctionVariable(forward).call(tx, [ctx] + list(args), {})
        _check_pure(output, before, self.cls)
        return output.call_function(tx, apply_of(self.cls), args, {})

    def __repr__(self):
        return f"AutogradFunctionApplyVariable({self.cls.__name__})"


def _mark(output):
    nodes = list(output.graph.nodes)
    return (nodes[-1] if nodes else None, output.side_effects.mutations, output.side_effects.local_mutations)


def _check_pure(output, before, cls):
    last, mutations, local = before
    if (output.side_effects.mutations, output.side_effects.local_mutations) != (mutations, local):
        unsupported("side_effect", f"{cls.__name__}.forward changes state outside its result")
    started = last is None
    for node in output.graph.nodes:
        if started and node.op not in ("placeholder", "get_attr") and output.is_impure(node):
            unsupported("side_effect", f"{cls.__name__}.forward runs {node.target} (in place or random)")
        if node is last:
            started = True


_APPLIES = {}


def apply_of(cls):
    """A plain function calling ``cls.apply``, what the graph node calls. FX writes a
    torch-defined callable into generated code by its import path, which for the
    inherited ``apply`` would name ``Function.apply``; this one is held by value."""
    fn = _APPLIES.get(cls)
    if fn is None:
        def apply(*args):
            return cls.apply(*args)

        apply.__name__ = apply.__qualname__ = f"{cls.__name__}_apply"
        fn = _APPLIES[cls] = apply
    return fn
