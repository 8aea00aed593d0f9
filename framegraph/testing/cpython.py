"""CPython's own test suite as the measure of what the tracer understands.

    python -m framegraph.testing.cpython [test_list test_dict ...] [--modes eager,framegraph,dynamo]
        [--jobs 2] [--timeout 1200] [--test-timeout 60] [--hash-seed 0] [--save out.json] [--markdown]
        [--divergences]

Each chosen file of ``Lib/test`` runs three ways on the same tests, each way
(mode) in a subprocess of its own per file:

* ``eager``: as it is, the reference;
* ``framegraph``: every test method ``framegraph.compile(method, backend="eager",
  fullgraph=False)``d (setUp/tearDown run as they are; the unittest
  assertions the method calls are inlined and traced with it);
* ``dynamo``: ``torch.compile(method, backend="eager", fullgraph=False)``, with
  the two settings torch's own CPython-test runner sets
  (``torch/_dynamo/test_case.py``, ``CPythonTestCase``): ``enable_trace_unittest``
  (else the assertions are skipped files) and ``enable_trace_load_build_class``.

Per file and compiler, over the tests that pass uncompiled and no rule
excludes (tests failing or skipped uncompiled count for neither):

* **correct**: the test passes compiled too;
* **captured**: correct, and no frame broke its graph or ran unmodified. For
  framegraph, from the convert_frame observers: no ``record.compiled.breaks``,
  no ``record.error``, no fallback, no recompile limit. For torch._dynamo, from
  its counters: no ``counters["graph_break"]`` added, ``counters["frames"]``
  ``"ok"`` grew as much as ``"total"``.

``--divergences`` also lists framegraph's *hidden* divergences: tests that
passed although one of their assertions failed inside a trace (the graph
break after it let CPython run the code again). The trace computed another
value than CPython there; a program without the assertion gets it wrong.

A crash or hang kills only its worker: the parent marks the test that was
running (``crash`` / ``timeout``), and starts the worker again without the
tests it has. A test also has its own alarm (``--test-timeout``) that fails it.

Every worker runs with ``PYTHONHASHSEED=0`` unless ``--hash-seed`` says
otherwise: how far a trace gets can depend on the order a set of strings
iterates in (test_set's in-place operators), and a table must come out the
same from run to run.

``EXCLUDE`` is the one rule, the same for the three modes: tests whose source
needs what no tracer should do. ``EXCLUDE_TESTS`` names single tests.
"""
import argparse
import concurrent.futures
import importlib
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from collections import Counter

FILES = ("test_list test_tuple test_dict test_set test_userdict test_userlist test_ordered_dict "
         "test_defaultdict test_collections test_functools test_itertools test_operator "
         "test_generators test_contextlib test_with test_exceptions test_raise test_scope "
         "test_unpack test_sort test_enumerate test_iter test_bool test_int test_float test_math "
         "test_slice test_range test_property test_super test_class test_dataclasses").split()
MODES = ("eager", "framegraph", "dynamo")
COMPILERS = ("framegraph", "dynamo")

# (pattern searched in the test method's source, reason). Few and explicit.
EXCLUDE = (
    (r"\bthreading\b|\bThread\b|\bconcurrent\b", "threads: the frame hook is per thread, and the "
                                                 "tests depend on timing"),
    (r"\bsubprocess\b|script_helper|assert_python_|spawn_python|\bos\.fork\b",
     "subprocesses: the child runs uncompiled"),
    (r"_testcapi|_testinternalcapi", "C-API checks"),
    (r"settrace|setprofile|gettrace|getprofile", "tracing and profiling hooks: the frame hook "
                                                 "replaces frame evaluation"),
    (r"\bresource\b|setrlimit", "resource limits"),
    (r"\bsignal\b|\bfaulthandler\b", "signals: the harness's own per-test alarm is SIGALRM"),
)
# Single tests, by id suffix: reason.
EXCLUDE_TESTS = {}


def excluded(test):
    """The reason the rules exclude `test` from every mode, or None."""
    if isinstance(test, unittest.FunctionTestCase) or "doctest" in type(test).__module__:
        return "doctests: examples run by exec, not a test method"
    for suffix, reason in EXCLUDE_TESTS.items():
        if test.id().endswith(suffix):
            return reason
    try:
        source = inspect.getsource(getattr(type(test), test._testMethodName))
    except (OSError, TypeError, AttributeError):
        return None
    for pattern, reason in EXCLUDE:
        if re.search(pattern, source):
            return reason
    return None


