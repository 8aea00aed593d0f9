"""Objects made in the trace by ``object()`` and ``object.__new__`` (``variables/instances.py``).

Classes with a Python ``__new__`` are in test_partial.py (functools.py's own
partial is one).
"""
import torch

import framegraph
from helpers import assert_same

MISSING = object()


def sentinels(x):
    s, t = object(), object()
    d = {s: "s"}
    out = [s is t, d[s], d.get(t, MISSING) is MISSING, type(s) is object, s == s, s != t]
    for bad in (lambda: object(1), lambda: setattr(s, "a", 1)):
        try:
            bad()
        except (TypeError, AttributeError) as e:
            out.append((type(e).__name__, str(e)))
    return x + 1, out


def test_object_makes_a_fresh_sentinel(strict_trace):
    assert_same(framegraph.compile(sentinels, backend="eager")(torch.ones(2)), sentinels(torch.ones(2)))
    assert strict_trace.graphs == 1


def test_a_sentinel_returned_is_a_new_object(strict_trace):
    def f(x):
        return x + 1, object()

    compiled = framegraph.compile(f, backend="eager")
    first, second = compiled(torch.ones(2))[1], compiled(torch.ones(2))[1]
    assert type(first) is object and first is not second
    assert strict_trace.graphs == 1
