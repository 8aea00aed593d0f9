"""Classes as libraries write them: enums, metaclasses, class attribute writes.

Configuration enums (Hugging Face's ``PaddingStrategy``, a ``str`` mixin),
singleton and registry metaclasses, class-level counters: each compiles to one
graph with the result eager gives, on every call.
"""
import abc
import enum
import typing

import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, assert_same_as_eager, check


class Padding(str, enum.Enum):  # the shape of transformers' ExplicitEnum / PaddingStrategy
    LONGEST = "longest"
    MAX_LENGTH = "max_length"
    DO_NOT_PAD = "do_not_pad"


class ExplicitEnum(str, enum.Enum):
    """transformers' base for its option enums: a clear error for a bad value."""

    @classmethod
    def _missing_(cls, value):
        raise ValueError(f"{value} is not a valid {cls.__name__}")


class TruncationStrategy(ExplicitEnum):
    ONLY_FIRST = "only_first"
    LONGEST_FIRST = "longest_first"
    DO_NOT_TRUNCATE = "do_not_truncate"


class Mode(enum.Enum):
    TRAIN = 1
    EVAL = 2


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3


class Perm(enum.Flag):
    READ = 1
    WRITE = 2


def test_enum_lookup_by_value_and_by_name():
    def f(x, v):
        return x * Mode(v).value + Mode["EVAL"].value

    check(f, torch.ones(2), 2)
    check(f, torch.ones(2), 1)


class Activation(enum.Enum):
    RELU = "relu"
    TANH = "tanh"

    def apply(self, t):
        return torch.relu(t) if self is Activation.RELU else torch.tanh(t)

    def scaled(self, t, k=2.0):
        return self.apply(t) * k


def test_a_method_of_an_enum_is_inlined_for_a_member_and_guarded_on_the_class():
    def f(x, act):
        return Activation.TANH.scaled(x) + act.apply(x)

    check(f, torch.randn(3), Activation.RELU)
    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    x = torch.randn(3)
    assert_same(compiled(x, Activation.RELU), f(x, Activation.RELU))
    original = Activation.apply
    Activation.apply = lambda self, t: t * 100  # the class's method replaced: a new trace
    try:
        assert_same(compiled(x, Activation.RELU), f(x, Activation.RELU))
    finally:
        Activation.apply = original
    assert cnt.frame_count == 2


def test_str_enum_from_a_config_string():
    def f(x, padding):
        strategy = Padding(padding)
        if strategy == "max_length" and strategy is Padding.MAX_LENGTH:
            return x + 1
        return x - 1

    assert_same_as_eager(f, torch.ones(2), "max_length", graphs=1)
    assert_same_as_eager(f, torch.ones(2), "longest", graphs=1)


def test_explicit_enum_of_a_config_option():
    def f(x, option):
        if not isinstance(option, TruncationStrategy):
            option = TruncationStrategy(option)
        keep = option in (TruncationStrategy.ONLY_FIRST, TruncationStrategy.LONGEST_FIRST)
        return x + keep, option.value, [m.value for m in TruncationStrategy]

    check(f, torch.ones(2), "only_first")
    check(f, torch.ones(2), TruncationStrategy.DO_NOT_TRUNCATE)


def test_explicit_enum_missing_hook_raises_in_the_trace():
    def f(x):
        try:
            TruncationStrategy("middle")
        except ValueError as e:
            return x * 2, str(e)
        return x + 1, ""

    check(f, torch.ones(2))


def test_enum_value_error_is_raised_in_the_trace():
    def f(x):
        try:
            Mode(7)
        except ValueError as e:
            return x + len(str(e))
        return x

    check(f, torch.ones(2))


def test_iterating_and_sizing_an_enum_class():
    def f(x):
        total = x
        for m in Mode:
            total = total + m.value
        return total * len(Mode) + len(Mode.__members__), [m.name for m in Mode]

    check(f, torch.ones(2))


def test_membership_and_isinstance_of_members():
    def f(x, m):
        return x + (m in Mode) + isinstance(m, Mode) + (m is Mode.TRAIN) + (m == Mode.EVAL)

    check(f, torch.ones(2), Mode.TRAIN)


