"""Library patterns real models use, each in a few lines: one graph, same result as eager.

Exceptions caught inside the trace, dict subclasses with overridden slots
(ModelOutput-like dataclasses), ``__getattribute__`` overrides (configs),
``copy.deepcopy`` of plain objects, trace-time library calls
(``inspect.signature``, ``torch.finfo``), ``os.environ`` reads and
``record_function``.
"""
import collections
import copy
import dataclasses
import functools
import inspect
import os
import re
from typing import Optional

import pytest
import torch

import framegraph
import typed_fields
from helpers import CountingBackend, assert_same, check


def test_exception_caught_in_a_caller():
    def get(xs, i):
        if i >= len(xs):
            raise IndexError("out of range")
        return xs[i]

    def f(x):
        total = x
        i = 0
        try:
            while True:
                total = total + get([x, x * 2], i)
                i += 1
        except IndexError:
            return total

    check(f, torch.ones(3))


@pytest.mark.expect_fallback("exception")
def test_exception_escaping_runs_eagerly():
    def f(x):
        raise ValueError("no")

    compiled = framegraph.compile(f, backend="eager")
    try:
        compiled(torch.ones(1))
    except ValueError as e:
        assert str(e) == "no"
    else:
        raise AssertionError("expected ValueError")


class Output(collections.OrderedDict):
    """A ModelOutput-like mapping: items are also attributes; __getitem__ computes."""

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict(self.items())[k]
        return tuple(self.values())[k]

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)


@dataclasses.dataclass
class Result(Output):
    logits: torch.Tensor = None
    loss: Optional[torch.Tensor] = None

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                self[field.name] = value


def test_dict_subclass_dataclass_is_built_and_returned():
    def f(x):
        out = Result(logits=x.sin())
        return out, out[0] + out["logits"], out.logits

    cnt = check(f, torch.randn(4))
    assert cnt.op_count == 2  # sin, add: the items are the same tensor


def test_returned_dict_subclass_has_items_and_attributes(framegraph_trace):
    x = torch.randn(2)
    out = framegraph.compile(lambda x: Result(logits=x + 1), backend="eager", fullgraph=True)(x)
    assert type(out) is Result and list(out.keys()) == ["logits"]
    assert_same(out.logits, x + 1)
    assert out.loss is None
    assert framegraph_trace.graphs == 1


class Config:
    attribute_map = {"hidden": "hidden_size"}

    def __init__(self):
        self.hidden_size = 4
        self.scale = 2.0

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)


def test_getattribute_override_and_deepcopy():
    config = Config()

    def f(x):
        clone = copy.deepcopy(config)
        clone.scale = 3.0
        return x * config.hidden * config.scale + clone.scale

    check(f, torch.ones(2))


def test_trace_time_library_calls():
    def chunk(a, b):
        return a + b

    def f(x):
        n = len(inspect.signature(chunk).parameters)
        lo = torch.finfo(x.dtype).min
        flag = os.environ.get("FRAMEGRAPH_TEST_UNSET_VARIABLE", "0") == "1"
        with torch.autograd.profiler.record_function("step"):
            y = x.clamp(min=lo) * n
        return y if not flag else -y

    check(f, torch.randn(3))


def test_getattr_with_a_default_and_hasattr_on_constants():
    # transformers: `getattr(past_key_values, "is_compileable", False)` with no cache
    # passed, and `hasattr(layer_type, "is_sliding")` on a None or a str
    def f(x, cache=None, kind="full"):
        if getattr(cache, "is_compileable", False) or hasattr(cache, "is_sliding"):
            return x - 1
        return x * getattr(kind, "count")("l") + hasattr(kind, "upper") + getattr(None, "missing", 2)

    check(f, torch.ones(2))
    check(f, torch.ones(2), None, "sliding")


class Registry(collections.abc.MutableMapping):
    """transformers' GeneralInterface (ALL_ATTENTION_FUNCTIONS): a local mapping over a
    class-wide one; ``get`` is Mapping.get, whose ``except KeyError`` gives the default."""

    _global_mapping = {"sdpa": torch.sin}

    def __init__(self):
        self._local_mapping = {}

    def __getitem__(self, key):
        if key in self._local_mapping:
            return self._local_mapping[key]
        return self._global_mapping[key]

    def __setitem__(self, key, value):
        self._local_mapping[key] = value

    def __delitem__(self, key):
        del self._local_mapping[key]

    def __iter__(self):
        return iter({**self._global_mapping, **self._local_mapping})

    def __len__(self):
        return len(list(iter(self)))


REGISTRY = Registry()


def test_a_missing_dict_key_raises_key_error_that_mapping_get_catches():
    def f(x, kind):
        attention = REGISTRY.get(kind, torch.cos)
        try:
            extra = {"a": 1}[kind]
        except KeyError as e:
            extra = len(e.args)
        return attention(x) + extra

    check(f, torch.ones(2), "eager")
    check(f, torch.ones(2), "sdpa")


