"""Class statements whose body reads the enclosing function, and annotated bodies.

The patterns behind most of CPython's own tests that define a class inside a
test method (``framegraph/testing/cpython.py``): methods closing over the
method's locals (test_set's ``Bad.__eq__`` reading ``enabled``), class bodies
reading those locals (LOAD_CLASSDEREF; 3.12+: LOAD_FROM_DICT_OR_DEREF),
annotations (SETUP_ANNOTATIONS) and ``@dataclass`` on a class made in the
trace (``variables/objects/classes.py``). Every test compares with eager and states
its graph count.
"""
import dataclasses
from dataclasses import KW_ONLY
from typing import ClassVar, List, Optional

import pytest

import torch

import framegraph
from helpers import assert_same


def same_as_eager(fn, *args):
    expected = fn(*args)
    actual = framegraph.compile(fn, backend="eager")(*args)
    assert_same(actual, expected)
    return actual


# ---- methods that close over the enclosing function's variables
def misbehaves_when_enabled(x):
    class Bad:
        def __eq__(self, other):
            if not enabled:
                return False
            return self is not other

        def __hash__(self):
            return 0

    enabled = False  # assigned after the class statement: the methods read the cell
    a, b = Bad(), Bad()
    before = a == b
    enabled = True
    return x + 1, before, a == b


def test_methods_read_the_frames_cell_when_called(framegraph_trace):
    same_as_eager(misbehaves_when_enabled, torch.ones(2))
    assert framegraph_trace.graphs == 1


def counts_calls(x):
    calls = 0

    class Counter:
        def hit(self, k):
            nonlocal calls
            calls += k
            return calls

    c = Counter()
    c.hit(1)
    c.hit(2)
    return x * calls, calls


def test_nonlocal_write_from_a_method_goes_to_the_frame(framegraph_trace):
    same_as_eager(counts_calls, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- the body reads the enclosing function's variables itself
def snapshot_then_change(x):
    scale = 3

    class Config:
        factor = scale

        def current(self):
            return scale

    scale = 4  # the class keeps 3; its method sees 4
    return x * Config.factor, Config.factor, Config().current(), Config


@pytest.mark.expect_fallback("graph_output")
def test_a_class_whose_body_and_methods_share_a_changed_variable_runs_as_cpython_runs_it():
    # the body read 3, its method keeps the cell (now 4): one real cell cannot give both to
    # a class rebuilt after the graph, so the frame runs unmodified (and correctly)
    compiled = framegraph.compile(snapshot_then_change, backend="eager")
    first, second = compiled(torch.ones(2)), compiled(torch.ones(2))
    assert_same(first[:3], snapshot_then_change(torch.ones(2))[:3])
    assert first[3] is not second[3] and first[3].factor == 3 and first[3]().current() == 4


def snapshot_kept_in_the_trace(x):
    scale = 3

    class Config:
        factor = scale

        def current(self):
            return scale

    scale = 4
    return x * Config.factor, Config.factor, Config().current()


def test_body_reads_a_local_that_changes_later(framegraph_trace):
    same_as_eager(snapshot_kept_in_the_trace, torch.ones(2))
    assert framegraph_trace.graphs == 1


def body_reads_only(x):
    limit = 2

    class Window:
        size = limit

    limit = 5
    return x + Window.size, Window


def test_a_variable_only_the_body_read_is_rebuilt_with_the_value_it_read(framegraph_trace):
    out = framegraph.compile(body_reads_only, backend="eager")(torch.ones(2))
    assert out[1].size == 2 and torch.equal(out[0], torch.full((2,), 3.0))
    assert framegraph_trace.graphs == 1


def body_reads_a_list(x):
    items = [1, 2]

    class Holder:
        held = items  # the class holds that very list: not a trace-time constant

    Holder.held.append(3)
    return x + len(items)


def test_a_body_reading_a_mutable_local_runs_as_cpython_runs_it(framegraph_trace):
    # the class statement breaks the graph and runs as it is: Holder.held is items itself
    same_as_eager(body_reads_a_list, torch.ones(2))
    assert framegraph_trace.graphs == 1  # after the break


class Registry:
    level = 1


def holds_a_global_class(x):
    class Uses:
        kind = Registry  # a class whose attributes may change: not held by a class built now

    return x + Uses.kind.level


def test_a_body_holding_a_mutable_global_runs_as_cpython_runs_it(framegraph_trace):
    compiled = framegraph.compile(holds_a_global_class, backend="eager")
    assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 2.0))
    Registry.level = 2
    try:
        assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 3.0))
    finally:
        Registry.level = 1
    assert framegraph_trace.graphs == 2  # after the break; again when Registry.level changed (a guard)


# ---- annotations
def annotated(x):
    class Point:
        x: int
        y: Optional[List[int]] = None
        z: int | None = 0
        total: ClassVar[int] = 10

    ann = Point.__annotations__
    return (x + Point.total, list(ann), ann["x"] is int, ann["y"] == Optional[List[int]],
            str(ann["z"]), Point.z)


def test_class_body_with_annotations(framegraph_trace):
    same_as_eager(annotated, torch.ones(2))
    assert framegraph_trace.graphs == 1