def test_int_enum_and_flag_arithmetic():
    def f(x):
        both = Perm.READ | Perm.WRITE
        return x * (Level.LOW + Level.HIGH) + both.value, Perm.WRITE in both

    check(f, torch.ones(2))


class Singleton(type):
    """The singleton metaclass found in many codebases: one instance per class."""

    _instances = {}

    def __call__(cls, *args, **kwargs):
        if cls not in cls._instances:
            cls._instances[cls] = super().__call__(*args, **kwargs)
        return cls._instances[cls]


class Settings(metaclass=Singleton):
    def __init__(self, scale=2):
        self.scale = scale


def test_singleton_metaclass_call_is_inlined():
    Singleton._instances.clear()

    def f(x):
        first = Settings()
        return x * first.scale, first is Settings()

    check(f, torch.ones(2))
    assert type(Singleton._instances[Settings]) is Settings  # the replayed registry write


class Registry(type):
    """A metaclass that makes a class a read-only table of its entries."""

    kind = "registry"

    def __getitem__(cls, key):
        return cls.table[key]

    def __len__(cls):
        return len(cls.table)

    def __contains__(cls, key):
        return key in cls.table

    def __iter__(cls):
        return iter(cls.table)

    def describe(cls):
        return f"{cls.__name__}: {len(cls)}"


class Activations(metaclass=Registry):
    table = {"relu": 1.0, "gelu": 2.0}


def test_registry_metaclass_operators():
    def f(x):
        total = x * Activations["gelu"] + len(Activations) + ("relu" in Activations)
        return total, sorted(Activations), Activations.describe(), Activations.kind, bool(Activations)

    check(f, torch.ones(2))


def test_registry_metaclass_method_guarded_on_the_metaclass():
    def f(x):
        return x + len(Activations)

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert_same(compiled(torch.ones(2)), f(torch.ones(2)))
    old = Registry.__len__
    Registry.__len__ = lambda cls: 10
    try:
        assert_same(compiled(torch.ones(2)), torch.full((2,), 11.0))
    finally:
        Registry.__len__ = old
    assert cnt.frame_count == 2  # the guard on type(Activations).__len__ failed: a new graph


class Counter:
    """Class-level state, as libraries keep it: a default, an instance counter."""

    default_scale = 1
    created = 0

    def __init__(self):
        type(self).created += 1

    @classmethod
    def bump(cls):
        cls.created += 1
        return cls.created


class SubCounter(Counter):
    pass


@pytest.fixture
def fresh_counter():
    Counter.default_scale, Counter.created = 1, 0
    SubCounter.__dict__.get("created") is not None and delattr(SubCounter, "created")
    yield
    Counter.default_scale, Counter.created = 1, 0
    SubCounter.__dict__.get("created") is not None and delattr(SubCounter, "created")


def test_class_attribute_write_is_read_back_and_replayed(fresh_counter):
    instance = SubCounter()
    Counter.created = 0

    def f(x):
        Counter.default_scale = 3
        return x * Counter.default_scale + SubCounter.default_scale + instance.default_scale

    check(f, torch.ones(2))  # eager's call set default_scale = 3 too: the same result
    Counter.default_scale = 1
    check(f, torch.ones(2))
    assert Counter.default_scale == 3 and "default_scale" not in SubCounter.__dict__


def test_classmethod_counter_on_every_call(fresh_counter):
    def f(x):
        return x + SubCounter.bump()

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    results = [compiled(torch.zeros(1)).item() for _ in range(3)]
    assert results == [1.0, 2.0, 3.0]
    assert SubCounter.__dict__["created"] == 3 and Counter.created == 0  # cls is SubCounter
    assert cnt.frame_count == 2  # the count read changed: a new graph, then the count is dynamic


