"""Helpers that drive the C hook directly with hand-written replacement code.

Until a tracer produces replacement code, tests hand the hook their own: a
replacement function with the same signature (and free variables) that
returns something different, so a test can see which code ran.
"""
import contextlib

from framegraph import _C
from framegraph.runtime.convert_frame import as_positional


def always(fn, *slots):
    """A guard that always passes."""
    return True


class Replace:
    """A callback that replaces `target`'s code with `replacement`'s.

    Other frames run unmodified. Records every call it gets.
    """

    def __init__(self, target, replacement, guard=always):
        self.target = getattr(target, "__code__", target)
        self.replacement = replacement.__code__
        self.guard = guard
        self.calls = []

    def __call__(self, func, code, f_locals):
        if code is not self.target:
            return None
        self.calls.append(dict(f_locals))
        return self.guard, as_positional(self.replacement)


@contextlib.contextmanager
def hooked(callback):
    """Run the block with `callback` as this thread's frame callback."""
    prior = _C.set_callback(callback)
    try:
        yield callback
    finally:
        _C.set_callback(prior)
