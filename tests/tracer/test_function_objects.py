"""Functions as objects: their attributes, decorators that write them, and id().

A function made in the trace (a nested ``def``, a decorator's wrapper) has the
attributes CPython gives it at MAKE_FUNCTION, and keeps what the trace writes
on it (``functools.wraps``, ``fn.calls = 0``) until it is rebuilt after the
graph. A function from outside the frame that the trace writes to gets the
write replayed after the graph.

``id()`` of an object from outside is a constant kept by an identity guard; of
an object made in the trace it compares by identity and is computed for real
when it leaves the trace. The functools helpers (cached_property,
singledispatch, singledispatchmethod, recursive_repr in dataclasses' repr) are
traced with the meaning CPython gives them.
"""
import contextlib
import dataclasses
import functools
import reprlib

import pytest
import torch

import framegraph
from helpers import CountingBackend, check


def test_functools_wraps_on_a_decorator_defined_in_forward():
    def f(x):
        def logged(fn):
            @functools.wraps(fn)
            def inner(*args):
                return fn(*args) + 1
            return inner

        @logged
        def double(t):
            """Twice t."""
            return t * 2

        return double(x), double.__name__, double.__doc__, double.__wrapped__.__qualname__

    check(f, torch.ones(3))


def test_decorator_with_arguments_sets_an_attribute():
    def f(x):
        def register(tag):
            def mark(fn):
                def inner(t):
                    return fn(t) + tag
                inner.tag = tag
                return inner
            return mark

        @register(3)
        def square(t):
            return t * t

        return square(x), square.tag, hasattr(square, "tag"), getattr(square, "missing", "none")

    check(f, torch.ones(2))


def test_contextmanager_on_a_nested_generator_function():
    def f(x):
        @contextlib.contextmanager
        def scaled(factor):
            yield x * factor

        with scaled(3) as y:
            return y + 1

    check(f, torch.ones(2))


def test_attributes_of_a_nested_function_as_make_function_sets_them():
    def f(x):
        def g(a, b=2, *, c=3):
            """Doc of g."""
            return a

        return (x + 1, g.__name__, g.__qualname__, g.__module__, g.__doc__, g.__defaults__,
                g.__kwdefaults__, g.__dict__, g.__closure__, (lambda: 0).__doc__)

    check(f, torch.ones(2))


def test_a_nested_function_leaves_the_trace_with_what_was_written():
    def f(x):
        def g(a):
            """Old doc."""
            return a + 1
        g.__name__ = "renamed"
        g.__doc__ = "New doc."
        g.calls = 0
        return g, g.__dict__, x * 2

    cnt = CountingBackend()
    g, d, _ = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert (g.__name__, g.__doc__, g.__dict__, g(1)) == ("renamed", "New doc.", {"calls": 0}, 2)
    assert d is g.__dict__  # the dict the trace read is the function's own
    assert cnt.frame_count == 1


def test_attributes_written_on_a_nested_function_survive_a_graph_break():
    def f(x):
        def g():
            return 1
        g.scale = 3
        y = x + 1
        framegraph.graph_break()
        return y * g.scale, g.__dict__

    check(f, torch.ones(2), fullgraph=False, frames=2)


def counter(t):
    return t


def test_writes_on_a_function_from_outside_are_replayed():
    counter.__dict__.pop("calls", None)
    counter.__doc__ = None

    def f(x):
        counter.calls = getattr(counter, "calls", 0) + 1
        counter.__doc__ = "counted"
        return x + counter.calls, counter.__doc__

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert compiled(torch.zeros(1))[1] == "counted"
    assert (counter.calls, counter.__doc__) == (1, "counted")
    compiled(torch.zeros(1))
    assert counter.calls == 2  # the dict's new key made a new trace, which read 1
    assert cnt.frame_count == 2


def test_missing_and_read_only_attributes_raise_as_in_cpython():
    def f(x):
        def g():
            pass
        messages = []
        try:
            counter.no_such_attribute
        except AttributeError as e:
            messages.append(str(e))
        try:
            g.__closure__ = None
        except AttributeError as e:
            messages.append(str(e))
        try:
            g.__name__ = 3
        except TypeError as e:
            messages.append(str(e))
        return x + 1, messages

    check(f, torch.ones(2))


