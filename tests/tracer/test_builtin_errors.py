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
            lambda: bool(1, 2), lambda: float(x=1), lambda: str(1, 2, 3, 4),
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


def test_an_ordered_dict_iterator_fails_once_the_dict_changed():
    def loop(od, change):
        try:
            for k in od:
                change(od, k)
        except RuntimeError as e:
            return str(e)

    def f(x):
        results = []
        for change in (lambda od, k: od.move_to_end(k), lambda od, k: od.__setitem__("z", 1),
                       lambda od, k: od.pop("c", None), lambda od, k: od.clear(),
                       lambda od, k: od.move_to_end("e"), lambda od, k: od.__setitem__(k, 2)):
            od = collections.OrderedDict.fromkeys("abcde")
            results.append((loop(od, change), list(od.items())))
        od = collections.OrderedDict.fromkeys("ab")
        it = reversed(od.items())
        first = next(it)
        od["q"] = 3
        results.append((first, _error_of(lambda: next(it))))
        return x + 1, results
    assert_same_as_eager(f, torch.ones(2), graphs=1)


@pytest.mark.expect_fallback("unsupported_value")  # the resume function meets the unreadable dict
def test_dict_methods_called_through_dict_on_an_ordered_dict_subclass_break():
    class Registry(collections.OrderedDict):
        pass

    def f(x):
        y = x * 2
        od = Registry(spam=1, ham=2)
        dict.pop(od, "spam")  # leaves the OrderedDict's own order list behind: CPython's repr raises
        try:
            return y + 1, repr(od)
        except KeyError as e:
            return y + 2, repr(e)
    # the graph (x * 2) breaks at dict.pop, which CPython runs; the resume function
    # cannot read the OrderedDict it left behind, and runs as it is
    assert_same_as_eager(f, torch.ones(2), graphs=1, fullgraph=False)


class CountedKey(int):
    """An int that counts how often it is hashed (a cache key that logs its lookups)."""

    def __init__(self, value):
        self.hashes = 0

    def __hash__(self):
        self.hashes += 1
        return int.__hash__(self)


@pytest.mark.expect_fallback("unsupported_value")
def test_keys_with_a_python_hash_are_not_hashed_by_the_tracer(framegraph_trace):
    def f(x, d):
        s = set(d)
        return x + len(s), sum(k.hashes for k in d)

    import framegraph

    compiled = framegraph.compile(f, backend="eager")
    counts = []
    for fn in (f, compiled):
        d = dict.fromkeys(map(CountedKey, range(5)))
        counts.append(fn(torch.ones(1), d)[1])
    assert counts[0] == counts[1] == 5  # CPython keeps the hashes the dict stored
    assert framegraph_trace.graphs == 0  # the dict cannot be wrapped: the frame runs as it is


