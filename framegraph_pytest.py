"""pytest plugin: framegraph's strict mode, graph-count assertions and a run summary.

Installed with framegraph (entry point ``pytest11`` named ``framegraph``), so
pytest loads it in every project of the environment; ``-p no:framegraph``
turns it off, and ``-p framegraph_pytest`` loads it where
plugin autoloading is disabled. A test says what it expects framegraph to
compile:

    def test_model_is_one_graph(framegraph_trace):
        framegraph_trace.assert_compiles(model, x, graphs=1)   # equals eager, no break

    @pytest.mark.framegraph_graphs(2, breaks=1)
    def test_the_whole_test_compiles_two_graphs():
        ...

Cost for projects that never use framegraph: this module imports only
pytest and the standard library at its top; everything of framegraph (and
with it torch) is imported inside the functions that need it. Those run, and
a test's trace attempts are watched, only when strict mode is on, or when
``"framegraph" in sys.modules`` at the test's setup (its module or a conftest
imported framegraph), or when the test carries one of the markers below.
Otherwise the ``framegraph_trace`` fixture is an idle watch that counts
nothing (``assert_compiles`` still works: it imports framegraph itself).
That is why this module sits outside the package: importing
``framegraph.<anything>`` would run ``framegraph/__init__.py``, and torch.

What the watch sees: every frame framegraph tries to trace during the test
(``framegraph.diagnostics.records.observing``). It counts the frames
compiled, the graphs handed to a backend and the graph breaks, and it notes

* an internal error: a trace attempt that raised anything but a deliberate
  ``Unsupported`` (a tracer or compiler bug, or a failing backend), whether
  it then fell back or reached the caller; and
* a fallback: a frame the hook offered to framegraph that then ran
  unmodified, because its trace raised ``Unsupported`` (the frame is marked
  to run eagerly, runs eagerly this call, or is retried later), or because
  its code reached ``config.recompile_limit``.

Not fallbacks: a graph break that splits a frame into graphs and resume
functions (the frame was compiled: ``record.compiled.breaks``); an
``Unsupported`` that reaches the caller (``fullgraph=True``,
``config.strict``: the test sees the error itself); frames the skip rules
leave alone (stdlib, torch internals, framegraph, nn.Module ``__init__``,
generators; ``runtime/skip.py``), which are never traced; a frame whose
trace compiled to no graph (nothing to capture).

Strict mode (``--framegraph-strict``, or ``framegraph_strict = true`` in the
ini file; ``-o framegraph_strict=false`` turns the ini setting off): a test
FAILS, even when its results match eager, on an internal error or on a
fallback it does not declare, and on a declaration that did not happen. With
strict mode off the watch still counts, for the markers, the assertions and
the summary, but fallbacks and internal errors fail no test.

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
        catalogued fallback (for generated programs: a fuzzer).
    @pytest.mark.framegraph_graphs(n, breaks=0)
        the whole test compiles exactly ``n`` graphs with ``breaks`` graph
        breaks (checked in any mode, after the test passed).

Use ``pytest.param(..., marks=...)`` for one case of a parametrized test.
The ``framegraph_trace`` fixture (autouse) is the test's ``TraceWatch``: its
``frames``, ``graphs`` and ``breaks`` count what the test compiled, whatever
the backend (``assert framegraph_trace.graphs == 2``).

At the end of the run a summary lists the totals and each test that had a
graph break or a fallback (``--framegraph-summary=all`` lists every test that
compiled, ``no`` prints nothing).
"""
import dataclasses
import os
import sys
from typing import List, Optional

import pytest

RECOMPILE_LIMIT = "recompile_limit"
UNCATALOGUED = "unsupported"  # an Unsupported without a catalogue entry
ANY = object()  # allow_fallback() with no ids
MARKERS = ("expect_fallback", "expect_internal_error", "allow_fallback", "framegraph_graphs")
SUMMARY_LINES = 20  # tests listed by the default summary before "N more"
STRICT = "framegraph strict mode (framegraph_pytest)"


def _unsupported():
    from framegraph.errors import Unsupported

    return Unsupported


def known_kinds() -> set:
    """The names a fallback declaration may use: catalogue ids and the two extra kinds."""
    from framegraph.errors import CATALOGUE

    return set(CATALOGUE) | {RECOMPILE_LIMIT, UNCATALOGUED}