def test_instance_counter_in_init(fresh_counter):
    def f(x):
        a, b = Counter(), Counter()
        return x + Counter.created, a is not b

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    results = [compiled(torch.zeros(1)) for _ in range(3)]
    assert [(r[0].item(), r[1]) for r in results] == [(2.0, True), (4.0, True), (6.0, True)]
    assert Counter.created == 6 and cnt.frame_count == 2


def test_del_and_setattr_of_class_attributes(fresh_counter):
    def f(x):
        for name in ("relu", "gelu"):
            setattr(Counter, f"act_{name}", len(name))
        Counter.tmp = x * 2
        doubled = Counter.tmp
        del Counter.tmp
        return doubled + Counter.act_relu, hasattr(Counter, "tmp"), hasattr(Counter, "act_gelu")

    try:
        check(f, torch.ones(2))
        assert (Counter.act_relu, Counter.act_gelu, hasattr(Counter, "tmp")) == (4, 4, False)
    finally:
        del Counter.act_relu, Counter.act_gelu


def test_deleting_a_missing_class_attribute_raises_in_the_trace(fresh_counter):
    def f(x):
        try:
            del Counter.never_set
        except AttributeError as e:
            return x + 1, str(e)
        return x

    check(f, torch.ones(2))


def test_class_made_in_the_trace_keeps_its_writes():
    def f(x):
        class Table:
            pass

        Table.rows = 3
        Table.weights = x * 2
        return Table, Table()

    cnt = CountingBackend()
    table, row = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert (table.rows, type(row), cnt.frame_count) == (3, table, 1)
    assert torch.equal(table.weights, torch.full((2,), 2.0))
    other, _ = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert other is not table  # a new class on each call, as the class statement makes


def test_enum_member_reassignment_is_refused_as_in_cpython():
    def f(x):
        try:
            Mode.TRAIN = 3
        except AttributeError as e:
            return x + 1, str(e)
        return x

    check(f, torch.ones(2))  # EnumType.__setattr__ reads Mode.__dict__ and raises
    assert Mode.TRAIN.value == 1


T = typing.TypeVar("T")


def test_abstract_base_class_made_in_the_trace():
    def f(x):
        class Shape(abc.ABC):
            @abc.abstractmethod
            def area(self): ...

        class Square(Shape):
            def __init__(self, side):
                self.side = side

            def area(self):
                return self.side * self.side

        try:
            Shape()
        except TypeError as e:
            refused = str(e)
        return x * Square(3).area(), refused, issubclass(Square, Shape)

    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_enum_made_in_the_trace_with_auto_values():
    def f(x):
        class Color(enum.Enum):
            RED = 1
            GREEN = enum.auto()

        return x + Color.GREEN.value + Color(1).value + len(Color), Color.RED.name, Color.RED in Color

    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_flag_with_a_boundary_keyword():
    def f(x):
        class Access(enum.Flag, boundary=enum.STRICT):
            READ = 1
            WRITE = 2

        return x + (Access.READ | Access.WRITE).value

    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_typing_bases_made_in_the_trace():
    def f(x):
        class Point(typing.NamedTuple):
            a: int
            b: int = 2

        class Box(typing.Generic[T]):
            def __init__(self, value):
                self.value = value

        class Sized(typing.Protocol):
            def __len__(self) -> int: ...

        p = Point(1)
        return x + p.a + p.b + Box(4).value, p._fields, Box.__parameters__ == (T,), Sized.__name__

    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_metaclass_keyword_and_a_metaclass_call_made_in_the_trace():
    def f(x):
        class Tracked(type):
            def __call__(cls, *args):
                instance = super().__call__(*args)
                instance.tracked = True
                return instance

        class Layer(metaclass=Tracked):
            def __init__(self, width):
                self.width = width

        layer = Layer(3)
        return x * layer.width, layer.tracked, type(Layer).__name__

    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_class_with_a_metaclass_made_in_the_trace_is_rebuilt_on_each_call():
    def f(x):
        class Meta(type):
            pass

        class Thing(metaclass=Meta):
            size = 3

        return Thing, x + Thing.size

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    (first, _), (second, y) = compiled(torch.ones(2)), compiled(torch.ones(2))
    assert type(first).__name__ == "Meta" and first is not second and type(first) is not type(second)
    assert first.size == 3 and torch.equal(y, torch.full((2,), 4.0)) and cnt.frame_count == 1


