"""Dicts as CPython runs them: keys hashed by Python code, ``|`` between mapping types,
``update`` from any mapping, the dunder methods called by name, ``__dict__`` edits.

Keys of a user class with ``__hash__``/``__eq__`` are how libraries cache by
value (a config key, a shape signature); CPython's test_dict and
test_ordered_dict check the protocol around them.
"""
import collections

import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, same_as_eager


class Sig:
    """A cache key: equal by its fields, hashed by them."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __eq__(self, other):
        return isinstance(other, Sig) and (self.shape, self.dtype) == (other.shape, other.dtype)


class Collides:
    """Every instance hashes alike: each lookup compares with the stored keys."""

    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return 1

    def __eq__(self, other):
        return isinstance(other, Collides) and self.name == other.name


class RaisingEq(Exception):
    pass


class BadEq:
    def __hash__(self):
        return 1

    def __eq__(self, other):
        raise RaisingEq


def test_keys_hashed_and_compared_by_python_code(framegraph_trace):
    def fn(x):
        cache = {Sig((2,), "f32"): x + 1}
        cache[Sig((3,), "f32")] = x * 2
        hit = cache[Sig((2,), "f32")]
        cache[Sig((2,), "f32")] = hit - 1  # the first key object stays
        colliding = {Collides("a"): 1, Collides("b"): 2}
        return (hit, Sig((3,), "f32") in cache, Sig((4,), "f32") in cache, cache.get(Sig((5,), "f32"), "miss"),
                len(cache), colliding[Collides("b")], len({1: "int", Collides("c"): "obj"}), cache)

    out = framegraph_trace.assert_compiles(fn, torch.ones(2))
    assert [k.shape for k in out[-1]] == [(2,), (3,)]


def test_an_eq_that_raises_raises_in_the_lookup(framegraph_trace):
    def fn(x):
        d1, d2 = {BadEq(): 1}, {BadEq(): 1}
        try:
            d1 == d2
        except RaisingEq:
            return x - 1
        return x

    framegraph_trace.assert_compiles(fn, torch.ones(2))


class CountsHashes:
    def __init__(self):
        self.hashes = 0

    def __hash__(self):
        self.hashes += 1
        return 1


def test_a_hash_that_changes_state_is_traced_where_the_dict_stays_inside(framegraph_trace):
    def fn(x):
        k = CountsHashes()
        d = {k: x}
        d[k] = x + 1
        return d[k], k.hashes  # three hashes, as in CPython

    framegraph_trace.assert_compiles(fn, torch.ones(2))


@pytest.mark.expect_fallback("graph_output")
def test_a_dict_keyed_by_a_state_changing_hash_is_not_rebuilt(framegraph_trace):
    def fn(x):
        k = CountsHashes()
        return x + 1, {k: 1}, k  # rebuilding the dict after the graph would hash k once more

    _, d, k = framegraph.compile(fn, backend="eager")(torch.ones(2))
    assert list(d) == [k] and k.hashes == 1  # as eager: one hash, by the display
    assert framegraph_trace.graphs == 0


def test_repeated_keys_of_a_display_keep_the_first_object(framegraph_trace):
    def fn(x):
        return x + 1, list({1: "a", 1.0: "b", True: "c"}.items())

    out = same_as_eager(fn, torch.ones(2))
    assert type(out[1][0][0]) is int
    assert framegraph_trace.graphs == 1


def test_or_between_mapping_types_is_made_by_the_type_asked(framegraph_trace):
    od, dd, plain = collections.OrderedDict(a=1), collections.defaultdict(int, b=2), {"c": 3}

    def fn(x):
        merged = [od | dd, dd | od, plain | od, od | plain, plain | dd, dd | plain, plain | plain]
        return x + 1, [(type(m).__name__, list(m.items())) for m in merged]

    framegraph_trace.assert_compiles(fn, torch.ones(2))


def test_dunder_methods_called_by_name(framegraph_trace):
    def fn(x):
        a = {0: 0}
        out = [a.__or__(None) is NotImplemented, a.__or__({1: 1}), a.__ror__({2: 2}), a.__ior__(())]
        try:
            a.__ior__("BAD")
        except ValueError as error:
            out.append(str(error))
        return x + 1, out, a

    framegraph_trace.assert_compiles(fn, torch.ones(2))


class Config:
    """A mapping of the user's: keys() and [key], as PyDict_Merge reads any mapping."""

    def __init__(self, **values):
        self.values = values

    def keys(self):
        return self.values.keys()

    def __getitem__(self, key):
        return self.values[key]


class Reversed(dict):
    def keys(self):
        return reversed(list(dict.keys(self)))

    __iter__ = keys


