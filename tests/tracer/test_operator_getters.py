"""``operator.itemgetter``/``attrgetter``/``methodcaller`` as sort keys and accessors."""
import collections
import operator

import torch

import framegraph
from helpers import CountingBackend, assert_same, check

Layer = collections.namedtuple("Layer", "name weight")


def test_itemgetter_as_a_sort_key_and_with_several_keys():
    def f(x, pairs):
        ordered = sorted(pairs, key=operator.itemgetter(1))
        first, last = operator.itemgetter(0, -1)(ordered)
        return x * first[1] + last[1], ordered

    check(f, torch.ones(2), [("b", 3), ("a", 1), ("c", 2)])


def test_attrgetter_follows_dotted_paths():
    def f(layers):
        names = list(map(operator.attrgetter("name"), layers))
        shapes = [operator.attrgetter("weight.shape")(l)[0] for l in layers]
        return sum(l.weight for l in layers), names, shapes

    check(f, [Layer("q", torch.ones(2)), Layer("k", torch.zeros(2))])


def test_methodcaller_with_arguments():
    def f(x):
        total = operator.methodcaller("sum", dim=0)(x)
        flat = operator.methodcaller("reshape", -1)(x)
        return total, flat

    check(f, torch.ones(2, 3))


def test_a_getter_returned_from_the_frame_is_rebuilt():
    def f(x, key):
        return x + 1, operator.itemgetter(key), operator.methodcaller("split", ",", maxsplit=1)

    cnt = CountingBackend()
    got = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2), 1)
    want = f(torch.ones(2), 1)
    assert_same(got[0], want[0])
    assert got[1]([5, 6]) == want[1]([5, 6]) == 6
    assert got[2]("a,b,c") == want[2]("a,b,c") == ["a", "b,c"] and cnt.frame_count == 1
