"""Strict mode for the test suite: no test can hide a fallback to eager.

Every frame framegraph traces during a test is observed (convert_frame's
observers). The test FAILS, even when its results match eager, if it saw

* an internal error: a trace attempt that raised anything but a deliberate
  ``Unsupported`` (a tracer or compiler bug, or a failing backend), whether
  it then fell back or reached the caller; or
* an unexpected fallback: a frame the hook offered to framegraph that then
  ran unmodified, because its trace raised ``Unsupported`` (the frame is
  marked to run eagerly, runs eagerly this call, or is retried later), or
  because its code reached ``config.recompile_limit``.

Not fallbacks: a graph break that splits a frame into graphs and resume
functions (the frame was compiled: ``record.compiled.breaks``); an
``Unsupported`` that reaches the caller (``fullgraph=True``,
``config.strict``: the test sees the error itself); frames the skip rules
leave alone (stdlib, torch internals, framegraph, nn.Module ``__init__``,
generators; ``skip.py``), which are never traced; a frame whose trace
compiled to no graph (nothing to capture).

A test declares what it expects, and each declaration must then happen:

    @pytest.mark.expect_fallback("cannot_resume", "missing_dict_key")
        fallbacks whose catalogue entry (``errors.CATALOGUE`` id) is
        one of these are expected; for ``cannot_resume`` the id of the break
        that could not resume also matches ("data_dependent_branch");
        "recompile_limit" names a code reaching the recompile limit.
    @pytest.mark.expect_internal_error("BackendError", ...)
        trace attempts raising exceptions of these classes (by name, base
        classes included) are expected (fault injection); their fallbacks
        need no other declaration.
    @pytest.mark.allow_fallback("generator", ...)
        fallbacks of these kinds may happen, none has to; with no ids, any
        catalogued fallback (only for generated programs: the fuzzer).

Use ``pytest.param(..., marks=...)`` for one case of a parametrized test.
The ``strict_trace`` fixture (autouse) is the test's ``TraceWatch``; its
``graphs`` and ``frames`` count what the test compiled, whatever the backend:
``assert strict_trace.graphs == 2``.
"""
import dataclasses
from typing import List, Optional

import pytest

from framegraph.diagnostics.records import CompileRecord, observing
from framegraph.errors import CATALOGUE, Unsupported

RECOMPILE_LIMIT = "recompile_limit"
UNCATALOGUED = "unsupported"  # an Unsupported without a catalogue entry
ANY = object()  # allow_fallback() with no ids
KINDS = set(CATALOGUE) | {RECOMPILE_LIMIT, UNCATALOGUED}


@dataclasses.dataclass
class Event:
    """One trace outcome the strict mode reports: a fallback or an internal error.

    It keeps text, not the exception: a traceback would keep the test's frames alive."""

    where: str             # "name (file:line)" of the frame's code
    kinds: tuple           # the names a declaration can match it by
    how: str               # "retry" / "entries" / "skip" / "raised" / "recompile_limit"
    error_type: Optional[type] = None  # None for a recompile limit
    message: str = ""

    @property
    def internal(self) -> bool:
        return self.error_type is not None and not issubclass(self.error_type, Unsupported)

    @classmethod
    def of(cls, code, how, error=None):
        where = f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})"
        if error is None:
            return cls(where, (RECOMPILE_LIMIT,), how)
        lines = str(error).strip().splitlines()
        return cls(where, _kinds(error), how, type(error), lines[0] if lines else "")

    def __str__(self):
        if self.internal:
            text = f"internal error {self.error_type.__name__} in {self.where}"
        else:
            text = f"fallback [{' / '.join(self.kinds)}] of {self.where}"
        return f"{text} ({self.how}): {self.message}" if self.message else f"{text} ({self.how})"


def _kinds(error) -> tuple:
    if not isinstance(error, Unsupported):
        return (type(error).__name__,)
    names = [entry.id for entry in (error.entry, getattr(error, "break_entry", None)) if entry]
    return tuple(dict.fromkeys(names)) or (UNCATALOGUED,)


