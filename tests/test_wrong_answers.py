"""Programs that once gave a different answer from eager, without a warning.

Each test compares the compiled result with eager and counts the graphs, so
that a silent fallback to eager (zero graphs) fails it as well.
"""
import collections
import typing

import pytest
import torch
from torch import nn

import framegraph
from framegraph.diagnostics.records import observing
from helpers import CountingBackend, assert_same, check, check_breaks, run_counted


@pytest.fixture(autouse=True)
def fresh():
    framegraph.reset()  # each test counts its own graphs
    yield
    framegraph.reset()


def ones():
    return torch.ones(3)


# ---- 1. obj.__dict__ is the object's real dict, with the trace's writes
class WithFoo(nn.Module):
    def __init__(self):
        super().__init__()
        self.foo = 2.0
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        y = x + 1 if "foo" in self.__dict__ else x - 1
        self.seen = True  # a write in the trace: in __dict__ from here on
        keys = [k for k in self.__dict__ if not k.startswith("_")]
        return (y * self.__dict__["foo"], "bar" not in self.__dict__, len(self.__dict__), keys,
                self.__dict__.get("seen"), "linear" in self.__dict__)


class Settings:
    def __init__(self):
        self.scale = 3.0

    def __eq__(self, other):  # check_breaks compares the final states
        return type(other) is Settings and vars(self) == vars(other)


def test_module_instance_dict():
    m = WithFoo()
    check(m.forward, ones())
    assert "seen" in m.__dict__  # the write was replayed


def test_module_instance_dict_is_guarded():
    m = WithFoo()
    cnt = CountingBackend()
    fn = framegraph.compile(m.forward, backend=cnt, fullgraph=True)
    fn(ones())
    m.bar = 1.0  # "bar" not in self.__dict__ changes: a new graph, not the old answer
    expected = m.forward(ones())
    assert_same(fn(ones()), expected)
    assert cnt.frame_count == 2


def test_object_instance_dict_reads_and_writes():
    def f(x, s):
        d = s.__dict__
        before = ("scale" in d, "offset" not in d, len(d), list(d), d["scale"])
        s.offset = 1.0  # seen through the view taken before the write
        s.__dict__["scale"] = 5.0  # and a write through the dict is seen by s.scale
        return before, list(d.items()), x * s.scale + d["offset"]

    check_breaks(f, lambda: (ones(), Settings()), graphs=1, breaks=0)


# ---- 2. an OrderedDict's order is its own, not its dict's insertion order
class Registry(collections.OrderedDict):
    pass


def reordered(cls):
    d = cls(a=torch.ones(1), b=torch.ones(1) * 2, c=torch.ones(1) * 3)
    d.move_to_end("a")  # OrderedDict order b, c, a; the underlying dict's is still a, b, c
    return d


def test_ordered_dict_subclass_order():
    def reads(x, d):
        return [x + v for v in d.values()], list(d.keys()), list(d.items()), [k for k in d]

    check_breaks(reads, lambda: (torch.ones(1), reordered(Registry)), graphs=1, breaks=0)


def test_ordered_dict_move_to_end_and_popitem():
    def made_inside(x):
        d = Registry(a=x, b=x + 1, c=x + 2)
        d.move_to_end("a")
        first = d.popitem(last=False)
        d.move_to_end("c", last=False)
        return d, list(d.values()), first, d.popitem()

    def mutates(x, d):
        d.move_to_end("b")
        first = d.popitem(last=False)
        d.move_to_end("a", last=False)
        return [x + v for v in d.values()], list(d.items()), first

    check_breaks(made_inside, lambda: (torch.ones(1),), graphs=1, breaks=0)
    check_breaks(mutates, lambda: (torch.ones(1), reordered(collections.OrderedDict)), graphs=1, breaks=0)


# ---- 3. a keyword given twice through ** is CPython's TypeError, not a merge
def takes_kwargs(**kwargs):
    return kwargs


