"""The house's shape: one package per pipeline step, imports running one way.

These facts are read from the code (every import, also those inside
functions) by ``scripts/import_cycles.py``; the rules are the Layout section
of the design map (shared/design.md).
"""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _checker():
    spec = importlib.util.spec_from_file_location("import_cycles", os.path.join(ROOT, "scripts", "import_cycles.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


checker = _checker()
EDGES = checker.edges()


def imports(a, b):
    """Where package ``a`` imports package ``b`` (empty: it does not)."""
    return EDGES.get((a, b), [])


def test_no_import_cycle_between_packages():
    assert checker.cycles(EDGES) == []


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
    assert {b for (a, b) in EDGES if a == "pyver"} == set()
    assert {b for (a, b) in EDGES if a == "bytecode"} <= {"pyver"}


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
