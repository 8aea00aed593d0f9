"""_C.CachedHash: sources and guards are hashed once, in C, and pickled by their fields."""
import copy
import pickle

import pytest

from framegraph import _C
from framegraph.guards.kinds import Guard
from framegraph.guards.sources import AttrSource, ConstSource, GetItemSource, LocalSource


class Counted(_C.CachedHash):
    __hash__ = _C.CachedHash.__hash__

    def __init__(self, value):
        self.value, self.calls = value, 0

    def _field_hash(self):
        self.calls += 1
        return self.value


def test_an_instance_is_hashed_once_and_as_cpython_takes_a_hash():
    a = Counted(12345)
    assert hash(a) == hash(a) == 12345 and a.calls == 1
    assert hash(Counted(-1)) == -2  # -1 means an error to C: CPython's __hash__ gives -2 too
    big = 2 ** 80
    assert hash(Counted(big)) == hash(big)


@pytest.mark.parametrize("value, error", [("x", TypeError), (None, TypeError)])
def test_a_field_hash_that_is_no_int_raises_and_is_asked_again(value, error):
    a = Counted(value)
    for _ in range(2):
        with pytest.raises(error):
            hash(a)
    assert a.calls == 2


def test_a_class_without_a_field_hash_raises_attribute_error():
    class Bare(_C.CachedHash):
        __hash__ = _C.CachedHash.__hash__

    with pytest.raises(AttributeError):
        hash(Bare())


def test_equal_sources_hash_alike_and_travel_by_their_fields():
    make = lambda: GetItemSource(AttrSource(LocalSource("self"), "_modules"), "0")  # noqa: E731
    a, b = make(), make()
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    a.name()  # kept on the source: not pickled
    for other in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert other == a and hash(other) == hash(a) and "_name" not in other.__dict__
    const = ConstSource.of(int)
    assert pickle.loads(pickle.dumps(const)).value is int


def test_guards_hash_by_kind_source_and_value():
    g = Guard("CONSTANT_MATCH", LocalSource("x"), 3)
    assert hash(g) == hash(Guard("CONSTANT_MATCH", LocalSource("x"), 3))
    assert g != Guard("CONSTANT_MATCH", LocalSource("x"), 4)
    assert pickle.loads(pickle.dumps(g)) == g
