"""``functools.partial``: made, called and read in the trace like CPython's.

A partial made in the trace flattens a partial of a partial, merges keywords
(those given at the call win) and, when it leaves the trace, is rebuilt as a
real ``functools.partial``. One from outside (an argument, a module's
``self.act``) is read through ``p.func``, ``p.args`` and ``p.keywords``, which
are guarded: changing any of them makes a new trace.
"""
import functools

import pytest

import torch
from torch import nn

import framegraph
from helpers import CountingBackend, assert_same, check, check_breaks


def scaled(t, scale=1.0, *, shift=0.0):
    return t * scale + shift


def test_partial_made_and_called_in_the_trace():
    def f(x):
        double = functools.partial(scaled, scale=2.0)
        return double(x), double(x, shift=1.0), double(x, scale=3.0)  # call keywords override

    check(f, torch.ones(2), ops=6)


def test_partial_of_a_torch_function_with_a_keyword():
    def f(x):
        gelu = functools.partial(torch.nn.functional.gelu, approximate="tanh")
        add2 = functools.partial(torch.add, alpha=2)
        return gelu(x), add2(x, x)

    check(f, torch.randn(3), ops=2)


def test_partial_of_a_partial_flattens_like_cpython():
    def f(x):
        inner = functools.partial(scaled, x, shift=1.0)
        outer = functools.partial(inner, 3.0, shift=2.0)
        return outer(), outer.func is scaled, len(outer.args), outer.keywords, inner.keywords

    check(f, torch.ones(2))


def test_partial_members_from_outside_are_guarded():
    def f(x, p):
        return p(x)

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    p = functools.partial(scaled, scale=2.0)
    calls = [p, None, functools.partial(scaled, shift=5.0), functools.partial(torch.mul, 3.0)]
    for q in calls:
        if q is None:
            p.keywords["scale"] = 4.0  # the partial's own dict changes: a new trace
            q = p
        assert_same(compiled(torch.ones(2), q), f(torch.ones(2), q))
    assert cnt.frame_count == 4


def test_partial_of_a_partial_from_outside_calls_through_it():
    def f(x, p):
        outer = functools.partial(p, scale=3.0)
        return outer(x), outer(x, shift=0.0)

    check(f, torch.ones(2), functools.partial(scaled, shift=1.0))


def test_partial_of_a_module_and_of_a_method():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(2, 2)

        def mix(self, t, weight):
            return self.proj(t) * weight

        def forward(self, t):
            first = functools.partial(self.mix, weight=0.5)
            second = functools.partial(self.proj)
            return second(first(t))

    check(Block(), torch.ones(1, 2))


def test_activation_stored_as_a_partial_on_a_module():
    class MLP(nn.Module):  # the shape of transformers' activations (Gemma-2's gelu_pytorch_tanh)
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = functools.partial(nn.functional.gelu, approximate="tanh")

        def forward(self, t):
            return self.act(self.fc(t))

    check(MLP(), torch.randn(2, 4))


def test_partial_returned_from_the_trace_is_a_real_partial():
    def f(x):
        return functools.partial(scaled, x + 1, shift=2.0)

    cnt = CountingBackend()
    p = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    expected = f(torch.ones(2))
    assert type(p) is functools.partial and p.func is scaled and p.keywords == {"shift": 2.0}
    assert_same(p(), expected())
    assert cnt.frame_count == 1


def test_partial_live_across_a_graph_break_is_rebuilt():
    def f(x, log):
        p = functools.partial(scaled, x + 1, scale=2.0)
        log.append(p.args[0].shape[0])
        print("a graph break")
        return p(shift=1.0)

    check_breaks(f, lambda: (torch.ones(2), []), graphs=2, breaks=1)


# ---- partial's C code behind other classes: a subclass, another copy of the type
class Bound(functools.partial):
    """A library's partial subclass that names itself (torch.utils.data, optax, ...)."""

    def describe(self):
        return f"{self.func.__name__} with {len(self.args)} bound"


def capture(*args, **kwargs):
    return args, kwargs


def partial_subclass_made_and_called(x):
    p = Bound(scaled, 2.0, shift=1.0)
    q = Bound(p, shift=3.0)  # no __dict__ yet: flattened, like a plain partial
    p.tag = "first"          # now it has one: partial(p) keeps p as its func
    r = functools.partial(p)
    return (p(x), q(x), r(x), type(q) is Bound, q.func is scaled, q.args, q.keywords, r.func is p,
            p.tag, p.describe(), repr(functools.partial(capture, 1, k="v")), callable(p))


