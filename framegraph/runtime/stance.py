"""`set_stance()`: what compiled code does on a call, process-wide, as `torch.compiler.set_stance`.

    "default"             compile on a cache miss, run the cached code on a hit
    "force_eager"         ignore every compile(): run the program as written
                          (compiled calls set no callback: `_C.set_force_eager`)
    "eager_on_recompile"  run a cached entry when one matches; a frame that would
                          recompile runs unmodified instead
    "fail_on_recompile"   a frame that would recompile raises `RecompileError`
    "eager_then_compile"  a frame's first call runs unmodified (its sizes are seen,
                          so the second call compiles dynamic where they changed);
                          later calls compile

A call sets the stance at once; as a context manager the block's end gives
the previous one back; as a decorator the stance holds for each call of the
decorated function only. `force_backend` (with "default") compiles with that
backend instead of each compile()'s own.
"""
import functools

from .. import _C
from ..backends import lookup_backend
from ..errors import FramegraphError

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile")
# torch's stance that framegraph has no equivalent of, and what to use instead
_NOT_HERE = {
    "aot_eager_then_compile": "framegraph compiles the first call with the compile()'s own "
                              "backend; use 'eager_then_compile', or backend='aot_eager'",
}


class RecompileError(FramegraphError):
    """A frame needed a recompile while the stance was "fail_on_recompile"."""


class Stance:
    """One stance: its name, and the backend it forces (None: each compile()'s own)."""

    __slots__ = ("name", "force_backend", "backend_name")

    def __init__(self, name="default", force_backend=None):
        if not isinstance(name, str):
            raise TypeError(f"set_stance(): the stance must be a str, got {type(name).__name__}")
        if name in _NOT_HERE:
            raise ValueError(f"set_stance({name!r}) is torch._dynamo's only: {_NOT_HERE[name]}")
        if name not in STANCES:
            raise ValueError(f"set_stance(): unknown stance {name!r}; stances: {', '.join(STANCES)}")
        if force_backend is not None and name != "default":
            raise ValueError("set_stance(): force_backend needs the 'default' stance")
        self.name = name
        self.force_backend = None
        self.backend_name = None
        if force_backend is not None:
            self.force_backend, self.backend_name = lookup_backend(force_backend)

    def __repr__(self):
        extra = f", force_backend={self.backend_name!r}" if self.force_backend else ""
        return f"Stance({self.name!r}{extra})"


_current = Stance()


def current() -> Stance:
    """The stance now in force."""
    return _current


def _apply(stance: Stance) -> Stance:
    global _current
    previous, _current = _current, stance
    _C.set_force_eager(stance.name == "force_eager")
    return previous


class set_stance:
    """Set the compiler's stance (see the module docstring for the stances).

    Usable as `set_stance("force_eager")` (from now on), `with set_stance(...):`
    (for the block) and `@set_stance(...)` (for each call of the function).
    `skip_guard_eval_unsafe` is accepted for torch's signature; framegraph
    still checks every guard, which gives the same answers.
    """

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if not isinstance(skip_guard_eval_unsafe, bool):
            raise TypeError("set_stance(): skip_guard_eval_unsafe must be a bool")
        self.stance = Stance(stance, force_backend)
        self.prev = _apply(self.stance)

    def __enter__(self):
        self.entered = _apply(self.stance)
        return self

    def __exit__(self, *exc):
        _apply(self.prev)
        return False

    def __call__(self, fn):
        """Decorate `fn`: the stance holds during each of its calls, not from now on."""
        _apply(self.prev)  # the decorator form does not set the stance at decoration time
        stance = self.stance

        @functools.wraps(fn)
        def with_stance(*args, **kwargs):
            previous = _apply(stance)
            try:
                return fn(*args, **kwargs)
            finally:
                _apply(previous)

        return with_stance
