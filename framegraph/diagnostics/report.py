"""`framegraph report <dir>`: the structured compile log as a static HTML report.

Reads every `framegraph_trace_*.jsonl` in a directory (trace_log.py writes
them) and writes `<out>/index.html` plus one page per compiled frame:

- index: a tree of frames (resume functions under the frame they continue),
  coloured by outcome; graph-break sites ranked by how often they occur;
  recompile reasons; compile time per phase;
- frame pages: every attempt with its graphs, guards, breaks and the
  generated code as Python.
"""
import collections
import glob
import html
import json
import os
import re

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1, h2 { font-weight: 600; } pre { background: #f6f8fa; padding: .8em; overflow-x: auto; }
.compiled { color: #1a7f37; } .graph_break { color: #9a6700; } .eager { color: #cf222e; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: .3em .6em; text-align: left; }
ul.tree { list-style: none; padding-left: 1.2em; }
"""
_RESUME = re.compile(r"^(?P<base>.+)_resume_at_\d+$")


def load(directory):
    """Every compile record in `directory`, in the order they were written."""
    records = []
    for path in sorted(glob.glob(os.path.join(directory, "framegraph_trace_*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            records += [json.loads(line) for line in f if line.strip()]
    return sorted(records, key=lambda r: r.get("time", 0))


def _key(frame):
    return (frame["file"], frame["name"], frame["line"])


def _page(title, body):
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>")


def write_report(directory, out=None):
    """Write the HTML report for the logs in `directory`; return the index path."""
    records = load(directory)
    out = out or os.path.join(directory, "report")
    os.makedirs(out, exist_ok=True)
    frames = collections.OrderedDict()
    for r in records:
        frames.setdefault(_key(r["frame"]), []).append(r)
    pages = {key: f"frame_{i}.html" for i, key in enumerate(frames)}
    for key, attempts in frames.items():
        with open(os.path.join(out, pages[key]), "w", encoding="utf-8") as f:
            f.write(_frame_page(key, attempts))
    index = os.path.join(out, "index.html")
    with open(index, "w", encoding="utf-8") as f:
        f.write(_index_page(records, frames, pages))
    return index


def _outcome(attempts):
    outcomes = {a["outcome"] for a in attempts}
    return "eager" if "eager" in outcomes else "graph_break" if "graph_break" in outcomes else "compiled"


def _index_page(records, frames, pages):
    body = [f"<p>{len(records)} compile attempts of {len(frames)} frames.</p>",
            "<h2 id='frames'>Frames</h2>", _tree(frames, pages),
            "<h2 id='breaks'>Graph-break sites</h2>", _break_table(records),
            "<h2 id='recompiles'>Recompiles</h2>", _recompile_list(records),
            "<h2 id='times'>Compile time per phase</h2>", _phase_table(records)]
    return _page("framegraph compile report", "\n".join(body))


def _tree(frames, pages):
    children = collections.defaultdict(list)
    roots = []
    for key in frames:
        match = _RESUME.match(key[1])
        parent = next((k for k in frames if match and k[0] == key[0] and k[1] == match["base"]), None)
        (children[parent] if parent else roots).append(key)

    def item(key):
        attempts = frames[key]
        outcome = _outcome(attempts)
        label = (f"<a class='{outcome}' href='{pages[key]}'>{html.escape(key[1])}</a> "
                 f"<small>{html.escape(os.path.basename(key[0]))}:{key[2]} · {outcome.replace('_', ' ')} · "
                 f"{len(attempts)} attempt(s)</small>")
        kids = "".join(item(k) for k in children[key])
        return f"<li>{label}{f'<ul class=tree>{kids}</ul>' if kids else ''}</li>"

    return "<ul class='tree'>" + "".join(item(k) for k in roots) + "</ul>"


def _break_table(records):
    sites = collections.Counter()
    for r in records:
        for b in r.get("breaks", []):
            sites[(b["title"], (b["user_stack"] or ["?"])[-1])] += 1
        if r.get("error"):
            sites[(r["error"].get("title") or r["error"]["type"], r["error"].get("where") or "?")] += 1
    if not sites:
        return "<p>No graph breaks.</p>"
    rows = "".join(f"<tr><td>{n}</td><td>{html.escape(title)}</td><td>{html.escape(where)}</td></tr>"
                   for (title, where), n in sites.most_common())
    return f"<table><tr><th>count</th><th>reason</th><th>where</th></tr>{rows}</table>"


def _recompile_list(records):
    items = [f"<li>{html.escape(r['frame']['name'])} (attempt {r['attempt']}): "
             f"{html.escape('; '.join(r['recompile_reasons']))}</li>"
             for r in records if r.get("recompile_reasons")]
    return f"<ul>{''.join(items)}</ul>" if items else "<p>No recompiles.</p>"


def _phase_table(records):
    totals = collections.Counter()
    for r in records:
        for phase, seconds in r.get("phases", {}).items():
            totals[phase] += seconds
    rows = "".join(f"<tr><td>{html.escape(p)}</td><td>{s * 1e3:.1f} ms</td></tr>" for p, s in totals.items())
    return f"<table><tr><th>phase</th><th>total</th></tr>{rows}</table>"


def _frame_page(key, attempts):
    body = [f"<p>{html.escape(key[0])}:{key[2]}</p>"]
    for a in attempts:
        body.append(f"<h2 class='{a['outcome']}'>Attempt {a['attempt']}: {a['outcome'].replace('_', ' ')} "
                    f"({a['seconds'] * 1e3:.1f} ms)</h2>")
        if a.get("recompile_reasons"):
            body.append("<p>Recompiled because: " + html.escape("; ".join(a["recompile_reasons"])) + "</p>")
        if a.get("error"):
            body.append(f"<pre>{html.escape(a['error']['message'])}</pre>")
        for b in a.get("breaks", []):
            text = (f"Graph Break Reason: {b['title']}\n  Explanation: {b['explanation']}\n  Hint: {b['hint']}\n"
                    f"  Developer debug context: {b['context']}\n  at {'; '.join(b['user_stack'])}")
            body.append(f"<h3>Graph break</h3><pre>{html.escape(text)}</pre>")
        for g in a.get("graphs", []):
            body.append(f"<h3>Graph</h3><pre>{html.escape(g)}</pre>")
        if a.get("guards"):
            body.append("<h3>Guards</h3><pre>" + html.escape("\n".join(a["guards"])) + "</pre>")
        if a.get("generated_source"):
            body.append(f"<h3>Generated code</h3><pre>{html.escape(a['generated_source'])}</pre>")
    return _page(f"{key[1]}", "\n".join(body))
