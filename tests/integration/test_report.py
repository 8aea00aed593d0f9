"""The structured compile log, the HTML report (rendered in headless Chromium) and the CLI."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import torch
    import framegraph

    def g(x):
        if x.sum() > 0:
            return x * 2
        return x + 1

    def f(x):
        return torch.sin(x) + 1

    if __name__ == "__main__":
        cg = framegraph.compile(g, backend="eager")
        cg(torch.ones(3)); cg(-torch.ones(3))
        cf = framegraph.compile(f, backend="eager")
        cf(torch.randn(4)); cf(torch.randn(4, 2))
""")


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """Run the brief's two examples with FRAMEGRAPH_TRACE set; return (script, trace dir)."""
    root = tmp_path_factory.mktemp("trace")
    script = root / "brief.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, FRAMEGRAPH_TRACE=str(root / "logs"))
    subprocess.run([sys.executable, str(script)], check=True, env=env, timeout=300)
    return script, root / "logs"


def test_structured_log_has_one_line_per_compile(traced):
    script, logs = traced
    [path] = list(logs.glob("framegraph_trace_*.jsonl"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    by_name = {}
    for r in records:
        by_name.setdefault(r["frame"]["name"], []).append(r)
    assert by_name["g"][0]["outcome"] == "graph_break"
    assert by_name["g"][0]["breaks"][0]["title"] == "Data-dependent branching"
    assert {"g_resume_at_7", "g_resume_at_8"} <= set(by_name)
    first, second = by_name["f"]
    assert first["outcome"] == "compiled" and "torch.sin" in first["graphs"][0]
    assert second["attempt"] == 2 and "L['x']" in second["recompile_reasons"][0]
    assert "__compiled_fn_" in first["generated_source"] and first["guards"]


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("CI must install Chromium (see .ci/run)")
    pytest.skip("Chromium is not installed (CI installs it)")


def test_report_renders_in_a_headless_browser(traced, tmp_path):
    from framegraph.cli import main

    _, logs = traced
    assert main(["report", str(logs), "-o", str(tmp_path / "html")]) == 0
    index = tmp_path / "html" / "index.html"
    browser = _chromium()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([browser, *flags, "--dump-dom", index.as_uri()], capture_output=True,
                         text=True, timeout=120).stdout
    for section in ("framegraph compile report", "Frames", "Graph-break sites", "Recompiles",
                    "Compile time per phase", "Data-dependent branching", "g_resume_at_7"):
        assert section in dom, section
    subprocess.run([browser, *flags, f"--screenshot={tmp_path / 'shot.png'}", "--window-size=1000,800",
                    index.as_uri()], capture_output=True, timeout=120)
    assert (tmp_path / "shot.png").stat().st_size > 10_000  # something was drawn
    frame_page = (tmp_path / "html" / "frame_0.html").read_text()
    assert "Generated code" in frame_page and "Guards" in frame_page


def test_cli_explain_runs_a_script(traced, capsys):
    from framegraph.cli import main

    script, _ = traced
    assert main(["explain", str(script), "--function", "g"]) == 0
    out = capsys.readouterr().out
    assert "Graph Count: " in out and "Graph Break Count: 1" in out and "Data-dependent branching" in out


def test_cli_version_and_backends():
    out = subprocess.run([sys.executable, "-m", "framegraph.cli", "backends"], capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["aot_eager", "eager", "inductor"]
    out = subprocess.run([sys.executable, "-m", "framegraph.cli", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("framegraph 0.1.0")
