"""itertools as libraries use it: lazy, in step with the program, rebuilt after a break.

``islice`` takes only what it yields from the iterator it shares, predicates
run once per item, ``count`` numbers layers, ``zip_longest`` pads, and an
iterator that is still live at a graph break comes back in the same state.
"""
import itertools
import operator

import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, check


def test_islice_takes_only_what_it_yields_from_a_shared_iterator():
    def f(x, chunks):
        it = iter(chunks)
        head = list(itertools.islice(it, 2))
        rest = list(it)
        return x * len(head) + sum(rest), head

    check(f, torch.ones(2), [1, 2, 3, 4, 5])


@pytest.mark.parametrize("args", [(3,), (1, 4), (0, None, 2), (2, 9, 3), (5, 2)])
def test_islice_start_stop_step(args):
    def f(x, n):
        picked = list(itertools.islice(range(n), *args))
        return x * sum(picked), picked

    check(f, torch.ones(2), 8)


def test_predicates_run_once_per_item_in_order():
    def f(x, lengths):
        calls = []

        def short(n):
            calls.append(n)
            return n < 3

        kept = list(itertools.takewhile(short, lengths))
        dropped = list(itertools.dropwhile(lambda n: n < 3, lengths))
        return x * sum(kept), kept, dropped, calls

    check(f, torch.ones(2), [1, 2, 5, 1, 7])


def test_accumulate_running_totals_of_tensors():
    def f(xs):
        sums = list(itertools.accumulate(xs))
        products = list(itertools.accumulate(xs, operator.mul, initial=torch.ones(2)))
        return sums, products

    check(f, [torch.full((2,), float(i)) for i in range(1, 4)])


def test_count_numbers_layers_and_repeat_pads():
    def f(xs):
        out = []
        for i, t in zip(itertools.count(1), xs):
            out.append(t * i)
        pads = list(itertools.repeat(0.5, 2))
        return out, pads, sum(itertools.islice(itertools.count(10, 5), 3))

    check(f, [torch.ones(2), torch.ones(2)])


def test_zip_longest_and_starmap():
    def f(a, b):
        pairs = list(itertools.zip_longest([a, b], [b], fillvalue=None))
        sums = list(itertools.starmap(torch.add, [(a, b), (b, b)]))
        return len(pairs), pairs[1][1] is None, sums

    check(f, torch.ones(2), torch.full((2,), 2.0))


def test_compress_combinations_permutations():
    def f(x, names):
        chosen = list(itertools.compress(names, [1, 0, 1]))
        pairs = list(itertools.combinations(names, 2))
        orders = list(itertools.permutations(names[:2]))
        return x * len(pairs), chosen, pairs, orders

    check(f, torch.ones(2), ["q", "k", "v"])


def test_an_islice_live_at_a_graph_break_resumes_where_it_was():
    def f(x, items):
        it = itertools.islice(iter(items), 1, None, 2)
        first = next(it)
        y = x * first
        framegraph.graph_break()
        return y + sum(it), type(it).__name__

    cnt = CountingBackend()
    got = framegraph.compile(f, backend=cnt)(torch.ones(2), [1, 2, 3, 4, 5, 6])
    assert_same(got, f(torch.ones(2), [1, 2, 3, 4, 5, 6]))
    assert cnt.frame_count == 2


def test_a_count_returned_keeps_counting():
    def f(x):
        c = itertools.count(3, 2)
        return x * next(c), c

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    (got, c_got), (want, c_want) = compiled(torch.ones(2)), f(torch.ones(2))
    assert_same(got, want)
    assert type(c_got) is itertools.count and next(c_got) == next(c_want) == 5 and cnt.frame_count == 1


def test_chain_reads_each_source_only_when_it_gets_there():
    def f(x, a, b):
        it = iter(a)
        c = itertools.chain(it, b)
        first = next(c)
        rest_of_a = list(it)  # the chain took one item of a: the rest is still there
        flat = list(itertools.chain.from_iterable([[1, 2], (3,), range(2)]))
        return x * first, rest_of_a, list(c), flat

    check(f, torch.ones(2), [1, 2, 3], [4])


def test_a_chain_live_at_a_graph_break_resumes_in_the_middle():
    def f(x, a, b):
        c = itertools.chain(a, b)
        y = x * next(c)
        framegraph.graph_break()
        return y, list(c)

    cnt = CountingBackend()
    got = framegraph.compile(f, backend=cnt)(torch.ones(2), [1, 2], [3])
    assert_same(got, f(torch.ones(2), [1, 2], [3]))
    assert cnt.frame_count == 1


def test_combinatoric_iterators_refuse_a_negative_r_after_reading_the_pool():
    def f(x):
        out = [list(itertools.combinations("abc", 2))]
        for make in (itertools.combinations, itertools.permutations, itertools.combinations_with_replacement):
            try:
                make("abc", -1)
            except ValueError as e:
                out.append(str(e))
        return x + 1, out

    check(f, torch.ones(2))


