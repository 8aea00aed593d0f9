"""`compile()`, `disable()` and `reset()`: where users meet the frame hook.

A compiled callable sets this thread's eval-frame callback, calls the user's
function, and restores the previous callback on return or exception. Only
then does the C hook see frames, so nothing else in the program (or in other
threads) pays for it. Nesting works because each wrapper restores what it
found.
"""
import functools
import types

import torch

from .. import _C
from ..backends import get_default_backend, lookup_backend, with_mode
from ..backends.distributed import delegates
from ..config import MODES, CompileOptions, reset_state
from ..guards.filter import unavailable_filter
from . import skip
from .convert_frame import ConvertFrame, touched_codes


def compile(model=None, *, backend=None, fullgraph=False, dynamic=None, mode=None,
            options=None, disable=False):
    """Compile `model` (a function or an `nn.Module`) like `torch.compile`.

    Usable as `compile(fn)`, `@compile` and `@compile(backend=...)`. Frames
    run by the returned callable are traced into FX graphs and handed to
    `backend` (a registered name or a callable `backend(gm, example_inputs)`;
    None: `get_default_backend()`, "inductor" unless set). `mode` and
    `options` reach the backend as torch.compile passes them (Inductor's
    config; `mode=`/`options=` keywords for any other), except
    `options["guard_filter_fn"]`, which chooses the guards to keep
    (guards/filter.py). `fullgraph=True` raises `framegraph.Unsupported`
    instead of falling back.
    """
    if model is None:
        return functools.partial(compile, backend=backend, fullgraph=fullgraph, dynamic=dynamic,
                                 mode=mode, options=options, disable=disable)
    opts = _validate(model, backend, fullgraph, dynamic, mode, options, disable)
    if disable:
        return model
    callback = ConvertFrame.for_options(opts)
    if isinstance(model, torch.nn.Module):
        return OptimizedModule(model, callback)
    _register_roots(model)
    return _wrap(model, callback)


def _validate(model, backend, fullgraph, dynamic, mode, options, disable):
    if not callable(model):
        raise TypeError(f"framegraph.compile() expects a function or nn.Module, got {type(model).__name__}")
    fn, name = lookup_backend(get_default_backend() if backend is None else backend)
    for flag, value in (("fullgraph", fullgraph), ("disable", disable)):
        if not isinstance(value, bool):
            raise TypeError(f"framegraph.compile(): {flag} must be a bool, got {type(value).__name__}")
    if dynamic is not None and not isinstance(dynamic, bool):
        raise TypeError(f"framegraph.compile(): dynamic must be None or a bool, got {type(dynamic).__name__}")
    if mode not in MODES:
        raise ValueError(f"framegraph.compile(): unknown mode {mode!r}; modes: {', '.join(map(str, MODES[1:]))}")
    if mode is not None and options is not None:
        raise ValueError("framegraph.compile(): pass either mode or options, not both")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"framegraph.compile(): options must be a dict, got {type(options).__name__}")
    keep = None
    if options is not None:
        options = dict(options)
        keep = options.pop("guard_filter_fn", None)
        if keep is not None and not callable(keep):
            raise TypeError(f"framegraph.compile(): guard_filter_fn must be callable, got {type(keep).__name__}")
        if keep is not None and unavailable_filter(keep):
            raise ValueError(f"framegraph.compile(): {unavailable_filter(keep)}")
    return CompileOptions(backend=with_mode(fn, name, mode, options, dynamic), backend_name=name,
                          fullgraph=fullgraph, dynamic=dynamic, mode=mode, options=options or None,
                          guard_filter_fn=keep, requested=fn)