def takes_x(x, **kwargs):
    return x


# The TypeError leaves the frame, which then runs in CPython and raises there.
@pytest.mark.expect_fallback("exception")
def test_keyword_given_twice_raises_like_eager():
    def twice(x):
        y = x + 1
        return takes_kwargs(**{"k": 1, "j": 2}, **{"k": 3}), y

    with pytest.raises(TypeError) as eager:
        twice(ones())
    assert "got multiple values for keyword argument 'k'" in str(eager.value)
    for fullgraph in (False, True):
        cnt = CountingBackend()
        with pytest.raises(TypeError) as compiled:
            framegraph.compile(twice, backend=cnt, fullgraph=fullgraph)(ones())
        assert str(compiled.value) == str(eager.value)
        assert cnt.frame_count == 0  # the error leaves the frame: it runs, and raises, in CPython


def test_keyword_given_twice_is_caught_like_eager():
    def caught(x):
        y = x + 1
        try:
            takes_x(x=1, **{"x": 2})
        except TypeError:
            return y * 2
        return y

    check(caught, ones(), frames=1)


# ---- 4. an in-place op returns its own argument: identity survives the trace
def in_place_identities(x):
    y = x.add_(1)
    z = x.mul_(2)
    w = torch.add(x, 1, out=x)
    x[0] = 3.0
    v = x.clamp_(0, 5)
    t = x
    t += 1  # INPLACE_ADD on a tensor keeps the object
    a = x * 2
    b = a.sub_(1)  # a tensor made in the trace, too
    return (x is y, x is z, x is w, x is v, t is x, a is b), y, b


@pytest.mark.parametrize("dynamic", [False, True])
def test_in_place_op_returns_its_argument(dynamic):
    x, expected_x = ones(), ones()
    expected = in_place_identities(expected_x)
    assert expected[0] == (True,) * 6
    cnt = CountingBackend()
    result = framegraph.compile(in_place_identities, backend=cnt, fullgraph=True, dynamic=dynamic)(x)
    assert_same(result, expected)
    assert result[1] is x  # the caller's own tensor, mutated as in eager
    assert_same(x, expected_x)
    assert cnt.frame_count == 1


# ---- 5. namedtuple subclasses keep their class, their __new__ and their slots
class PairFields(typing.NamedTuple):
    a: torch.Tensor
    b: int


class Pair(PairFields):
    __slots__ = ()

    def __new__(cls, a, b=1):
        return super().__new__(cls, a * 2, b)

    def __add__(self, other):
        return Pair(self.a + other.a, self.b + other.b)


class Span(collections.namedtuple("Span", "start stop")):
    def width(self):
        return self.stop - self.start

    def __getitem__(self, i):
        return "first" if i == 0 else super().__getitem__(i)


def test_namedtuple_subclass_new_and_add():
    def f(x, outside):
        p = Pair(x) + Pair(x + 1, 2)
        q = p
        q += outside  # no __iadd__: Pair.__add__
        return p, q, isinstance(q, Pair)

    check_breaks(f, lambda: (ones(), Pair(ones(), 5)), graphs=1, breaks=0)


def test_namedtuple_subclass_methods_and_getitem():
    def made_inside(x):
        s = Span(x, x * 3)
        return s, s.width(), s[0], s[1]

    def from_outside(x, s):
        return s.start + x, s[0], s[1], s.width()

    check_breaks(made_inside, lambda: (ones(),), graphs=1, breaks=0)
    check_breaks(from_outside, lambda: (ones(), Span(ones(), ones() * 4)), graphs=1, breaks=0)


# ---- 7. iterators outlive the graph with their own type and position; dir() of a module
def plus_one(t):
    return t + 1


def started_iterators(x):
    xs = [x, x + 1, x + 2]
    its = (zip(xs, "abc"), map(plus_one, xs), filter(None, [0, 1, 2, 3]), enumerate(xs, 5), reversed(xs),
           iter(xs), iter((1, 2, 3)), iter(range(4)), iter({"a": 1, "b": 2}))
    for it in its:
        next(it)
    return its


