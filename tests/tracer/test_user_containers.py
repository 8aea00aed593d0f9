"""User subclasses of list and set made inside compiled code, as libraries write them."""
import torch

import framegraph
from helpers import CountingBackend, assert_same, assert_same_as_eager, check, run_counted


class Layers(list):
    """A list with a helper method and an attribute (a module registry)."""

    def __init__(self, items=(), name="layers"):
        super().__init__(items)
        self.name = name

    def total(self, x):
        for fn in self:
            x = fn(x)
        return x


class Tags(set):
    def add(self, item):  # an override: normalises, then the builtin add
        super().add(item.lower())


class Stack(list):
    def __getitem__(self, i):
        return list.__getitem__(self, -1 - i)  # indexes from the top

    def __len__(self):
        return list.__len__(self) * 1


def test_a_list_subclass_with_methods_and_attributes():
    def f(x):
        layers = Layers([torch.relu, torch.tanh], name="act")
        layers.append(torch.sigmoid)
        return layers.total(x), len(layers), layers.name, isinstance(layers, list)

    check(f, torch.randn(3))


def test_a_set_subclass_override_runs_and_operators_give_plain_sets():
    def f(x):
        tags = Tags()
        tags.add("Q")
        tags.add("q")
        tags.add("K")
        union = tags | {"v"}
        return x * len(tags), sorted(tags), type(union) is set, "q" in tags

    check(f, torch.ones(2))


def test_overridden_slots_are_inlined():
    def f(x):
        s = Stack([x, x * 2, x * 3])
        n = Stack([1, 2, 3])
        return s[0], len(s), n == [1, 2, 3], n[0]

    check(f, torch.ones(2))


def test_list_subclass_equality_and_concatenation_follow_list():
    def f(x):
        a, b = Layers([1, 2]), Layers([3])
        joined = a + b
        return x * len(joined), type(joined) is list, a == [1, 2], [1, 2] == a, a[:1]

    check(f, torch.ones(2))


def test_a_list_subclass_returned_is_rebuilt_with_its_attributes():
    def f(x):
        layers = Layers([x + 1], name="out")
        layers.extra = 3
        return layers

    cnt = CountingBackend()
    got = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    want = f(torch.ones(2))
    assert type(got) is Layers and (got.name, got.extra) == (want.name, want.extra) == ("out", 3)
    assert_same(list(got), list(want))
    assert cnt.frame_count == 1


class SameKeys(dict):
    def __eq__(self, other):  # equal when the keys are, whatever the values
        return set(self) == set(other)

    __hash__ = None


def test_a_dict_subclass_eq_override_decides_equality():
    def f(x):
        return x + 1, SameKeys(a=1) == {"a": 2}, SameKeys(a=1) != {"b": 1}

    check(f, torch.ones(2))


def test_item_assignment_through_a_python_setitem():
    """``collections.UserDict`` and a registry class: ``obj[k] = v`` and ``del obj[k]`` run
    the class's ``__setitem__``/``__delitem__``, as CPython does."""
    import collections

    class Registry:
        def __init__(self):
            self.entries = {}

        def __setitem__(self, key, value):
            self.entries[key.lower()] = value

        def __delitem__(self, key):
            del self.entries[key.lower()]

    class Plain:
        pass

    def f(x, registry):
        registry["Scale"] = x * 2
        registry["Tmp"] = 1
        del registry["TMP"]
        u = collections.UserDict()
        u["a"] = x + 1
        u["b"] = 2
        del u["b"]
        try:
            Plain()[0] = 1
        except TypeError as e:
            why = str(e)
        return u["a"] + len(u), why

    mine, theirs = Registry(), Registry()
    assert_same_as_eager(f, torch.ones(2), mine, graphs=1)
    f(torch.ones(2), theirs)
    assert mine.entries.keys() == theirs.entries.keys() == {"scale"}


def test_fromkeys_through_a_dict_subclass_makes_the_subclass():
    """dict_fromkeys: ``Sub()``, then ``d[key] = value`` through Sub's own ``__setitem__``."""
    import collections

    class Ordered(collections.OrderedDict):
        pass

    class Lower(dict):
        def __setitem__(self, key, value):
            super().__setitem__(key.lower(), value)

    def f(x):
        a, b = Ordered.fromkeys("abc"), Lower.fromkeys(["A", "B"], 0)
        a.move_to_end("a")
        return x + 1, [type(a).__name__, list(a.items()), type(b).__name__, dict(b)]

    check(f, torch.ones(2))