@dataclasses.dataclass
class Event:
    """One trace outcome the watch reports: a fallback or an internal error.

    It keeps text, not the exception: a traceback would keep the test's frames alive."""

    where: str             # "name (file:line)" of the frame's code
    kinds: tuple           # the names a declaration can match it by
    how: str               # "retry" / "entries" / "skip" / "raised" / "recompile_limit"
    error_type: Optional[type] = None  # None for a recompile limit
    message: str = ""

    @property
    def internal(self) -> bool:
        """Whether the trace raised something other than a deliberate ``Unsupported``."""
        return self.error_type is not None and not issubclass(self.error_type, _unsupported())

    @classmethod
    def of(cls, code, how, error=None):
        """The event of ``code`` falling back (``how``) because of ``error``."""
        where = f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})"
        if error is None:
            return cls(where, (RECOMPILE_LIMIT,), how)
        lines = str(error).strip().splitlines()
        return cls(where, _kinds(error), how, type(error), lines[0] if lines else "")

    def short(self) -> str:
        """The event in a few words, for the run's summary."""
        name = self.where.split(" (")[0]
        if self.internal:
            return f"internal error {self.error_type.__name__} in {name}"
        return f"fallback [{' / '.join(self.kinds)}] of {name} ({self.how})"

    def __str__(self):
        if self.internal:
            text = f"internal error {self.error_type.__name__} in {self.where}"
        else:
            text = f"fallback [{' / '.join(self.kinds)}] of {self.where}"
        return f"{text} ({self.how}): {self.message}" if self.message else f"{text} ({self.how})"


def _kinds(error) -> tuple:
    if not isinstance(error, _unsupported()):
        return (type(error).__name__,)
    names = [entry.id for entry in (error.entry, getattr(error, "break_entry", None)) if entry]
    return tuple(dict.fromkeys(names)) or (UNCATALOGUED,)


def _break_text(brk) -> str:
    """``title (file.py:line in name)`` of a graph break, at its innermost frame."""
    entry = getattr(brk, "entry", None)
    stack = getattr(brk, "user_stack", None) or []
    title = entry.title if entry is not None else str(brk)
    return f"{title} ({os.path.basename(stack[-1])})" if stack else title


class TraceWatch:
    """Collects the trace outcomes of one test and checks them against its declarations.

    ``active`` is False for the idle watch of a test that never touched
    framegraph: it observes nothing and its counts stay 0."""

    def __init__(self, fallbacks=(), internal_errors=(), allowed=(), graphs_mark=None, active=True):
        self.expected_fallbacks = set(fallbacks)
        self.allowed_fallbacks = allowed if allowed is ANY else set(allowed)  # ids, or ANY
        self.expected_errors = tuple(internal_errors)
        self.graphs_mark = graphs_mark  # (graphs, breaks) of framegraph_graphs, or None
        self.active = active
        self.events: List[Event] = []
        self.frames = 0  # frames compiled (resume functions included), for count assertions
        self.graphs = 0  # graphs handed to a backend
        self.breaks = 0  # graph breaks inside compiled frames
        self.break_reasons: List[str] = []

    def observing(self):
        """A context manager that feeds every trace attempt inside it to this watch."""
        from framegraph.diagnostics.records import observing

        return observing(self.on_record, on_limit=self.on_limit)

    def on_record(self, record):
        """Count one ``CompileRecord``; note it if it fell back or raised an internal error."""
        if record.compiled is not None:
            self.frames += 1
            self.graphs += getattr(record.compiled, "graph_count", 0)  # 0: a stand-in tracer
            breaks = getattr(record.compiled, "breaks", ())
            self.breaks += len(breaks)
            self.break_reasons += [_break_text(brk) for brk in breaks]
        error = record.error
        if error is not None and (record.fallback is not None or not isinstance(error, _unsupported())):
            self.events.append(Event.of(record.code, record.fallback or "raised", error))

    def on_limit(self, code):
        """Note that ``code`` reached the recompile limit (it runs unmodified from now on)."""
        self.events.append(Event.of(code, RECOMPILE_LIMIT))

    @property
    def fallbacks(self) -> List[Event]:
        """The fallbacks seen (internal errors excluded)."""
        return [event for event in self.events if not event.internal]

    @property
    def internal_errors(self) -> List[Event]:
        """The internal errors seen."""
        return [event for event in self.events if event.internal]

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

    def count_problem(self) -> Optional[str]:
        """How the test's counts differ from its ``framegraph_graphs`` marker, or None."""
        if self.graphs_mark is None or self.graphs_mark == (self.graphs, self.breaks):
            return None
        graphs, breaks = self.graphs_mark
        lines = [f"framegraph_graphs({graphs}, breaks={breaks}) declared, but the test compiled "
                 f"{self.graphs} graph(s) with {self.breaks} graph break(s)"]
        lines += [f"  break: {reason}" for reason in self.break_reasons]
        return "\n".join(lines + [f"  {event}" for event in self.events])

    def check(self):
        """Fail the test if ``problems()`` finds anything."""
        _fail(self.problems())

    def assert_compiles(self, fn, *args, graphs=1, backend="eager", **kwargs):
        """Compile ``fn`` (``fullgraph=False``), call it once on ``args``/``kwargs``,
        and assert that the result equals eager ``fn``'s and that it took exactly
        ``graphs`` graphs and no graph break or fallback. Returns the compiled result.

        ``fn`` is called twice, eagerly first. Like ``framegraph.explain``, it
        starts from empty caches (``framegraph.reset()``), so what an earlier
        call compiled cannot hide a break."""
        __tracebackhide__ = True
        import framegraph
        from framegraph.diagnostics.explain import summarise
        from framegraph.diagnostics.records import observing

        expected = fn(*args, **kwargs)
        framegraph.reset()
        records = []
        with observing(records.append):
            actual = framegraph.compile(fn, backend=backend, fullgraph=False)(*args, **kwargs)
        report = summarise([], records, actual)
        found = sum(getattr(r.compiled, "graph_count", 0) for r in records if r.compiled is not None)
        if (found, report.graph_break_count) != (graphs, 0):
            name = getattr(fn, "__qualname__", type(fn).__name__)
            lines = [f"{name} compiled to {found} graph(s) with {report.graph_break_count} graph "
                     f"break(s); expected {graphs} graph(s) and no break"]
            for i, reason in enumerate(report.break_reasons, 1):
                lines.append(f"Break Reason {i}:")
                lines += ["  " + line for line in str(reason).splitlines()]
            pytest.fail("\n".join(lines))
        assert_same(actual, expected)
        return actual