def test_returned_iterators_keep_type_and_position():
    expected = started_iterators(ones())
    result, cnt, breaks, errors = run_counted(started_iterators, ones(), fullgraph=True)
    assert [type(it) for it in result] == [type(it) for it in expected]
    assert_same([list(it) for it in result], [list(it) for it in expected])
    assert (cnt.frame_count, breaks, errors) == (1, [], [])


# A resumed frame receives the real iterator, which the tracer cannot read:
# the rest of that frame runs in CPython.
@pytest.mark.expect_fallback("unsupported_call")  # list_iterator.__next__, a C slot
def test_iterator_held_across_a_graph_break():
    def live_list(x):
        xs = [x, x + 1]
        it = iter(xs)
        first = next(it)
        framegraph.graph_break()
        xs.append(x + 2)  # a list iterator sees the list as it is
        return first, type(it).__name__, list(it)

    def loop_over_a_local(x):
        it = iter([x, x + 1, x + 2, x + 3])
        n = 0
        for a in it:  # the loop and the local are one iterator
            framegraph.graph_break()
            n += 1
            if n == 2:
                break
        return a, list(it)

    # the resumed frame gets the real iterator, which the tracer does not model:
    # reading it breaks again (live_list), or runs the rest of the frame in CPython
    for fn, graphs, fallbacks in ((live_list, 2, 0), (loop_over_a_local, 1, 1)):
        expected = fn(ones())
        result, cnt, breaks, errors = run_counted(fn, ones())
        assert_same(result, expected)
        assert breaks[0].entry.id == "explicit_graph_break"
        assert (cnt.frame_count, len(errors)) == (graphs, fallbacks), (cnt.frame_count, errors)


class LinearReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.linear(x))


def test_dir_of_a_compiled_module():
    m = LinearReLU()
    cnt = CountingBackend()
    compiled = framegraph.compile(m, backend=cnt)
    assert {"linear", "relu", "forward", "_orig_mod"} <= set(dir(compiled))
    assert set(dir(m)) <= set(dir(compiled))
    assert_same(compiled(ones()), m(ones()))
    assert cnt.frame_count == 1


class Counted:
    """Counts its live instances: __del__ runs when CPython drops the last reference."""

    live = 0

    def __init__(self):
        type(self).live += 1

    def __del__(self):
        type(self).live -= 1


def make_and_drop(x):
    c = Counted()
    alive = Counted.live
    del c                     # CPython runs __del__ here, before the next line
    return x + alive, Counted.live


@pytest.mark.expect_fallback("finalizer")
def test_an_object_with_a_finalizer_is_made_and_dropped_by_cpython():
    """A trace cannot run ``__del__`` when the last reference goes; a graph break would keep
    one alive in the resume call. The frame runs unmodified, and says why."""
    result, cnt, breaks, errors = run_counted(make_and_drop, ones())
    assert_same(result, make_and_drop(ones()))
    assert result[1] == 0 and any("finalizer" in str(e) for e in errors)
    assert (cnt.frame_count, breaks) == (0, [])  # no graph: the whole frame ran in CPython


# ---- hasattr(instance, name) looks in the type's MRO, not at the class object:
# `list.__name__` and `list.mro` are the metatype's, which `[1]` does not see
class Plain:
    pass


Point = collections.namedtuple("Point", "a b")


@pytest.mark.parametrize("make", [
    lambda x: [1], lambda x: Point(1, 2), lambda x: x * 1, lambda x: ValueError("v"),
    lambda x: Plain(), lambda x: collections.OrderedDict(a=1), lambda x: typing,
], ids=["list", "namedtuple", "tensor", "exception", "object", "ordereddict", "module"])
def test_hasattr_of_an_instance_sees_what_its_type_gives_instances(make):
    names = ("__name__", "__qualname__", "__mro__", "__bases__", "mro", "__dict__", "__doc__", "__len__",
             "__class__")

    def f(x):
        obj = make(x)
        # the metatype's names, which no instance sees: getattr's default
        return x + 1, [hasattr(obj, name) for name in names], [getattr(obj, name, None) for name in names[:5]]

    check(f, torch.ones(2))


