"""``dataclasses.fields`` inside a compiled function: the fields eager gives, in one graph.

The pseudo-fields (``ClassVar``, ``InitVar``) are left out, inherited fields come
first, a class works as well as an instance, and what is not a dataclass raises
the TypeError CPython raises, with the AttributeError as its suppressed context.
"""
import dataclasses
from typing import ClassVar, Optional

import torch

import framegraph
from helpers import CountingBackend, assert_same, check


@dataclasses.dataclass
class Base:
    logits: torch.Tensor
    loss: Optional[torch.Tensor] = None


@dataclasses.dataclass
class WithExtras(Base):
    hidden: Optional[torch.Tensor] = None
    scale: float = 2.0
    registry: ClassVar[dict] = {}
    seed: dataclasses.InitVar[int] = 0

    def __post_init__(self, seed):
        self.seed_used = seed


def test_fields_of_an_instance_made_in_the_frame():
    def f(x):
        out = WithExtras(x.sin(), hidden=x.cos(), seed=3)
        total = x
        for field in dataclasses.fields(out):
            value = getattr(out, field.name)
            if isinstance(value, torch.Tensor):
                total = total + value
        return total, [field.name for field in dataclasses.fields(out)], out.seed_used

    check(f, torch.randn(3))


def test_fields_of_an_input_and_of_a_class():
    def f(x, out):
        names = tuple(field.name for field in dataclasses.fields(out))
        defaults = [field.default for field in dataclasses.fields(WithExtras)]
        return x * out.scale, names, defaults

    check(f, torch.randn(2), WithExtras(torch.ones(2)))


def test_fields_guards_the_class_it_read():
    def f(x, out):
        return x + len(dataclasses.fields(out))

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    x = torch.zeros(2)
    for out in (Base(x), WithExtras(x), Base(x)):
        assert_same(compiled(x, out), f(x, out))
    assert cnt.frame_count == 2  # one graph per class: Base's two fields, then WithExtras's four


def test_fields_of_a_plain_object_raises_type_error_from_none():
    class Plain:
        pass

    def f(x, obj):
        try:
            dataclasses.fields(obj)
        except TypeError as error:
            return x + 1, str(error), error.__suppress_context__, type(error.__context__), error.__cause__
        return x

    check(f, torch.randn(2), Plain())
