"""explain(): run a function compiled once and report what the compiler did.

    out = framegraph.explain(g)(x)
    print(out)          # Graph Count: 2 / Graph Break Count: 1 / Break Reasons / ...

The function runs once under ``compile()`` with a recording backend (graphs
run as captured, eagerly) while every trace attempt is observed
(``diagnostics/records.py``); ``diagnostics/explain.py`` summarises what was
seen. ``explain_script`` does the same for a whole script (``framegraph
explain script.py``).
"""
import os
import runpy
import sys

from .. import _C
from ..backends import lookup_backend
from ..config import CompileOptions
from ..diagnostics.explain import summarise
from ..diagnostics.records import observing
from .convert_frame import ConvertFrame
from .hook import compile, reset


class _Recording:
    """A backend that keeps every graph it is given and runs it as captured."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


def explain(fn, *extra_args, **extra_kwargs):
    """`explain(fn)(*args, **kwargs) -> ExplainOutput`: compile, run once, report."""
    if not callable(fn):
        raise TypeError(f"framegraph.explain() expects a callable, got {type(fn).__name__}")
    if extra_args or extra_kwargs:  # torch's old form: explain(fn, *args)
        return explain(fn)(*extra_args, **extra_kwargs)

    def run(*args, **kwargs):
        backend, records = _Recording(), []
        reset()  # explain what a first run compiles, not what earlier runs cached
        with observing(records.append):
            result = compile(fn, backend=backend)(*args, **kwargs)
        return summarise(backend.graphs, records, result)

    return run


def explain_script(path, function=None, argv=()):
    """Run the script at `path` as __main__ with its functions compiled; explain what happened.

    Every function defined in the script's own file is traced (or only the
    one named `function`, and the resume functions of its graph breaks);
    library frames follow the usual quick filter.
    """
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such script: {path}")
    recording, records = _Recording(), []
    backend, name = lookup_backend(recording)
    callback = _ScriptCallback(CompileOptions(backend=backend, backend_name=name), path, function)
    reset()
    saved_argv = sys.argv
    sys.argv = [path] + list(argv)
    prior = _C.set_callback(callback)
    try:
        with observing(records.append):
            runpy.run_path(path, run_name="__main__")
    finally:
        _C.set_callback(prior)
        sys.argv = saved_argv
    return summarise(recording.graphs, records, None)


class _ScriptCallback:
    """ConvertFrame restricted to one script's functions (SKIP for everything else)."""

    def __init__(self, options, path, function):
        self.convert = ConvertFrame(options)
        self.path, self.function = path, function

    def __call__(self, func, code, f_locals):
        if code.co_filename != self.path:
            return _C.SKIP
        if self.function is not None and code.co_name != self.function:  # resume codes keep the name
            return _C.SKIP
        return self.convert(func, code, f_locals)