def test_update_from_any_mapping(framegraph_trace):
    def fn(x):
        d = {"lr": 0.1}
        d.update(Config(lr=0.01, momentum=0.9))
        return x * d["lr"], d, dict(Config(a=1)), list(dict(Reversed(a=1, b=2)))

    framegraph_trace.assert_compiles(fn, torch.ones(2))


def test_instance_dict_pop_and_del(framegraph_trace):
    class State:
        pass

    def fn(x):
        s = State()
        s.a, s.b, s.c = 1, 2, 3
        d = s.__dict__
        popped = [d.pop("b"), d.pop("zz", "default")]
        del d["a"]
        d["b"] = 4
        try:
            del d["a"]
        except KeyError:
            popped.append("missing")
        return x + 1, popped, list(d), hasattr(s, "a")

    framegraph_trace.assert_compiles(fn, torch.ones(2))


def test_reprs_of_views_subclasses_and_nested_sequences(framegraph_trace):
    class Ordered(collections.OrderedDict):
        pass

    class Plain(dict):
        pass

    def fn(x):
        od = collections.OrderedDict()
        od[42] = od.items()
        return (x + 1, repr(od), repr(Ordered(a=1)), repr(Ordered()), repr([(1, [2])]), repr((3,)),
                repr({"k": [(1, 2)]}.values()), str(Plain(b=2)),
                repr(collections.Counter("aab")))  # Counter's own Python __repr__, not dict's

    framegraph_trace.assert_compiles(fn, torch.ones(2))


def test_views_mapping_is_a_proxy_of_the_dict(framegraph_trace):
    def fn(x):
        d = {"a": 1}
        m = d.keys().mapping
        return x + 1, m["a"], len(m), m == d

    framegraph_trace.assert_compiles(fn, torch.ones(2))


class Scaled(collections.OrderedDict):
    """An OrderedDict subclass storing through its own __setitem__."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value * 10)


class Plain(collections.OrderedDict):
    pass


def test_ordered_dict_subclasses_store_through_their_setitem(framegraph_trace):
    def fn(x):
        s = Scaled([("a", 1)], b=2)
        s.update(c=3)
        s.update({"d": 4})
        merged = [Plain({0: 0}) | Plain({1: 1}), Plain({0: 0}) | {2: 2}, {3: 3} | Plain({0: 0}), s | {"e": 5}]
        return x + 1, list(s.items()), [(type(m).__name__, list(m.items())) for m in merged]

    framegraph_trace.assert_compiles(fn, torch.ones(2))



STRICT = False


class FlagEq:
    """Its __eq__ reads a module flag the frame flips: a set rebuilt after the graph
    would compare in the flipped state (CPython's test_set.test_8420_set_merge)."""

    def __hash__(self):
        return 0

    def __eq__(self, other):
        if STRICT:
            raise ZeroDivisionError
        return self is other


def test_keys_whose_eq_reads_a_global_flag_inside_the_frame(framegraph_trace):
    def fn(x):
        global STRICT
        s = {FlagEq(), FlagEq()}
        STRICT = True
        try:
            return x + len(s)
        finally:
            STRICT = False

    framegraph_trace.assert_compiles(fn, torch.ones(2))


@pytest.mark.expect_fallback("graph_output")
def test_a_set_of_keys_whose_eq_reads_a_global_is_not_rebuilt(framegraph_trace):
    def fn(x):
        global STRICT
        STRICT = False
        s = {FlagEq(), FlagEq()}
        STRICT = True
        return x + 1, s  # the rebuilt set would compare its two members, now raising

    global STRICT
    try:
        assert len(framegraph.compile(fn, backend="eager")(torch.ones(2))[1]) == 2
    finally:
        STRICT = False  # the module's flag: later tests compare FlagEq keys too
    assert framegraph_trace.graphs == 0


def test_a_key_whose_fields_change_after_it_is_stored(framegraph_trace):
    def fn(x):
        k = Sig((2,), "f32")
        d = {k: x}
        k.shape = (3,)  # CPython's dict keeps k where its old hash put it
        return d.get(Sig((3,), "f32"), "missing"), d.get(Sig((2,), "f32"), "missing"), len(d)

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 0  # no tensor work: nothing to compile


@pytest.mark.expect_fallback("graph_output")
def test_a_dict_whose_key_changed_is_not_rebuilt(framegraph_trace):
    def fn(x):
        k = Sig((2,), "f32")
        d = {k: x}
        k.shape = (3,)
        return x + 1, d, k  # a rebuilt d would file k under its new hash

    _, d, k = framegraph.compile(fn, backend="eager")(torch.ones(2))
    assert list(d) == [k] and k not in d  # as in CPython: filed under the old hash
    assert framegraph_trace.graphs == 0


class CountsCompares:
    """CPython's test_dict.test_setitem_atomic_at_resize: one hash and one comparison each."""

    def __init__(self):
        self.hashes, self.compares = 0, 0

    def __hash__(self):
        self.hashes += 1
        return 42

    def __eq__(self, other):
        self.compares += 1
        return self is other


@pytest.mark.expect_fallback("unsupported_value")
def test_an_eq_that_counts_its_calls_is_left_to_cpython(framegraph_trace):
    def fn(x):
        first, second = CountsCompares(), CountsCompares()
        d = {first: 5, 0: 0, 1: 1}
        d[second] = []  # CPython compares once; this tracer's dict may ask twice
        return x + 1, first.hashes, second.hashes, first.compares + second.compares

    assert same_as_eager(fn, torch.ones(2))[1:] == (1, 1, 1)
    assert framegraph_trace.graphs == 0


def _half_written_ordered_dict():
    """An OrderedDict that ``dict.__setitem__`` wrote: the key is in its table (len() counts it)
    but not in its order list (iterating it skips the key), as odictobject.c keeps the two."""
    od = collections.OrderedDict(a=1)
    dict.__setitem__(od, "k", 2)
    assert len(od) == 2 and list(od) == ["a"]
    return od


@pytest.mark.expect_fallback("unsupported_value")
def test_an_ordered_dict_whose_order_list_disagrees_with_its_table_runs_in_cpython(framegraph_trace):
    def fn(x, od):
        return x * len(od), list(od), list(od.items())

    od = _half_written_ordered_dict()
    cnt = CountingBackend()
    got = framegraph.compile(fn, backend=cnt)(torch.ones(2), od)
    assert_same(got, fn(torch.ones(2), od))  # len 2, one key listed
    assert cnt.frame_count == 0


@pytest.mark.expect_fallback("unsupported_value")
def test_the_keys_guard_of_an_ordered_dict_counts_its_table(framegraph_trace):
    def fn(x, od):
        return x * len(od), list(od)

    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt)
    assert_same(compiled(torch.ones(2), collections.OrderedDict(a=1)), (torch.ones(2), ["a"]))
    od = _half_written_ordered_dict()  # the same keys listed: only len() tells them apart
    assert_same(compiled(torch.ones(2), od), fn(torch.ones(2), od))
    assert cnt.frame_count == 1


