"""What CPython's own test suite found the tracer doing differently from CPython.

Each case is the minimised form of a Lib/test test that passed uncompiled and
failed, or hit an internal error, compiled (``framegraph/testing/cpython.py``).
Every test compares with eager and states its graph count.
"""
import sys

import pytest
import torch

import framegraph
from helpers import assert_same


def same_as_eager(fn, *args):
    expected = fn(*args)
    actual = framegraph.compile(fn, backend="eager")(*args)
    assert_same(actual, expected)
    return actual


def raised_by(fn, *args):
    try:
        fn(*args)
    except Exception as e:
        return type(e), str(e)
    return None


# ---- test_dict.test_mutating_iteration, test_set.test_changingSizeWhileIterating
def grow_dict(x):
    d = {1: 1}
    try:
        for i in d:
            d[i + 1] = 1
    except RuntimeError:
        return x + 1, len(d)
    return x - 1, len(d)


def grow_set(x):
    s = {1, 2}
    try:
        for i in s:
            s.add(i + 10)
    except RuntimeError:
        return x + 1, len(s)
    return x - 1, len(s)


@pytest.mark.parametrize("fn", [grow_dict, grow_set])
def test_changing_size_during_iteration_raises(fn, framegraph_trace):
    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


def grow_dict_uncaught(x):
    d = {1: 1}
    for i in d:
        d[i + 1] = 1
    return x + 1


@pytest.mark.expect_fallback("exception")
def test_changing_size_during_iteration_uncaught(framegraph_trace):
    expected = raised_by(grow_dict_uncaught, torch.ones(2))
    assert expected == (RuntimeError, "dictionary changed size during iteration")
    assert raised_by(framegraph.compile(grow_dict_uncaught, backend="eager"), torch.ones(2)) == expected
    assert framegraph_trace.graphs == 0


def same_size_new_keys(x):
    d = {0: 0}
    try:
        for i in d:
            del d[0]
            d[0] = 0
    except RuntimeError as e:
        return x + 1
    return x - 1


@pytest.mark.expect_fallback("unsupported_value")
def test_keys_changed_during_iteration(framegraph_trace):
    # CPython: "dictionary keys changed during iteration"; it depends on the hash
    # table, so the frame runs as it is (an iterator rebuilt after a break would not know)
    same_as_eager(same_size_new_keys, torch.ones(2))
    assert framegraph_trace.graphs == 0


# ---- an existing key keeps its first object (test_dict, test_set: 1 == 1.0 == True)
def first_key_stays(x):
    d = {1: "a"}
    d[1.0] = "b"
    d.update({True: "c"})
    s = {1}
    s.add(1.0)
    s.update([True])
    return x * 2, [(type(k), v) for k, v in d.items()], [type(k) for k in s]


def test_existing_key_keeps_its_object(framegraph_trace):
    same_as_eager(first_key_stays, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- test_set.TestWeirdBugs.test_8420_set_merge: keys compared by a user __eq__
class Point:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, Point) and self.v == other.v

    def __hash__(self):
        return hash(self.v)


def user_eq_keys(x):
    s = {Point(1), Point(1)}
    d = {Point(2): "a"}
    return x + 1, len(s), Point(2) in d


def test_keys_with_a_user_eq(framegraph_trace):
    # hashed and compared by their Python methods, traced (traced_keys.py)
    assert same_as_eager(user_eq_keys, torch.ones(2))[1:] == (1, True)
    assert framegraph_trace.graphs == 1


