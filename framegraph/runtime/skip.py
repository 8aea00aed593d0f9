"""The quick filter: frames that are never worth tracing.

The brief's first step: before any tracing, decide cheaply whether a frame
could hold the user's tensor work. The standard library, torch's own
internals and framegraph itself cannot; the C hook reads the SKIP mark this
returns on every later call for about 2 ns. Third-party model code (such as
`transformers`) is *not* skipped: users compile it. A code object the user
passed to `compile()` is never skipped, wherever its file lives.
"""
import os
import sysconfig
import weakref

import torch

from ..config import on_reset

_STDLIB_DIRS = tuple(
    os.path.realpath(sysconfig.get_paths()[key]) + os.sep for key in ("stdlib", "platstdlib")
)
_PACKAGE_DIRS = ("site-packages", "dist-packages")


def _package_dir(module):
    return os.path.realpath(os.path.dirname(module.__file__)) + os.sep


_FRAMEGRAPH_DIR = os.path.realpath(os.path.dirname(os.path.dirname(__file__))) + os.sep

# (directory prefix, reason). Checked in order; each reason says why.
_SKIP_DIRS = (
    (_package_dir(torch), "torch internals"),
    (_FRAMEGRAPH_DIR, "framegraph itself"),
)
_SKIP_TOP_PACKAGES = {
    "numpy": "numpy (C-implemented, no tensor work to capture)",
    "_pytest": "the test runner",
    "pytest": "the test runner",
    "pluggy": "the test runner",
    "functorch": "torch internals",
    "triton": "GPU kernel compiler",
    "typing_extensions": "typing helpers",
}

# Codes the user compiled: never skipped (weak, so they can be freed).
_user_roots = weakref.WeakSet()


# (file, first line, name) of each root: a compiled root runs as its replacement code,
# which keeps these, so a walk up the stack still recognises it.
_root_marks = set()

_IMPORT_SYSTEM = "<frozen importlib._bootstrap"  # _bootstrap and _bootstrap_external


def add_user_root(code):
    """Record that the user compiled `code` explicitly, so the filter keeps it."""
    _user_roots.add(code)
    _root_marks.add((code.co_filename, code.co_firstlineno, code.co_name))


def inside_an_import(frame) -> bool:
    """Does an import run between `frame` and the compiled call it belongs to?

    The module bodies an import executes are never traced, but what they call may
    be: code made by ``exec`` (a namedtuple's ``__new__``, a dataclass's
    ``__init__``), a decorator's helper in a user package. A trace there would run
    the tracer's own imports (torch imports lazily) while a module is
    half-initialised, and fail the same way on every call of the import. Such
    frames run as they are, and stay traceable when called later.
    """
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(_IMPORT_SYSTEM):
            return True
        if (code.co_filename, code.co_firstlineno, code.co_name) in _root_marks:
            return False
        frame = frame.f_back
    return False


def _is_stdlib(path):
    return path.startswith(_STDLIB_DIRS) and not any(p in path for p in _PACKAGE_DIRS)


def _third_party_package(path):
    for marker in _PACKAGE_DIRS:
        head, sep, rest = path.partition(os.sep + marker + os.sep)
        if sep:
            return rest.split(os.sep, 1)[0].split(".", 1)[0]
    return None


_path_cache = {}
on_reset(_path_cache.clear)

_untraced = None


def _untraced_codes():
    """{code: reason} for the torch functions whose whole call tree must run
    untraced, built on first use (importing torch.utils.checkpoint is not free)."""
    global _untraced
    if _untraced is None:
        import inspect

        from torch.utils import checkpoint

        why = ("torch.utils.checkpoint: autograd reruns the checkpointed function in backward, "
               "outside any compiled call, and both runs must save the same tensors")
        _untraced = {inspect.unwrap(fn).__code__: why
                     for fn in (checkpoint.checkpoint, checkpoint.checkpoint_sequential)}
    return _untraced


def skip_recursive_reason(code):
    """Why `code` and everything it calls must run untraced, or None.

    Activation checkpointing runs the user's function twice, in forward and
    again in backward; compiling the first run only would save other tensors
    than the recomputation does (CheckpointError). Its call tree runs as it is,
    in both runs, and the frame that calls it breaks the graph around the call.
    """
    return _untraced_codes().get(code)


_TORCH_EVAL_FRAME = os.path.join(os.path.dirname(torch.__file__), "_dynamo", "eval_frame.py")
_TORCH_EXTERNAL_UTILS = os.path.join(os.path.dirname(torch.__file__), "_dynamo", "external_utils.py")


def torch_disabled(func):
    """How ``torch.compiler.disable`` marked ``func``, a wrapper it made: "recursive" (the
    function and all it calls run as they are), "own" (only the wrapped function's own
    frame; what it calls is traced), or None. Read from the wrapper's attributes and
    file: framegraph never imports torch._dynamo."""
    if not getattr(func, "_torchdynamo_disable", False):
        return None
    filename = getattr(getattr(func, "__code__", None), "co_filename", None)
    if filename == _TORCH_EVAL_FRAME:
        return "recursive"
    if filename == _TORCH_EXTERNAL_UTILS and getattr(func, "_torchdynamo_disable_recursive", True) is False:
        return "own"
    return None


def skip_reason(code, func=None):
    """Why `code` should never be traced, or None if it may hold user tensor work.

    Code made by ``exec`` (filename ``<string>``) belongs to the module whose
    globals it runs in: a dataclass's ``__init__`` in torch is torch internals.
    """
    if code in _user_roots:
        return None
    filename = code.co_filename
    if filename.startswith("<frozen "):
        return "the standard library"
    if filename.startswith("<"):
        filename = getattr(func, "__globals__", {}).get("__file__") or filename
        if not isinstance(filename, str):
            return None
    reason = _path_cache.get(filename, False)
    if reason is False:
        reason = _path_reason(filename)
        _path_cache[filename] = reason
    return reason


def _path_reason(filename):
    if filename.startswith("<"):  # exec'd code, lambdas typed at a prompt, doctests
        return None
    path = os.path.realpath(filename)
    for prefix, reason in _SKIP_DIRS:
        if path.startswith(prefix):
            return reason
    if _is_stdlib(path):
        return "the standard library"
    return _SKIP_TOP_PACKAGES.get(_third_party_package(path))