LIMIT = 4


def reads_a_global_constant(x):
    class Box:
        limit = LIMIT

    return x + Box.limit


def test_a_global_the_body_reads_is_guarded(framegraph_trace):
    global LIMIT
    compiled = framegraph.compile(reads_a_global_constant, backend="eager")
    assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 5.0))
    LIMIT = 6
    try:
        assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 7.0))
    finally:
        LIMIT = 4
    assert framegraph_trace.graphs == 2  # a recompile, not a stale class


# ---- @dataclass on a class made in the trace
def dataclass_in_a_function(x):
    @dataclasses.dataclass(order=True)
    class Version:
        major: int
        minor: int = 0
        tags: list = dataclasses.field(default_factory=list, compare=False)

    a, b = Version(1, 2), Version(1, 3)
    a.tags.append("rc")
    return (x + a.minor, a < b, a == Version(1, 2), dataclasses.astuple(b),
            [f.name for f in dataclasses.fields(Version)], a.tags, b.tags)


def test_dataclass_defined_in_a_function(framegraph_trace):
    same_as_eager(dataclass_in_a_function, torch.ones(2))
    assert framegraph_trace.graphs == 1


def frozen_dataclass(x):
    @dataclasses.dataclass(frozen=True)
    class Pair:
        a: int
        b: int = 5

    p = Pair(1)
    try:
        p.a = 2
    except dataclasses.FrozenInstanceError:
        frozen = True
    return x + p.a + p.b, frozen, hash(p) == hash(Pair(1))


def test_frozen_dataclass(framegraph_trace):
    same_as_eager(frozen_dataclass, torch.ones(2))
    assert framegraph_trace.graphs == 1


def dataclass_field_order_error(x):
    try:
        @dataclasses.dataclass
        class Wrong:
            a: int = 0
            b: int
    except TypeError as e:
        return x + 1, str(e)
    return x, ""


def test_what_dataclass_raises_is_raised_where_cpython_raises_it(framegraph_trace):
    same_as_eager(dataclass_field_order_error, torch.ones(2))
    assert framegraph_trace.graphs == 1


def keyword_only_fields(x):
    @dataclasses.dataclass
    class Options:
        name: str
        _: KW_ONLY
        verbose: bool = False

    return x + 1, Options("a", verbose=True).verbose, Options("b").verbose


def test_kw_only_marker_in_the_annotations(framegraph_trace):
    same_as_eager(keyword_only_fields, torch.ones(2))
    assert framegraph_trace.graphs == 1


def returns_dataclass_and_instance(x):
    @dataclasses.dataclass
    class Item:
        name: str
        count: int = 1

    return x + 1, Item, Item("a", 2)


def test_a_dataclass_that_outlives_the_trace_is_rebuilt_per_call(framegraph_trace):
    compiled = framegraph.compile(returns_dataclass_and_instance, backend="eager")
    (_, cls1, item1), (_, cls2, _) = compiled(torch.ones(2)), compiled(torch.ones(2))
    assert cls1 is not cls2 and type(item1) is cls1 and dataclasses.is_dataclass(cls1)
    assert item1 == cls1("a", 2) and repr(item1).endswith("Item(name='a', count=2)")
    assert framegraph_trace.graphs == 1


def instance_across_a_graph_break(x):
    k = 10

    class Acc:
        def __init__(self, v):
            self.v = v

        def total(self):
            return self.v + k

    a = Acc(3)
    framegraph.graph_break()
    return x + a.total(), type(a) is Acc


def test_an_instance_of_a_local_class_across_a_graph_break(framegraph_trace):
    same_as_eager(instance_across_a_graph_break, torch.ones(2))
    assert framegraph_trace.graphs == 1  # nothing to compute before the break: one graph, after it


def replaced(x):
    @dataclasses.dataclass
    class Span:
        start: int
        unit: ClassVar[str] = "s"
        end: int = 0

    a = Span(1, 4)
    b = dataclasses.replace(a, end=9)  # compares each field's kind by identity (`is _FIELD`)
    return x + b.end, (b.start, b.end), type(b) is Span, a == Span(1, 4), b.unit


def test_dataclasses_replace(framegraph_trace):
    same_as_eager(replaced, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- what classes made in the trace exposed in the object model
def keys_hashed_by_a_counting_hash(x):
    class Key:
        def __hash__(self):
            calls.append(1)
            return 7

    calls = []
    d = {}
    k = Key()
    d[k] = 1
    return x + d[k], len(calls)  # each lookup runs __hash__: 2 calls, as in CPython


def test_a_key_with_a_python_hash_runs_it_as_cpython_does(framegraph_trace):
    # traced once per dict operation (traced_keys.py); the dict stays in the frame
    assert same_as_eager(keys_hashed_by_a_counting_hash, torch.ones(2))[1] == 2
    assert framegraph_trace.graphs == 1


def class_attribute_named_class(x):
    class Odd:
        __class__ = 413  # found on the type before object's __class__ descriptor

    return x + 1, Odd().__class__


def test_a_class_attribute_named_dunder_class(framegraph_trace):
    same_as_eager(class_attribute_named_class, torch.ones(2))
    assert framegraph_trace.graphs == 1
