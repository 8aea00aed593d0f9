"""The dict protocol on OrderedDict and friends: dict's methods called unbound on subclasses,
in-place merge, comparison, fromkeys, mappingproxy, and the collections recipes."""
import collections
import types

import torch

from . import case, program

F = "dict_protocol"
OD = collections.OrderedDict


@program(F)
def dict_keys_of_ordereddict():
    def f(state):
        return [state[k] * 2 for k in dict.keys(state)]
    return case(f, OD(w=torch.randn(2), b=torch.randn(2)))


@program(F)
def dict_values_items_of_ordereddict():
    def f(state):
        total = sum(dict.values(state))
        names = [k for k, v in dict.items(state)]
        return total, names
    return case(f, OD(a=torch.randn(3), b=torch.randn(3)))


@program(F)
def dict_ior_on_ordereddict():
    def f(x):
        od = OD(a=x)
        out = dict.__ior__(od, {"b": x * 2})
        return out is od, list(od), od["b"]
    return case(f, torch.randn(2))


@program(F)
def ordereddict_ior_operator():
    def f(x, od):
        od |= {"extra": x.sum()}
        return x + 1
    od = OD(a=1)
    return case(f, torch.randn(2), od, observe=lambda: od)


@program(F)
def dict_eq_ne_unbound():
    def f(x):
        a = OD(a=1, b=2)
        b = OD(b=2, a=1)
        same = dict.__eq__(a, b)           # dict's comparison ignores order
        differ = dict.__ne__(a, {"a": 1})
        ordered = a == b                   # OrderedDict's does not
        return x * (same + differ), ordered
    return case(f, torch.randn(2))


@program(F)
def defaultdict_fromkeys():
    def f(x, names):
        d = collections.defaultdict.fromkeys(names, 0)
        for n in names:
            d[n] += 1
        return x * d["a"], type(d).__name__, d.default_factory
    return case(f, torch.randn(2), ["a", "b", "a"])


@program(F)
def mappingproxy_getitem():
    class Layer:
        scale = 3.0
        shift = 1.0

    def f(x):
        ns = Layer.__dict__
        return x * ns["scale"] + types.MappingProxyType.__getitem__(ns, "shift")
    return case(f, torch.randn(2))


@program(F)
def mappingproxy_of_dict():
    def f(x, consts):
        view = types.MappingProxyType(consts)
        return x * view["k"] + len(view), "k" in view
    return case(f, torch.randn(2), {"k": 2.0, "j": 1.0})


@program(F)
def counter_most_common():
    def f(x, tokens):
        counts = collections.Counter(tokens)
        (top, n), = counts.most_common(1)
        return x * n, top
    return case(f, torch.randn(2), ["a", "b", "a", "c", "a"])


@program(F)
def counter_arithmetic():
    def f(x):
        a = collections.Counter(a=3, b=1)
        b = collections.Counter(a=1, b=2)
        return x * sum((a + b).values()), dict(a - b), dict(a & b)
    return case(f, torch.randn(2))


@program(F)
def chainmap_defaults():
    # the ChainMap recipe for layered options: command line over environment over defaults
    def f(x, user):
        defaults = {"scale": 1.0, "shift": 0.0}
        opts = collections.ChainMap(user, defaults)
        return x * opts["scale"] + opts["shift"], len(opts)
    return case(f, torch.randn(2), {"scale": 2.0})


@program(F)
def chainmap_new_child():
    def f(x):
        base = collections.ChainMap({"depth": 0})
        inner = base.new_child({"depth": 1})
        inner["k"] = 5
        return x * (inner["depth"] + base["depth"] + inner["k"]), list(inner.parents)
    return case(f, torch.randn(2))


class LRU(OD):
    """The OrderedDict LRU recipe from the collections docs."""

    def __init__(self, maxsize=2):
        super().__init__()
        self.maxsize = maxsize

    def __getitem__(self, key):
        value = super().__getitem__(key)
        self.move_to_end(key)
        return value

    def __setitem__(self, key, value):
        if key in self:
            self.move_to_end(key)
        super().__setitem__(key, value)
        if len(self) > self.maxsize:
            del self[next(iter(self))]


@program(F)
def ordereddict_lru_recipe():
    def f(x):
        cache = LRU(2)
        cache["a"] = x
        cache["b"] = x * 2
        cache["a"]
        cache["c"] = x * 3
        return list(cache), cache["a"] + cache["c"]
    return case(f, torch.randn(2))


@program(F)
def ordereddict_popitem_first():
    def f(x):
        od = OD(first=x, second=x * 2, third=x * 3)
        k, v = od.popitem(last=False)
        return k, v + od.popitem()[1], list(od)
    return case(f, torch.randn(2))


@program(F)
def ordereddict_or_merge():
    def f(x):
        merged = OD(a=x) | {"b": x + 1}
        return type(merged).__name__, merged["a"] + merged["b"]
    return case(f, torch.randn(2))


@program(F)
def defaultdict_grouping():
    def f(xs, labels):
        groups = collections.defaultdict(list)
        for t, lab in zip(xs, labels):
            groups[lab].append(t)
        return {k: torch.stack(v).mean(0) for k, v in groups.items()}
    return case(f, [torch.randn(2) for _ in range(4)], ["a", "b", "a", "b"])


@program(F)
def dict_setdefault_on_ordereddict():
    def f(x):
        od = OD()
        dict.setdefault(od, "acc", []).append(x)
        od.setdefault("acc", []).append(x * 2)
        return sum(od["acc"]), list(od)
    return case(f, torch.randn(2))


@program(F)
def reversed_ordereddict_items():
    def f(state):
        return {k: v * i for i, (k, v) in enumerate(reversed(state.items()))}
    return case(f, OD(a=torch.randn(2), b=torch.randn(2), c=torch.randn(2)))


@program(F)
def keys_view_set_ops():
    def f(x, state):
        shared = state.keys() & {"w", "missing"}
        extra = state.keys() - {"w"}
        return x * len(shared), sorted(extra)
    return case(f, torch.randn(2), OD(w=1, b=2, c=3))


@program(F)
def dict_getitem_contains_unbound():
    def f(state):
        if dict.__contains__(state, "w"):
            return dict.__getitem__(state, "w").sum()
        return None
    return case(f, OD(w=torch.randn(3)))


@program(F)
def userdict_subclass():
    class Params(collections.UserDict):
        def __setitem__(self, key, value):
            super().__setitem__(key.lower(), value)

    def f(x):
        p = Params()
        p["W"] = x
        p.update(B=x * 0.5)
        return p["w"] + p["b"], sorted(p)
    return case(f, torch.randn(2))


@program(F)
def ordereddict_equality_order():
    def f(x):
        a = OD([("a", 1), ("b", 2)])
        b = OD([("b", 2), ("a", 1)])
        return x * ((a == b) + (dict(a) == dict(b)) * 2 + (a == dict(b)) * 4)
    return case(f, torch.randn(2))


@program(F)
def dict_update_kwargs_on_ordereddict():
    def f(x):
        od = OD(a=x)
        dict.update(od, b=x * 2, c=x * 3)
        return list(od.keys()), sum(od.values())
    return case(f, torch.randn(2))