# ---- one mode, in this process -----------------------------------------------------------

class TestTimeout(BaseException):
    """The per-test alarm: a BaseException, so no tracer's `except Exception` eats it."""


def _alarm(signum, frame):
    raise TestTimeout("test timeout")


def _short(err):
    if err is None:
        return ""
    kind, value = err[0], err[1]
    text = f"{kind.__name__}: {value}".splitlines()
    return (text[0] if text else kind.__name__)[:200]


class _FramegraphWatch:
    """Trace outcomes of one test: its causes (catalogue ids, ``internal:Type``)."""

    def __init__(self):
        import framegraph
        from framegraph.diagnostics.records import observing

        self.framegraph, self.causes, self.why = framegraph, [], []
        self.ctx = observing(self.on_record, on_limit=lambda code: self.causes.append("recompile_limit"))
        self.ctx.__enter__()

    def start(self):
        self.framegraph.reset()
        self.causes, self.why = [], []

    def on_record(self, record):
        from framegraph.errors import Unsupported

        for brk in getattr(record.compiled, "breaks", None) or ():
            self.causes.append(brk.entry.id)
            code, line = brk.frames[-1]
            self.why.append(f"{brk.entry.id} at {code.co_name}:{line}: {brk.context}"[:300])
        error = record.error
        if error is None:
            return
        if isinstance(error, Unsupported):
            ids = [e.id for e in (error.entry, getattr(error, "break_entry", None)) if e]
            self.causes.append(ids[-1] if ids else "unsupported")
        else:
            self.causes.append(f"internal:{type(error).__name__}")
        lines = str(error).strip().splitlines() or [""]
        self.why.append(f"{self.causes[-1]} in {record.code.co_name}: {lines[0]} "
                        f"{lines[-1] if len(lines) > 1 else ''}"[:300])

    def stop(self):
        return sorted(set(self.causes)), self.why


class _NoWatch:
    def start(self):
        pass

    def stop(self):
        return [], []


