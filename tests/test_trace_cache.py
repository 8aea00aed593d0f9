"""The persistent trace cache: a second process checks stored guards instead of tracing.

Each test runs small programs in fresh interpreters that share one cache
directory, and reads what each process compiled: for every trace attempt the
frame's name, whether its entry came from the cache, and whether it fell back.
"""
import functools
import json
import os
import subprocess
import sys
import textwrap
import types

import pytest

PROGRAM = """
import json, os, sys, torch, framegraph
from framegraph.diagnostics import records

SCALE = float(os.environ["SCALE"])

def f(x):
    return torch.sin(x) * SCALE + 1

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(4, 4)
        self.drop = torch.nn.Dropout(0.1)
        self.l2 = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.l2(self.drop(torch.relu(self.l1(x))))

torch.manual_seed(0)
model = MLP().eval()
seen = []
with records.observing(lambda r: seen.append([r.code.co_name, r.from_cache, r.fallback, r.error is None])):
    out = []
    for rows in sys.argv[1:]:
        x = torch.randn(int(rows), 8)
        cf, cm = framegraph.compile(f, backend="eager"), framegraph.compile(model, backend="eager")
        out.append(torch.equal(cf(x), f(x)) and torch.equal(cm(x[:, :4]), model(x[:, :4])))
print(json.dumps({"seen": seen, "same": out}))
"""


def run(tmp_path, scale=2.0, rows=(3,), name="prog.py", background=False):
    """Run the program (written once to ``tmp_path/name``: an edited file makes its
    entries stale) on inputs of ``rows`` rows, with the cache in ``tmp_path/cache``."""
    path = tmp_path / name
    if not path.exists():
        path.write_text(PROGRAM)
    environment = dict(os.environ, FRAMEGRAPH_CACHE_DIR=str(tmp_path / "cache"), SCALE=str(scale))
    cmd = [sys.executable, str(path)] + [str(n) for n in rows]
    if background:
        return subprocess.Popen(cmd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc = subprocess.run(cmd, env=environment, capture_output=True, text=True, timeout=600)
    return _result(proc.returncode, proc.stdout, proc.stderr)


def _result(rc, stdout, stderr):
    assert rc == 0, f"exit {rc}\n{stdout}\n{stderr[-3000:]}"
    result = json.loads(stdout.splitlines()[-1])
    result["stderr"] = stderr
    assert all(result["same"]), result
    return result


def cache_files(tmp_path):
    return sorted((tmp_path / "cache").rglob("*.fgc"))


def test_a_second_process_runs_the_stored_traces_without_tracing(tmp_path):
    first = run(tmp_path)
    assert first["seen"] == [["f", False, None, True], ["forward", False, None, True]]
    assert len(cache_files(tmp_path)) == 2
    second = run(tmp_path)
    assert second["seen"] == [["f", True, None, True], ["forward", True, None, True]]
    assert len(cache_files(tmp_path)) == 2  # nothing new was written


def test_the_loaded_guards_still_hold_a_new_shape_recompiles(tmp_path):
    run(tmp_path)
    second = run(tmp_path, rows=(3, 5))
    # the stored entries serve the first shape; the second shape is traced as after a trace
    # of the first: f's recompile makes the changed dimension dynamic (automatic dynamic),
    # and such an entry is not stored; the module's recompile stays static and is
    assert second["seen"] == [["f", True, None, True], ["forward", True, None, True],
                              ["f", False, None, True], ["forward", False, None, True]]
    assert len(cache_files(tmp_path)) == 3
    third = run(tmp_path, rows=(5,))  # f's first trace here is static: stored
    assert [s[:2] for s in third["seen"]] == [["f", False], ["forward", True]]
    assert len(cache_files(tmp_path)) == 4


def test_a_changed_global_or_edited_source_is_never_a_hit(tmp_path):
    run(tmp_path)
    # f reads SCALE, guarded: another value fails f's stored guard, so f is traced; the
    # module's forward does not read it, and its entry serves
    changed = run(tmp_path, scale=3.0)
    assert [s[:2] for s in changed["seen"]] == [["f", False], ["forward", True]]
    # the same program in another file is another code object: its own key
    moved = run(tmp_path, name="other.py")
    assert [s[:2] for s in moved["seen"]] == [["f", False], ["forward", False]]


def test_an_edited_helper_function_makes_the_entry_stale(tmp_path):
    helper = tmp_path / "helper_mod.py"
    helper.write_text("import torch\ndef act(x):\n    return torch.relu(x)\n")
    program = tmp_path / "uses_helper.py"
    program.write_text(textwrap.dedent("""
        import json, torch, framegraph
        from framegraph.diagnostics import records
        import helper_mod

        def f(x):
            return helper_mod.act(x) * 2

        seen = []
        x = torch.randn(6) - 0.5
        with records.observing(lambda r: seen.append(r.from_cache)):
            same = torch.equal(framegraph.compile(f, backend="eager")(x), f(x))
        print(json.dumps({"seen": seen, "same": [same]}))
    """))
    env = dict(os.environ, FRAMEGRAPH_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path))

    def go():
        proc = subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=600)
        return _result(proc.returncode, proc.stdout, proc.stderr)["seen"]

    assert go() == [False]
    assert go() == [True]
    helper.write_text("import torch\ndef act(x):\n    return torch.tanh(x)\n")  # same name, other body
    assert go() == [False]