def test_partial_subclass_traces_like_the_c_partial(framegraph_trace):
    out = framegraph.compile(partial_subclass_made_and_called, backend="eager")(torch.ones(2))
    assert_same(out, partial_subclass_made_and_called(torch.ones(2)))
    assert framegraph_trace.graphs == 1


def test_partial_subclass_from_outside_and_returned(framegraph_trace):
    p = Bound(capture, 1, k=2)

    def f(x):
        return x + 1, p(3), Bound(capture, x.shape[0])

    out = framegraph.compile(f, backend="eager")(torch.ones(2))
    assert out[1] == ((1, 3), {"k": 2}) and type(out[2]) is Bound and out[2]() == ((2,), {})
    assert framegraph_trace.graphs == 1


def test_partial_read_only_members_and_missing_attributes(framegraph_trace):
    def f(x):
        p = functools.partial(capture, 1)
        out = []
        for write in (lambda: setattr(p, "func", max), lambda: p.__name__):
            try:
                write()
            except AttributeError as e:
                out.append(str(e))
        return x + 1, out

    assert_same(framegraph.compile(f, backend="eager")(torch.ones(2)), f(torch.ones(2)))
    assert framegraph_trace.graphs == 1


def test_missing_attribute_of_a_partial_subclass_raises_in_the_trace(framegraph_trace):
    outside = Bound(capture, 1)

    def f(x):
        out = []
        for p in (Bound(capture, 2), outside):
            try:
                p.__name__
            except AttributeError as e:
                out.append(str(e))
        return x + 1, out

    compiled = framegraph.compile(f, backend="eager", fullgraph=True)
    assert_same(compiled(torch.ones(2)), f(torch.ones(2)))
    outside.__name__ = "named"  # its __dict__ now has it: the guard makes a new trace
    assert_same(compiled(torch.ones(2)), f(torch.ones(2)))
    assert len(compiled(torch.ones(2))[1]) == 1
    assert framegraph_trace.graphs == 2


def test_non_string_keywords_of_a_partial_raise_at_the_call(framegraph_trace):
    def f(x):
        p = functools.partial(capture)
        p.keywords[1234] = "value"
        try:
            p()
        except TypeError as e:
            return x + 1, str(e)
        return x, ""

    assert_same(framegraph.compile(f, backend="eager")(torch.ones(2)), f(torch.ones(2)))
    assert framegraph_trace.graphs == 1


# ---- a pure-Python callable class with __new__ and __slots__: functools.py's own partial
class PyPartial:
    """functools.py's pure-Python partial (what it uses without _functools), in small."""

    __slots__ = "func", "args", "keywords", "__dict__", "__weakref__"

    def __new__(cls, func, /, *args, **keywords):
        if not callable(func):
            raise TypeError("the first argument must be callable")
        if hasattr(func, "func"):
            args = func.args + args
            keywords = {**func.keywords, **keywords}
            func = func.func
        self = super(PyPartial, cls).__new__(cls)
        self.func, self.args, self.keywords = func, args, keywords
        return self

    def __call__(self, /, *args, **keywords):
        keywords = {**self.keywords, **keywords}
        return self.func(*self.args, *args, **keywords)


class PyPartialSub(PyPartial):
    pass


class Tagged:
    """A __new__ that hands back an object of another class: __init__ is not called."""

    def __new__(cls, value):
        return value if isinstance(value, int) else super().__new__(cls)

    def __init__(self, value):
        self.value = value


def python_new_and_call(x):
    p = PyPartial(scaled, scale=2.0)
    q = PyPartialSub(p, shift=1.0)
    errors = []
    try:
        PyPartial(3)
    except TypeError as e:
        errors.append(str(e))
    return (p(x), q(x), type(q) is PyPartialSub, q.func is scaled, q.keywords, hasattr(q, "func"),
            Tagged(3), Tagged("s").value, errors)


def test_class_with_python_new_runs_new_then_init(framegraph_trace):
    assert_same(framegraph.compile(python_new_and_call, backend="eager")(torch.ones(2)),
                python_new_and_call(torch.ones(2)))
    assert framegraph_trace.graphs == 1


class Slotted:
    __slots__ = ("a",)