def assert_same(actual, expected, where="result"):
    """Equal values, recursively through tuples, lists and dicts; tensors by
    ``torch.testing.assert_close``."""
    __tracebackhide__ = True
    import torch

    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{where}: expected a tensor, got {type(actual).__name__}"
        torch.testing.assert_close(actual, expected, msg=lambda text: f"{where}: {text}")
    elif isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected), \
            f"{where}: {_shape(actual)}, expected {_shape(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and list(actual) == list(expected), \
            f"{where}: keys {list(actual) if isinstance(actual, dict) else actual!r}, expected {list(expected)}"
        for key in expected:
            assert_same(actual[key], expected[key], f"{where}[{key!r}]")
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def _shape(value) -> str:
    return f"{type(value).__name__} of {len(value)}" if isinstance(value, (tuple, list)) else repr(value)


def _fail(problems, count_problem=None):
    text = [f"{STRICT}:"] + [f"  - {p}" for p in problems] if problems else []
    text += [count_problem] if count_problem else []
    if text:
        pytest.fail("\n".join(text), pytrace=False)


def _graphs_mark(graphs, breaks=0):
    assert isinstance(graphs, int) and isinstance(breaks, int), \
        "framegraph_graphs(n, breaks=k) takes two ints"
    return graphs, breaks


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
    unknown = set(fallbacks).union(allowed if allowed is not ANY else ()) - known_kinds()
    assert not unknown, f"not a fallback kind: {sorted(unknown)} (errors.CATALOGUE ids)"
    mark = item.get_closest_marker("framegraph_graphs")
    graphs = _graphs_mark(*mark.args, **mark.kwargs) if mark is not None else None
    return TraceWatch(fallbacks, errors, allowed, graphs)


# ---- the pytest wiring
_WATCH = pytest.StashKey[TraceWatch]()


def pytest_addoption(parser):
    """The plugin's command-line and ini options."""
    group = parser.getgroup("framegraph", "framegraph graph capture")
    group.addoption("--framegraph-strict", action="store_true", default=False,
                    help="fail a test on any fallback to eager or internal error of framegraph "
                         "it does not declare (also: ini framegraph_strict)")
    group.addoption("--framegraph-summary", choices=("all", "some", "no"), default="some",
                    help="after the run, list every test that compiled (all), the tests with a "
                         "graph break or a fallback (some, the default), or nothing (no)")
    parser.addini("framegraph_strict", type="bool", default=False,
                  help="framegraph strict mode, as --framegraph-strict")


