"""Backend registry: a backend turns a captured `fx.GraphModule` into a callable.

The protocol is torch.compile's: `backend(gm, example_inputs) -> callable`.
Names map to factories here; any callable is accepted as a backend too.
"""
from typing import Callable, Dict

_REGISTRY: Dict[str, Callable] = {}


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
def eager(gm, example_inputs):
    """Run the captured graph as it is (its generated Python forward)."""
    return gm.forward


@register_backend("aot_eager")
def aot_eager(gm, example_inputs):
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
