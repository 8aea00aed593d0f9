"""Context managers that switch thread-local state the graph's ops depend on.

``with torch.no_grad():`` becomes two graph nodes, ``_set_grad_enabled(False)``
on entry and ``_set_grad_enabled(<previous>)`` on exit, so the compiled graph
changes grad mode exactly where eager does. The tracer switches the real grad
mode too while tracing (FakeTensors then get the right ``requires_grad``) and
restores it at the end of the trace. The mode on entry to the frame is
guarded (GRAD_MODE).

``torch.autocast(...)`` and ``torch.inference_mode()`` work the same way
through one table (``STATE_SWITCHES``): entering records ``enter(*args)`` as a
graph node whose result (the live mode object) the exit node takes, the way
torch's own ``_enter_autocast``/``_exit_autocast`` pair is meant to be traced,
and the tracer enters the same state for real, so fake dtypes (an autocast
matmul gives bfloat16) and inference tensors come out as in eager. The state
on entry to the frame is guarded (GLOBAL_STATE, the dispatch keys of every
tensor). A graph break inside such a block cannot resume yet: the frame runs
unmodified.

3.11's ``with`` protocol: BEFORE_WITH calls ``enter`` and pushes the bound
``__exit__`` (``WithExitVariable``); the normal exit path calls it with three
Nones.
"""
import contextlib
import inspect
from typing import Callable, NamedTuple

import torch
from torch.amp.autocast_mode import _enter_autocast, _exit_autocast
from torch.autograd.grad_mode import _enter_inference_mode, _exit_inference_mode

from ...errors import unsupported
from ..core import space
from ..core.base import CallableVariable, VariableTracker, type_lookup
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_in_trace

# class -> (grad mode inside, switches on construction?)
GRAD_MODE_CLASSES = {
    torch.no_grad: (False, False),
    torch.enable_grad: (True, False),
    torch.set_grad_enabled: (None, True),
}


class GradModeClassVariable(CallableVariable):
    """``torch.no_grad`` / ``torch.enable_grad`` / ``torch.set_grad_enabled`` themselves."""

    @property
    def cls(self):
        return self.fn

    def call(self, tx, args, kwargs):
        mode, on_init = GRAD_MODE_CLASSES[self.cls]
        if mode is None:
            mode = (args[0] if args else kwargs["mode"]).as_python_constant()
        ctx = GradModeVariable(bool(mode))
        if on_init:  # torch.set_grad_enabled(b) switches at once, and restores on __exit__
            ctx.enter(tx)
            ctx.entered_on_init = True
        return ctx

    def __repr__(self):
        return f"GradModeClassVariable({self.cls.__name__})"


class ContextManagerVariable(VariableTracker):
    """A context manager the tracer models: subclasses say what ``enter`` and
    ``exit`` do; ``with`` and explicit ``__enter__``/``__exit__`` calls reach them."""

    def enter(self, tx):
        raise NotImplementedError

    def exit(self, tx):
        raise NotImplementedError

    def call_method(self, tx, name, args, kwargs):
        if name == "__enter__":
            return self.enter(tx)
        if name == "__exit__":
            return self.exit(tx)
        unsupported("unsupported_ctx_manager", f"{type(self).__name__}.{name}()")

    def getattr(self, tx, name):
        if name in ("__enter__", "__exit__"):
            return WithExitVariable(self, name)
        return super().getattr(tx, name)


class GradModeVariable(ContextManagerVariable):
    """An instance of a grad-mode context manager."""

    def __init__(self, mode: bool, **kwargs):
        super().__init__(**kwargs)
        self.mode = mode
        self.previous = None
        self.entered_on_init = False

    def python_type(self):
        return torch.set_grad_enabled if self.entered_on_init else torch.no_grad

    def enter(self, tx):
        if self.entered_on_init and self.previous is not None:
            return ConstantVariable(None)
        self.previous = tx.output.grad_mode
        tx.output.set_grad_mode(self.mode)
        return ConstantVariable(None)

    def exit(self, tx):
        if self.previous is None:
            unsupported("unsupported_ctx_manager", "__exit__ before __enter__")
        tx.output.set_grad_mode(self.previous)
        return ConstantVariable(None)

    def call(self, tx, args, kwargs):
        """``torch.no_grad()(fn)``, ``@torch.set_grad_enabled(False)``: a decorator.
        ``set_grad_enabled`` switched the mode when built; decorating switches it
        back (its ``__call__`` does), and each call runs in a fresh instance."""
        fn = _decorated(args, kwargs, self)
        if self.entered_on_init:
            self.exit(tx)
        return ContextDecoratedVariable(lambda: GradModeVariable(self.mode), fn)

    def __repr__(self):
        return f"GradModeVariable({self.mode})"


class StateSwitch(NamedTuple):
    """How a context manager class switches state: ``enter(*args)`` returns a
    mode object that ``exit(mode)`` undoes; ``params`` are the constructor's
    parameters ``enter`` takes, in order; ``returns_self``: ``__enter__``
    returns the context manager (autocast) rather than None."""

    enter: Callable
    exit: Callable
    params: tuple
    returns_self: bool


def _params(cls, skip=()):
    sig = inspect.signature(cls.__init__)
    return tuple(p for name, p in list(sig.parameters.items())[1:] if name not in skip)


