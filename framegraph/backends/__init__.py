"""Backend registry: a backend turns a captured `fx.GraphModule` into a callable.

The protocol is torch.compile's: `backend(gm, example_inputs) -> callable`.
Names map to factories here; any callable is accepted as a backend too.
"""
import functools
from typing import Callable, Dict

_REGISTRY: Dict[str, Callable] = {}
_DEFAULT = "inductor"


def register_backend(name: str, fn: Callable = None):
    """Register `fn` as backend `name` (usable as a decorator)."""

    def add(f):
        if not isinstance(name, str) or not name:
            raise ValueError("a backend name must be a non-empty string")
        _REGISTRY[name] = f
        return f

    return add(fn) if fn is not None else add


def list_backends():
    """The names of the registered backends, sorted."""
    return sorted(_REGISTRY)


def set_default_backend(backend) -> None:
    """The backend `compile()` uses when none is given (a name or a callable;
    None: "inductor" again), as `torch.compiler.set_default_backend`."""
    global _DEFAULT
    if backend is not None:
        lookup_backend(backend)  # an unknown name fails here, not at the first compile
    _DEFAULT = "inductor" if backend is None else backend


def get_default_backend():
    """The backend `compile()` uses when none is given."""
    return _DEFAULT


def with_mode(fn, name, mode, options, dynamic):
    """The backend as torch.compile calls it: Inductor with the config of ``mode``
    and ``options`` patched in; any other backend with ``mode=`` and ``options=``
    keyword arguments when they are given (torch's eager backends ignore them)."""
    if fn is inductor:
        patches = {}
        if mode not in (None, "default"):
            from torch._inductor import list_mode_options  # Inductor: only when asked for

            patches.update(list_mode_options(mode, dynamic))
        if options:
            _check_inductor_options(options)
            patches.update({key.replace("-", "_"): value for key, value in options.items()})
        return functools.partial(inductor, config_patches=patches) if patches else fn
    kwargs = {}
    if mode not in (None, "default"):
        kwargs["mode"] = mode
    if options:
        kwargs["options"] = options
    return functools.partial(fn, **kwargs) if kwargs else fn


def _check_inductor_options(options):
    from torch._inductor import config as inductor_config  # Inductor: only when asked for

    known = inductor_config.get_config_copy()
    for key in options:
        if not isinstance(key, str) or key.replace("-", "_") not in known:
            raise ValueError(f"framegraph.compile(): unknown Inductor option {key!r} "
                             "(torch._inductor.config lists them)")


def lookup_backend(backend):
    """Return (callable, name) for a backend given by name or as a callable."""
    if isinstance(backend, str):
        if backend not in _REGISTRY:
            raise ValueError(
                f"unknown backend {backend!r}; registered backends: {', '.join(list_backends())}"
            )
        return _REGISTRY[backend], backend
    if callable(backend):
        return backend, getattr(backend, "__name__", type(backend).__name__)
    raise TypeError(f"backend must be a registered name or a callable, got {type(backend).__name__}")


@register_backend("eager")
def eager(gm, example_inputs, **kwargs):
    """Run the captured graph as it is (its generated Python forward)."""
    return gm.forward


@register_backend("aot_eager")
def aot_eager(gm, example_inputs, **kwargs):
    """AOTAutograd with no-op compilers: forward and backward graphs run eagerly."""
    from functorch.compile import make_boxed_func
    from torch._functorch.aot_autograd import aot_module_simplified

    def nop(g, _inputs):
        return make_boxed_func(g.forward)

    # input mutations stay in an inference graph, as in torch's aot_eager: a `set_` that
    # stands for `t.data = other` can only be kept there
    return aot_module_simplified(gm, example_inputs, fw_compiler=nop, bw_compiler=nop,
                                 keep_inference_input_mutations=True)


@register_backend("inductor")
def inductor(gm, example_inputs, **kwargs):
    """torch's Inductor compiler (C++ on CPU, Triton on GPU)."""
    from torch._inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs, **kwargs)


def save_cache_artifacts():
    """The compiler caches' artifacts made so far in this process (Inductor's
    compiled graphs, AOTAutograd's), serialised as torch.compiler does:
    ``(bytes, CacheInfo)``, or None when there are none. framegraph's own
    trace cache lives on code objects and is not among them: a new process
    traces again, and its backend compiles hit these caches."""
    from torch.compiler._cache import CacheArtifactManager  # torch's cache layer, not torch._dynamo

    return CacheArtifactManager.serialize()


def load_cache_artifacts(serialized_artifacts: bytes):
    """Load what ``save_cache_artifacts()`` returned (its bytes) into the compiler
    caches, so the backend compiles of this process find them; returns their
    ``CacheInfo``, or None when the bytes held none."""
    from torch.compiler._cache import CacheArtifactManager

    if not isinstance(serialized_artifacts, (bytes, bytearray)):
        raise TypeError(f"load_cache_artifacts() expects bytes, got {type(serialized_artifacts).__name__}")
    artifacts = CacheArtifactManager.deserialize(serialized_artifacts)
    return None if artifacts is None else CacheArtifactManager.populate_caches(artifacts)