def test_a_corrupt_file_is_ignored_with_a_warning_and_rebuilt(tmp_path):
    run(tmp_path)
    files = cache_files(tmp_path)
    files[0].write_bytes(files[0].read_bytes()[:40])  # truncated
    files[1].write_bytes(b"not a cache file at all")
    second = run(tmp_path)
    assert "ignoring unreadable trace cache file" in second["stderr"]
    assert [s[:2] for s in second["seen"]] == [["f", False], ["forward", False]]
    third = run(tmp_path)  # the traces of the second process replaced them
    assert [s[:2] for s in third["seen"]] == [["f", True], ["forward", True]]


def test_processes_writing_and_reading_one_cache_at_once_agree(tmp_path):
    procs = [run(tmp_path, background=True) for _ in range(3)]
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=600)
        result = _result(proc.returncode, stdout, stderr)
        assert all(ok for *_, ok in result["seen"]) and "ignoring" not in stderr
    assert not list((tmp_path / "cache").rglob("*.tmp"))
    after = run(tmp_path)
    assert [s[:2] for s in after["seen"]] == [["f", True], ["forward", True]]


def test_a_frame_that_breaks_travels_with_its_resume_functions_a_lambda_backend_does_not(tmp_path):
    program = tmp_path / "local.py"
    program.write_text(textwrap.dedent("""
        import json, torch, framegraph
        from framegraph.diagnostics import records

        def f(x):
            y = torch.cos(x)
            framegraph.graph_break()
            return y + 1

        def g(x):
            return x * 2

        def make(scale):
            def k(x):
                y = torch.sin(x) * scale
                framegraph.graph_break()  # its resume function is made from a closure
                return y - scale
            return k

        seen = []
        x, k = torch.randn(3), make(3.0)
        def note(r):  # a loaded frame reports its break as the trace did
            breaks = [b.entry.id for b in r.compiled.breaks]
            seen.append([r.code.co_qualname, r.from_cache, r.fallback, breaks])

        with records.observing(note):
            a = framegraph.compile(f, backend="eager")(x)
            b = framegraph.compile(g, backend=lambda gm, ex: gm.forward)(x)  # a backend without a name
            c = framegraph.compile(k, backend="eager")(x)
        same = [torch.equal(a, f(x)), torch.equal(b, g(x)), torch.equal(c, k(x))]
        print(json.dumps({"seen": seen, "same": same}))
    """))
    env = dict(os.environ, FRAMEGRAPH_CACHE_DIR=str(tmp_path / "cache"))

    def go():
        """(frame name, from the cache) of each trace attempt, and the breaks of each."""
        proc = subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=600)
        seen = _result(proc.returncode, proc.stdout, proc.stderr)["seen"]
        return [s[:2] for s in seen], [s[3] for s in seen]

    first, breaks = go()
    assert breaks == [["explicit_graph_break"], [], [], ["explicit_graph_break"], []]
    assert [s[1] for s in first] == [False] * 5
    names = [s[0] for s in first]
    assert names[0] == "f" and "resume" in names[1] and names[2] == "g"
    assert names[3] == "make.<locals>.k" and "resume" in names[4]
    assert len(cache_files(tmp_path)) == 4  # f and k with their resume code, and the two resume frames
    assert go() == ([["f", True], [names[1], True], ["g", False], [names[3], True], [names[4], True]], breaks)