def _compiler(mode):
    """mode -> (function compiling a bound test method, its watch)."""
    if mode == "eager":
        return None, _NoWatch()
    if mode == "framegraph":
        import framegraph

        return (lambda m: framegraph.compile(m, backend="eager", fullgraph=False)), _FramegraphWatch()
    # torch._dynamo is never imported from framegraph/: its mode lives with the
    # benchmarks of the checkout, which compare against it
    import importlib.util

    path = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "cpython_dynamo.py")
    if not os.path.exists(path):
        raise SystemExit("the dynamo mode needs benchmarks/cpython_dynamo.py from a framegraph checkout")
    spec = importlib.util.spec_from_file_location("cpython_dynamo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compiler()


class _Result(unittest.TestResult):
    """Records one line per test: outcome, first error, trace causes."""

    def __init__(self, watch, emit, test_timeout):
        super().__init__()
        self.watch, self.emit, self.test_timeout = watch, emit, test_timeout

    def startTest(self, test):
        super().startTest(test)
        self.outcome, self.detail, self.started = "pass", "", time.perf_counter()
        self.emit({"start": test.id()})
        self.watch.start()
        signal.setitimer(signal.ITIMER_REAL, self.test_timeout)

    def _set(self, outcome, err=None):
        if self.outcome == "pass" or (outcome in ("fail", "error") and self.outcome not in ("fail", "error")):
            self.outcome, self.detail = outcome, _short(err)
            if err is not None and err[0] is TestTimeout:
                self.outcome = "timeout"

    def addFailure(self, test, err):
        self._set("fail", err)

    def addError(self, test, err):
        if isinstance(test, unittest.TestCase):
            self._set("error", err)

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self._set("fail" if issubclass(err[0], test.failureException) else "error", err)

    def addSkip(self, test, reason):
        self._set("skip")

    def addExpectedFailure(self, test, err):
        self._set("xfail")

    def addUnexpectedSuccess(self, test):
        self._set("fail")
        self.detail = "unexpected success"

    def stopTest(self, test):
        signal.setitimer(signal.ITIMER_REAL, 0)
        causes, why = self.watch.stop()
        self.emit({"id": test.id(), "outcome": self.outcome, "detail": self.detail, "causes": causes,
                   "why": why, "seconds": round(time.perf_counter() - self.started, 3)})
        super().stopTest(test)


def _flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _flatten(item)
        else:
            yield item


def load_tests(name):
    """The test cases of ``test.<name>`` in run order (its load_tests protocol included)."""
    module = importlib.import_module(f"test.{name}")
    return list(_flatten(unittest.TestLoader().loadTestsFromModule(module)))


def run_tests(name, mode, emit, test_timeout=60.0, select=None):
    """Run the tests of ``test.<name>`` in `mode` (those whose id ``select(id)`` is
    true), calling ``emit(dict)`` before ({"start": id}) and after each test;
    excluded tests are emitted, not run."""
    compile_method, watch = _compiler(mode)
    suite = unittest.TestSuite()
    for test in load_tests(name):
        tid = test.id()
        if select is not None and not select(tid):
            continue
        reason = excluded(test) if isinstance(test, unittest.TestCase) else None
        if reason is not None:
            emit({"id": tid, "outcome": "excluded", "detail": reason, "causes": []})
            continue
        method_name = getattr(test, "_testMethodName", None)
        method = getattr(test, method_name, None) if method_name else None
        if compile_method is not None and method is not None \
                and not getattr(method, "__unittest_skip__", False):
            setattr(test, method_name, compile_method(method))
        suite.addTest(test)
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        suite.run(_Result(watch, emit, test_timeout))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if hasattr(watch, "ctx"):
            watch.ctx.__exit__(None, None, None)


def _worker(args):
    skip = set(json.load(open(args.skip_file))) if args.skip_file else set()
    with open(args.out, "a") as out:
        def emit(record):
            out.write(json.dumps(record) + "\n")
            out.flush()

        run_tests(args.worker[1], args.worker[0], emit, args.test_timeout, lambda tid: tid not in skip)
        emit({"done": True})


# ---- the parent: subprocesses, restarts, the table ---------------------------------------

MAX_RESTARTS = 20


def run_mode(name, mode, timeout, test_timeout, hash_seed="0"):
    """{test id: record} of one file in one mode, in subprocesses; and notes (crashes, timeouts).
    Every worker runs with ``PYTHONHASHSEED=hash_seed``: a set of strings iterates in the
    same order in each mode and each run, so what a trace captures is the same too."""
    results, notes = {}, []
    env = dict(os.environ, PYTHONHASHSEED=str(hash_seed))
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(MAX_RESTARTS):
            out, skip_file = os.path.join(tmp, f"out{attempt}"), os.path.join(tmp, f"skip{attempt}")
            json.dump(sorted(results), open(skip_file, "w"))
            cmd = [sys.executable, "-m", "framegraph.testing.cpython", "--worker", mode, name,
                   "--out", out, "--skip-file", skip_file, "--test-timeout", str(test_timeout)]
            how = "crash"
            try:
                proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env,
                                      stderr=subprocess.DEVNULL, timeout=max(1, deadline - time.monotonic()))
                rc = proc.returncode
            except subprocess.TimeoutExpired:
                how, rc = "timeout", None
            started, done = None, False
            for line in open(out) if os.path.exists(out) else ():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                done = done or record.get("done", False)
                if "start" in record:
                    started = record["start"]
                elif "id" in record:
                    results[record["id"]] = record
                    started = None
            if done:
                break
            if started is None:
                notes.append(f"{how} (rc {rc}) outside a test")
                break
            results[started] = {"id": started, "outcome": how, "detail": f"rc {rc}", "causes": []}
            notes.append(f"{how}: {started.rsplit('.', 1)[-1]}")
            if how == "timeout" and time.monotonic() >= deadline:
                notes.append("file timeout")
                break
    return results, notes


def summarize(name, by_mode):
    """One row of the table from {mode: (results, notes)}."""
    eager = by_mode.get("eager", ({}, []))[0]
    counted = [t for t, r in eager.items() if r["outcome"] == "pass"]
    row = {"file": name, "tests": len(counted),
           "excluded": sum(r["outcome"] == "excluded" for r in eager.values()),
           "not_passing_eager": sum(r["outcome"] not in ("pass", "excluded") for r in eager.values())}
    for mode in COMPILERS:
        if mode not in by_mode:
            continue
        results, notes = by_mode[mode]
        ok = [t for t in counted if results.get(t, {}).get("outcome") == "pass"]
        row[mode] = {"correct": len(ok),
                     "captured": sum(not results[t]["causes"] for t in ok),
                     "divergences": {t: results.get(t, {"outcome": "missing", "detail": ""})
                                     for t in counted if t not in ok},
                     "uncaptured": {t: results[t].get("why") or results[t]["causes"]
                                    for t in ok if results[t]["causes"]},
                     "hidden": [t for t in ok if _hidden_divergence(results[t])],
                     "causes": dict(Counter(c for t in counted for c in results.get(t, {}).get("causes", ()))
                                    .most_common()),
                     "notes": notes}
    return row


