"""Instances of user subclasses of int, float and str made in compiled code.

Libraries subclass immutable builtins for a name or a tag (``class Version(str)``,
``class Flag(int)`` with a ``__new__`` storing extra fields); CPython's test_int
and test_dict make them to check the slots. What the class inherits runs the
base's C code on the value; what it defines is Python code, traced.
"""
import torch

import framegraph
from helpers import assert_same, same_as_eager


class Name(str):
    pass


class Count(int):
    pass


class Ratio(float):
    pass


class Tagged(int):
    """An int carrying a tag: ``__new__`` through ``super().__new__``, then a field."""

    def __new__(cls, value, tag):
        self = super().__new__(cls, value)
        self.tag = tag
        return self


class Shout(str):
    def __str__(self):
        return self.upper() + "!"


def test_inherited_slots_compute_on_the_value(framegraph_trace):
    def fn(x):
        n, s, r = Count(3), Name("msg"), Ratio(1.5)
        return (x * n, n + 1, type(n + 1).__name__, n == 3, 3 == n, -n, hash(n) == hash(3), n > 2,
                s.upper(), type(s.upper()).__name__, s + "x", len(s), s[1], list(s), "ms" in s,
                r * 2, r.is_integer(), type(n).__name__, n is Count(3))

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


def test_conversions_follow_the_number_protocol(framegraph_trace):
    class Index(int):
        def __index__(self):  # int() asks __int__ first: int's, on the value
            return 42

    class Int(int):
        def __int__(self):
            return 42

    class BadInt(int):
        def __int__(self):
            return 42.0

    def fn(x):
        out = [int(Index(7)), int(Int(7)), float(Count(2)), int(Name("12")), int(Ratio(2.5))]
        try:
            int(BadInt(1))
        except TypeError as error:
            out.append(str(error))
        return x + out[0], out

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


def test_repr_str_and_format(framegraph_trace):
    def fn(x):
        n, s = Count(5), Shout("hi")
        return x + 1, repr(n), str(n), f"{n}", f"{n:03d}", repr(s), str(s), f"{s}", f"{s!r}"

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


def test_a_str_subclass_finds_what_its_value_would(framegraph_trace):
    class Holder:
        def __init__(self, msg):
            self.msg = msg

    def fn(x):
        h, table = Holder("123"), {"msg": x}
        key = Name("msg")
        return table[key] * 2, getattr(h, Name("msg")), h.__dict__[Name("msg")], key in {"msg"}

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


def test_a_returned_instance_is_rebuilt_with_its_class_and_fields(framegraph_trace):
    def fn(x):
        t = Tagged(4, "four")
        return x + t, t, Name("n"), Count(9)

    out = same_as_eager(fn, torch.ones(2))
    assert type(out[1]) is Tagged and out[1].tag == "four" and type(out[2]) is Name and type(out[3]) is Count
    assert framegraph_trace.graphs == 1
    # each call makes new objects, as eager does
    compiled = framegraph.compile(fn, backend="eager")
    assert compiled(torch.ones(2))[1] is not compiled(torch.ones(2))[1]


def test_parse_errors_are_the_base_constructors(framegraph_trace):
    def fn(x):
        try:
            Count("seven")
        except ValueError as error:
            return x - 1, str(error)
        return x

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


def test_an_instance_from_outside_is_guarded_by_its_value(framegraph_trace):
    def fn(x, n, s):
        return x * n, n + 1, s.upper(), {s: 1}.get("ab"), n

    compiled = framegraph.compile(fn, backend="eager")
    for n, s in ((Count(3), Name("ab")), (Count(3), Name("ab")), (Count(4), Name("cd"))):
        out = compiled(torch.ones(2), n, s)
        assert_same(out, fn(torch.ones(2), n, s))
        assert out[-1] is n
    assert framegraph_trace.graphs == 2  # a new value traces again, as a constant would
