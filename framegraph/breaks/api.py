"""``framegraph.graph_break()``: end the current graph here, on purpose.

In compiled code the tracer stops before the call (catalogue entry
``explicit_graph_break``): the graph so far runs, the call runs in CPython
(where it does nothing) and the rest of the function is traced as the next
graph. Outside compiled code it does nothing. Useful to test graph breaks,
and to keep one part of a function out of a graph.

It is a ``framegraph.disable()``-style wrapper (``_C.Wrapper`` with no
callback) around a function that names its catalogue entry, so the tracer
recognises it the way it recognises every disabled function
(``variables/wrappers.py``), after guarding it by identity.
"""
from .. import _C


def _graph_break():
    """Nothing: the break is what the tracer does at the call."""


# The catalogue entry the tracer raises at a call of this function: trackers
# read it from the function (variables/wrappers.py), without importing breaks/.
_graph_break.framegraph_break_entry = "explicit_graph_break"


graph_break = _C.Wrapper(_graph_break, None)
graph_break.__doc__ = "End the current graph here; a no-op outside compiled code."
graph_break.__name__ = graph_break.__qualname__ = "graph_break"
graph_break.__module__ = "framegraph"
