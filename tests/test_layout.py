"""The house's shape: one package per pipeline step, imports running one way.

These facts are read from the code (every import, also those inside
functions) by ``scripts/import_cycles.py``; the rules are the Layout section
of the design map (shared/design.md).
"""
import ast
import functools
import importlib.util
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIABLES = os.path.join(ROOT, "framegraph", "variables")

# The floors of framegraph/variables, bottom up: each imports only those below it.
FLOORS = ("core", "containers", "iteration", "tensors", "callables", "objects", "subclasses", "builder")


def _checker():
    spec = importlib.util.spec_from_file_location("import_cycles", os.path.join(ROOT, "scripts", "import_cycles.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=None)
def edges(inside=None):
    """The import arrows between framegraph's packages (or the floors of ``framegraph.<inside>``),
    read from the code when a test first asks."""
    return _checker().edges(inside)


def imports(a, b):
    """Where package ``a`` imports package ``b`` (empty: it does not)."""
    return edges().get((a, b), [])


def test_no_import_cycle_between_packages():
    assert _checker().cycles(edges()) == []


def test_at_most_eight_root_modules():
    root = os.path.join(ROOT, "framegraph")
    modules = sorted(f for f in os.listdir(root) if f.endswith(".py"))
    assert len(modules) <= 8, modules


def test_each_pipeline_step_is_a_package():
    root = os.path.join(ROOT, "framegraph")
    for step in ("runtime", "pyver", "bytecode", "tracer", "variables", "guards", "graph", "backends",
                 "codegen", "breaks", "diagnostics"):
        assert os.path.isfile(os.path.join(root, step, "__init__.py")), step


def test_pyver_and_bytecode_import_nothing_above_them():
    assert {b for (a, b) in edges() if a == "pyver"} == set()
    assert {b for (a, b) in edges() if a == "bytecode"} <= {"pyver"}


def test_trackers_never_drive_compilation():
    for above in ("runtime", "codegen", "breaks", "tracer", "graph"):
        assert imports("variables", above) == [], above


def test_guards_are_built_from_sources_not_from_the_interpreter():
    for above in ("tracer", "variables", "graph", "codegen", "breaks", "runtime"):
        assert imports("guards", above) == [], above


def test_diagnostics_read_results_and_never_trace():
    for above in ("runtime", "tracer", "codegen", "breaks", "__init__"):
        assert imports("diagnostics", above) == [], above


def test_the_ledger_does_not_know_tracker_classes():
    assert imports("side_effects", "variables") == []


def test_variables_floors_import_only_the_floors_below():
    found = edges("variables")
    assert _checker().cycles(found) == []
    for (a, b), sites in found.items():
        if a == "__init__":
            continue  # the package loads every floor
        assert FLOORS.index(b) < FLOORS.index(a), (a, b, sites)


def test_the_core_imports_no_family():
    assert {b for (a, b) in edges("variables") if a == "core"} == set()


def test_each_floor_is_a_package_of_at_most_fifteen_modules():
    names = sorted(f for f in os.listdir(VARIABLES) if not f.startswith(("_", ".")))
    assert names == sorted(list(FLOORS[:-1]) + ["builder.py"]), names
    for floor in FLOORS[:-1]:
        modules = [f for f in os.listdir(os.path.join(VARIABLES, floor)) if f.endswith(".py") and f != "__init__.py"]
        assert len(modules) <= 15, (floor, len(modules))


def _function_level_imports():
    """(path, line, the line before) for each import written inside a function in variables/."""
    found = []
    for dirpath, _, files in os.walk(VARIABLES):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            with open(path) as fh:
                src = fh.read()
            lines = src.splitlines()
            for fn in ast.walk(ast.parse(src)):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    for node in ast.walk(fn):
                        if isinstance(node, (ast.Import, ast.ImportFrom)):
                            found.append((path, node.lineno, lines[node.lineno - 1], lines[node.lineno - 2]))
    return found


def test_imports_inside_functions_in_variables_are_few_and_say_why():
    found = _function_level_imports()
    assert len(found) < 40, found
    for path, line, text, before in found:
        assert "#" in text or before.strip().startswith("#"), f"{path}:{line}: say why it is imported here"


def test_every_name_looked_up_in_the_space_is_registered():
    """A lower floor reaches a higher one's kinds through ``core.space``; a name no family
    registered would fail only when a trace reaches it, so every lookup is checked here."""
    from framegraph.variables import builder  # noqa: F401  (loads every floor)
    from framegraph.variables.core import space

    wanted = set()
    for dirpath, _, files in os.walk(VARIABLES):
        for f in files:
            if f.endswith(".py") and f != "space.py":
                with open(os.path.join(dirpath, f)) as fh:
                    wanted.update(re.findall(r"(?<![\w.])space\.([A-Za-z_]\w*)", fh.read()))
    wanted.discard("register")
    assert wanted and sorted(n for n in wanted if not hasattr(space, n)) == []