@pytest.mark.expect_fallback("unsupported_value")
def test_an_unbound_dict_method_on_an_ordered_dict_made_in_the_frame(framegraph_trace):
    def fn(x):
        od = collections.OrderedDict()
        dict.setdefault(od, "acc", []).append(x)  # a break: it bypasses the order list
        od.setdefault("acc", []).append(x * 2)  # OrderedDict's own: the key is there
        return sum(od["acc"]), list(od), len(od)

    cnt = CountingBackend()
    assert_same(framegraph.compile(fn, backend=cnt)(torch.ones(2)), fn(torch.ones(2)))
    assert cnt.frame_count == 0  # no tensor work before the break; the resumed rest runs in CPython


def test_dicts_own_views_and_comparison_of_an_ordered_dict(framegraph_trace):
    # dict.keys(od) is a dict_keys over od's table; dict.__eq__ compares as dicts, in any order
    def fn(x, od):
        made = collections.OrderedDict(b=2, a=1)
        same = dict.__eq__(od, made), dict.__ne__(od, {"a": 1}), dict.__eq__(od, [1]), od == made
        return (x * len(dict.keys(od)), [k for k in dict.keys(od)], list(dict.values(od)),
                list(dict.items(made)), same, repr(dict.items(od)), type(dict.keys(od)).__name__)

    framegraph_trace.assert_compiles(fn, torch.ones(2), collections.OrderedDict(a=1, b=2))


def test_the_table_order_of_an_ordered_dict_from_outside_is_guarded():
    def fn(x, od):
        return x + 1, list(dict.keys(od)), list(od)

    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt)
    od = collections.OrderedDict(a=1, b=2)
    assert_same(compiled(torch.ones(2), od), fn(torch.ones(2), od))
    moved = collections.OrderedDict(b=2, a=1)
    moved.move_to_end("b")  # listed a, b as before; its table holds b, a
    assert_same(compiled(torch.ones(2), moved), fn(torch.ones(2), moved))
    assert cnt.frame_count == 2  # the table-order guard failed: a new trace, which breaks



def both_orders(od):
    """An OrderedDict's order list and its table (what dict's own keys() iterates)."""
    return list(od.items()), list(dict.items(od))