def test_hasattr_of_a_partial():
    import functools

    outside = functools.partial(max, 1)

    def made_here(x):
        part = functools.partial(max, 1)
        return x + (1 if hasattr(part, "__name__") else 2), hasattr(part, "func"), hasattr(part, "__dict__")

    def from_outside(x):
        return x + (1 if hasattr(outside, "__name__") else 2)

    check(made_here, torch.ones(2))
    # from outside: guarded on its __dict__ (read without making one: it has none yet)
    check(from_outside, torch.ones(2))
    assert outside.__reduce__()[2][3] is None
    run_twice(from_outside, lambda: setattr(outside, "__name__", "max1"), torch.ones(2))


def test_attributes_set_on_a_partial_from_outside():
    import functools

    scaled = functools.partial(max, 0)
    scaled.scale = 3.0

    def f(x):
        return x * scaled.scale, hasattr(scaled, "scale"), hasattr(scaled, "__globals__")

    run_twice(f, lambda: setattr(scaled, "scale", 5.0), torch.ones(2))


# ---- obj.__class__ is the type itself (it was bound as a method named __class__:
# `[1].__class__ is list` was False, its __name__ 'type')
@pytest.mark.parametrize("make", [
    lambda x: [1], lambda x: {"a": 1}, lambda x: iter([1]), lambda x: x.size(), lambda x: collections.deque([1]),
    lambda x: Plain,
], ids=["list", "dict", "iterator", "size", "deque", "class"])
def test_the_class_of_a_value_is_its_type(make):
    def f(x):
        obj = make(x)
        return x + 1, obj.__class__ is type(obj), obj.__class__.__name__

    check(f, torch.ones(2))


# ---- retain_grad() on a graph intermediate: the compiled backward never reaches it
def test_retain_grad_of_an_intermediate_is_filled_by_backward():
    def step(x):
        y = x * 2
        y.retain_grad()
        return (y * 3).sum(), y, y.retains_grad

    x = torch.ones(3, requires_grad=True)
    loss, y, retains = step(x)
    loss.backward()
    cnt = CountingBackend()
    x2 = torch.ones(3, requires_grad=True)
    loss2, y2, retains2 = framegraph.compile(step, backend=cnt)(x2)
    loss2.backward()
    assert cnt.frame_count == 2  # the call runs between two graphs
    assert retains2 is True and y2.grad is not None
    assert_same((y2.grad, x2.grad), (y.grad, x.grad))


def run_twice(fn, change, *args):
    """Compile ``fn``, call it, ``change()`` what it read, call it again: both results
    are eager's, and the second call made a new graph (a guard saw the change)."""
    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt, fullgraph=True)
    assert_same(compiled(*args), fn(*args))
    change()
    assert_same(compiled(*args), fn(*args))
    assert cnt.frame_count == 2, f"{cnt.frame_count} graphs: the change was not guarded"


# ---- guards on what a trace saw without reading a tensor
def test_a_tensor_tested_only_with_is_none_is_guarded():
    def f(x, t):
        return x + 1 if t is None else x - 1

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    x = torch.ones(2)
    assert_same(compiled(x, torch.ones(1)), f(x, torch.ones(1)))
    assert_same(compiled(x, None), f(x, None))
    assert cnt.frame_count == 2


class Bare:
    pass


def test_hasattr_of_a_name_the_class_gains_later(monkeypatch):
    obj = Bare()

    def f(x):
        return x + 1 if hasattr(obj, "scale") else x - 1

    run_twice(f, lambda: monkeypatch.setattr(Bare, "scale", 2.0, raising=False), torch.ones(2))