def test_update_wrapper_copies_the_dict_of_a_function_from_outside():
    def f(x):
        def wrapper(t):
            return counter(t) * 2
        functools.update_wrapper(wrapper, counter)
        return wrapper(x), wrapper.__name__, wrapper.__wrapped__ is counter, sorted(wrapper.__dict__)

    counter.__dict__.clear()
    counter.tag = "outside"
    check(f, torch.ones(2))


@pytest.mark.parametrize("name", ["__code__", "__defaults__"])
def test_a_write_that_changes_calls_is_a_break(name):
    def f(x):
        def g(a=1):
            return a
        setattr(g, name, getattr(g, name))
        return x + g()

    cnt = CountingBackend()
    with pytest.raises(framegraph.Unsupported, match=f"setting a function's {name}"):
        framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert cnt.frame_count == 0


# ---- id()

SHARED = [1, 2]


def test_id_of_objects_made_in_the_trace_compares_by_identity():
    def f(x):
        a, b = [], []
        alias = a
        return x + 1, id(a) == id(b), id(a) == id(alias), id(a) != id(b), id(a) in [id(b), id(alias)]

    check(f, torch.ones(2))


def test_id_of_an_object_from_outside_is_a_guarded_constant():
    def f(x, items):
        return x + 1, id(items) == id(SHARED), id(items)

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert compiled(torch.ones(1), SHARED)[1:] == (True, id(SHARED))
    other = [1, 2]
    assert compiled(torch.ones(1), other)[1:] == (False, id(other))  # the identity guard failed
    assert cnt.frame_count == 2


def test_id_that_leaves_the_trace_is_the_id_of_the_rebuilt_object():
    def f(x):
        made = {"k": x}
        return made, id(made), x * 2

    cnt = CountingBackend()
    made, its_id, _ = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert its_id == id(made)
    assert cnt.frame_count == 1


@pytest.mark.parametrize("use", [lambda i: i + 1, lambda i: i == 12345, lambda i: {i: 0}])
def test_the_number_of_an_id_made_in_the_trace_is_a_break(use):
    def f(x):
        return x + 1, use(id([]))

    cnt = CountingBackend()
    with pytest.raises(framegraph.Unsupported):
        framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert cnt.frame_count == 0


def test_get_ident_is_the_thread_that_runs_the_frame():
    import _thread

    def f(x):
        first = _thread.get_ident()
        return x + 1, first == _thread.get_ident(), first

    check(f, torch.ones(2))


# ---- repr() and recursive_repr

@dataclasses.dataclass
class Point:
    x: int
    label: str = "p"


class Node:
    def __init__(self, name):
        self.name, self.next = name, self

    @reprlib.recursive_repr(fillvalue="<loop>")
    def __repr__(self):
        return f"Node({self.name}, {self.next.__repr__()})"


def test_repr_of_a_dataclass_made_in_the_trace():
    def f(x):
        return x + 1, repr(Point(1)), repr(Point(2, "q"))

    check(f, torch.ones(2))


def test_recursive_repr_returns_the_fill_value_on_a_cycle():
    outside = Node("out")

    def f(x):
        a, b = Node("a"), Node("b")
        a.next, b.next = b, a
        return x + 1, repr(a), repr(Node("self")), repr(outside)

    check(f, torch.ones(2))


# ---- functools

class Box:
    computed = []  # one entry per real computation

    def __init__(self, size):
        self.size = size

    @functools.cached_property
    def area(self):
        Box.computed.append(self.size)
        return self.size * self.size


def test_cached_property_computes_once_and_stores_in_the_instance():
    def f(x):
        box = Box(3)
        return x * box.area, box.area, box.__dict__

    Box.computed.clear()
    check(f, torch.ones(2))
    assert Box.computed == [3, 3]  # eager once, compiled once


