"""Values the trace computed differently from CPython, found because a test of
CPython's suite failed an assertion inside the trace (the graph break that
followed let CPython run it again, so the test passed and hid them). In a
program without that assertion, each was a silent wrong answer."""
import collections
import collections.abc

import pytest
import torch

from helpers import assert_same, check, check_breaks, run_counted


def attempt(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as e:
        return type(e).__name__, str(e)


def set_equals_frozenset(x, letters=set("simsalabim")):
    # set_richcompare: a set and a frozenset of the same members are equal
    return x + 1, letters == frozenset("simsalabim"), frozenset(letters) == set("simsalabim"), \
        letters != frozenset("sim"), {1: 0}.keys() == frozenset({1})


def test_a_set_equals_a_frozenset_of_the_same_members():
    check_breaks(set_equals_frozenset, lambda: (torch.ones(2),), graphs=1, breaks=0)


def bad_factory(x):
    # defdict_init: the factory must be callable or None, checked at the call
    return x + 1, attempt(collections.defaultdict, {}), attempt(collections.defaultdict, list, {"a": 1})


def test_defaultdict_checks_its_factory():
    check_breaks(bad_factory, lambda: (torch.ones(2),), graphs=1, breaks=0)


def bool_of_two(x):
    return x + 1, attempt(bool, 42, 42)


def test_bool_takes_one_argument():
    check_breaks(bool_of_two, lambda: (torch.ones(2),), graphs=1, breaks=0)


class NeverTrue:
    __bool__ = None  # bool() of it raises TypeError: 'NoneType' object is not callable


def bool_of_blocked(x):
    return x + 1, attempt(bool, NeverTrue())


def test_a_dunder_set_to_none_raises_in_the_trace():
    result, cnt, breaks, errors = run_counted(bool_of_blocked, torch.ones(2))
    assert_same(result, bool_of_blocked(torch.ones(2)))
    assert (cnt.frame_count, breaks, errors) == (1, [], [])


class Count(int):
    """An int subclass: ==, < and + are int's, comparing and adding the values."""


def int_subclass_values(x, a=Count(5), b=Count(5)):
    return x + 1, a == b, a == 5, a != b, a < 6


def test_an_int_subclass_compares_by_value():
    result, cnt, breaks, errors = run_counted(int_subclass_values, torch.ones(2))
    assert_same(result, int_subclass_values(torch.ones(2)))
    assert result[1:] == (True, True, False, True)
    assert not errors and all("Count.__" in b.context for b in breaks)


def iterator_calls(x):
    return x + 1, attempt(len, reversed([1, 2, 3])), attempt(map, abs), attempt(enumerate, "abc", "a")


def test_calls_cpython_rejects_raise_in_the_trace():
    # len() of an iterator, map() with no iterable, a start that is not an int: each
    # was accepted by the trace, or raised later, outside the caller's try
    check_breaks(iterator_calls, lambda: (torch.ones(2),), graphs=1, breaks=0)


def sort_with_a_meddling_key(x):
    data = list(range(5))
    seen = []

    def key(v):
        seen.append(len(data))  # CPython empties the list while it sorts
        data.append(v)
        return -v

    return x + 1, attempt(lambda: data.sort(key=key)), data, seen


def test_a_list_changed_while_it_sorts_raises_and_is_restored():
    check_breaks(sort_with_a_meddling_key, lambda: (torch.ones(2),), graphs=1, breaks=0)


class Table(collections.abc.Mapping):
    """A Mapping: its `__reversed__ = None` makes reversed() raise TypeError."""

    def __getitem__(self, key):
        raise KeyError(key)

    def __len__(self):
        return 0

    def __iter__(self):
        return iter(())


def reverse_a_mapping(x):
    return x + 1, attempt(reversed, Table())


def test_reversed_of_a_mapping_raises():
    check_breaks(reverse_a_mapping, lambda: (torch.ones(2),), graphs=1, breaks=0)


def found(member, container):
    return member in container


def nan_in_a_list(x, nan=float("nan")):
    # list_contains compares with PyObject_RichCompareBool: the same object is found
    return x + 1, found(nan, [nan]), [nan].count(nan)


def test_the_same_nan_is_found_in_a_list():
    check_breaks(nan_in_a_list, lambda: (torch.ones(2),), graphs=1, breaks=0)


def exception_keywords(x):
    return x + 1, attempt(lambda: ValueError("bad", code=3))


def test_builtin_exceptions_take_no_keywords():
    check_breaks(exception_keywords, lambda: (torch.ones(2),), graphs=1, breaks=0)


KEY_WRAPPER = type(__import__("functools").cmp_to_key(None))


def make_key_wrapper(x):
    return x + 1, attempt(KEY_WRAPPER)  # a C type without tp_new: "cannot create ... instances"


def test_a_type_that_cannot_be_instantiated_raises():
    check_breaks(make_key_wrapper, lambda: (torch.ones(2),), graphs=1, breaks=0)


class Defaults(dict):
    def __missing__(self, key):
        return len(key)


def missing_keys(x, counts=collections.Counter("aab"), table=Defaults(a=1)):
    # dict_subscript: a subclass's __missing__ answers, not KeyError
    found = []
    for mapping in (counts, table, collections.Counter("xy")):
        try:
            found.append(mapping["zz"])
        except KeyError:
            found.append(None)
    return x + 1, found, "zz" in table


def test_a_dict_subclass_missing_key_calls_missing():
    check_breaks(missing_keys, lambda: (torch.ones(2),), graphs=1, breaks=0)


def test_super_checks_its_object_and_opens_only_a_captured_self():
    """``super()`` reads the first argument; only when ``self`` is a cell variable (a
    closure captures it) is the cell opened. A cell *passed* as self, or
    ``super(Y, X())``, is supercheck's TypeError."""
    class Base:
        def meth(self):
            super()
            return 1

    class Child(Base):
        def meth(self):
            def helper():
                return self  # makes self a cell variable of meth
            return super().meth() + (helper() is self)

    def f(x):
        def make():
            obj = Base()

            def g():
                return obj
            return g
        cell = make().__closure__[0]
        errors = []
        for call in (lambda: Base.meth(cell), lambda: super(Child, Base())):
            try:
                call()
            except TypeError as e:
                errors.append(str(e))
        return x + Child().meth(), errors

    check(f, torch.ones(2))


@pytest.mark.expect_fallback("exception")  # __bool__ raising, run by CPython after the break
def test_a_c_computed_attribute_is_not_read_before_the_traces_writes_land():
    """``property.__isabstractmethod__`` asks ``fget.__isabstractmethod__``, which the
    trace wrote: read from the real object before the write is replayed it was False,
    and the ValueError of the value's ``__bool__`` never came (a break, then CPython)."""
    class NotBool:
        def __bool__(self):
            raise ValueError("no truth")

    def f(x):
        try:
            p = property(lambda self: 1)
            p.fget.__isabstractmethod__ = NotBool()
            p.__isabstractmethod__
        except ValueError:
            return x + 1
        return x

    result, cnt, breaks, errors = run_counted(f, torch.ones(2))
    assert_same(result, f(torch.ones(2)))
    assert any("computed by C code" in str(e) for e in errors + breaks), (errors, breaks)
    assert cnt.frame_count == 0  # no tensor work before the break; __bool__'s raise sends the rest to CPython


def test_abs_of_a_user_object_calls_its_dunder():
    class Distance:
        def __abs__(self):
            return 3

        def __neg__(self):
            return -1

    def f(x):
        d = Distance()
        return x + abs(d) + (-d)

    check(f, torch.ones(2))


def test_deleting_or_setting_a_class_attribute_through_a_slotted_object_is_read_only():
    """No instance ``__dict__``: ``del obj.y`` and ``obj.y = 0`` for a plain class attribute
    ``y`` are "'B' object attribute 'y' is read-only" (the message was 'has no attribute')."""
    class Plain:
        pass

    class Slotted:
        y = 0
        __slots__ = ("z",)

    def f(x):
        out = []
        for thunk in (lambda: delattr(Plain(), "x"), lambda: delattr(Slotted(), "x"),
                      lambda: delattr(Slotted(), "y"), lambda: setattr(Slotted(), "y", 0),
                      lambda: setattr(Slotted(), "x", 0)):
            try:
                thunk()
            except AttributeError as e:
                out.append(str(e))
        return x + 1, out

    check(f, torch.ones(2))


class RefusesTruth:
    def __bool__(self):
        raise ValueError("no truth")


def _abstract_flag_property():
    def getter(self):
        return 1
    getter.__isabstractmethod__ = RefusesTruth()
    return property(getter)


def read_abstract_flag(x, prop):
    try:
        prop.__isabstractmethod__     # property's C getter asks bool() of fget's flag: it raises
    except ValueError:
        return x + 1
    return x


def test_a_c_getter_that_raises_raises_in_the_trace():
    check(read_abstract_flag, torch.ones(2), _abstract_flag_property())