def _validated_setattr(cls):
    """huggingface_hub's strict dataclasses: ``__setattr__`` runs the field's
    validators, then the class's previous ``__setattr__``, saved in a cell (for
    a subclass, the base's validating one; for the base, ``object.__setattr__``)."""
    original_setattr = cls.__setattr__

    def __strict_setattr__(self, name, value):
        for validator in self.validators.get(name, []):
            validator(value)
        self.writes.append(name)
        original_setattr(self, name, value)

    cls.__setattr__ = __strict_setattr__
    return cls


def _must_be_int(value):
    if not isinstance(value, int):
        raise TypeError(f"not an int: {value!r}")


@_validated_setattr
class StrictBase:
    validators = {"heads": [_must_be_int]}

    def __init__(self):
        object.__setattr__(self, "writes", [])


@_validated_setattr
class StrictChild(StrictBase):
    pass


@pytest.mark.parametrize("outside", [True, False], ids=["argument", "made_in_trace"])
def test_setattr_override_chain_runs_once_per_write(outside):
    """Each level's override runs once per write, in the trace; the write is
    replayed with object.__setattr__ (a STORE_ATTR replay ran the overrides
    again: the two levels share one code object and the second call recursed
    until RecursionError, and ``writes`` grew twice per write)."""
    def f(x, obj):
        obj = StrictChild() if obj is None else obj
        obj.heads = 3
        return x + obj.heads, obj

    x = torch.randn(3)
    expected, want = f(x, StrictChild() if outside else None)
    got, obj = framegraph.compile(f, backend=CountingBackend(), fullgraph=True)(x, StrictChild() if outside else None)
    assert_same(got, expected)
    assert (obj.heads, obj.writes) == (3, ["heads", "heads"]) == (want.heads, want.writes)


def _constant_result(fn):
    """transformers' ``_make_compile_constant``: torch's assume_constant_result mark, set without torch."""
    fn._dynamo_marked_constant = True
    return fn


PROBES = []


@functools.lru_cache
@_constant_result
def _distributed_available():
    PROBES.append("distributed")
    return False


@_constant_result
def _version_at_least(major):
    PROBES.append(major)
    return major <= 2


def test_functions_marked_constant_are_answered_at_trace_time(framegraph_trace):
    """An install probe under lru_cache (wav2vec2's ``is_torch_distributed_available()``,
    a graph break before) and a marked plain function: called once, now, with the
    real cache; their answers are constants of the one graph."""
    def f(x):
        if _distributed_available():
            x = x - 1
        if _version_at_least(2):
            x = x * 2
        return x + 1

    _distributed_available.cache_clear()
    PROBES.clear()
    x = torch.randn(3)
    compiled = framegraph.compile(f, backend="eager", fullgraph=True)
    assert_same(compiled(x), x * 2 + 1)
    assert_same(compiled(x), x * 2 + 1)
    assert PROBES == ["distributed", 2]  # traced once; the lru_cache wrapper ran its function once
    assert framegraph_trace.graphs == 1


@_validated_setattr
class TypedConfig:
    validators = {"window": [typed_fields.typed(int | None)], "heads": [typed_fields.typed(int)]}

    def __init__(self):
        object.__setattr__(self, "writes", [])


def test_table_keyed_by_typing_origins_is_read_in_the_trace():
    """transformers' ``get_text_config``: a deep copy of a strict config, made in
    the trace, validates each write by looking its field's typing origin
    (``types.UnionType``, ``None``) up in a library table keyed by objects,
    reached through functions that have no source (the copy's class has
    none): one graph (a graph break per lookup before, three graphs on BART's
    default-cache forward)."""
    def f(x, cfg):
        cfg = copy.deepcopy(cfg)
        cfg.window = 4
        cfg.heads = 2
        return x * cfg.window + cfg.heads, cfg.writes

    x = torch.randn(3)
    cnt = check(f, x, TypedConfig())
    assert cnt.frame_count == 1


def test_a_sentinel_made_with_object(framegraph_trace):
    def get_option(options, name, x):
        missing = object()
        value = options.get(name, missing)
        if value is missing:
            return x * 2
        return x * value

    def fn(x):
        return get_option({"scale": 3}, "scale", x), get_option({}, "scale", x)

    check(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1


LAYER = re.compile(r"layers\.(\d+)\.(weight|bias)")


def test_a_compiled_pattern_matches_a_constant_name_at_trace_time_and_the_name_is_guarded():
    def f(x, name):
        m = LAYER.match(name)
        if m is None:
            return x
        return x * (int(m.group(1)) + 1), m.group(2), m.span(), LAYER.sub("L", name)

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    x = torch.randn(2)
    for name in ("layers.3.weight", "layers.7.bias", "embed.weight", "layers.3.weight"):
        assert_same(compiled(x, name), f(x, name))
    # a graph per matching name (its groups are constants of the graph); no match returns x: no graph
    assert cnt.frame_count == 2