def test_cached_property_of_an_object_from_outside_is_stored_after_the_graph():
    box = Box(4)

    def f(x, b):
        return x * b.area

    Box.computed.clear()
    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    compiled(torch.ones(1), box)
    assert box.__dict__["area"] == 16 and Box.computed == [4]
    compiled(torch.ones(1), box)  # found in the instance dict now: a new trace, no computation
    assert Box.computed == [4] and cnt.frame_count == 2


@functools.singledispatch
def describe(value):
    return "object"


@describe.register
def _(value: int):
    return "int"


@describe.register
def _(value: list):
    return "list"


class Stack(list):
    pass


def test_singledispatch_picks_by_the_class_of_the_first_argument():
    def f(x):
        return x + 1, describe(3), describe(True), describe([1]), describe(Stack()), describe("s")

    check(f, torch.ones(2))


def test_singledispatch_registration_after_compiling_makes_a_new_trace():
    @functools.singledispatch
    def kind(value):
        return 0

    def f(x):
        return x + kind("text")

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert compiled(torch.zeros(1)).item() == 0
    kind.register(str, lambda value: 5)
    assert compiled(torch.zeros(1)).item() == 5
    assert cnt.frame_count == 2


def test_reduce_total_ordering_and_methodcaller():
    import operator

    @functools.total_ordering
    class Version:
        def __init__(self, n):
            self.n = n

        def __eq__(self, other):
            return self.n == other.n

        def __lt__(self, other):
            return self.n < other.n

    class Greeter:
        def greet(self, name, punctuation="."):
            return "hi " + name + punctuation

    def f(x):
        total = functools.reduce(lambda a, b: a + b, [x, x, x])
        order = (Version(1) >= Version(2), Version(3) > Version(2), Version(1) <= Version(1))
        return total, order, operator.methodcaller("greet", "ann", punctuation="!")(Greeter())

    check(f, torch.ones(2))


def test_del_of_a_function_attribute():
    def f(x):
        def g():
            pass
        g.scratch = 1
        del g.scratch
        try:
            del g.never_set
        except AttributeError as e:
            message = str(e)
        return x + 1, hasattr(g, "scratch"), message

    check(f, torch.ones(2))


def test_del_on_a_function_from_outside_is_replayed():
    def f(x):
        del counter.marker
        return x + 1

    counter.marker = True
    cnt = CountingBackend()
    framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert not hasattr(counter, "marker") and cnt.frame_count == 1


def test_a_list_that_holds_itself_is_a_clean_break():
    loop = []
    loop.append(loop)  # lru_cache's pure-Python wrapper keeps such a circular list

    def f(x, items):
        return x + len(items)

    with pytest.raises(framegraph.Unsupported, match="contains itself"):
        framegraph.compile(f, backend=CountingBackend(), fullgraph=True)(torch.ones(1), loop)


class Slotted:
    __slots__ = ("size",)

    def __init__(self):
        self.size = 2

    @functools.cached_property
    def area(self):
        return self.size * self.size


def test_cached_property_without_an_instance_dict_raises_its_type_error():
    def f(x):
        try:
            Slotted().area
        except TypeError as e:
            return x + 1, str(e)

    check(f, torch.ones(2))


def test_repr_conversion_in_an_f_string_traces_the_dataclass_repr():
    @dataclasses.dataclass
    class Pair:
        left: object
        right: object = None

    def f(x):
        loop = Pair(1)
        loop.right = loop
        nested = Pair(Point(1), "r")
        return x + 1, f"{nested!r}", f"{loop!r:>20}"

    check(f, torch.ones(2))


def test_deleting_the_members_of_a_partial_raises_as_in_cpython():
    def f(x):
        p = functools.partial(torch.add, x)
        errors = []
        for attempt in ("func", "dict"):
            try:
                if attempt == "func":
                    del p.func
                else:
                    del p.__dict__
            except (AttributeError, TypeError) as e:
                errors.append(type(e).__name__ + ": " + str(e))
        return p(1), errors

    check(f, torch.ones(2))


def test_a_decorator_with_arguments_defined_inside_forward():
    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 3)

        def forward(self, x):
            def times(factor):
                def decorate(fn):
                    @functools.wraps(fn)
                    def run(t):
                        return fn(t) * factor
                    run.factor = factor
                    return run
                return decorate

            @times(2.0)
            def project(t):
                """Project t."""
                return self.linear(t)

            return project(x), project.__doc__, project.factor, project.__wrapped__.__name__

    check(Scaled(), torch.randn(2, 3))