def test_pairwise_entered_again_from_its_own_inner_iterator():
    """The inner ``__next__`` calls ``next()`` on the pairwise itself: the outer call goes on
    with the iterator and item it read first, as pairwise_next does."""
    def f(x, maxcount):
        class Inner:
            count = 0

            def __iter__(self):
                return self

            def __next__(self):
                if self.count >= maxcount:
                    raise StopIteration
                self.count += 1
                if self.count == 1:
                    return next(it, None)
                return [self.count]

        it = itertools.pairwise(Inner())
        return x + 1, list(it)

    for maxcount in (1, 3, 4, 5):
        check(f, torch.ones(2), maxcount)


def test_cycle_and_filterfalse_read_their_source_lazily():
    def fn(x):
        source = iter([1, 2, 3, 4])
        rest = itertools.filterfalse(lambda n: n % 2, source)
        first = next(rest)  # 2: two items read from source, the rest left to it
        colours = itertools.cycle(["r", "g"])
        tags = [next(colours) for _ in range(5)]
        return (x * first, list(source), tags, list(itertools.filterfalse(None, [0, 1, "", "a"])),
                list(itertools.cycle([])))

    check(fn, torch.ones(2))


def test_tee_iterators_share_one_buffer():
    # itertoolsmodule.c's tee: each iterator reads every item; the inner iterator is read
    # once per item, when the first iterator gets there (the generator's log shows when)
    def f(x, chunks):
        log = []

        def source():
            for t in chunks:
                log.append(len(log))
                yield t * x

        a, b = itertools.tee(source())
        total = next(a) + next(a)
        seen = len(log)
        c, d = itertools.tee(b)  # a tee of a tee: b itself, and a copy of it
        return (total, seen, [t - total for t in c], list(d), list(a), len(log), c is b,
                itertools.tee(chunks, 0), type(a).__name__, next(a.__copy__(), None))

    check(f, torch.ones(2), [torch.randn(2) for _ in range(3)])


def test_the_pairwise_recipe_with_tee():
    def pairwise(iterable):
        a, b = itertools.tee(iterable)
        next(b, None)
        return zip(a, b)

    def f(xs):
        return [b - a for a, b in pairwise(xs)]

    check(f, [torch.randn(2) for _ in range(4)])


def test_groupby_groups_runs_of_equal_keys_in_one_graph():
    def f(state):
        out = {}
        for prefix, group in itertools.groupby(sorted(state), key=lambda k: k.split(".")[0]):
            out[prefix] = sum(state[k] for k in group)
        return out, [k for k, _ in itertools.groupby("aabbbac")]

    state = {"enc.w": torch.ones(2), "dec.w": torch.ones(2), "enc.b": torch.ones(2)}
    check(f, state)


def test_groupby_drops_a_group_skipped_and_reads_one_item_ahead():
    seen = []

    def key(pair):
        seen.append(pair[1])  # the key function runs once per item read, in order
        return pair[1] > 0

    def f(pairs):
        groups = itertools.groupby(pairs, key=key)
        k1, g1 = next(groups)
        k2, g2 = next(groups)  # g1 is empty from here on
        first = next(g2)[0] * 2
        rest = [k for k, _ in groups]
        return k1, list(g1), k2, first, rest, list(g2), len(seen)

    pairs = [(torch.ones(1) * i, tag) for i, tag in enumerate([1, 2, -1, -2, 3])]
    expected = f(pairs)
    seen.clear()
    cnt = CountingBackend()
    actual = framegraph.compile(f, backend=cnt, fullgraph=True)(pairs)
    assert_same(actual, expected)
    assert seen == [1, 2, -1, -2, 3] and cnt.frame_count == 1


# the comprehensions after the break run as they are: a real groupby's state is C's, not readable
@pytest.mark.expect_fallback("unsupported_call", "cannot_resume")
def test_a_groupby_not_started_at_a_graph_break_is_rebuilt_and_one_part_way_is_a_break():
    def fresh(x, words):
        groups = itertools.groupby(words, key=len)
        y = x * 2
        framegraph.graph_break()
        return y, [(k, list(g)) for k, g in groups]

    def started(x, words):
        groups = itertools.groupby(words, key=len)
        k, _ = next(groups)
        y = x * k
        framegraph.graph_break()
        return y, [key for key, _ in groups]

    words = ["a", "b", "cc", "dd", "e"]
    for fn, graphs in ((fresh, 1), (started, 0)):  # part way: the frame runs as it is
        cnt = CountingBackend()
        assert_same(framegraph.compile(fn, backend=cnt)(torch.ones(2), words), fn(torch.ones(2), words))
        assert cnt.frame_count == graphs, fn.__name__