def test_getattr_default_of_a_name_the_class_gains_later(monkeypatch):
    obj = Bare()

    def f(x):
        return x + getattr(obj, "offset", 5)

    run_twice(f, lambda: monkeypatch.setattr(Bare, "offset", 1, raising=False), torch.ones(2))


def test_python_attributes_of_a_tensor():
    def f(x):
        return x + x.tag if hasattr(x, "tag") else x - 1

    x = torch.ones(2)
    run_twice(f, lambda: setattr(x, "tag", 3), x)
    run_twice(f, lambda: setattr(x, "tag", 4), x)


def test_a_deleted_slot_member():
    class Slotted:
        __slots__ = ("scale",)

    obj = Slotted()
    obj.scale = 2

    def f(x):
        return x * obj.scale if hasattr(obj, "scale") else x - 1

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    x = torch.ones(2)
    assert_same(compiled(x), f(x))
    del obj.scale
    assert_same(compiled(x), f(x))  # an unset member: the hasattr runs between graphs
    assert cnt.frame_count == 2


def test_a_parameter_set_to_none_and_back():
    m = nn.Linear(2, 2)
    m.bias = None

    def f(x):
        return x + len(list(m.parameters()))

    run_twice(f, lambda: setattr(m, "bias", nn.Parameter(torch.ones(2))), torch.ones(2))


# ---- bound methods: the method type's own attributes, names as eager prints them
def test_attributes_of_bound_methods():
    class Tags(list):
        pass

    class Thing:
        def method(self):
            return 1

    thing = Thing()
    p = nn.Parameter(torch.ones(1))

    def f(x, p):
        tags = Tags()
        return x + 1, [x.add.__qualname__, p.add.__qualname__, x.backward.__qualname__, x.add.__module__,
                       type(x.add).__name__, type(x.backward).__name__, type([].__len__).__name__,
                       type([].append).__name__, tags.append.__qualname__, tags.__len__.__qualname__,
                       thing.method.__class__.__name__, thing.method.__name__, x.is_set_to(x)]

    check(f, torch.ones(1), p)


# ---- the operator probe: what CPython decides from the type, the trace decided otherwise
class AnswersEveryName:
    def __getattr__(self, name):
        return lambda *args: 7


