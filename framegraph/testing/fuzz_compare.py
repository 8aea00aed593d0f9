"""What the differential fuzzer compares: values in a canonical form that keeps types and identities.

`canon(value, ids)` turns a program's result, or an input's final state,
into nested tuples holding everything an eager and a compiled run must agree
on: the type of every container, record and iterator (by qualified name,
since each run execs its own copy of the program's classes), the order of
dict items, what an iterator still has to yield (it is consumed to find
out), which values are the same object and which tensors share storage.
`Ids` names each object at its first sighting and the inputs by their
parameter names, so a returned `x.add_(1)` reads ("ref", "x") and a copy of
it reads ("Tensor", "#3", ...). Tensors stay tensors: `same` compares them
with a tolerance and everything else with `==`.
"""
import collections.abc
import itertools
import math
import types

import torch

ITER_LIMIT = 20  # an iterator is compared on at most this many more items (itertools.count never ends)
_SCALARS = (int, float, complex, str, bytes, bool, type(None), torch.dtype, torch.device)
_OPAQUE = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, torch.nn.Module)


class Ids:
    """Names objects at first sighting (`#k`) and storages (`sk`); the roots are named up front."""

    def __init__(self, **roots):
        self.names = {id(v): k for k, v in roots.items()}
        self.keep = list(roots.values())  # keeps every named object alive, so no id is reused
        self.storages = {}
        for v in roots.values():
            if isinstance(v, torch.Tensor):
                self.storage(v)

    def name(self, v):
        """(seen before, name) for `v`; names it if new."""
        if id(v) in self.names:
            return True, self.names[id(v)]
        self.names[id(v)] = f"#{len(self.keep)}"
        self.keep.append(v)
        return False, self.names[id(v)]

    def storage(self, t):
        if "Fake" in type(t).__name__:  # a fake tensor escaping the trace: its type name already mismatches
            return "fake"
        storage = t.untyped_storage()
        if storage.nbytes() == 0:  # empty tensors all have data_ptr 0
            return None
        return self.storages.setdefault(storage.data_ptr(), f"s{len(self.storages)}")


def type_name(v):
    return type(v).__qualname__


def canon(v, ids, force=False):
    """The canonical form of `v`; `force` describes an already named root instead of referring to it."""
    if type(v) in _SCALARS:
        return (type_name(v), v)
    if isinstance(v, torch.Size):
        return ("Size", tuple(v))
    if isinstance(v, tuple):  # tuples and namedtuples are values: no identity
        return (type_name(v), tuple(canon(item, ids) for item in v))
    if isinstance(v, range):
        return ("range", v.start, v.stop, v.step)
    if isinstance(v, _OPAQUE):
        return (type_name(v), getattr(v, "__qualname__", None))
    seen, name = ids.name(v)
    if seen and not force:
        return ("ref", name)
    return (type_name(v), name) + _body(v, ids)


def _body(v, ids):
    if isinstance(v, torch.Tensor):
        return (ids.storage(v), v.detach())
    if isinstance(v, dict):
        body = (tuple((canon(k, ids), canon(item, ids)) for k, item in list(v.items())),)
        if isinstance(v, collections.OrderedDict):  # its table too, which move_to_end leaves alone
            body += (tuple(canon(k, ids) for k in dict.keys(v)),)
        return body
    if isinstance(v, (set, frozenset)):
        if all(_hashed_by_value(item) for item in v):  # the same hashes in both runs: the order counts
            return (tuple(canon(item, ids) for item in v),)
        return (tuple(canon(item, ids) for item in sorted(v, key=lambda item: _sort_key(item, ids))),)
    if isinstance(v, types.ModuleType):
        return (v.__name__,)
    if isinstance(v, collections.abc.Iterator):
        items, error = [], None
        try:
            items.extend(itertools.islice(v, ITER_LIMIT))
        except Exception as e:  # noqa: BLE001 -- what the rest of the iterator raises is compared too
            error = (type_name(e), str(e))
        return (tuple(canon(item, ids) for item in items), error)
    if isinstance(v, (list, collections.abc.Collection)):  # lists, deques, dict views
        return (tuple(canon(item, ids) for item in v),)
    if hasattr(v, "__dict__"):  # user objects, dataclasses: their attributes
        return (canon(vars(v), ids),)
    return ()


def _hashed_by_value(item) -> bool:
    """Does ``item`` hash the same in the eager and the compiled run (not by identity)?"""
    if type(item) in (tuple, frozenset):
        return all(_hashed_by_value(i) for i in item)
    return type(item) in _SCALARS


def _sort_key(item, ids):
    """An order for a set's items that does not depend on their hashes (a tensor hashes by id):
    objects named already (the inputs) by name, then the rest by value."""
    if id(item) in ids.names:
        return (0, ids.names[id(item)])
    if isinstance(item, torch.Tensor):
        return (1, "Tensor", str(item.dtype), tuple(item.shape), item.detach().double().flatten().tolist())
    return (1, type_name(item), repr(item))


def same(a, b):
    """Canonical forms agree: same structure and types, tensors close, floats close."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(map(same, a, b))
    if type(a) is float and type(b) is float:
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)
    return type(a) is type(b) and a == b


def state(result, args, ns=None):
    """Everything a run leaves behind: the result, then each input and global it may have changed."""
    x, y, n, lst, d, obj = args
    ids = Ids(x=x, y=y, lst=lst, d=d, obj=obj)
    out = {"result": canon(result, ids)}
    for name, root in (("x", x), ("y", y), ("lst", lst), ("d", d), ("obj", obj)):
        out[name] = canon(root, ids, force=True)
    ns = ns or {}
    out["G"] = canon(ns.get("G"), ids)
    out["modules"] = {k: v.calls for k, v in ns.items() if isinstance(v, torch.nn.Module)}
    for k, v in ns.items():  # the program's own module objects (`fz`), minus their dunders
        if isinstance(v, types.ModuleType) and v.__name__.startswith("fz"):
            out[k] = canon({a: b for a, b in vars(v).items() if not a.startswith("__")}, ids)
    return out


def same_state(a, b):
    return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)


def first_difference(a, b, path=""):
    """Where two canonical forms first differ, as `path: eager-part != compiled-part` (None if same)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() | b.keys():
            found = first_difference(a.get(k), b.get(k), f"{path}{k}")
            if found:
                return found
        return None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and not same(a, b):
        for i, (p, q) in enumerate(zip(a, b)):
            if not same(p, q):
                return first_difference(p, q, f"{path}[{i}]")
    if same(a, b):
        return None
    return f"{path}: {_short(a)} != {_short(b)}"


def _short(v):
    text = repr(v).replace("\n", " ")
    return text if len(text) < 200 else text[:200] + "..."