def test_metaclass_conflict_is_raised_in_the_trace():
    def f(x):
        class MetaA(type):
            pass

        class MetaB(type):
            pass

        class A(metaclass=MetaA):
            pass

        class B(metaclass=MetaB):
            pass

        try:
            class C(A, B):
                pass
        except TypeError as e:
            return x + 1, str(e)
        return x

    assert_same_as_eager(f, torch.ones(2), graphs=1)


registered = []


class Plugin:
    """A base whose hook registers every subclass: user code outside the class."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        registered.append(cls.__name__)


def test_user_init_subclass_hook_is_not_run_at_trace_time():
    registered.clear()

    def f(x):
        class Local(Plugin):
            pass

        return x + 1

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    for _ in range(2):
        compiled(torch.ones(2))
    assert registered == ["Local", "Local"]  # once per call, as eager: the statement ran in CPython


def double(self):
    return self.value * 2


def test_type_with_three_arguments():
    def f(x):
        Point = type("Point", (Counter,), {"value": 3, "double": double})
        p = Point.__new__(Point)
        return x + Point.value + p.double() + Point.default_scale, Point.__name__, Point.__module__

    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_type_with_three_arguments_returned():
    def f(x):
        Row = type("Row", (), {"size": 2})
        Row.extra = 5
        return Row, Row(), x + Row.size

    cnt = CountingBackend()
    row, instance, y = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert (row.__name__, row.size, row.extra, type(instance), cnt.frame_count) == ("Row", 2, 5, row, 1)
    assert row.__module__ == __name__


# the mro() frame CPython calls: super() before the MRO (3.12's LOAD_SUPER_ATTR breaks at the call,
# 3.11's cannot resume after it)
@pytest.mark.allow_fallback("cannot_resume", "unsupported_call")
def test_metaclass_with_its_own_mro_is_not_built_at_trace_time():
    calls = []

    def f(x):
        class Meta(type):
            def mro(cls):  # type.__new__ calls it: user code run while the class is made
                calls.append(cls.__name__)
                return super().mro()

        class A(metaclass=Meta):
            pass

        return x + 1, A.__name__

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    assert_same(compiled(torch.ones(2)), f(torch.ones(2)))
    assert calls == ["A", "A"] and cnt.frame_count == 1  # the class statement ran in CPython


def test_alias_of_a_class_made_in_the_trace_is_rebuilt_with_it():
    def f(x):
        class Box(typing.Generic[T]):
            pass

        return Box, Box[int], x + 1

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    (box, alias, _), (box2, alias2, _) = compiled(torch.ones(2)), compiled(torch.ones(2))
    assert alias.__origin__ is box and alias2.__origin__ is box2 and box is not box2
    assert cnt.frame_count == 1


def test_missing_class_attribute_raises_and_is_guarded(fresh_counter):
    def f(x):
        try:
            return x + SubCounter.maybe
        except AttributeError as e:
            return x - len(str(e))

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert_same(compiled(torch.zeros(1)), f(torch.zeros(1)))
    Counter.maybe = 5  # on the base: the guard on each class of the MRO sees it
    try:
        assert_same(compiled(torch.zeros(1)), torch.full((1,), 5.0))
    finally:
        del Counter.maybe
    assert cnt.frame_count == 2


def test_hasattr_of_a_class_through_its_metaclass():
    def f(x):
        return x + hasattr(Mode, "__members__") + hasattr(Mode, "TRAIN") + hasattr(Mode, "missing")

    check(f, torch.ones(2))


def test_class_level_containers_made_in_the_trace():
    def f(x):
        class Registry:
            entries = []
            table = {"relu": 1}
            __slots__ = ["name"]

            def __init__(self, name):
                self.name = name
                self.entries.append(name)

        Registry("a"), Registry("b")
        Registry.table["gelu"] = 2
        return x + len(Registry.entries) + Registry.table["gelu"], Registry

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    (y, first), (_, second) = compiled(torch.ones(2)), compiled(torch.ones(2))
    assert torch.equal(y, torch.full((2,), 5.0)) and cnt.frame_count == 1
    assert first.entries == ["a", "b"] and first.table == {"relu": 1, "gelu": 2}
    assert first.entries is not second.entries  # each call's class starts from the body's list


def test_cmp_to_key_style_class_with_list_slots():
    def f(x, values):
        class Key:
            __slots__ = ["obj"]

            def __init__(self, obj):
                self.obj = obj

            def __lt__(self, other):
                return self.obj < other.obj

            __hash__ = None

        first, second = map(Key, values[:2])
        return x + (first < second) + (second < first), Key.__slots__, Key.__hash__

    check(f, torch.ones(2), [3, 1, 2])


def test_write_to_a_metaclass_attribute_is_read_back_through_the_class():
    def f(x):
        Registry.kind = "plugins"
        return x + 1, Activations.kind

    try:
        check(f, torch.ones(2))
        assert Registry.kind == "plugins"
    finally:
        Registry.kind = "registry"


def test_class_attribute_read_is_guarded_for_the_next_call(fresh_counter):
    def f(x):
        if Counter.default_scale > 1:
            return x * Counter.default_scale
        return x - 1

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert_same(compiled(torch.ones(2)), torch.zeros(2))
    Counter.default_scale = 4
    assert_same(compiled(torch.ones(2)), torch.full((2,), 4.0))
    assert cnt.frame_count == 2


def test_super_classmethod_through_a_class_binds_the_class():
    def f(x):
        class Shape(abc.ABC):
            @classmethod
            @abc.abstractmethod
            def kind(cls):
                return cls.__name__

        class Circle(Shape):
            @classmethod
            def kind(cls):
                return super().kind() + "!"

        return x + 1, Circle.kind(), Circle().kind()

    assert_same_as_eager(f, torch.ones(2), graphs=1)


def test_enum_members_mapping_compares_as_its_dict():
    def f(x):
        members = Mode.__members__
        return x + 1, members == Mode.__members__, members != {"TRAIN": Mode.TRAIN}, dict(members) == {
            "TRAIN": Mode.TRAIN, "EVAL": Mode.EVAL}

    check(f, torch.ones(2))


def test_comparing_with_a_mappingproxy_from_outside_breaks_instead_of_identity():
    def f(x, proxy):
        return x + 1, proxy == Mode.__members__, Mode.__members__ != proxy

    cnt = CountingBackend()
    result = framegraph.compile(f, backend=cnt)(torch.ones(2), Mode.__members__)
    assert result[1:] == (True, False)
    assert cnt.frame_count == 1


class Doubled:
    """A descriptor written in Python: read through the class, ``__get__(None, cls)``."""

    def __init__(self, value):
        self.value = value

    def __get__(self, obj, owner=None):
        return self.value * 2 if obj is None else self.value


class Sizes:
    width = Doubled(3)


def test_python_descriptor_read_through_the_class_is_inlined():
    def f(x):
        return x + Sizes.width

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert_same(compiled(torch.ones(2)), torch.full((2,), 7.0))
    Sizes.__dict__["width"].value = 5  # read from the descriptor: guarded like any attribute
    try:
        assert_same(compiled(torch.ones(2)), torch.full((2,), 11.0))
    finally:
        Sizes.__dict__["width"].value = 3
    assert cnt.frame_count == 2


def test_classes_of_a_metaclass_that_makes_them_unhashable():
    """A metaclass with ``__eq__`` and no ``__hash__``: its classes cannot be dict keys, so
    no lookup table may hash them (an internal TypeError before)."""
    class Sortable(type):
        def __lt__(cls, other):
            return cls.__name__ < other.__name__

        def __eq__(cls, other):
            return cls.__name__ == other.__name__

    class B(metaclass=Sortable):
        pass

    class A(metaclass=Sortable):
        pass

    def f(x, a, b):
        return x + 1, a < b, a == b

    check(f, torch.ones(2), A, B)
