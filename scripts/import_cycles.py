"""Find import cycles between framegraph's packages, counting imports inside functions.

A unit is a package directly under `framegraph/` (`tracer`, `variables`, ...) or a
root module (`config`, `errors`, ...). Every `import`/`from ... import` anywhere in
a file counts, at module level or inside a function, because a lazy import is a
dependency all the same. The same check runs one level down, inside
`framegraph/variables/`, whose units are its floors (`core`, `containers`, ...,
and `builder`). Prints each cycle with the imports that make it, and exits 1 if
there is one.

    python scripts/import_cycles.py            # report; exit status says
    python scripts/import_cycles.py --edges    # also list every package arrow
"""
import ast
import os
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "framegraph")


def _module_name(path):
    rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].split(os.sep)
    if rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join(rel)


def _imported(tree, modname, is_package):
    """Yield (imported module name, line) for every import in the tree."""
    package = modname if is_package else modname.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:   # `from pkg import submodule` imports the submodule
                yield target + "." + alias.name, node.lineno
            yield target, node.lineno


def unit_of(modname, inside=None):
    """The package (or root module) a framegraph module belongs to, or None.

    ``framegraph`` itself (its ``__init__.py``, the public API) is a unit too:
    code that calls ``framegraph.compile`` depends on everything the API
    imports."""
    parts = modname.split(".")
    if inside is not None:  # the units one level down: framegraph.<inside>.<unit>
        if parts[:2] != ["framegraph", inside]:
            return None
        return parts[2] if len(parts) > 2 else "__init__"
    if parts[0] != "framegraph":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _only_submodules(tree, line, modules):
    """Whether the `from framegraph import ...` on ``line`` names submodules only."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.lineno == line:
            return all("framegraph." + a.name in modules or a.name in ("_C", "_tensor_check")
                       for a in node.names)
    return False


def edges(inside=None):
    """{(unit_a, unit_b): [(file, line, target)]} for imports between different units
    (of framegraph's packages, or of the floors of ``framegraph.<inside>``)."""
    modules = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                modules[_module_name(path)] = path
    found = defaultdict(list)
    for name, path in modules.items():
        with open(path) as fh:
            tree = ast.parse(fh.read(), path)
        src = unit_of(name, inside)
        for target, line in _imported(tree, name, path.endswith("__init__.py")):
            if target not in modules:
                continue
            if target == "framegraph" and _only_submodules(tree, line, modules):
                continue  # `from framegraph import pyver`: the submodule, counted above
            if inside is not None and target == "framegraph." + inside:
                continue  # `from framegraph.variables import core`: the floor, counted above
            dst = unit_of(target, inside)
            if src and dst and src != dst:
                found[(src, dst)].append((os.path.relpath(path, os.path.dirname(ROOT)), line, target))
    return found


def cycles(found):
    """Strongly connected components with more than one unit (Tarjan)."""
    graph = defaultdict(set)
    for a, b in found:
        graph[a].add(b)
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return comps


def main(argv):
    status = 0
    for inside, what in ((None, "framegraph's packages"), ("variables", "the floors of framegraph/variables")):
        found = edges(inside)
        if "--edges" in argv:
            for (a, b), sites in sorted(found.items()):
                print(f"{a} -> {b}  ({len(sites)})")
        comps = cycles(found)
        for comp in comps:
            print("cycle:", " <-> ".join(comp))
            for (a, b), sites in sorted(found.items()):
                if a in comp and b in comp:
                    for path, line, target in sites:
                        print(f"  {a} -> {b}: {path}:{line} imports {target}")
        if not comps:
            print(f"no import cycle between {what}")
        status = status or (1 if comps else 0)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
