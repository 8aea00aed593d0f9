"""Builtin operations called wrongly raise CPython's exact exception inside the trace.

Tests and library code call builtins wrongly on purpose and catch the error
(``with self.assertRaises(TypeError): l.append()``, ``try: d.pop(k) except
KeyError``): the compiled frame must catch the same exception, with the same
message, in one graph.
"""
import collections

import pytest
import torch

from tests.helpers import assert_same_as_eager


def _error_of(op):
    """What ``op()`` raises, as (class name, message)."""
    try:
        op()
    except Exception as e:  # noqa: BLE001 - the point of the test
        return type(e).__name__, str(e)
    return None


def _run(ops):
    def f(x):
        return x + 1, [_error_of(op) for op in ops()]
    return f


def test_container_methods_called_with_the_wrong_arguments():
    def ops():
        lst, d, s = [1, 2], {"a": 1}, {1}
        return [
            lambda: lst.append(), lambda: lst.append(1, 2), lambda: lst.insert(0), lambda: lst.pop(0, 1),
            lambda: lst.sort(1), lambda: lst.sort(cmp=None), lambda: lst.clear(1), lambda: lst.index(),
            lambda: lst.count(), lambda: d.get(), lambda: d.keys(1), lambda: d.pop(), lambda: d.pop("a", key=1),
            lambda: d.update({}, {}), lambda: d.setdefault(), lambda: d.popitem(1), lambda: d.copy(1),
            lambda: s.add(), lambda: s.update(x=1), lambda: s.pop(1), lambda: (1, 2).count(),
            lambda: (1, 2).index(),
        ]
    assert_same_as_eager(_run(ops), torch.ones(2), graphs=1)


def test_missing_keys_bad_indexes_and_empty_pops():
    def ops():
        lst, d = [10, 20], {"a": 1}
        return [
            lambda: lst.pop(5), lambda: [].pop(), lambda: lst.pop("a"), lambda: lst.insert("a", 1),
            lambda: lst.remove(30), lambda: lst.index(30), lambda: lst.index(10, "a"), lambda: (1,).index(5),
            lambda: lst.__setitem__(5, 0), lambda: lst.__delitem__(-3), lambda: lst.__setitem__("a", 0),
            lambda: d.pop("b"), lambda: d.__delitem__("b"), lambda: d["b"], lambda: {}.popitem(),
            lambda: d.update([(1, 2, 3)]), lambda: d.update([1]), lambda: range(5).index(7),
        ]
    assert_same_as_eager(_run(ops), torch.ones(2), graphs=1)


def test_deque_and_ordered_dict_methods():
    def ops():
        q, od = collections.deque([1, 2]), collections.OrderedDict(a=1)
        return [
            lambda: q.append(), lambda: q.rotate(1, 2), lambda: q.insert(0), lambda: q.index(9),
            lambda: od.move_to_end(), lambda: od.move_to_end("zz"), lambda: od.popitem(1, 2),
        ]
    assert_same_as_eager(_run(ops), torch.ones(2), graphs=1)


def test_builtins_called_with_the_wrong_arguments():
    def ops():
        return [
            lambda: len(), lambda: len([], []), lambda: iter(), lambda: next(), lambda: list(1, 2),
            lambda: list(iterable=()), lambda: dict({}, {}), lambda: int(x=1), lambda: range(),
            lambda: range(1, 2, 3, 4), lambda: range(1.5), lambda: enumerate(), lambda: sorted(),
            lambda: collections.OrderedDict({}, {}), lambda: tuple(1, 2), lambda: set(1, 2),
        ]
    assert_same_as_eager(_run(ops), torch.ones(2), graphs=1)


def test_dict_keywords_may_be_any_names():
    def f(x):
        d = dict(d=1, other=2, tx=3, arg=4)
        d.update(d=5, other=6)
        return x + len(d), d, collections.OrderedDict(arg=1, tx=2)
    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_missing_method_of_a_constant():
    def f(x):
        try:
            "abc".no_such_method()
        except AttributeError as e:
            return x + 1, str(e)
    assert_same_as_eager(f, torch.ones(2), graphs=1)


@pytest.mark.parametrize("receiver", [[1, 2], {"a": 1}, {1, 2}, (1, 2)])
def test_the_right_call_still_works(receiver):
    def f(x, r):
        c = type(r)(r)
        return x + 1, c.copy() if hasattr(c, "copy") else c, c.__len__()
    assert_same_as_eager(f, torch.ones(2), receiver, graphs=1)
