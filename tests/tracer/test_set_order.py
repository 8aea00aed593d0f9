"""A set iterates in its hash table's order. CPython builds a set display of
constants by copying a frozenset constant's table (SET_UPDATE), copies a set's
table in set(s), and grows a table one insert at a time otherwise; the trace
does the same real operations on a real set, so loops, list() and the sets it
returns iterate as in eager. String hashes change per process, so these run
for whatever seed the test run has."""
import collections

import torch

from helpers import assert_same, check, check_breaks

NAMES = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
         "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega"}


def field_order(x, known=NAMES):
    fields = {"weight", "bias", "running_mean", "running_var", "num_batches_tracked", "scale", "shift",
              "gamma", "beta", "eps", "momentum", "affine", "track_running_stats"}
    extra = set(known)
    extra.add("aleph")
    return x + 1, list(fields), list(known), list(extra), known | {"beth"}, fields


def test_sets_of_strings_iterate_as_in_eager():
    expected = field_order(torch.ones(2))
    check_breaks(field_order, lambda: (torch.ones(2),), graphs=1, breaks=0)
    actual = field_order(torch.ones(2))
    for a, e in zip(actual[1:], expected[1:]):
        assert list(a) == list(e)


def test_a_returned_set_iterates_as_eager_s():
    import framegraph

    compiled = framegraph.compile(field_order, backend="eager")
    for got, want in zip(compiled(torch.ones(2))[1:], field_order(torch.ones(2))[1:]):
        assert_same(list(got), list(want))


def test_an_equal_set_that_iterates_otherwise_recompiles():
    import framegraph
    from helpers import CountingBackend

    holder = {"s": set([8, 16])}  # 8 and 16 share a slot: the first one added keeps it

    def order(x):
        return x + 1, list(holder["s"])

    cnt = CountingBackend()
    compiled = framegraph.compile(order, backend=cnt)
    assert compiled(torch.ones(1))[1] == [8, 16]
    holder["s"] = set([16, 8])  # equal, but iterates 16, 8
    assert compiled(torch.ones(1))[1] == list(holder["s"]) == [16, 8]
    assert cnt.frame_count == 2


def shrunk():
    s = set(range(40))
    for i in range(35):
        s.discard(i)  # five left in a table sized for forty: no copy has that table
    return s


def test_a_set_whose_table_no_copy_reproduces_iterates_as_read():
    def read(x, s):
        return x + 1, list(s), sorted(s)

    check_breaks(read, lambda: (torch.ones(2), shrunk()), graphs=1, breaks=0)


def test_after_a_change_its_order_is_cpython_s_to_tell():
    def grow_then_read(x, s):
        s.add(1000)
        return x + 1, list(s)

    check_breaks(grow_then_read, lambda: (torch.ones(2), shrunk()), graphs=1, breaks=1)


def test_a_constant_is_one_element_whatever_tracker_holds_it():
    # n is a graph input (an int the guards read), 1 a literal: {n, 1} is {1} for n == 1
    def dedupe(x, n):
        k = sum(sorted({n, n * 2, 1})) + abs(-n)
        return x + k, {n, 1, n * 1}

    for n in (1, 2):
        check_breaks(dedupe, lambda: (torch.ones(2), n), graphs=1, breaks=0)


def test_copies_of_sets_iterate_as_cpythons_copies():
    """copy.copy is set.copy (the table copied: same order); deepcopy rebuilds the set
    item by item from a list (its order can differ, in CPython too); a frozenset's copy is itself."""
    import copy

    def f(x, outside):
        t = {(1, 2), "a", None, 0}
        deep, shallow, frozen = copy.deepcopy(t), copy.copy(t), frozenset([1, 2])
        return x + 1, [list(deep), list(shallow), shallow is t, copy.copy(frozen) is frozen,
                       copy.deepcopy(frozen) == frozen, sorted(copy.deepcopy(outside))]

    check(f, torch.ones(2), {"x", "y"})


def test_a_constant_display_with_a_tuple_iterates_as_cpythons():
    # the compiler makes the display a frozenset constant merged into an empty set: CPython
    # copies its table, which inserting its items in iteration order does not rebuild
    def display(x):
        return x + 1, list({0, 1, 5, (9,)}), list({"a", None, 0, (1, 2)} | {(3,)})

    check(display, torch.ones(2))


def test_a_set_that_lives_across_a_break_is_rebuilt_in_the_order_it_grew():
    # added in this order, these ints iterate 34, 37, 38, 6, 39: adding them in that order
    # makes another table (39 before 6), and so does copying a frozenset of them
    def grow_across_a_break(x):
        s = set([6, 34, 39])
        s.add(37)
        s.add(38)
        if x.sum() > 0:  # a break: the code after it gets s rebuilt
            order = list(s)
            s.add(14)
        return x + 1, order, s

    check_breaks(grow_across_a_break, lambda: (torch.ones(2),), graphs=2, breaks=1)


def grown():
    s = set([6, 34, 39])
    s.add(37)
    s.add(38)
    return s


def test_a_set_from_outside_gets_the_trace_s_changes_one_by_one():
    # clear() and update() would give s a table of another size, which iterates 39 before 6
    def change(x, s):
        s.add(14)
        s.discard(34)
        s.add(2)
        return x + 1

    check_breaks(change, lambda: (torch.ones(2), grown()), graphs=1, breaks=0)


def test_a_set_from_outside_updated_from_other_sets_gets_each_update_again():
    def change(x, s, names):
        s |= {1, 2}
        s.pop()
        s.difference_update([4, 9])
        s.symmetric_difference_update({40, 8})
        names &= {"weight", "bias", "eps"}
        names.update(("scale", "shift"))
        s.update({7: 0, 23: 1, 15: 2})  # a dict: one resize first, then its keys
        names.update(collections.OrderedDict(mu=0, sigma=1))  # a dict subclass: iterated
        return x + 1

    check_breaks(change, lambda: (torch.ones(2), {5, 17, 4}, {"weight", "eps", "gamma", "beta"}), graphs=1, breaks=0)


def test_a_set_from_outside_grown_in_a_loop_iterates_as_eager_s():
    def grow(x, s):
        for i in range(100):  # more changes than are replayed one by one: refilled instead
            s.add(i * 7)
        return x + 1

    check_breaks(grow, lambda: (torch.ones(2), {3, 5}), graphs=1, breaks=0)