STATE_SWITCHES = {
    torch.autocast: StateSwitch(_enter_autocast, _exit_autocast, _params(torch.autocast), True),
    torch.inference_mode: StateSwitch(_enter_inference_mode, _exit_inference_mode,
                                      _params(torch.inference_mode), False),
}


class StateSwitchClassVariable(CallableVariable):
    """``torch.autocast`` / ``torch.inference_mode`` themselves: calling one
    binds its (constant) arguments like its ``__init__``."""

    def call(self, tx, args, kwargs):
        switch = STATE_SWITCHES[self.fn]
        values = [a.as_python_constant() for a in args]
        given = {k: v.as_python_constant() for k, v in kwargs.items()}
        bound = inspect.Signature(list(switch.params)).bind(*values, **given)
        bound.apply_defaults()
        return StateSwitchVariable(self.fn, switch, tuple(bound.arguments.values()))

    def __repr__(self):
        return f"StateSwitchClassVariable({self.fn.__name__})"


class StateSwitchVariable(ContextManagerVariable):
    """An instance of ``torch.autocast(...)`` or ``torch.inference_mode(...)``."""

    def __init__(self, cls, switch: StateSwitch, values: tuple, **kwargs):
        super().__init__(**kwargs)
        self.cls, self.switch, self.values = cls, switch, values
        self.node = None

    def python_type(self):
        return self.cls

    def enter(self, tx):
        if self.node is not None:
            unsupported("unsupported_ctx_manager", f"{self.cls.__name__} entered twice")
        self.node = tx.output.enter_state(self.switch, self.values)
        return self if self.switch.returns_self else ConstantVariable(None)

    def exit(self, tx):
        if self.node is None:
            unsupported("unsupported_ctx_manager", "__exit__ before __enter__")
        tx.output.exit_state(self.switch, self.node)
        self.node = None
        return ConstantVariable(None)

    def call(self, tx, args, kwargs):
        """``@torch.autocast(...)`` / ``@torch.inference_mode()``: a decorator."""
        fn = _decorated(args, kwargs, self)
        return ContextDecoratedVariable(lambda: StateSwitchVariable(self.cls, self.switch, self.values), fn)

    def __repr__(self):
        return f"StateSwitchVariable({self.cls.__name__}{self.values})"


def _decorated(args, kwargs, ctx):
    if len(args) != 1 or kwargs:
        unsupported("unsupported_ctx_manager", f"calling {ctx} with {args} {kwargs}")
    return args[0]


class ContextDecoratedVariable(VariableTracker):
    """A function decorated with a context manager instance (``@torch.no_grad()``
    on a nested function): each call runs it inside a fresh instance, entered
    before and exited after, as torch's ``_DecoratorContextManager`` does."""

    def __init__(self, make_ctx, fn, **kwargs):
        super().__init__(**kwargs)
        self.make_ctx, self.inner = make_ctx, fn

    def call(self, tx, args, kwargs):
        ctx = self.make_ctx()
        ctx.enter(tx)
        result = self.inner.call(tx, args, kwargs)
        ctx.exit(tx)
        return result

    def __repr__(self):
        return f"ContextDecoratedVariable({self.make_ctx()!r}, {self.inner!r})"


class WithExitVariable(VariableTracker):
    """A context manager's bound ``__exit__`` (or ``__enter__``)."""

    def __init__(self, ctx, name="__exit__", **kwargs):
        super().__init__(**kwargs)
        self.ctx, self.name = ctx, name

    def call(self, tx, args, kwargs):
        return self.ctx.call_method(tx, self.name, args, kwargs)

    def reconstruct(self, cg):
        """A grad-mode ``__exit__`` on the stack, as a real context's ``__exit__``
        (a null context's, ``record_function``'s, as ``nullcontext()``'s).

        ``torch.set_grad_enabled(mode)`` switches the mode when built and records
        the mode it found, which its ``__exit__`` restores: so set the mode found
        on entry to the ``with`` first, then build it.
        """
        ctx = self.ctx
        if getattr(ctx, "exits_like_nullcontext", False) and self.name == "__exit__":
            cg.call_constant(contextlib.nullcontext)  # entering did nothing, so leaving does nothing
            cg.load_attr("__exit__")
            return
        if not isinstance(ctx, GradModeVariable) or ctx.previous is None or self.name != "__exit__":
            unsupported("cannot_resume", f"the context manager {ctx} is active")
        cg.set_grad_mode(ctx.previous)
        cg.call_constant(torch.set_grad_enabled, ctx.mode)
        cg.grad_mode = ctx.mode
        cg.load_attr("__exit__")

    def __repr__(self):
        return f"WithExitVariable({self.ctx!r})"


def enter_context(tx, ctx: VariableTracker):
    """BEFORE_WITH: returns (bound __exit__, value of __enter__)."""
    if isinstance(ctx, ContextManagerVariable):
        return WithExitVariable(ctx), ctx.enter(tx)
    if isinstance(ctx, space.UserDefinedObjectVariable):
        # _PyObject_LookupSpecial: on the type, __enter__ first, then __exit__
        for name, missed in (("__enter__", ""), ("__exit__", " (missed __exit__ method)")):
            if not type_lookup(ctx.python_type(), name)[0]:
                raise_in_trace(TypeError, f"'{ctx.python_type().__name__}' object does not support the "
                                          f"context manager protocol{missed}")
        exit_fn = ctx.getattr(tx, "__exit__")
        return exit_fn, ctx.call_method(tx, "__enter__", [], {})
    unsupported("unsupported_ctx_manager", f"with {ctx}")