def test_answers_assumed_constant_and_registered_callables_are_part_of_the_entry(tmp_path):
    program = tmp_path / "assumed.py"
    program.write_text(textwrap.dedent("""
        import json, os, torch, framegraph
        from framegraph.diagnostics import records

        @framegraph.assume_constant_result
        def width():
            return int(os.environ["WIDTH"])

        def leaf(x):
            return x.cos()

        if os.environ.get("ALLOW"):
            framegraph.allow_in_graph(leaf)

        def f(x):
            return leaf(x)[:width()] * 2

        seen = []
        x = torch.randn(6)
        with records.observing(lambda r: seen.append(r.from_cache)):
            same = torch.equal(framegraph.compile(f, backend="eager")(x), f(x))
        print(json.dumps({"seen": seen, "same": [same]}))
    """))

    def go(**env):
        environment = dict(os.environ, FRAMEGRAPH_CACHE_DIR=str(tmp_path / "cache"), **env)
        proc = subprocess.run([sys.executable, str(program)], env=environment, capture_output=True, text=True,
                              timeout=600)
        return _result(proc.returncode, proc.stdout, proc.stderr)["seen"]

    assert go(WIDTH="3") == [False]
    assert go(WIDTH="3") == [True]
    assert go(WIDTH="4") == [False]  # width() answers otherwise here: the stored graph sliced 3
    assert go(WIDTH="3", ALLOW="1") == [False]  # leaf is one graph node now: another key


def test_the_cache_directory_setting_is_checked():
    import framegraph

    with pytest.raises(TypeError, match="cache_dir must be str"):
        framegraph.config.cache_dir = 3


def test_identity_guards_travel_as_descriptions_of_what_they_pinned():
    import enum

    import torch

    from framegraph.runtime.portable import describe

    class Color(enum.Enum):
        RED = 1

    assert describe(torch) == ("module", "torch")
    assert describe(torch.sin)[:3] == ("named", "torch", "sin")
    assert describe(torch.arange)[:3] == ("named", "torch", "arange")  # a C static method, found in torch
    assert describe(torch.nn.functional.max_pool2d)[:3] == ("named", "torch.nn.functional", "max_pool2d")
    assert describe(vars(torch)) == ("globals", "torch")
    assert describe(torch.nn.Linear(2, 2)) == ("nn.Module", ("named", "torch.nn.modules.linear", "Linear", None))
    # no name another process could find: a function by its code, defaults and module
    double, triple = (lambda x: x * 2), (lambda x: x * 3)
    assert describe(double)[0] == "function" and describe(double)[-1] == ("globals", __name__)
    assert describe(double) != describe(triple)
    assert describe(double.__code__) == ("code", describe(double)[1])
    # a class defined in a function is not reachable by name; so its members are not either
    assert describe(Color) is None and describe(Color.RED) is None
    assert describe(object()) is None  # what identity meant for a plain object: nothing portable