def test_missing_attributes_of_known_objects_raise_attribute_error():
    import unittest

    def f(x):
        class Local:
            pass

        case = unittest.TestCase()  # its __init__ catches the AttributeError of getattr(self, "runTest")
        errors = []
        for op in (lambda: Local().nothing, lambda: (1).nothing, lambda: torch.nn.nothing):
            try:
                op()
            except AttributeError as e:
                errors.append(str(e))
        return x + 1, errors, case._testMethodName
    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_a_missing_attribute_of_a_user_module_is_guarded(tmp_path, monkeypatch):
    import importlib
    import sys

    (tmp_path / "errs_settings.py").write_text("scale = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    settings = importlib.import_module("errs_settings")
    monkeypatch.setitem(sys.modules, "errs_settings", settings)

    def f(x, mod):
        try:
            return x * mod.offset
        except AttributeError as e:
            return x * mod.scale, str(e)

    from tests.helpers import CountingBackend
    import framegraph

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert_same_as_eager(f, torch.ones(2), settings, graphs=1)
    compiled(torch.ones(2), settings)
    settings.offset = 5  # the guard on the module's __dict__ sees it: a new trace
    assert torch.equal(compiled(torch.ones(2), settings), f(torch.ones(2), settings))
    assert cnt.frame_count == 2


def test_sorting_values_that_do_not_compare():
    def f(x):
        mixed = [3, "a", 1, 2.0]
        out = []
        for op in (lambda: sorted(mixed), lambda: mixed.sort(), lambda: min(mixed), lambda: max([1, 2, "b"]),
                   lambda: sorted([(1, 2), (1, "x")])):
            out.append(_error_of(op))
        return x + 1, out, mixed  # list.sort leaves the list partly sorted, as CPython's
    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_a_dict_subclass_missing_key_calls_its_missing():
    class Defaults(dict):
        def __missing__(self, key):
            return len(key)

    def f(x):
        d = Defaults(a=1)
        try:
            plain = {}["nope"]
        except KeyError as e:
            plain = repr(e)
        return x + d["a"] + d["four"], plain
    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_namedtuple_called_with_the_wrong_fields():
    Pair = collections.namedtuple("Pair", "left right")

    def f(x):
        return x + 1, [_error_of(lambda: Pair(1)), _error_of(lambda: Pair(1, 2, 3)),
                       _error_of(lambda: Pair(1, 2)._replace(middle=0))]
    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_str_of_a_list_that_contains_itself():
    def f(x):
        items = [0, 1]
        items.append(items)
        return x + 1, str(items), repr(items)
    assert_same_as_eager(f, torch.ones(2), graphs=1)


@pytest.mark.expect_fallback("unsupported_value")
def test_containers_from_outside_that_contain_themselves_are_not_wrapped(framegraph_trace):
    class Registry(collections.OrderedDict):
        pass

    import framegraph

    def f(x, items, registry):
        return x + 1, repr(items), repr(registry)

    items = [0, 1]
    items.append(items)
    registry = Registry(a=1)
    registry["self"] = registry
    compiled = framegraph.compile(f, backend="eager")
    assert compiled(torch.ones(1), items, registry)[1:] == f(torch.ones(1), items, registry)[1:]
    assert framegraph_trace.graphs == 0  # the frame runs as it is


def test_builtins_given_values_of_the_wrong_type():
    def ops():
        return [
            lambda: len(5), lambda: iter(5), lambda: next([]), lambda: list(5), lambda: dict(5),
            lambda: enumerate(5), lambda: sorted(5), lambda: min(5), lambda: tuple(5), lambda: set(5),
            lambda: reversed(5), lambda: zip(5), lambda: [].extend(5), lambda: {}.update(5),
            lambda: dict.fromkeys(5), lambda: {[1]: 2}, lambda: {[1]}, lambda: frozenset().add(1),
            lambda: [].nothing, lambda: isinstance(1, 2), lambda: issubclass(1, int),
            lambda: collections.defaultdict(1), lambda: collections.deque(5),
        ]
    assert_same_as_eager(_run(ops), torch.ones(2), graphs=1)


def test_index_of_a_missing_list_shows_its_repr():
    def f(x):
        rows = [[1], [2]]
        return x + 1, _error_of(lambda: rows.index([3])), _error_of(lambda: rows.index([]))
    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_sequence_operators_between_builtin_types():
    def f(x):
        items = [1]
        items += (2, 3)  # list += any iterable extends it
        errors = [_error_of(op) for op in (lambda: [1] + (2,), lambda: (1,) + [2], lambda: [1] * "a",
                                           lambda: [1] - [1], lambda: range(2) + [1])]
        return x + 1, items, errors
    assert_same_as_eager(f, torch.ones(2), graphs=1)


class LacksEnter:
    def __exit__(self, *exc):
        return False


class LacksExit:
    def __enter__(self):
        return self


def test_with_on_an_object_that_is_not_a_context_manager():
    def fn(x):
        messages = []
        for cls in (LacksEnter, LacksExit):
            try:
                with cls():
                    pass
            except TypeError as error:  # BEFORE_WITH's own TypeError, looked up on the type
                messages.append(str(error))
        return x + 1, messages

    assert_same_as_eager(fn, torch.ones(1), graphs=1)