class TraceWatch:
    """Collects the trace outcomes of one test and checks them against its declarations."""

    def __init__(self, fallbacks=(), internal_errors=(), allowed=()):
        self.expected_fallbacks = set(fallbacks)
        self.allowed_fallbacks = allowed if allowed is ANY else set(allowed)  # ids, or ANY
        self.expected_errors = tuple(internal_errors)
        self.events: List[Event] = []
        self.frames = 0  # frames compiled (resume functions included), for count assertions
        self.graphs = 0  # graphs handed to a backend

    def observing(self):
        return observing(self.on_record, on_limit=self.on_limit)

    def on_record(self, record: CompileRecord):
        if record.compiled is not None:
            self.frames += 1
            self.graphs += getattr(record.compiled, "graph_count", 0)  # 0: a stand-in tracer
        error = record.error
        if error is not None and (record.fallback is not None or not isinstance(error, Unsupported)):
            self.events.append(Event.of(record.code, record.fallback or "raised", error))

    def on_limit(self, code):
        self.events.append(Event.of(code, RECOMPILE_LIMIT))

    def problems(self) -> List[str]:
        """Every event nothing declared, and every declaration nothing used."""
        out, used_fallbacks, used_errors = [], set(), set()
        for event in self.events:
            if event.internal:
                bases = {klass.__name__ for klass in event.error_type.__mro__}
                match = [name for name in self.expected_errors if name in bases]
                used_errors.update(match)
            else:
                match = self.expected_fallbacks.intersection(event.kinds)
                used_fallbacks.update(match)
                match = match or self.allowed_fallbacks is ANY or \
                    self.allowed_fallbacks.intersection(event.kinds)
            if not match:
                out.append(f"unexpected {event}")
        out += [f"expect_fallback({kind!r}) declared, but no such fallback happened"
                for kind in sorted(self.expected_fallbacks - used_fallbacks)]
        out += [f"expect_internal_error({name!r}) declared, but no such error happened"
                for name in self.expected_errors if name not in used_errors]
        return out

    def check(self):
        problems = self.problems()
        if problems:
            pytest.fail("framegraph strict mode (tests/strict_trace.py):\n"
                        + "\n".join(f"  - {p}" for p in problems), pytrace=False)


def watch_for(item) -> TraceWatch:
    """The TraceWatch a test's markers declare."""
    fallbacks, errors, allowed = [], [], set()
    for mark in item.iter_markers("expect_fallback"):
        assert mark.args, "expect_fallback() needs at least one catalogue id"
        fallbacks += mark.args
    for mark in item.iter_markers("allow_fallback"):
        allowed = ANY if allowed is ANY or not mark.args else allowed | set(mark.args)
    for mark in item.iter_markers("expect_internal_error"):
        assert mark.args and all(isinstance(name, str) for name in mark.args), \
            "expect_internal_error() takes exception class names"
        errors += mark.args
    unknown = set(fallbacks).union(allowed if allowed is not ANY else ()) - KINDS
    assert not unknown, f"not a fallback kind: {sorted(unknown)} (errors.CATALOGUE ids)"
    return TraceWatch(fallbacks, errors, allowed)


# ---- the pytest wiring (imported by tests/conftest.py)
_WATCH = pytest.StashKey[TraceWatch]()


def pytest_configure(config):
    config.addinivalue_line("markers", "expect_fallback(*ids): fallbacks to eager this test "
                                       "expects (tests/strict_trace.py)")
    config.addinivalue_line("markers", "expect_internal_error(*names): internal errors this "
                                       "test expects (tests/strict_trace.py)")
    config.addinivalue_line("markers", "allow_fallback(*ids): fallbacks to eager this test "
                                       "may have (tests/strict_trace.py)")


@pytest.fixture(autouse=True)
def strict_trace(request):
    """Observe every trace attempt of the test (checked after its call)."""
    watch = request.node.stash[_WATCH] = watch_for(request.node)
    with watch.observing():
        yield watch


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield  # a test that failed already reports its own failure
    watch = item.stash.get(_WATCH, None)
    if watch is not None:
        watch.check()
    return result