class Registry(dict):
    def total(self):
        return sum(self.values())


def test_the_builtin_new_of_a_subclass_makes_an_empty_instance():
    # list.__new__(Sub) (what a __new__ calling its base's runs): the subclass, no __init__ run
    def f(x):
        layers = list.__new__(Layers)
        layers.extend([torch.relu, torch.sin])
        tags = set.__new__(Tags)
        tags.add("A")
        registry = dict.__new__(Registry)
        registry["a"] = 2
        return layers.total(x) + registry.total(), type(layers).__name__, hasattr(layers, "name"), tags, \
            type(registry).__name__, dict(registry)

    check(f, torch.randn(3))


class Span(tuple):
    """A tuple with methods of its own (an interval, a shape helper)."""

    def length(self):
        return self[1] - self[0]

    def __add__(self, other):
        return Span((min(self[0], other[0]), max(self[1], other[1])))


OUTSIDE_SPAN = Span((2, 5))


def test_a_tuple_subclass_with_methods():
    def f(x):
        made = Span((0, 3))
        new = tuple.__new__(Span, (1, 4))
        joined = made + OUTSIDE_SPAN
        return x * joined.length() + new.length() + OUTSIDE_SPAN.length(), joined, type(new).__name__, \
            made == (0, 3), made[::-1], len(joined)

    cnt = check(f, torch.ones(2))
    assert cnt.frame_count == 1


class Flags(frozenset):
    """A frozenset with a query method (a set of feature flags)."""

    def has(self, tag):
        return tag in self


class Present(frozenset):
    """Its own __new__ filters the items; its own __init__ records an attribute."""

    def __new__(cls, items, extra=()):
        return super().__new__(cls, [i for i in items if i] + list(extra))

    def __init__(self, items, extra=()):
        self.n = len(self)


class Named(frozenset):
    def __init__(self, items, name="x"):
        self.name = name


def assert_same_frozensets(actual, expected):
    assert type(actual) is type(expected) and actual == expected
    assert vars(actual) == vars(expected) if hasattr(expected, "__dict__") else True


def test_a_frozenset_subclass_made_in_the_frame_is_one_graph():
    def f(x):
        tags = Flags(["train", "fp32"])
        return x * (2 if tags.has("train") else 1), sorted(tags), "fp16" in tags

    check(f, torch.ones(2))


def test_a_frozenset_subclass_with_its_own_new_and_init():
    def f(x):
        present = Present(["a", "", "b"], extra=("c",))
        named = Named("ab", name="q")
        return x * present.n, sorted(present), named.name, type(present | {"z"}).__name__, \
            type(present.copy()).__name__, len(present & named)

    check(f, torch.ones(2))


def test_frozenset_subclasses_returned_are_rebuilt_with_their_attributes():
    def f(x):
        return x + 1, Present(["a", "b"]), Named("xy", name="n"), Flags()

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    x = torch.randn(2)
    expected, actual = f(x), compiled(x)
    assert torch.equal(actual[0], expected[0]) and cnt.frame_count == 1
    for got, want in zip(actual[1:], expected[1:]):
        assert_same_frozensets(got, want)


def test_a_frozenset_subclass_from_outside_is_read_through_its_methods():
    def f(x, tags):
        return x * 3 if tags.has("scale") else x, len(tags), sorted(tags)

    cnt = check(f, torch.ones(2), Flags({"scale", "bias"}))
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert torch.equal(compiled(torch.ones(2), Flags({"bias"}))[0], torch.ones(2))  # guarded: a new graph


def test_writing_an_attribute_of_an_outside_frozenset_subclass_breaks_the_graph():
    # the write happens in CPython, where its effect on the instance is the real one
    def f(x, flags):
        y = x * 2 if flags.has("a") else x
        flags.seen = True
        return y + 1

    flags, mirror = Flags("a"), Flags("a")
    expected = f(torch.ones(2), mirror)
    result, cnt, breaks, errors = run_counted(f, torch.ones(2), flags)
    assert torch.equal(result, expected) and vars(flags) == vars(mirror) == {"seen": True}
    assert not errors and cnt.frame_count == 2 and len(breaks) == 1


def test_frozenset_subclass_constructor_errors_are_cpythons():
    def f(x):
        try:
            Flags(["a"], ["b"])
        except TypeError as e:
            return x + 1, str(e)

    check(f, torch.ones(2))