def raises(fn):
    """``fn()``, or the type and message of what it raised."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the answer under test
        return type(e).__name__, str(e)


def test_operators_and_calls_look_at_the_type_only():
    def f(x):
        obj = AnswersEveryName()
        plain = Bare()
        plain.__call__ = lambda: 5
        return x + 1, [raises(lambda: -obj), raises(lambda: ~obj), raises(lambda: obj()), raises(lambda: plain())]

    check(f, torch.ones(1))


def test_an_iterator_as_a_value_is_not_read():
    def f(x):
        it = iter([1, 2, 3])
        tup = iter((1, 2))
        text = repr(it).split(" ")[0], str(tup).split(" ")[0]
        return x + 1, text, raises(lambda: int(it)), raises(lambda: float(tup)), list(it), list(tup)

    check(f, torch.ones(1))


def test_reversed_needs_a_sequence_or_reversed():
    def f(x):
        return x + 1, [raises(lambda: reversed({1, 2})), raises(lambda: reversed(iter([1, 2]))),
                       list(reversed((1, 2))), list(reversed(range(3)))]

    check(f, torch.ones(1))


def test_a_slice_is_not_a_sequence():
    def f(x):
        s = slice(1, 5, 2)
        return x + 1, [raises(lambda: len(s)), raises(lambda: s[0]), raises(lambda: 1 in s), raises(lambda: list(s)),
                       s == slice(1, 5, 2), s < slice(2, 0), bool(s), s.indices(3)]

    check(f, torch.ones(1))


class MyInt(int):
    pass


class Shown(int):
    def __str__(self):
        return "shown"


def test_int_subclass_against_builtin_constants():
    def f(x):
        n = MyInt(3)
        return x + 1, [3.0 == n, n == 3.0, 3.0 != n, 2.5 < n, 3 + n, format(Shown(3), ""), Shown(3).__format__(""),
                       f"{Shown(3)}"]

    check(f, torch.ones(1))


def test_sequences_order_inside_try():
    def f(x):
        try:
            return x + 1, [[1] < [2], (1, 2) <= (1,), [[1]] > [[0]], sorted([[2, 1], [1, 5], [1]]), [1, 2] >= [1, 2]]
        except TypeError:
            return x - 1, None

    check(f, torch.ones(1))


def test_a_builtin_failing_partway_leaves_the_rest_of_an_iterator():
    def f(x):
        numbers = iter([1, 2, "a", 4])
        pairs = iter([(1, 2), 3, (4, 5)])
        return x + 1, raises(lambda: sum(numbers)), list(numbers), raises(lambda: dict(pairs)), list(pairs)

    check(f, torch.ones(1))


def test_type_errors_name_c_types_with_their_module():
    def f(x):
        od = collections.OrderedDict()
        return x + 1, raises(lambda: od < od), raises(lambda: -od), raises(lambda: od()), raises(lambda: range([], 1))

    check(f, torch.ones(1))


class ReadOnly:
    @property
    def p(self):
        return 7


def test_a_write_through_dunder_dict_skips_a_property():
    def f(x):
        obj = ReadOnly()
        obj.__dict__["p"] = 3  # the property still answers obj.p: it is a data descriptor
        return x + 1, obj.p, obj.__dict__["p"], vars(obj)

    cnt = CountingBackend()
    expected = f(torch.ones(1))
    assert_same(framegraph.compile(f, backend=cnt)(torch.ones(1)), expected)
    assert cnt.frame_count == 1  # the write runs in CPython, between graphs


@pytest.mark.parametrize("norm", [nn.BatchNorm1d, nn.InstanceNorm1d])
def test_a_training_norm_whose_output_is_unused_still_updates_its_running_statistics(norm):
    def f(m, x):
        m(x)  # only the running statistics change
        return x + 1

    def make():
        torch.manual_seed(0)
        return norm(4, track_running_stats=True).train()

    eager, compiled, x = make(), make(), torch.randn(8, 4, 5)
    cnt = CountingBackend()
    assert_same(framegraph.compile(f, backend=cnt, fullgraph=True)(compiled, x), f(eager, x))
    assert cnt.frame_count == 1
    assert torch.equal(compiled.running_mean, eager.running_mean)
    assert torch.equal(compiled.running_var, eager.running_var)
    assert not torch.equal(compiled.running_mean, torch.zeros(4))


def test_two_arguments_met_as_two_objects_are_guarded_to_stay_two():
    def f(x, y):
        return x is y, x + y

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    b = torch.ones(3)
    for args in ((b, b.clone()), (b, b), (b, b.clone())):
        assert_same(compiled(*args), f(*args))
    assert cnt.frame_count == 2  # the same tensor twice is another graph


def test_tensor_facts_outside_its_guard_are_guarded_where_read():
    base, w = torch.arange(6.0), torch.randn(2, requires_grad=True)
    cases = [(lambda x: (x.storage_offset(), x + 1), [base[0:2], base[1:3]]),
             (lambda x: (x[1:].storage_offset(), x + 1), [base[0:2], base[1:3]]),  # of a view the graph made
             (lambda x: (x._is_view(), x + 1), [base[1:3].clone(), base[1:3]]),
             (lambda x: (x.is_leaf, x * 1), [w, w * 2])]
    for fn, inputs in cases:
        cnt = CountingBackend()
        compiled = framegraph.compile(fn, backend=cnt)
        for x in inputs:
            assert_same(compiled(x), fn(x))
        assert cnt.frame_count == 2


def test_a_graph_made_views_offset_beside_an_int_argument_made_dynamic():
    def f(x, n):
        m = n + 1  # the int's input first, then the offset (it guards every tensor input's)
        return x[1:].storage_offset() + m, x + m

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    for n in range(4):  # n turns symbolic after the second call: an input with no tensor facts
        assert_same(compiled(torch.arange(6.0), n), f(torch.arange(6.0), n))
    assert cnt.frame_count == 2


def test_a_symbolic_int_reaches_a_functionalizing_backend_as_its_symint():
    # an int made dynamic after a recompile was handed to AOTAutograd as a plain int, which
    # made its own symbol of it and specialised a 1: the graph returned 2 for every count
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x + 1, self.calls

    def f(x, n):
        return x + 1, n + 1

    x = torch.ones(3)
    cnt = CountingBackend()

    def counted(gm, example_inputs):
        cnt(gm, example_inputs)
        return framegraph.backends.lookup_backend("aot_eager")[0](gm, example_inputs)

    m = Counter()
    compiled_m, compiled_f = framegraph.compile(m, backend=counted), framegraph.compile(f, backend=counted)
    assert [compiled_m(x)[1] for _ in range(5)] == [1, 2, 3, 4, 5] and m.calls == 5
    assert [compiled_f(x, n)[1] for n in range(5)] == [1, 2, 3, 4, 5]
    assert cnt.frame_count == 4  # each: the first value, then one graph for any int


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_requires_grad_on_a_tensor_made_inside_and_a_resized_input_are_left_to_cpython(backend):
    def leaf_made_inside(x):
        w = torch.ones(3).requires_grad_()
        return x * w

    def gradient_penalty(x):
        x = x.detach().requires_grad_(True)
        (grad,) = torch.autograd.grad((x.sin() * x).sum(), x)
        return grad

    def resize_input(x):
        x.resize_(2, 2)
        return x.sum()

    # under aot_eager, autograd.grad runs the backward GraphModule in CPython: a frame compiled too
    penalty_graphs = 2 if backend == "eager" else 3
    for fn, graphs in ((leaf_made_inside, 2), (gradient_penalty, penalty_graphs), (resize_input, 1)):
        x, y = torch.arange(6.0)[:3].clone(), torch.arange(6.0)[:3].clone()
        if fn is resize_input:
            x, y = torch.arange(6.0), torch.arange(6.0)
        breaks, errors, cnt = [], [], CountingBackend()

        def observe(record):
            breaks.extend(record.compiled.breaks if record.compiled is not None else [])
            errors.extend([record.error] if record.error is not None else [])

        def counted(gm, example_inputs):
            cnt(gm, example_inputs)
            return framegraph.backends.lookup_backend(backend)[0](gm, example_inputs)

        with observing(observe):
            out = framegraph.compile(fn, backend=counted)(x)
        expected = fn(y)
        assert_same(out, expected)
        assert out.requires_grad == expected.requires_grad and x.shape == y.shape, fn.__name__
        assert breaks and not errors, fn.__name__  # the calls CPython makes
        assert cnt.frame_count == graphs, (fn.__name__, cnt.frame_count)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_an_argument_written_in_place_is_guarded_on_which_arguments_share_its_storage(backend):
    def f(x, y):
        x.add_(1)
        return y * 2

    cnt = CountingBackend()

    def counted(gm, example_inputs):
        cnt(gm, example_inputs)
        return framegraph.backends.lookup_backend(backend)[0](gm, example_inputs)

    compiled = framegraph.compile(f, backend=counted)
    calls = [lambda: (torch.zeros(3), torch.zeros(3)),
             lambda: (lambda t: (t, t))(torch.zeros(3)),  # one tensor twice
             lambda: (lambda b: (b[:3], b[2:]))(torch.zeros(5)),  # two views of one storage
             lambda: (torch.zeros(3), torch.zeros(3))]
    for make in calls:
        assert_same(compiled(*make()), f(*make()))
    # distinct storages; one tensor twice (one input, IS_SAME); two views of one storage
    assert cnt.frame_count == 3