def pytest_configure(config):
    """Declare the markers and start collecting the run's summary."""
    for line in ("expect_fallback(*ids): fallbacks to eager this test expects",
                 "expect_internal_error(*names): internal errors of framegraph this test expects",
                 "allow_fallback(*ids): fallbacks to eager this test may have",
                 "framegraph_graphs(n, breaks=0): the test compiles exactly n graphs with that many breaks"):
        config.addinivalue_line("markers", f"{line} (framegraph_pytest)")
    config.pluginmanager.register(Run(config), "framegraph-run")


def _run(config) -> "Run":
    return config.pluginmanager.get_plugin("framegraph-run")


@pytest.fixture(autouse=True)
def framegraph_trace(request):
    """The test's TraceWatch: observes every trace attempt of the test (checked
    after its call), counts its frames, graphs and breaks, and offers
    ``assert_compiles``."""
    run, item = _run(request.config), request.node
    if not (run.strict or "framegraph" in sys.modules or any(item.get_closest_marker(n) for n in MARKERS)):
        yield TraceWatch(active=False)
        return
    watch = item.stash[_WATCH] = watch_for(item)
    with watch.observing():
        yield watch


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """After a test passed: strict mode's check, then the ``framegraph_graphs`` marker."""
    result = yield  # a test that failed already reports its own failure
    watch = item.stash.get(_WATCH, None)
    if watch is not None:
        _fail(watch.problems() if _run(item.config).strict else [], watch.count_problem())
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """The teardown report carries the test's counts (plain data, so that
    reports sent between processes keep them)."""
    report = yield
    watch = item.stash.get(_WATCH, None)
    if call.when == "teardown" and watch is not None:
        report.framegraph = {"frames": watch.frames, "graphs": watch.graphs, "breaks": watch.breaks,
                             "fallbacks": [e.short() for e in watch.fallbacks],
                             "internal": [e.short() for e in watch.internal_errors],
                             "reasons": watch.break_reasons}
    return report


class Run:
    """The run's settings and the counts of every watched test, for the summary."""

    def __init__(self, config):
        self.strict = config.getoption("framegraph_strict") or config.getini("framegraph_strict")
        self.mode = config.getoption("framegraph_summary")
        self.tests = []  # (nodeid, counts)
        self.worker = hasattr(config, "workerinput")  # pytest-xdist: the controller prints

    def pytest_runtest_logreport(self, report):
        """Keep the counts a teardown report carries."""
        counts = getattr(report, "framegraph", None)
        if counts is not None:
            self.tests.append((report.nodeid, counts))

    def pytest_terminal_summary(self, terminalreporter):
        """Totals, then the tests with a break or a fallback (or every test that compiled)."""
        if self.mode == "no" or self.worker or not self.tests:
            return
        write = terminalreporter.write_line
        terminalreporter.write_sep("-", "framegraph")
        write(self.totals())
        listed = [(nodeid, c) for nodeid, c in self.tests
                  if (c["frames"] if self.mode == "all" else c["breaks"])
                  or c["fallbacks"] or c["internal"]]
        shown = listed if self.mode == "all" else listed[:SUMMARY_LINES]
        for nodeid, counts in shown:
            write(f"{nodeid}: {_describe(counts)}")
        if len(listed) > len(shown):
            write(f"... {len(listed) - len(shown)} more (--framegraph-summary=all lists every test "
                  "that compiled)")

    def totals(self) -> str:
        """The summary's first line."""
        def total(key):
            return sum(c[key] if isinstance(c[key], int) else len(c[key]) for _, c in self.tests)

        compiled = sum(1 for _, c in self.tests if c["frames"])
        line = (f"{_plural(compiled, 'test')} compiled {_plural(total('graphs'), 'graph')}, "
                f"{_plural(total('breaks'), 'graph break')}, {_plural(total('fallbacks'), 'fallback')}")
        internal = total("internal")
        return line + (f", {_plural(internal, 'internal error')}" if internal else "")


def _plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _describe(counts) -> str:
    parts = [_plural(counts["graphs"], "graph"), _plural(counts["breaks"], "break")]
    parts += [_plural(len(counts["fallbacks"]), "fallback")] if counts["fallbacks"] else []
    parts += [_plural(len(counts["internal"]), "internal error")] if counts["internal"] else []
    details = list(dict.fromkeys(counts["reasons"] + counts["fallbacks"] + counts["internal"]))
    text = ", ".join(parts)
    if details:
        text += ": " + "; ".join(details[:3])
    if len(details) > 3:  # one line per test: the rest is in the test's own report
        text += f"; ... {len(details) - 3} more"
    return text