# ---- errors CPython raises that the tracer raised inside itself (internal errors)
def bad_calls(x):
    out = []
    try:
        bool(x=1)
    except TypeError as e:
        out.append(type(e).__name__)
    try:
        [].pop()
    except IndexError as e:
        out.append(type(e).__name__)
    try:
        [1, 2] * (sys.maxsize // 2)
    except MemoryError as e:
        out.append(type(e).__name__)
    return x + 1, out


def list_item_errors(x):
    a = []
    try:
        a["a"] = 1
    except TypeError:
        x = x + 1
    try:
        del a[3]
    except IndexError:
        x = x + 1
    return x


def test_user_errors_are_not_internal_errors(framegraph_trace):
    assert same_as_eager(bad_calls, torch.ones(2))[1] == ["TypeError", "IndexError", "MemoryError"]
    same_as_eager(list_item_errors, torch.ones(2))
    # the TypeError, IndexError and list item errors are raised and caught in the trace
    # (list_item_errors is one graph); the MemoryError breaks the graph where CPython
    # raises it, and what follows its handler runs as it is (a resume function at an
    # exception handler is not traced)
    assert framegraph_trace.graphs == 1


# ---- test_list.test_repr: a list that contains itself
def self_containing(x):
    a = [0, 1]
    a.append(a)
    b = [a, a]
    return x + 1, repr(a), repr(b)


def test_repr_of_a_list_containing_itself(framegraph_trace):
    assert same_as_eager(self_containing, torch.ones(2))[1] == "[0, 1, [...]]"
    assert framegraph_trace.graphs == 1


# ---- test_set.TestSubset*.test_issubset: eval(..., locals()) at a graph break
def eval_locals(x, n):
    a = {1, 2}
    b = {1, 2, 3}
    y = x + 1
    less = eval("a < b", locals())
    return y * 2, less, eval("n + 1")


def test_eval_with_locals_sees_the_traced_locals(framegraph_trace):
    same_as_eager(eval_locals, torch.ones(2), 3)
    assert framegraph_trace.graphs == 2  # before and after the break at eval


# ---- test_operator.test_setitem, test_delitem: folded on a copy, the change was lost
def operator_mutations(x):
    import operator

    a = [4, 3, 2, 1]
    d = {"k": 1}
    results = (operator.delitem(a, 1), operator.setitem(a, 0, 9), operator.setitem(d, "j", 2),
               operator.delitem(d, "k"))
    return x + len(a), a, d, results


def test_operator_setitem_and_delitem_change_their_argument(framegraph_trace):
    assert same_as_eager(operator_mutations, torch.ones(2))[1:3] == ([9, 2, 1], {"j": 2})
    assert framegraph_trace.graphs == 1


# ---- test_set.TestIdentities.test_binopsVsSubsets: `a - b < a` was an internal error
def subset_comparisons(x):
    a, b = set("abracadabra"), set("alacazam")
    return x + 1, a - b < a, a | b > b, a & b <= a, a ^ b >= a | b


def test_set_subset_comparisons(framegraph_trace):
    same_as_eager(subset_comparisons, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- test_functools.test_lru_reentrancy_with_len: builtins.len replaced for a while
def cache_len_for_a_while(x):
    import builtins
    import functools

    old_len = builtins.len
    try:
        builtins.len = functools.lru_cache(4)(len)
        n = [len("abcdef"[:i]) for i in (0, 1, 1, 3)]
    finally:
        builtins.len = old_len
    return x + 1, n


@pytest.mark.expect_fallback("builtins_replaced")
def test_replaced_builtin_is_put_back():
    # framegraph's own Python calls len(a_list): while the program's cached len is
    # there, frames run unmodified, and the finally block restores the builtin
    import builtins

    same_as_eager(cache_len_for_a_while, torch.ones(2))
    assert builtins.len is len


# ---- test_contextlib.test_contextmanager_as_decorator, test_recursive: a closure
# made before a graph break reads a cell the frame assigns after it
def cell_assigned_after_the_break(x):
    def read():
        return state

    print("a graph break")
    state = [1]
    return x + 1, read()


def test_cell_assigned_after_a_break_is_the_closures_cell(framegraph_trace, capsys):
    same_as_eager(cell_assigned_after_the_break, torch.ones(2))
    assert framegraph_trace.graphs == 1  # nothing to capture before the break


# ---- test_itertools.test_zip: zip() of nothing is empty (the trace looped forever)
def zip_of_nothing(x):
    return x + 1, list(zip()), [p for p in zip()]


def test_zip_of_nothing_is_empty(framegraph_trace):
    same_as_eager(zip_of_nothing, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- test_itertools.test_combinations: a loop that breaks at every iteration
def breaks_every_iteration(x):
    out = []
    for i in range(40):
        print("a graph break")
        out.append(i)
    return x + 1, out


@pytest.mark.expect_fallback("cannot_resume")
def test_a_chain_of_resume_functions_is_bounded(framegraph_trace, capsys):
    # each break makes a resume function of the last one; past resume.MAX_DEPTH
    # the rest of the loop runs unmodified instead of being traced and built anew
    same_as_eager(breaks_every_iteration, torch.ones(2))
    assert framegraph_trace.graphs <= 1


# ---- test_float.test_floatasratio: 10,000 iterations, a break in each
def breaks_every_iteration_of_a_long_loop(x, n):
    out = 0
    for i in range(n):
        print("a graph break", end="")
        out += i
    return x + 1, out


@pytest.mark.expect_fallback("cannot_resume")
def test_the_rest_of_a_long_loop_is_handed_over_as_one_constant(framegraph_trace, capsys):
    # each resume function gets the rest of the range as a tuple: one guard and one
    # constant for it, not one per item (that made each of the chain's traces
    # cost as much as the whole loop)
    from framegraph.diagnostics.records import observing

    guards = []
    with observing(lambda record: guards.append(len(record.compiled.guard_lines)) if record.compiled else None):
        same_as_eager(breaks_every_iteration_of_a_long_loop, torch.ones(2), 5000)
    assert len(guards) > 2 and max(guards) < 20, guards
    assert framegraph_trace.graphs <= 1


# ---- test_tuple.test_repeat, test_constructors: an exact tuple times 1, and tuple(t), are t
def tuple_identity(x):
    u = (1, x)
    return x + 1, u * 1 is u, tuple(u) is u, () * 3 is (), [1] * 1 is not [1]


def test_tuple_repeat_and_tuple_of_a_tuple_keep_the_object(framegraph_trace):
    same_as_eager(tuple_identity, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- test_contextlib.test_exit_is_abstract: an abstract class cannot be instantiated
def make_abstract(x):
    import contextlib

    class MissingExit(contextlib.AbstractContextManager):
        pass

    try:
        MissingExit()
    except TypeError as e:
        return x + 1, str(e)
    return x, ""


def test_abstract_class_instantiation_raises(framegraph_trace):
    same_as_eager(make_abstract, torch.ones(2))


# ---- test_ordered_dict.test_copying: an OrderedDict with attributes of its own
def copy_with_attributes(x, od):
    import copy

    dup = copy.copy(od)
    return x + 1, dup.x is od.x, list(dup.items())


@pytest.mark.expect_fallback("unsupported_value")
def test_dict_with_instance_attributes_is_not_read_as_items_only():
    import collections

    od = collections.OrderedDict([("a", 1)])
    od.x = ["x"]
    same_as_eager(copy_with_attributes, torch.ones(2), od)


# ---- test_dict.test_dict_copy_order: dict(d) of a subclass with its own __iter__
def copy_reversed_dict(x):
    class Reversed(dict):
        def keys(self):
            return reversed(list(dict.keys(self)))

        __iter__ = keys

    return x + 1, list(dict(Reversed([("a", 1), ("b", 2)])).items())


def test_dict_of_a_subclass_with_its_own_iter(framegraph_trace):
    # dict_merge goes through the subclass's keys() and [key] (its table is not read)
    same_as_eager(copy_reversed_dict, torch.ones(2))
    assert framegraph_trace.graphs == 1


# ---- test_functools.test_callable_register: a descriptor read through the class runs __get__
class Dispatching:
    import functools as _functools

    @_functools.singledispatchmethod
    def t(self, arg):
        return "base"


def read_descriptor_through_class(x):
    return x + 1, hasattr(Dispatching.t, "register"), Dispatching.t.__name__


def test_class_attribute_descriptor_is_not_read_raw(framegraph_trace):
    same_as_eager(read_descriptor_through_class, torch.ones(2))


# ---- test_contextlib.test_contextmanager_traceback: the frame names of a traceback
def fails_after_a_break(x):
    y = x + 1
    framegraph.graph_break()
    return 1 / 0 if y.sum() > 0 else y  # raises in the resume function


def test_a_traceback_through_a_resume_function_names_the_function(framegraph_trace):
    import traceback

    names = []
    for fn in (fails_after_a_break, framegraph.compile(fails_after_a_break, backend="eager")):
        try:
            fn(torch.ones(2))
        except ZeroDivisionError as e:
            names.append([frame.name for frame in traceback.extract_tb(e.__traceback__)][-1])
    assert names == ["fails_after_a_break", "fails_after_a_break"]
    assert framegraph_trace.graphs == 2  # x + 1; then y.sum() > 0 in the resume function, which breaks there


# ---- test_enumerate.test_len: reversed() of a user sequence reads one item per next()
class Recorded:
    """A sequence by __len__ and __getitem__ only, recording what is read."""

    def __init__(self):
        self.reads = []

    def __len__(self):
        return 4

    def __getitem__(self, i):
        self.reads.append(i)
        return i * 10


def first_small_from_the_end(x, seq):
    for v in reversed(seq):
        if v < 25:
            break
    return x + v


def test_reversed_of_a_user_sequence_reads_items_as_it_goes(framegraph_trace):
    expected_seq, seq = Recorded(), Recorded()
    expected = first_small_from_the_end(torch.ones(1), expected_seq)
    actual = framegraph.compile(first_small_from_the_end, backend="eager")(torch.ones(1), seq)
    assert_same(actual, expected)
    assert seq.reads == expected_seq.reads == [3, 2]  # not all four up front
    assert framegraph_trace.graphs == 1


# ---- test_userlist.test_exhausted_iterator: iter() of an object whose __iter__ is a generator
def two_iterators_of_a_userlist(x):
    import collections

    a = collections.UserList([1, 2, 3])
    exhausted, paused = iter(a), iter(a)
    for _ in exhausted:
        next(paused)  # paused after its third item
    a.append(9)
    return x + 1, list(exhausted), list(paused)


def test_iter_of_an_object_runs_its_generator_lazily(framegraph_trace):
    out = same_as_eager(two_iterators_of_a_userlist, torch.ones(1))
    assert out[1:] == ([], [9])  # the paused one sees the item appended after it paused
    assert framegraph_trace.graphs == 1


# ---- test_userlist.test_repeat (seq_tests): id(s) == id(s * 1), with id() run by CPython
def same_id_after_repeat(x):
    out = []
    for m in range(3):
        s = tuple(range(m))
        out.append(id(s) == id(s * 1))  # id: a graph break; s * 1 is traced in the resume function
    return x + 1, out


def test_a_tuple_times_one_keeps_its_identity_across_a_graph_break(framegraph_trace):
    assert same_as_eager(same_id_after_repeat, torch.ones(1))[1] == [True, True, True]
    assert framegraph_trace.graphs == 1  # x + 1, in the last resume function


# ---- test_dict.test_oob_indexing_dictiter_iternextitem: a dict changed by what CPython runs at a break
@framegraph.disable
def drop_one(d, key):
    del d[key]


def mutate_at_a_break(x, d):
    try:
        for key, _ in d.items():
            if key == 2:
                drop_one(d, 3)  # run by CPython at the break: the loop's next step must raise
    except RuntimeError as e:
        return x + 1, str(e)
    return x - 1, len(d)


def test_a_dict_iterator_handed_over_at_a_break_still_sees_the_dict_change(framegraph_trace):
    results = []
    for fn in (mutate_at_a_break, framegraph.compile(mutate_at_a_break, backend="eager")):
        results.append(fn(torch.ones(1), {i: i for i in range(5)})[1])
    assert results == ["dictionary changed size during iteration"] * 2
    assert framegraph_trace.graphs == 1  # x + 1 in the resume function's handler


class Finalised(int):
    """An int whose __del__ empties a dict: when it runs decides what a loop sees."""

    box = None

    def __del__(self):
        if Finalised.box is not None:
            Finalised.box.clear()


def overwrite_while_iterating(x, d):
    try:
        for key, _ in d.items():
            if key == 2:
                d[2] = None  # drops Finalised(2): its __del__ clears d mid-loop
    except RuntimeError:
        return x + 1, "changed size"
    return x - 1, len(d)


def test_dropping_an_object_with_a_finaliser_is_left_to_cpython(framegraph_trace):
    # the store is a graph break, so CPython drops the value when it runs it (not at a
    # replay after the loop); the trace's own garbage is collected before the frame
    # runs, so even the first call's trace does not hold it
    compiled = framegraph.compile(overwrite_while_iterating, backend="eager")
    results = []
    for fn in (overwrite_while_iterating, compiled, compiled):
        d = {i: Finalised(i) for i in range(4)}
        Finalised.box = d
        results.append(fn(torch.ones(1), d)[1])
        Finalised.box = None
    assert results == ["changed size"] * 3, results
    # the store breaks the frame: a graph before it; the resume function's loop then
    # raises, and its handler (x + 1) runs as it is
    assert framegraph_trace.graphs == 1


# ---- test_super.test_super_argcount, test_super_argtype: super()'s own argument errors
def bad_super(x, args):
    try:
        super(*args)
    except TypeError as e:
        return x + 1, str(e)
    return x - 1, None


@pytest.mark.parametrize("args", [(int, int, int), (1, int)], ids=["three", "not-a-type"])
def test_super_checks_its_arguments(args, framegraph_trace):
    same_as_eager(bad_super, torch.ones(1), args)
    assert framegraph_trace.graphs == 1


# ---- test_property.test_property_decorator_baseclass: hasattr() runs a property's getter
class Lazy:
    def __init__(self):
        self.ready = False

    @property
    def value(self):
        if not self.ready:
            raise AttributeError("value is not ready")
        return 1


def has_value_before_and_after(x):
    o = Lazy()
    before = hasattr(o, "value")  # the getter raises AttributeError: False
    o.ready = True
    return x + 1, before, hasattr(o, "value")


def test_hasattr_of_a_property_runs_its_getter(framegraph_trace):
    assert same_as_eager(has_value_before_and_after, torch.ones(1))[1:] == (False, True)
    assert framegraph_trace.graphs == 1
