"""Reads through a Python ``__getattribute__``, as configuration classes do.

A read repeated with nothing changed in between is answered by the first
one (the override is traced once per name); anything that could change the
answer (a write, a side effect of the read itself, a fresh object, grad
mode, an in-place op on a tensor it reads, a global) makes the trace read
again, and every compiled call returns what eager returns.
"""
import collections

import pytest
import torch

import framegraph
from framegraph.tracer import translator
from helpers import CountingBackend, assert_same, check

SCALE = 2.0


class PerLayerChecks:
    """Reads an instance-dict entry before every attribute, as transformers' per-layer
    configs do: a second override under the first."""

    def __getattribute__(self, key):
        per_layer = super().__getattribute__("__dict__").get("per_layer", ())
        if key in per_layer:
            raise AttributeError(f"{key} differs per layer")
        return super().__getattribute__(key)


class Config(PerLayerChecks):
    """Attribute aliases, as transformers' configs map them."""

    attribute_map = {"hidden": "hidden_size"}

    def __init__(self):
        self.hidden_size = 4
        self.scale = 2.0

    def __getattribute__(self, key):
        aliases = super().__getattribute__("attribute_map")
        return super().__getattribute__(aliases.get(key, key) if key != "attribute_map" else key)


def on_twins(f, make, graphs=1):
    """``f(x, obj)`` in eager and compiled, each on its own ``make()``: both objects."""
    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    mine, theirs = make(), make()
    assert_same(compiled(torch.ones(2), mine), f(torch.ones(2), theirs))
    assert cnt.frame_count == graphs
    return mine, theirs


@pytest.fixture
def inlined(monkeypatch):
    """The names each ``__getattribute__`` call the tracer inlines was asked for, but the
    mixin's (Config's own calls it for each)."""
    names = []
    run = translator._inline

    def counting(parent, fn_var, code, args, kwargs):
        if code.co_name == "__getattribute__" and code is not PerLayerChecks.__getattribute__.__code__:
            names.append(args[1].as_python_constant())
        return run(parent, fn_var, code, args, kwargs)

    monkeypatch.setattr(translator, "_inline", counting)
    return names


def test_a_repeated_read_is_traced_once(inlined):
    config = Config()

    def f(x):
        for _ in range(8):
            x = x * config.hidden + config.scale
        return x

    check(f, torch.ones(2), ops=16)
    assert inlined.count("hidden") == 1 and inlined.count("scale") == 1


def test_a_write_between_reads_is_read_again(inlined):
    def f(x, config):
        before = config.scale
        config.scale = 3.0
        return x * before + config.scale

    mine, theirs = on_twins(f, Config)
    assert inlined.count("scale") == 2
    assert mine.scale == theirs.scale == 3.0


class Logged:
    """Every read is logged: the read has a side effect of its own."""

    def __init__(self):
        self.log = []
        self.size = 3

    def __getattribute__(self, key):
        object.__getattribute__(self, "log").append(key)
        return object.__getattribute__(self, key)


def test_a_read_with_a_side_effect_happens_every_time():
    def f(x, obj):
        return x * obj.size + obj.size

    mine, theirs = on_twins(f, Logged)
    # read past the override: reading .log through it would log itself
    assert object.__getattribute__(mine, "log") == object.__getattribute__(theirs, "log") == ["size", "size"]


class Fresh:
    """``obj.items`` is a new list on each read."""

    def __getattribute__(self, key):
        if key == "items":
            return [1, 2]
        return object.__getattribute__(self, key)


def test_a_fresh_object_on_each_read_stays_fresh():
    obj = Fresh()

    def f(x):
        first = obj.items
        first.append(3)
        return x * len(obj.items), obj.items is obj.items

    check(f, torch.ones(2))


class GradAware:
    """The answer depends on grad mode."""

    def __getattribute__(self, key):
        if key == "recording":
            return torch.is_grad_enabled()
        return object.__getattribute__(self, key)


def test_a_read_under_another_grad_mode_is_read_again():
    obj = GradAware()

    def f(x):
        outside = obj.recording
        with torch.no_grad():
            inside = obj.recording
        return x + outside * 10 + inside

    check(f, torch.ones(2))


class Holder:
    """``rows`` is computed from a tensor's shape."""

    def __init__(self, w):
        self.w = w

    def __getattribute__(self, key):
        if key == "rows":
            return object.__getattribute__(self, "w").shape[0]
        return object.__getattribute__(self, key)


def test_a_read_after_an_in_place_op_on_the_tensor_it_reads_is_read_again(inlined):
    def f(x, holder):
        w = holder.w
        before = holder.rows
        w.unsqueeze_(0)
        return x * before + holder.rows

    mine, theirs = on_twins(f, lambda: Holder(torch.ones(3)))
    assert mine.w.shape == theirs.w.shape == (1, 3)
    assert inlined.count("rows") == 2


class FromGlobal:
    """``scale`` is the module's global SCALE."""

    def __getattribute__(self, key):
        if key == "scale":
            return SCALE
        return object.__getattribute__(self, key)


def _set_scale(value):
    global SCALE
    SCALE = value


def test_a_global_changed_between_reads_is_read_again():
    obj = FromGlobal()

    def f(x):
        before = obj.scale
        _set_scale(5.0)
        return x * before + obj.scale

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    try:
        expected = f(torch.ones(2))
        _set_scale(2.0)
        assert_same(compiled(torch.ones(2)), expected)
        assert SCALE == 5.0
    finally:
        _set_scale(2.0)
    assert cnt.frame_count == 1 and expected.tolist() == [7.0, 7.0]


class LoggedDict(collections.OrderedDict):
    """A dict subclass logging every attribute read, as ``Logged`` does."""

    def __getattribute__(self, key):
        object.__getattribute__(self, "log").append(key)
        return object.__getattribute__(self, key)


def _logged_dict():
    d = LoggedDict(a=1)
    object.__setattr__(d, "log", [])
    object.__setattr__(d, "size", 3)
    return d


def test_a_dict_subclass_runs_its_getattribute_on_every_read():
    def f(x, d):
        return x * d.size + d.size

    mine, theirs = on_twins(f, _logged_dict)
    assert object.__getattribute__(mine, "log") == object.__getattribute__(theirs, "log") == ["size", "size"]
