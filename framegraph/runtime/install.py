"""`install()`: every `torch.compile(...)` in the process compiles with framegraph.

Libraries call `torch.compile` themselves (transformers' `generate()` with a
static cache, `nn.Module.compile()`, training loops behind a flag). Installed,
`torch.compile` and `torch.compiler.compile` are framegraph's `compile()`
with the same arguments, and these `torch.compiler` names are framegraph's,
until `uninstall()`: `disable`, `reset`, `allow_in_graph`,
`disallow_in_graph`, `nonstrict_trace`, `substitute_in_graph`,
`assume_constant_result`, `wrap_numpy`, `nested_compile_region`,
`set_stance`, `set_default_backend`, `get_default_backend`. Inside traced
code `torch.compiler.is_compiling()` is already True (the tracer answers it,
`variables/tensors/torch_fn.py`), so it needs no patch.

Three ways to install:

    framegraph.install()              # until framegraph.uninstall()
    with framegraph.install(): ...    # for the block
    FRAMEGRAPH_INSTALL=1 python script.py   # an unmodified script

The environment variable is read when torch is imported, through torch's
plugin entry point (`torch.backends`, `framegraph_autoload.py`), so a script
that never imports framegraph still gets it.

Only the attributes are replaced: a function that saved `torch.compile`
before the install (`from torch import compile`) keeps torch's.
"""
import sys

import torch

from .hook import compile as _compile
from .hook import disable as _disable
from .hook import reset as _reset

ENV_VAR = "FRAMEGRAPH_INSTALL"

# (owner, attribute) -> the original, while installed
_saved = {}
_depth = 0


def torch_compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None,
                  options=None, disable=False):
    """`torch.compile` with framegraph: the same signature, framegraph's `compile()`."""
    return _compile(model, backend=backend, fullgraph=fullgraph, dynamic=dynamic, mode=mode,
                    options=options, disable=disable)


def torch_reset():
    """`torch.compiler.reset` with framegraph: framegraph's caches, and torch._dynamo's
    when something else already imported it."""
    _reset()
    original = _saved.get((torch.compiler, "reset"))
    if original is not None and "torch._dynamo" in sys.modules:
        original()


def _replacements():
    from .. import backends
    from . import policy, stance  # they import the tracker builder: only when installing

    same = {
        "allow_in_graph": policy.allow_in_graph, "disallow_in_graph": policy.disallow_in_graph,
        "nonstrict_trace": policy.nonstrict_trace, "substitute_in_graph": policy.substitute_in_graph,
        "assume_constant_result": policy.assume_constant_result, "wrap_numpy": policy.wrap_numpy,
        "nested_compile_region": policy.nested_compile_region, "set_stance": stance.set_stance,
        "set_default_backend": backends.set_default_backend, "get_default_backend": backends.get_default_backend,
    }
    return ((torch, "compile", torch_compile), (torch.compiler, "compile", torch_compile),
            (torch.compiler, "disable", _disable), (torch.compiler, "reset", torch_reset)) + \
        tuple((torch.compiler, name, fn) for name, fn in same.items() if hasattr(torch.compiler, name))


class Installed:
    """What `install()` returns: already installed; as a context manager, the
    block's end uninstalls."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        uninstall()
        return False

    def __repr__(self):
        return f"<framegraph installed as torch.compile (depth {_depth})>"


def install() -> Installed:
    """Make `torch.compile` (and `torch.compiler.compile`, `disable`, `reset`)
    framegraph's until `uninstall()`; nested installs need as many uninstalls.

    Returns a context manager: `with framegraph.install(): ...` uninstalls at
    the block's end.
    """
    global _depth
    if _depth == 0:
        for owner, name, replacement in _replacements():
            _saved[owner, name] = getattr(owner, name)
            setattr(owner, name, replacement)
    _depth += 1
    return Installed()


def uninstall() -> None:
    """Give `torch.compile` and the other names back to torch (one level of `install()`)."""
    global _depth
    if _depth == 0:
        return
    _depth -= 1
    if _depth == 0:
        for (owner, name), original in _saved.items():
            setattr(owner, name, original)
        _saved.clear()


def is_installed() -> bool:
    """Whether `torch.compile` is framegraph's now."""
    return _depth > 0
