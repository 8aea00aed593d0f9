"""Whether a call's shape fits a builtin, read off its ``__text_signature__`` without
``inspect``: every builtin function and method (bound and unbound) of the common
types must answer each shape as ``inspect.signature(fn).bind`` does."""
import builtins
import collections
import functools
import inspect
import itertools
import math
import operator

import pytest

from framegraph.variables.core import call_shapes

TYPES = (list, dict, set, frozenset, str, bytes, bytearray, tuple, int, float, complex, range, slice,
         collections.OrderedDict, collections.deque, collections.Counter)


def _callables():
    for module in (builtins, operator, math, functools, itertools):
        yield from (v for v in vars(module).values() if callable(v))
    for kind in TYPES:
        for name, attr in vars(kind).items():
            yield attr
            try:
                yield getattr(kind(), name)  # bound: its first parameter is taken
            except Exception:
                pass


def _shapes(parameters):
    names = list(parameters) + ["unknown"]
    # a positional-only name passed by keyword: inspect's answer differs between versions (3.13
    # takes it as given), CPython's own call refuses it (or gives it to **kwargs): compared below
    ambiguous = {n for n, p in parameters.items() if p.kind is p.POSITIONAL_ONLY}
    for count in range(5):
        for k in range(3):
            for keywords in itertools.combinations(names, k):
                if not ambiguous & set(keywords):
                    yield count, keywords


def test_text_signatures_bind_every_shape_as_inspect_does():
    read = 0
    for fn in _callables():
        ours = call_shapes._TextSignature.of(fn)
        if ours is None:
            continue
        theirs = inspect.signature(fn)  # raises where ours read what inspect refuses
        read += 1
        for count, keywords in _shapes(theirs.parameters):
            assert call_shapes._binds(ours, count, keywords) == call_shapes._binds(theirs, count, keywords), \
                (fn, count, keywords, theirs)
    assert read > 500


def test_a_default_inspect_cannot_show_leaves_the_signature_unread():
    # dict.pop's "($self, key, default=<unrepresentable>, /)": inspect refuses it
    assert call_shapes._TextSignature.of(dict.pop) is None
    assert call_shapes._signature(dict.pop) is None


def test_a_positional_only_parameter_passed_by_keyword_is_refused_as_cpython_refuses_it():
    sig = call_shapes._TextSignature.of(list.index)
    assert not call_shapes._binds(sig, 2, ("stop",))
    with pytest.raises(TypeError):
        list.index([1], 1, stop=3)
    # beside **kwargs the keyword goes there: (self, /, *args, **kwargs) with self given first
    sig = call_shapes._TextSignature.of(dict.__init__)
    assert call_shapes._binds(sig, 1, ("self",)) and not call_shapes._binds(sig, 0, ("self",))
