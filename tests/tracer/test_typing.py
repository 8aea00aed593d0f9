"""Type annotations evaluated at run time inside traced code: no graph break.

Library code builds annotations in function bodies, e.g. torch's foreach
optimizers call ``cast(list[Tensor], xs)`` on every tensor list. A
subscripted class (``list[Tensor]``, a ``types.GenericAlias``) is built at
trace time and is a constant; ``typing.cast(typ, val)`` is ``val``.
"""
import collections
import typing
from typing import Generic, TypeVar, cast

import torch
from torch import Tensor

from helpers import check

T = TypeVar("T")
TensorList = list[Tensor]  # a GenericAlias read from the globals


class Box(Generic[T]):
    pass


class Custom:
    @classmethod
    def __class_getitem__(cls, item):
        return (cls.__name__, item)


def test_cast_of_builtin_generic_alias():
    def f(xs):
        ys = cast(list[Tensor], xs)
        pair = cast(tuple[Tensor, Tensor], (ys[0], ys[1]))
        return [y * 2 for y in ys] + list(pair)

    check(f, [torch.randn(3), torch.randn(3)])


def test_generic_alias_is_a_constant():
    def f(x):
        alias = dict[str, list[int]]
        same = alias == dict[str, list[int]] and alias.__origin__ is dict and type[int].__origin__ is type
        return x + 1 if same and TensorList.__args__ == (Tensor,) else x - 1

    check(f, torch.randn(3))


def test_subscripted_user_classes():
    def f(x):
        a = Box[int]
        b = collections.OrderedDict[str, int]
        c = Custom[3]  # a user-written __class_getitem__ is inlined
        ok = a.__origin__ is Box and b.__origin__ is collections.OrderedDict and c == ("Custom", 3)
        return cast(Box[Tensor], x) * 2 if ok else x

    check(f, torch.randn(3))


def test_typing_module_forms():
    def f(x):
        y = typing.cast(typing.Optional[Tensor], x)
        z = cast(typing.List[Tensor], [y])
        return z[0] + 1

    check(f, torch.randn(3))


def test_metaclass_getitem_is_not_a_generic_alias():
    """``Color["RED"]`` goes through EnumMeta.__getitem__, not __class_getitem__:
    the metaclass's Python method is inlined (tests/tracer/test_classes_meta.py)."""
    import enum

    class Color(enum.Enum):
        RED = 1

    def f(x):
        return x * Color["RED"].value

    check(f, torch.randn(3), frames=1)
