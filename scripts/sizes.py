"""Print the size table of framegraph/: lines per file, and the files and
functions over budget (style.md: files <= 600 lines, functions <= 60, the
translator <= 400). A budget, not a law: it is printed, not enforced.

    python scripts/sizes.py
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "framegraph"
BUDGETS = {"tracer/translator.py": 400}


def main():
    total, rows, over = 0, [], []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        src = path.read_text()
        n = src.count("\n")
        total += n
        rows.append((rel, n))
        if n > BUDGETS.get(rel, 600):
            over.append(f"file {rel}: {n} lines (budget {BUDGETS.get(rel, 600)})")
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 60:
                    over.append(f"function {rel}:{node.lineno} {node.name}: {length} lines (budget 60)")
    c_lines = sum(p.read_text().count("\n") for p in ROOT.rglob("*.c"))
    for rel, n in rows:
        print(f"{n:6d}  {rel}")
    print(f"{total:6d}  Python in framegraph/ ({len(rows)} files); {c_lines} lines of C")
    print("\n".join(["", "over budget:"] + over) if over else "\nall within budget")


if __name__ == "__main__":
    main()