CHECKED = """
import json, os, sys, torch, framegraph
from framegraph.diagnostics import records
from framegraph.guards.compile import CompiledGuard

SHARED = os.environ["SHARED"] == "1"

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = self.a if SHARED else torch.nn.Linear(4, 4)
        self.register_buffer("shift", torch.ones(4))

    def forward(self, x):
        return torch.tanh(self.b(self.a(x)) + self.shift) * STEP

STEP = 0.5
torch.manual_seed(0)
net, x = Net().eval(), torch.randn(2, 4)
seen, checks = [], []
def note(r):
    seen.append([r.code.co_name, r.from_cache, r.fallback, r.error is None])
    checks.append(r.compiled.guards)

with records.observing(note):
    same = torch.equal(framegraph.compile(net, backend="eager")(x), net(x))
# the check a load restored against the one a build makes of the same guards now
g = checks[0]
fresh = CompiledGuard(g.guards, g.argnames)
ns, fresh_ns = g.fn.__globals__, fresh.fn.__globals__
restored = g.plan is None
fn = net.forward.__func__
accepts = [g.fn(fn, net, x), fresh.fn(fn, net, x)]  # both have run: their state cells agree
equal = (g.fn.__code__.co_code == fresh.fn.__code__.co_code
         and g.fn.__code__.co_consts == fresh.fn.__code__.co_consts
         and g.fn.__code__.co_names == fresh.fn.__code__.co_names
         and sorted(ns) == sorted(fresh_ns)
         and all(type(ns[k]) is type(fresh_ns[k]) for k in ns)
         and all(ns[k] == fresh_ns[k] for k in ns if type(ns[k]) in (list, tuple, str, torch.dtype)))
STEP = 0.25  # a global the trace read
rejects = [g.fn(fn, net, x), fresh.fn(fn, net, x)]
STEP = 0.5
net.b.register_forward_hook(lambda *a: None)
rejects += [g.fn(fn, net, x), fresh.fn(fn, net, x)]
print(json.dumps({"seen": seen, "same": [same], "restored": restored, "equal": equal,
                  "accepts": accepts, "rejects": rejects}))
"""


def run_checked(tmp_path, shared):
    """Run CHECKED (``self.b is self.a`` when ``shared`` is "1") with the cache in ``tmp_path``."""
    program = tmp_path / "checked.py"
    if not program.exists():
        program.write_text(CHECKED)
    env = dict(os.environ, FRAMEGRAPH_CACHE_DIR=str(tmp_path / "cache"), SHARED=shared)
    proc = subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=600)
    return _result(proc.returncode, proc.stdout, proc.stderr)


def test_a_load_restores_the_compiled_check_as_a_build_would_make_it(tmp_path):
    go = functools.partial(run_checked, tmp_path)
    first = go("0")
    assert first["seen"] == [["forward", False, None, True]] and not first["restored"]
    second = go("0")
    assert second["seen"] == [["forward", True, None, True]] and second["restored"]
    # same code, constants (this process's ids), names and globals as a fresh build
    assert second["equal"] and second["accepts"] == [True, True] and second["rejects"] == [False] * 4


def test_an_object_the_trace_saw_twice_is_two_objects_now_the_entry_does_not_apply(tmp_path):
    go = functools.partial(run_checked, tmp_path)
    assert go("1")["seen"] == [["forward", False, None, True]]  # self.b is self.a
    assert go("0")["seen"] == [["forward", False, None, True]]  # two layers: traced, eager's answer
    assert go("1")["seen"] == [["forward", True, None, True]]


def test_a_stored_check_takes_this_process_ids_and_refuses_what_it_cannot_place():
    from framegraph.guards.compile import CompiledGuard
    from framegraph.guards.kinds import Guard
    from framegraph.guards.sources import GlobalSource
    from framegraph.runtime.portable import NotPortable
    from framegraph.runtime.stored_guard import export_check, import_check

    one, other = object(), object()
    both = [Guard("ID_MATCH", GlobalSource("a"), (id(one), "one")), Guard("ID_MATCH", GlobalSource("b"), (id(one), "one"))]
    stored = export_check(CompiledGuard(both, ()))
    here = [Guard("ID_MATCH", GlobalSource("a"), (id(other), "one")), Guard("ID_MATCH", GlobalSource("b"), (id(other), "one"))]
    check = import_check(stored, here, ())
    fn = types.FunctionType(compile("pass", "<t>", "exec"), {"a": other, "b": other})
    assert check.fn(fn) and not check.fn(types.FunctionType(fn.__code__, {"a": other, "b": one}))
    # one object where the check was built, two here: the check is built afresh
    split = [here[0], Guard("ID_MATCH", GlobalSource("b"), (id(one), "one"))]
    assert import_check(stored, split, ()) is None
    # an int constant equal to an id: which literal is the id cannot be told
    clash = [both[0], Guard("CONSTANT_MATCH", GlobalSource("n"), id(one))]
    with pytest.raises(NotPortable):
        export_check(CompiledGuard(clash, ()))


