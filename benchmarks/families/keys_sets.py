"""Objects as dict keys and sets of constants: dicts keyed by user objects, types, dtypes,
modules, frozensets and tuples; sets built in the frame and returned from it."""
import dataclasses
import enum

import torch

from . import case, program

F = "keys_sets"


class Node:
    def __init__(self, name):
        self.name = name


@program(F)
def assign_into_dict_keyed_by_objects():
    def f(x, nodes):
        values = {}
        for i, n in enumerate(nodes):
            values[n] = x * i
        return [values[n].sum() for n in nodes], len(values)
    return case(f, torch.randn(2), [Node("a"), Node("b")])


@program(F)
def dict_keyed_by_objects_passed_in():
    def f(x, table, node):
        table[node] = table.get(node, 0) + 1
        return x * table[node]
    a = Node("a")
    table = {a: 0}
    return case(f, torch.randn(2), table, a, observe=lambda: list(table.values()))


@program(F)
def dict_keyed_by_types():
    handlers = {int: lambda v: v * 2, float: lambda v: v + 0.5, str: len}

    def f(x, values):
        return x * sum(handlers[type(v)](v) for v in values)
    return case(f, torch.randn(2), [1, 2.0, "abc"])


@program(F)
def dict_keyed_by_container_types():
    def f(x, value):
        convert = {list: sum, tuple: len, dict: lambda d: len(d) * 10}
        return x * convert[type(value)](value)
    return case(f, torch.randn(2), (4, 5, 6))


@program(F)
def set_of_constants_returned():
    def f(x, names):
        kinds = {n.split(".")[0] for n in names}
        return x.sum(), kinds
    return case(f, torch.randn(3), ["enc.w", "dec.w", "enc.b"])


@program(F)
def set_literal_returned():
    def f(x):
        return x + 1, {1, 2, 3}, frozenset({"a"})
    return case(f, torch.randn(2))


@program(F)
def frozenset_keys():
    def f(x, groups):
        table = {frozenset(g): i for i, g in enumerate(groups)}
        return x * table[frozenset(["b", "a"])], len(table)
    return case(f, torch.randn(2), [["a", "b"], ["c"]])


@program(F)
def tuple_shape_keys_cache():
    def f(xs):
        cache = {}
        for t in xs:
            key = tuple(t.shape)
            cache[key] = cache.get(key, 0) + t.sum()
        return cache
    return case(f, [torch.randn(2), torch.randn(3), torch.randn(2)])


class Key:
    """A value object with its own __eq__ and __hash__."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return isinstance(other, Key) and (self.a, self.b) == (other.a, other.b)

    def __hash__(self):
        return hash((self.a, self.b))


@program(F)
def user_hash_eq_keys():
    def f(x):
        d = {Key(1, 2): x, Key(3, 4): x * 2}
        return d[Key(3, 4)] + d.get(Key(1, 2)), Key(1, 2) in d
    return case(f, torch.randn(2))


@program(F)
def set_difference_of_names():
    def f(x, got, want):
        missing = set(want) - set(got)
        return x * len(missing), sorted(missing), missing
    return case(f, torch.randn(2), ["a", "b"], ["a", "b", "c", "d"])


@program(F)
def dict_keyed_by_functions():
    def f(x):
        costs = {torch.sin: 1.0, torch.cos: 2.0}
        return sum(fn(x) * c for fn, c in costs.items())
    return case(f, torch.randn(3))


class Mode(enum.Enum):
    TRAIN = 1
    EVAL = 2


@program(F)
def enum_member_keys():
    def f(x, mode):
        scale = {Mode.TRAIN: 0.5, Mode.EVAL: 1.0}
        return x * scale[mode], {Mode.TRAIN, Mode.EVAL} - {mode}
    return case(f, torch.randn(2), Mode.TRAIN)


@program(F)
def dtype_keys():
    def f(x):
        tol = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 1e-2}
        return x + tol[x.dtype], x.dtype in tol
    return case(f, torch.randn(2))


@program(F)
def set_of_tuples_returned():
    def f(x, edges):
        undirected = {tuple(sorted(e)) for e in edges}
        return x * len(undirected), undirected
    return case(f, torch.randn(2), [(1, 2), (2, 1), (3, 1)])


@program(F)
def frozenset_union_returned():
    def f(x):
        a = frozenset({1, 2})
        b = a | {3}
        return x * len(b), b, type(b).__name__
    return case(f, torch.randn(2))


@program(F)
def module_keys():
    def f(x, layers):
        scales = {m: float(i + 1) for i, m in enumerate(layers)}
        for m in layers:
            x = m(x) * scales[m]
        return x
    torch.manual_seed(0)
    return case(f, torch.randn(2, 3), [torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)])


@program(F)
def set_of_types_membership():
    def f(x, values):
        numeric = {int, float, complex}
        n = sum(1 for v in values if type(v) in numeric)
        return x * n, numeric
    return case(f, torch.randn(2), [1, "a", 2.5, None])


@dataclasses.dataclass(frozen=True)
class Slot:
    layer: int
    head: int


@program(F)
def frozen_dataclass_keys():
    def f(x):
        mask = {Slot(0, 1): x, Slot(1, 0): -x}
        mask[Slot(0, 1)] = mask[Slot(0, 1)] * 3
        return mask[Slot(0, 1)] + mask[Slot(1, 0)], len(mask)
    return case(f, torch.randn(2))


@program(F)
def set_comprehension_of_dims():
    def f(x):
        dims = {d for d in x.shape if d > 1}
        return x.sum() * len(dims), dims
    return case(f, torch.randn(3, 1, 4))


@program(F)
def set_add_then_return():
    def f(x, seen):
        seen.add(x.dim())
        seen.add("done")
        return x * len(seen)
    seen = set()
    return case(f, torch.randn(2), seen, observe=lambda: seen)


@program(F)
def object_key_with_tensor_value_mutated():
    def f(x, stats, node):
        stats[node] = stats[node] + x
        return stats[node] * 2
    n = Node("n")
    stats = {n: torch.zeros(2)}
    return case(f, torch.randn(2), stats, n, observe=lambda: list(stats.values()))