def test_len_of_a_number_raises_type_error_in_the_trace():
    def f(x):
        with contextlib.suppress(TypeError):
            len(5)
            return x
        return x + 1

    check(f, torch.ones(2))


def test_an_exception_thrown_into_a_nested_contextmanager_and_caught():
    def f(x):
        @contextlib.contextmanager
        def managed():
            yield

        def leave_through_the_manager():
            with managed():
                raise GeneratorExit("inside")

        try:
            leave_through_the_manager()  # the traceback contextlib re-attaches grows as it unwinds
        except GeneratorExit as e:
            return x + 1, str(e)

    check(f, torch.ones(2))


class Dispatching:
    @functools.singledispatchmethod
    def describe(self, arg):
        """Describe arg."""
        return "object"

    @describe.register
    def _(self, arg: int):
        return "int"


def test_singledispatchmethod_dispatches_on_the_first_argument_after_self():
    outside = Dispatching()

    def f(x):
        made = Dispatching()
        return (x + 1, made.describe(1), made.describe("s"), outside.describe(2),
                made.describe.__doc__, made.describe.__wrapped__.__name__)

    if getattr(Dispatching.__dict__["describe"], "_method_cache", None) is None:
        check(f, torch.ones(2))
        return
    # 3.13 memoises the bound method per object in a WeakKeyDictionary: a weak
    # reference as a dict key is a break, and CPython fills the cache
    from helpers import assert_same, run_counted

    result, cnt, breaks, errors = run_counted(f, torch.ones(2))
    assert_same(result, f(torch.ones(2)))
    assert not errors
    assert breaks and all("ReferenceType" in b.context or "WeakRef" in b.context for b in breaks), \
        [b.context for b in breaks]


def test_dict_update_from_an_instance_dict_and_from_bad_pairs():
    class Plain:
        pass

    def f(x):
        source = Plain()
        source.a, source.b = 1, 2
        target = {}
        target.update(vars(source))
        try:
            target.update(["abc"])
        except ValueError as e:
            return x + 1, target, str(e)

    check(f, torch.ones(2))


def keyword_default(a, *, c=3):
    return a + c


def test_a_changed_kwdefaults_is_what_the_next_call_binds():
    def f(x):
        def g(a, *, c=3):
            return a + c
        g.__kwdefaults__["c"] = 5
        keyword_default.__kwdefaults__["c"] = 7
        return x + g(1) + keyword_default(1), g.__kwdefaults__

    cnt = CountingBackend()
    result = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.zeros(1))
    assert result[0].item() == 14 and result[1] == {"c": 5}
    assert keyword_default.__kwdefaults__ == {"c": 7} and cnt.frame_count == 1
    keyword_default.__kwdefaults__["c"] = 3


def test_closure_cells_read_and_written_through_dunder_closure():
    def f(x):
        count = 1

        def bump():
            return count

        cell, = bump.__closure__
        before = cell.cell_contents
        cell.cell_contents = 5
        empty = (lambda: late).__closure__[0]  # noqa: F821 (late is assigned below)
        try:
            empty.cell_contents
        except ValueError as e:
            message = str(e)
        late = 0
        return x + bump(), before, count, message, late

    check(f, torch.ones(2))


def signature_example(a, b=1, /, c=2, *, d):
    return a


def test_bad_calls_raise_cpythons_type_error_inside_the_trace():
    bad_calls = [lambda g: g(), lambda g: g(1, 2, 3, 4), lambda g: g(1, d=1, z=2), lambda g: g(1, a=2, d=1),
                 lambda g: g(1, 2, 3, c=3, d=1), lambda g: g(1)]

    def f(x):
        def nested(a, *args, k, **kw):
            return a

        messages = []
        for call in bad_calls:
            for fn in (signature_example, nested):
                try:
                    call(fn)
                except TypeError as e:
                    messages.append(str(e))
        return x + 1, messages

    check(f, torch.ones(2))