def _register_roots(fn):
    """Keep the quick filter away from the code the user compiled."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        call = getattr(type(fn), "__call__", None)
        code = getattr(call, "__code__", None)
    if code is not None:
        skip.add_user_root(code)


def _wrap(fn, callback):
    """A C wrapper that calls `fn` with `callback` set (None: with it off)."""
    wrapper = functools.update_wrapper(_C.Wrapper(fn, callback), fn)
    return wrapper


_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_HOOKS = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                 "_global_backward_pre_hooks")


def _plain_call_checks(wrapper, mod) -> tuple:
    """(object, attribute) pairs that are all empty exactly when ``wrapper(*args)``
    would only run ``type(mod).forward(mod, *args)``: no hooks on either module or
    globally, no ``forward`` set on the instance, no ``Module.compile()``d call."""
    pairs = [(m, name) for m in (wrapper, mod) for name in _HOOKS + ("_compiled_call_impl",)]
    pairs.append((mod, "forward"))
    pairs += [(torch.nn.modules.module, name) for name in _GLOBAL_HOOKS]
    return tuple(pairs)


def _call_module(module, *args, **kwargs):
    return module(*args, **kwargs)


def _module_call_root():
    """``call(module, *args, **kwargs)``, the root frame of a compiled module's call when
    it has hooks: traced, it runs nn.Module's call as eager does, the hooks around
    forward. Each compiled module gets a code object of its own, so its cache entries
    and recompile limit are its own."""
    code = _call_module.__code__.replace()
    skip.add_user_root(code)
    return types.FunctionType(code, _call_module.__globals__, "_call_module")


def _recompile(mod, options):
    return OptimizedModule(mod, ConvertFrame.for_options(options))


def _call_with_hooks(wrapper, *args, **kwargs):
    """The wrapper's call when some hook exists. The wrapped module's own call runs
    its hooks and the global ones; the wrapper goes through nn.Module's call
    machinery only for hooks registered on the wrapper itself, so a global hook
    runs once for the module, as in eager."""
    own = wrapper.__dict__
    if any(own.get(name) for name in _HOOKS + ("_compiled_call_impl",)):
        return torch.nn.Module.__call__(wrapper, *args, **kwargs)
    return wrapper.forward(*args, **kwargs)


class OptimizedModule(torch.nn.Module):
    """What `compile(module)` returns: runs the original module with the hook on.

    The original module stays usable and unchanged; attribute reads fall
    through to it.
    """

    def __init__(self, mod, callback):
        self.__dict__["_framegraph_ready"] = False
        super().__init__()
        self._orig_mod = mod  # the one registered submodule: state_dict keys are `_orig_mod.*`
        # plain instance attributes: read without nn.Module.__getattr__, not in state_dict
        self.__dict__.update(_framegraph_callback=callback, _framegraph_mod=mod,
                             _framegraph_fn=type(mod).forward, __wrapped__=mod)
        self.__dict__["_framegraph_plain"] = _plain_call_checks(self, mod)
        self.__dict__["_framegraph_call"] = _module_call_root()
        self.__dict__["_framegraph_ready"] = True
        _register_roots(type(mod).forward)
        for inner in delegates(mod):  # DDP(m) calls m's forward as a frame of its own
            _register_roots(type(inner).forward)

    # The wrapper mirrors the module, as torch.compile's does: `training` is the
    # module's, and setting any other attribute sets it on the module.
    @property
    def training(self):
        return self._framegraph_mod.training if self.__dict__.get("_framegraph_ready") else True

    @training.setter
    def training(self, value):
        if self.__dict__.get("_framegraph_ready"):
            self._framegraph_mod.training = value

    def __setattr__(self, name, value):
        if not self.__dict__.get("_framegraph_ready") or hasattr(type(self), name) or name == "_orig_mod":
            return super().__setattr__(name, value)
        setattr(self._framegraph_mod, name, value)

    def __reduce__(self):
        """copy.deepcopy and pickle: the module, compiled again with the same options."""
        return _recompile, (self._framegraph_mod, self._framegraph_callback.options)

    # ``mod(*args)`` with the hook on. When nn.Module's call machinery would only call
    # ``forward`` (no hooks on the wrapper, the module or globally, no JIT tracing),
    # it calls ``type(mod).forward(mod, *args)`` directly with the callback set, in C:
    # the two ``Module.__call__`` layers cost more than the guard of a module with 50
    # parameters. Otherwise the module's own call runs the hooks (`_call_with_hooks`).
    __call__ = _C.ModuleCall(_call_with_hooks, torch._C._get_tracing_state)

    def forward(self, *args, **kwargs):
        """Call the wrapped module with its frames compiled: its whole call, hooks
        and forward, traced from one root frame."""
        prior = _C.set_callback(self._framegraph_callback)
        try:
            return self._framegraph_call(self._orig_mod, *args, **kwargs)
        finally:
            _C.set_callback(prior)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def __dir__(self):
        """The module's names (``linear``, ``relu``: read through to it), then the
        wrapper's own, as torch.compile's OptimizedModule lists them."""
        names = self._framegraph_mod.__dir__()
        return names + [name for name in super().__dir__() if name not in names]


def disable(fn=None, recursive=True, *, reason=None):
    """Never trace `fn` (also a decorator); with `recursive`, nor anything it calls.

    Returns a wrapper that runs `fn` with the hook's callback off. With
    `recursive=False` only `fn`'s own frame is skipped: its callees are traced.
    `reason` documents why, as in torch.compiler.disable.
    """
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    if not callable(fn):
        raise TypeError(f"framegraph.disable() expects a callable, got {type(fn).__name__}")
    if not recursive:
        code = getattr(getattr(fn, "__func__", fn), "__code__", None)
        if code is None:
            raise TypeError("framegraph.disable(recursive=False) needs a Python function")
        _C.mark_skip(code)
        _disabled_codes[code] = False
        return fn

    return _wrap(fn, None)


_disabled_codes = {}


def reset():
    """Drop every cache entry and skip mark framegraph made (disable() marks stay)."""
    for code in list(touched_codes):
        if code not in _disabled_codes:
            _C.reset(code)
    reset_state()  # what every module keeps (config.py lists it)