def _hidden_divergence(record) -> bool:
    """A test that passed although one of its assertions failed inside a trace: the
    break that followed let CPython run it again, hiding that the trace computed
    another value than CPython (in a program without the assertion, a wrong answer)."""
    return any("AssertionError escapes the compiled frame" in why for why in record.get("why", ()))


def _cell(row, mode, key):
    return str(row[mode][key]) if mode in row else "-"


def format_table(rows, markdown=False):
    head = ["file", "tests", "excl", "fg correct", "fg captured", "dynamo correct", "dynamo captured",
            "framegraph causes (tests)", "notes"]
    lines = []
    total = Counter()
    for row in rows:
        causes = ", ".join(f"{c} {n}" for c, n in row.get("framegraph", {}).get("causes", {}).items())
        notes = "; ".join(f"{m}: {n}" for m in COMPILERS if m in row for n in row[m]["notes"])
        lines.append([row["file"], str(row["tests"]), str(row["excluded"]),
                      _cell(row, "framegraph", "correct"), _cell(row, "framegraph", "captured"),
                      _cell(row, "dynamo", "correct"), _cell(row, "dynamo", "captured"), causes, notes])
        total["tests"] += row["tests"]
        total["excl"] += row["excluded"]
        for mode in COMPILERS:
            for key in ("correct", "captured"):
                total[f"{mode} {key}"] += row.get(mode, {}).get(key, 0)
    overall = (f"overall: {len(rows)} files, {total['tests']} tests ({total['excl']} excluded); "
               f"framegraph correct {total['framegraph correct']} captured {total['framegraph captured']}; "
               f"torch._dynamo correct {total['dynamo correct']} captured {total['dynamo captured']}")
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(cells) + " |" for cells in lines]
        return "\n".join(out + ["", overall])
    widths = [max(len(head[i]), *(len(cells[i]) for cells in lines)) if lines else len(head[i])
              for i in range(7)]
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)) + "  " + "  ".join(cells[7:])
    return "\n".join([fmt(head)] + [fmt(cells) for cells in lines] + [overall])


def format_divergences(rows, mode="framegraph"):
    out = []
    for row in rows:
        for tid, record in row.get(mode, {}).get("divergences", {}).items():
            out.append(f"{tid}: {record['outcome']}: {record.get('detail', '')}")
        for tid in row.get(mode, {}).get("hidden", ()):
            out.append(f"{tid}: hidden: an assertion failed inside the trace (the break hid it)")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help=f"test modules of Lib/test (default: the {len(FILES)} in FILES)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--jobs", type=int, default=2, help="subprocesses at once")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per file and mode")
    parser.add_argument("--test-timeout", type=float, default=60, help="seconds per test")
    parser.add_argument("--hash-seed", default="0",
                        help="PYTHONHASHSEED of every worker ('random' for a new one each)")
    parser.add_argument("--save", help="write every result as JSON here")
    parser.add_argument("--load", help="print the table of a --save file instead of running")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--divergences", action="store_true", help="list framegraph's divergences")
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--skip-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args)
    if args.load:
        rows = json.load(open(args.load))
    else:
        rows = _run_all(args)
    print(format_table(rows, args.markdown))
    if args.divergences:
        print(format_divergences(rows))


def _run_all(args):
    files = [f[:-3] if f.endswith(".py") else f for f in (args.files or FILES)]
    modes = args.modes.split(",")
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name in files:
            for mode in modes:
                jobs[name, mode] = pool.submit(run_mode, name, mode, args.timeout, args.test_timeout,
                                               args.hash_seed)
        rows = []
        for name in files:
            by_mode = {}
            for mode in modes:
                by_mode[mode] = jobs[name, mode].result()
                print(f"[{time.strftime('%H:%M:%S')}] {name} {mode}: {len(by_mode[mode][0])} tests "
                      f"{by_mode[mode][1] or ''}", file=sys.stderr, flush=True)
            rows.append(summarize(name, by_mode))
            if args.save:
                json.dump(rows, open(args.save, "w"), indent=1)
    return rows


if __name__ == "__main__":
    main()
