"""The right operand goes first when its type is a subclass of the left's.

CPython's binary operators and comparisons give a subclass the first word:
``1 + MyInt(2)`` asks ``MyInt.__radd__`` before ``int.__add__``, and
``base == derived`` asks the derived class's ``__eq__`` first. Containment
(``x in range(3)``, ``x in [0, 1]``) compares each item with ``item == x``, so
an int subclass that says it equals everything is found everywhere. A list
has no number slot, so ``x += obj`` asks ``obj.__radd__`` before the list
extends itself.
"""
import torch

from helpers import check


class Base:
    def __eq__(self, other):
        return ("Base.__eq__", self is other_base)

    def __lt__(self, other):
        return "Base.__lt__"

    def __gt__(self, other):
        return "Base.__gt__"

    def __add__(self, other):
        return "Base.__add__"

    def __radd__(self, other):
        return "Base.__radd__"


class Derived(Base):
    def __eq__(self, other):
        return "Derived.__eq__"

    def __gt__(self, other):
        return "Derived.__gt__"

    def __radd__(self, other):
        return "Derived.__radd__"


class Inherits(Base):
    """Overrides nothing: its comparison still runs first, with it as ``self``."""


class EqualsAll(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class Reflects(int):
    def __radd__(self, other):
        return "Reflects.__radd__"


other_base = Base()


def test_a_subclass_of_the_left_operands_class_answers_first():
    base, derived, inherits = Base(), Derived(), Inherits()

    def f(x):
        return (x + 1, base == derived, derived == base, base < derived, base + derived,
                other_base == inherits, base + inherits, Base() == Derived(), Base() + Derived())

    check(f, torch.ones(2))


def test_an_int_subclass_is_asked_before_int():
    outside = Reflects(2)

    def f(x):
        return x + 1, 1 + Reflects(2), 1 + outside, 0 == EqualsAll(5), 1.0 == EqualsAll(5), 2 + EqualsAll(5)

    check(f, torch.ones(2))


def test_containment_compares_each_item_with_the_subclass_first():
    outside = EqualsAll(11)

    def f(x):
        made = EqualsAll(11)
        return (x + 1, made in range(10), made in list(range(10)), made in (0, 1), outside in range(10),
                outside in [0, 1], 1.0 in range(3), True in range(3))

    assert f(torch.ones(2))[1:] == (True,) * 7
    check(f, torch.ones(2))


class Joins:
    """Iterable, and answers ``list + self`` itself."""

    def __iter__(self):
        return iter((7, 8))

    def __radd__(self, other):
        return ("Joins.__radd__", len(other))

    def __rmul__(self, other):
        return "Joins.__rmul__"


def test_a_reflected_operator_answers_before_a_list_extends_itself():
    def f(x):
        joined, repeated, extended, doubled = [1], [2], [3], [4]
        joined += Joins()     # the list has no number slot: Joins.__radd__ first
        repeated *= Joins()
        extended += (7, 8)    # a tuple has none either: the list extends itself
        doubled *= 2
        return x + 1, joined, repeated, extended, doubled, [0] + Joins(), [1] + list(Joins())

    assert f(torch.ones(2))[1] == ("Joins.__radd__", 1)
    check(f, torch.ones(2))


class Words(str):
    def __eq__(self, other):
        return "Words.__eq__"

    def __radd__(self, other):
        return "Words.__radd__"

    __hash__ = str.__hash__


def test_a_str_or_bytes_concatenates_only_after_the_other_operands_number_slot():
    def f(x):
        return x + 1, "ab" + Reflects(2), b"a" + Reflects(3), "ab" * Reflects(2), "ab" + Words("c")

    assert f(torch.ones(2))[1:3] == ("Reflects.__radd__", "Reflects.__radd__")
    check(f, torch.ones(2))


def test_a_tensor_declines_a_str_subclass_and_its_dunder_answers():
    def f(x):
        return (x + 1, x == Words("ab"), x != Words("ab"), Words("ab") == x, x + Words("ab"),
                EqualsAll(1) == x, x == EqualsAll(1), Base() == x)

    out = f(torch.ones(2))
    assert out[1] == out[3] == "Words.__eq__" and out[5] is True
    check(f, torch.ones(2))


def test_an_in_place_operator_refused_names_itself():
    def f(x):
        out = []
        for left, right in ((2.5, None), (1, "a"), ((1,), [2])):
            try:
                left += right
            except TypeError as e:
                out.append(str(e))
        return x + 1, out

    assert "for +=: 'float' and 'NoneType'" in f(torch.ones(2))[1][0]
    check(f, torch.ones(2))


def test_errors_of_a_value_subclass_are_the_operators():
    def f(x):
        out = []
        for thunk in (lambda: Words("ab") * [1, 2], lambda: [1] * Words("a"), lambda: Words("a") * 2.5):
            try:
                thunk()
            except TypeError as e:
                out.append(str(e))
        r = Reflects(2)
        try:
            r *= "ab"  # a class statement's class has (empty) sequence slots: no repeat
        except TypeError as e:
            out.append(str(e))
        n = 2
        n *= "ab"
        return x + 1, out, n

    assert f(torch.ones(2))[1][0] == "can't multiply sequence by non-int of type 'list'"
    check(f, torch.ones(2))