def test_an_ordered_dict_reordered_in_the_frame_is_rebuilt_with_both_orders():
    # move_to_end relinks the order list only: the table keeps insertion order, where a
    # key popped and stored again goes to the end
    def fn(x):
        od = collections.OrderedDict(a=1, b=2, c=3, d=4)
        od.move_to_end("a")
        od.move_to_end("d", last=False)
        od.pop("b")
        od["b"] = 5
        od.setdefault("e", 6)
        od.popitem(last=False)
        od.move_to_end("c")
        return x + 1, od

    cnt = CountingBackend()
    y, od = framegraph.compile(fn, backend=cnt, fullgraph=True)(torch.ones(2))
    assert cnt.frame_count == 1 and type(od) is collections.OrderedDict
    assert both_orders(od) == both_orders(fn(torch.ones(2))[1])


def test_dicts_own_views_of_a_reordered_ordered_dict_iterate_its_table():
    def fn(x, outside):
        od = collections.OrderedDict(a=1, b=2, c=3)
        od.move_to_end("a")
        return (x + 1, list(dict.keys(od)), list(od), list(dict.items(outside)), list(outside),
                repr(dict.values(od)), [k for k in dict.keys(od)])

    def moved():
        od = collections.OrderedDict(p=1, q=2)
        od.move_to_end("p")  # listed q, p; its table holds p, q
        return od

    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt, fullgraph=True)
    assert_same(compiled(torch.ones(2), moved()), fn(torch.ones(2), moved()))
    listed_the_same = collections.OrderedDict(q=2, p=1)  # and its table holds q, p: the guard fails
    assert_same(compiled(torch.ones(2), listed_the_same), fn(torch.ones(2), listed_the_same))
    assert cnt.frame_count == 2

def test_an_ordered_dict_from_outside_reordered_in_the_frame_keeps_its_table():
    def fn(x, od):
        od.move_to_end("a")
        od["z"] = 0
        return x * len(od)

    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt, fullgraph=True)
    for _ in range(2):
        od, mirror = collections.OrderedDict(a=1, b=2), collections.OrderedDict(a=1, b=2)
        assert_same(compiled(torch.ones(2), od), fn(torch.ones(2), mirror))
        assert both_orders(od) == both_orders(mirror)
    assert cnt.frame_count == 1


def test_an_ordered_dict_reordered_before_the_frame_is_written_from_its_guarded_table():
    # the replay writes the table in the order the trace saw it: a guard keeps that order
    def fn(x, od):
        od["z"] = 0
        return x * len(od)

    def moved():
        od = collections.OrderedDict(a=1, b=2)
        od.move_to_end("a")  # listed b, a; its table holds a, b
        return od

    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt, fullgraph=True)
    for make in (moved, moved, lambda: collections.OrderedDict(b=2, a=1)):
        od, mirror = make(), make()
        assert_same(compiled(torch.ones(2), od), fn(torch.ones(2), mirror))
        assert both_orders(od) == both_orders(mirror)
    assert cnt.frame_count == 2  # the last one lists b, a too, from a table in that order


class Node:
    """Hashed and compared by identity (object's __hash__ and __eq__), like a module."""


def test_writing_a_dict_keyed_by_objects_from_outside():
    # a per-node count and a cache keyed by objects (as a hook registry keyed by modules):
    # the writes are read back in the frame and replayed as `d[k] = v` after the graph
    def fn(x, table, node, other):
        table[node] = table.get(node, 0) + 1
        table[other] = x * 2
        size = len(table)
        table[other] = table[other] + 1
        return x * table[node], size, other in table, table[other]

    a, b = Node(), Node()
    mine, theirs = {a: 0}, {a: 0}
    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt)
    for _ in range(2):
        assert_same(compiled(torch.ones(2), mine, a, b), fn(torch.ones(2), theirs, a, b))
        assert list(mine) == list(theirs) == [a, b]
        assert_same(list(mine.values()), list(theirs.values()))
    assert cnt.frame_count == 2  # the second call's dict holds two keys: a LENGTH guard fails


@pytest.mark.framegraph_graphs(1, breaks=1)
def test_a_key_with_its_own_hash_is_not_written_into_a_dict_keyed_by_objects():
    def fn(x, table, key):
        y = x + 1
        table[key] = y  # Sig's __hash__/__eq__ are Python code: a break, run by CPython
        return y

    node, key = Node(), Sig((2,), "f")
    mine, theirs = {node: 0}, {node: 0}
    assert_same(framegraph.compile(fn, backend="eager")(torch.ones(2), mine, key), fn(torch.ones(2), theirs, key))
    assert list(mine) == [node, key] and len(theirs) == 2


def test_the_views_of_an_ordered_dict_are_its_own_types(framegraph_trace):
    def fn(x, od):
        made = collections.OrderedDict(b=1)
        return (x + 1, type(od.keys()).__name__, type(made.items()).__name__, type(od.values()) is type({}.values()),
                isinstance(od.items(), type({}.items())), type(dict.keys(od)).__name__)

    framegraph_trace.assert_compiles(fn, torch.ones(2), collections.OrderedDict(a=1))