def test_slots_without_dict_refuse_other_attributes(framegraph_trace):
    def f(x):
        s = Slotted()
        s.a = 1
        try:
            s.b = 2
        except AttributeError as e:
            return x + s.a, str(e)
        return x, ""

    assert_same(framegraph.compile(f, backend="eager")(torch.ones(2)), f(torch.ones(2)))
    assert framegraph_trace.graphs == 1


def test_python_partial_object_returned_is_rebuilt(framegraph_trace):
    def f(x):
        return x + 1, PyPartialSub(capture, 1, k=2)

    _, p = framegraph.compile(f, backend="eager")(torch.ones(2))
    assert type(p) is PyPartialSub and p(2) == ((1, 2), {"k": 2})
    assert framegraph_trace.graphs == 1


def test_another_copy_of_the_c_type_from_outside_keeps_no_dict(framegraph_trace):
    """Reading ``__dict__`` would create it, and a partial with one is not flattened:
    the trace reads the members only (CPython's tests make such a copy of the type)."""
    from test.support import import_helper

    fresh = import_helper.import_fresh_module("functools", fresh=["_functools"])
    p = fresh.partial(capture, 1)

    def f(x):
        return x + 1, p(2), p.func is capture, p.args

    assert_same(framegraph.compile(f, backend="eager")(torch.ones(2)), f(torch.ones(2)))
    assert fresh.partial(p, 3).func is capture  # still flattened: p has no __dict__
    assert framegraph_trace.graphs == 1


def signature(part):
    return part.func, part.args, part.keywords, part.__dict__


def setstate_and_rebuild(x, kind):
    f = kind(signature)
    f.__setstate__((capture, (1,), dict(a=10), dict(attr=[])))  # what unpickling does
    out = [signature(f), f(2, b=20)]
    f.__setstate__((capture, (1,), None, None))
    out += [f(2), signature(f)]
    for bad in ((capture, (), {}), [capture, (), {}, None], (None, (), {}, None), (capture, [], {}, None)):
        try:
            f.__setstate__(bad)
        except TypeError as e:
            out.append(str(e))
    g = kind(capture)
    g.__setstate__((capture, (g,), {}, {}))  # a partial inside its own args
    out.append(repr(g).startswith(f"{'functools.partial' if kind is functools.partial else 'Bound'}(<function"))
    out.append(kind(f).func is f)  # reading f.__dict__ made it: no flattening
    return x + 1, out, g


@pytest.mark.parametrize("kind", [functools.partial, Bound])
def test_setstate_and_dict_of_a_partial_made_in_the_trace(framegraph_trace, kind):
    expected = setstate_and_rebuild(torch.ones(2), kind)
    actual = framegraph.compile(setstate_and_rebuild, backend="eager")(torch.ones(2), kind)
    assert_same(actual[:2], expected[:2])
    g = actual[2]
    assert type(g) is kind and g.args[0] is g and g.__dict__ == {}  # rebuilt with the same state
    assert framegraph_trace.graphs == 1


def test_partial_of_an_outside_partial_returned_flattens_like_eager(framegraph_trace):
    outer = functools.partial(capture, 1)

    def f(x):
        return x + 1, functools.partial(outer, 2, k=3)

    p = framegraph.compile(f, backend="eager")(torch.ones(2))[1]
    expected = f(torch.ones(2))[1]
    assert (p.func, p.args, p.keywords) == (expected.func, expected.args, expected.keywords)
    assert framegraph_trace.graphs == 1


class Switch:
    """partialmethod: a method made of another with some arguments fixed."""

    def __init__(self):
        self.on = False

    def set_state(self, state, scale=1):
        self.on = state
        return scale

    turn_on = functools.partialmethod(set_state, True)
    turn_off = functools.partialmethod(set_state, False, scale=3)


def test_partialmethod_binds_like_a_method():
    def fn(x):
        s = Switch()
        a = s.turn_on()
        states = [s.on]
        b = s.turn_off()
        states.append(s.on)
        return x * (a + b + s.turn_on(scale=5)), states, s.turn_on.__self__ is s

    check(fn, torch.ones(2))


def test_stored_unbound_methods_of_builtin_types():
    to_hex, lookup = float.hex, dict.get  # module-level aliases, as test_float's toHex

    def fn(x):
        return x + 1, to_hex(1.5), lookup({"a": 1}, "a"), lookup({}, "b", "default")

    check(fn, torch.ones(2))