def test_a_run_of_identity_checks_takes_this_process_ids():
    from framegraph.guards.compile import CompiledGuard
    from framegraph.guards.kinds import Guard
    from framegraph.guards.sources import AttrSource, LocalSource
    from framegraph.runtime.stored_guard import export_check, import_check

    def guards(objs):
        return [Guard("ID_MATCH", AttrSource(LocalSource("m"), f"l{i}"), (id(o), "layer")) for i, o in enumerate(objs)]

    there, here = [object() for _ in range(5)], [object() for _ in range(5)]
    check = import_check(export_check(CompiledGuard(guards(there), ("m",))), guards(here), ("m",))
    fn = types.FunctionType(compile("pass", "<t>", "exec"), {})
    assert check.fn(fn, types.SimpleNamespace(**{f"l{i}": o for i, o in enumerate(here)}))
    assert not check.fn(fn, types.SimpleNamespace(**{f"l{i}": o for i, o in enumerate(there)}))


@pytest.mark.parametrize("tuples", [1, 3])
def test_a_run_of_constants_with_tuples_is_stored_with_the_entry(tuples):
    """A convolution's ``padding=(1, 1)`` joins a reader group's value run: the check holds
    only what another process can rebuild, so a load restores it instead of building it."""
    from framegraph.guards.compile import CompiledGuard
    from framegraph.guards.kinds import Guard
    from framegraph.guards.sources import AttrSource, LocalSource
    from framegraph.runtime.stored_guard import export_check, import_check

    values = {**{f"c{i}": i for i in range(4)}, **{f"t{i}": (i, "same") for i in range(tuples)}}
    guards = [Guard("CONSTANT_MATCH", AttrSource(LocalSource("m"), k), v) for k, v in values.items()]
    check = import_check(export_check(CompiledGuard(guards, ("m",))), guards, ("m",))
    fn = types.FunctionType(compile("pass", "<t>", "exec"), {})
    assert check.fn(fn, types.SimpleNamespace(**values))
    assert not check.fn(fn, types.SimpleNamespace(**{**values, "t0": (0.0, "same")}))


WRAPPED_INIT = """
import functools, json, sys, torch, framegraph
from framegraph.diagnostics import records

def renaming(init):  # a decorator keeping the function as __wrapped__, as transformers' outputs do
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
    return __init__

class Out:
    @renaming
    def __init__(self, hidden, pooled=None, scale=2.0):
        self.hidden, self.pooled, self.scale = hidden, pooled, scale

def f(x):
    out = Out(x * 2)
    return out.hidden * out.scale

seen = []
with records.observing(lambda r: seen.append([r.code.co_name, r.from_cache, r.fallback])):
    x = torch.randn(3)
    same = torch.equal(framegraph.compile(f, backend="eager")(x), f(x))
print(json.dumps({"seen": seen, "same": [same]}))
"""


def test_a_function_a_decorator_wraps_travels_by_its_wrapper_name(tmp_path):
    # the wrapped __init__, reached through its wrapper's closure, has guarded defaults: it is
    # named as Out.__init__.__wrapped__ for the next process to find (else nothing was stored)
    program = tmp_path / "wrapped.py"
    program.write_text(WRAPPED_INIT)
    env = dict(os.environ, FRAMEGRAPH_CACHE_DIR=str(tmp_path / "cache"))
    results = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=600)
        results.append(_result(proc.returncode, proc.stdout, proc.stderr))
    assert results[0]["seen"] == [["f", False, None]] and len(cache_files(tmp_path)) == 1
    assert results[1]["seen"] == [["f", True, None]]


def _renaming(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


class _Wrapped:
    @_renaming
    def method(self, x=1):
        return x


def test_a_wrapped_function_and_an_annotation_are_described_for_another_process():
    from framegraph.runtime import portable

    inner = _Wrapped.__dict__["method"].__wrapped__
    assert portable.name_of(inner) == (__name__, "_Wrapped.method.__wrapped__")
    assert portable._find(portable._named(inner)) is inner
    # `int | None` and `list[int]` are values: one made in another process stands in for them
    assert portable.describe(int | None) == portable.describe(int | None) is not None
    assert portable.describe(dict[str, int | None]) != portable.describe(dict[str, int])
    assert portable.describe(list[object()]) is None  # an argument nothing describes
