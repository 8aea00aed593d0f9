"""Subclass constructors: tuple/list/dict ``__new__`` of a subclass, user container subclasses with
their own methods, typing.NamedTuple, dataclass and attrs-style classes, torch dtypes and sizes."""
import collections
import dataclasses
import enum
import typing

import torch

from . import case, program

F = "constructors"


class Pair(tuple):
    """A tuple subclass with its own methods (the pattern of torch.Size, os.stat_result)."""

    def first(self):
        return self[0]

    def swap(self):
        return type(self)((self[1], self[0]))


@program(F)
def tuple_new_of_subclass():
    def f(x):
        p = tuple.__new__(Pair, (x, x * 2))
        return p.first() + p[1], type(p) is Pair
    return case(f, torch.randn(2))


@program(F)
def tuple_subclass_method_rebuilds_type():
    def f(x):
        p = Pair((x.sin(), x.cos()))
        q = p.swap()
        return q.first() - p.first(), type(q).__name__
    return case(f, torch.randn(3))


class Shape(tuple):
    def __new__(cls, *dims):
        return super().__new__(cls, dims)

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n


@program(F)
def tuple_subclass_own_new():
    def f(x):
        s = Shape(2, 3)
        return x.reshape(s) * s.numel(), len(s)
    return case(f, torch.randn(6))


class Bag(list):
    def total(self):
        return sum(self)


@program(F)
def list_subclass_methods():
    def f(x):
        b = Bag([x, x * 2])
        b.append(x * 3)
        return b.total(), len(b), type(b) is Bag
    return case(f, torch.randn(2))


@program(F)
def list_new_of_subclass():
    def f(x):
        b = list.__new__(Bag)
        list.__init__(b, [x, x + 1])
        return b.total(), isinstance(b, list)
    return case(f, torch.randn(2))


class Registry(dict):
    def __missing__(self, key):
        value = self[key] = len(self)
        return value


@program(F)
def dict_subclass_missing():
    def f(x, names):
        r = Registry()
        ids = [r[n] for n in names]
        return x * sum(ids), dict(r)
    return case(f, torch.randn(2), ["a", "b", "a", "c"])


@program(F)
def dict_new_of_subclass():
    def f(x):
        r = dict.__new__(Registry)
        dict.__init__(r, w=x)
        return r["w"] + r["b"], len(r)
    return case(f, torch.randn(2))


class Point(typing.NamedTuple):
    x: torch.Tensor
    y: torch.Tensor
    weight: float = 1.0

    def norm(self):
        return (self.x ** 2 + self.y ** 2).sqrt() * self.weight


@program(F)
def typing_namedtuple_method():
    def f(a, b):
        p = Point(a, b)
        q = p._replace(weight=2.0)
        return p.norm() + q.norm(), q.weight
    return case(f, torch.randn(3), torch.randn(3))


@program(F)
def typing_namedtuple_asdict():
    def f(a, b):
        p = Point(a, b, 0.5)
        d = p._asdict()
        return d["x"] * d["weight"] + d["y"], list(d)
    return case(f, torch.randn(2), torch.randn(2))


Batch = collections.namedtuple("Batch", ["inputs", "targets"])


@program(F)
def namedtuple_make():
    def f(pair):
        b = Batch._make(pair)
        return (b.inputs - b.targets).pow(2).mean(), b._fields
    return case(f, [torch.randn(4), torch.randn(4)])


class Labeled(Batch):
    """A namedtuple subclass adding a property, as the namedtuple docs show."""
    __slots__ = ()

    @property
    def size(self):
        return self.inputs.shape[0]


@program(F)
def namedtuple_subclass_property():
    def f(x, y):
        b = Labeled(x, y)
        return b.inputs * b.size + b.targets
    return case(f, torch.randn(3), torch.randn(3))


@dataclasses.dataclass
class Stats:
    mean: torch.Tensor
    std: torch.Tensor
    eps: float = 1e-5

    def __post_init__(self):
        self.std = self.std.abs() + self.eps

    def normalize(self, x):
        return (x - self.mean) / self.std


