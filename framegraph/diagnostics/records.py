"""What the compiler did, as a stream of records: one per trace attempt.

runtime's ``ConvertFrame`` makes a ``CompileRecord`` for every frame it tries
to trace and hands it to the observers here; diagnostics (``explain``, the
trace log, reports, the strict test mode) read those records and never look
inside the compiler. ``observing`` adds an observer for the length of a block.
"""
import dataclasses
import types
from typing import Any, Callable, List, Optional

# Functions called with a CompileRecord after every trace attempt (explain(),
# reports, the trace log). Runtime state, documented here; added and removed by `observing`.
observers: List[Callable[["CompileRecord"], None]] = []
# Functions called with a code object when it reaches config.recompile_limit
# (from then on it runs unmodified for inputs no entry matches); `observing(on_limit=)`.
limit_observers: List[Callable[[types.CodeType], None]] = []


@dataclasses.dataclass
class CompileRecord:
    """One trace attempt of one frame: what came out, or why nothing did."""

    code: types.CodeType
    compiled: Any = None          # the tracer's CompiledFrame, or None
    error: Optional[BaseException] = None  # Unsupported or an internal error
    seconds: float = 0.0
    entries_before: int = 0       # cache entries the code had: >0 means a recompile
    reasons: List[str] = dataclasses.field(default_factory=list)  # why each entry was rejected
    # Set when the frame then runs unmodified: "retry" (this call; traced again
    # on the next), "entries" (this call; the code's other entries stay),
    # "skip" (every call from now on). None: compiled, or the error was raised.
    fallback: Optional[str] = None
    from_cache: bool = False      # the entry came from the persistent trace cache, not a trace


class observing:
    """Context manager: call `fn(record)` for every trace attempt inside the block,
    and `on_limit(code)` for every code that reaches the recompile limit."""

    def __init__(self, fn, on_limit=None):
        self.fn, self.on_limit = fn, on_limit

    def __enter__(self):
        observers.append(self.fn)
        if self.on_limit is not None:
            limit_observers.append(self.on_limit)
        return self

    def __exit__(self, *exc):
        observers.remove(self.fn)
        if self.on_limit is not None:
            limit_observers.remove(self.on_limit)


def notify(record: CompileRecord) -> None:
    """Hand ``record`` to every observer."""
    for fn in list(observers):
        fn(record)


def notify_limit(code: types.CodeType) -> None:
    """Tell the limit observers that ``code`` reached the recompile limit."""
    for fn in list(limit_observers):
        fn(code)