@program(F)
def dataclass_post_init():
    def f(x):
        s = Stats(x.mean(), x.std())
        return s.normalize(x)
    return case(f, torch.randn(5))


@dataclasses.dataclass(frozen=True)
class Config:
    hidden: int
    scale: float = 1.0


@program(F)
def frozen_dataclass_replace():
    def f(x):
        c = Config(4)
        d = dataclasses.replace(c, scale=0.5)
        return x.reshape(-1, c.hidden) * d.scale, d == Config(4, 0.5)
    return case(f, torch.randn(8))


@program(F)
def dataclass_asdict_loop():
    def f(x):
        s = Stats(x, x * 2, 0.0)
        total = 0
        for name, value in dataclasses.asdict(s).items():
            total = total + value
        return total
    return case(f, torch.randn(2))


def define(cls):
    """An attrs-style class decorator: writes ``__init__``, ``__repr__`` and ``__eq__`` from the
    annotations with ``exec`` at class-creation time, the way attrs generates its methods."""
    names = list(cls.__annotations__)
    args = ", ".join(names)
    body = "\n".join(f"    self.{n} = {n}" for n in names) or "    pass"
    ns = {}
    exec(f"def __init__(self, {args}):\n{body}\n", {}, ns)
    cls.__init__ = ns["__init__"]
    cls.__eq__ = lambda self, other: type(self) is type(other) and all(
        getattr(self, n) is getattr(other, n) for n in names)
    cls.__attrs_attrs__ = tuple(names)
    return cls


@define
class Linear:
    weight: torch.Tensor
    bias: torch.Tensor

    def __call__(self, x):
        return x @ self.weight + self.bias


@program(F)
def attrs_style_class():
    def f(x, w, b):
        layer = Linear(w, b)
        return layer(x), Linear.__attrs_attrs__
    return case(f, torch.randn(2, 3), torch.randn(3, 4), torch.randn(4))


@program(F)
def dtype_promotion_constructor():
    def f(x):
        dt = torch.promote_types(x.dtype, torch.float64)
        return x.new_zeros(3, dtype=dt) + x.to(dt).sum()
    return case(f, torch.randn(3))


@program(F)
def dtype_by_name():
    def f(x, name):
        dt = getattr(torch, name)
        return x.to(dt) * torch.finfo(dt).eps, str(dt)
    return case(f, torch.randn(3), "float16")


@program(F)
def torch_size_constructor():
    def f(x):
        s = torch.Size([x.shape[0], 2])
        return x.unsqueeze(-1).expand(s).contiguous(), s.numel()
    return case(f, torch.randn(3))


class Scale(float):
    def apply(self, x):
        return x * float(self)


@program(F)
def float_subclass_constructor():
    def f(x):
        s = Scale(2.5)
        return s.apply(x) + s, isinstance(s, float)
    return case(f, torch.randn(2))


class Activation(enum.Enum):
    RELU = "relu"
    TANH = "tanh"


@program(F)
def enum_by_value():
    def f(x, kind):
        act = Activation(kind)
        return torch.relu(x) if act is Activation.RELU else torch.tanh(x)
    return case(f, torch.randn(3), "tanh")


class Ordered(collections.OrderedDict):
    def last(self):
        return next(reversed(self))


@program(F)
def ordereddict_subclass():
    def f(x):
        o = Ordered(a=x, b=x * 2)
        o.move_to_end("a")
        return o[o.last()] * 2, list(o)
    return case(f, torch.randn(2))


@program(F)
def type_of_value_rebuilds():
    def f(p):
        q = type(p)(t * 2 for t in p)
        return tuple(q), type(q) is type(p)
    return case(f, Pair((torch.randn(2), torch.randn(2))))


class Tags(frozenset):
    def has(self, tag):
        return tag in self


@program(F)
def frozenset_subclass():
    def f(x):
        t = Tags(["train", "fp32"])
        return x * (2 if t.has("train") else 1), sorted(t)
    return case(f, torch.randn(2))
