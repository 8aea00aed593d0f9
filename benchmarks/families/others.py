"""The rest of the long tail: eval() with its own namespaces, weak references made in the frame,
itertools.tee and friends, max()/min() over tensors, lru_cache wrappers, attributes written on
objects from outside the frame, ``del`` on user objects."""
import functools
import itertools
import operator
import weakref

import torch

from . import case, program

F = "others"


@program(F)
def eval_with_own_namespaces():
    def f(x):
        return eval("a * x + b", {"x": x}, {"a": 2.0, "b": 1.0})
    return case(f, torch.randn(3))


@program(F)
def eval_constant_expression():
    def f(x):
        n = eval("2 ** 3 + len('ab')")
        return x * n
    return case(f, torch.randn(2))


@program(F)
def eval_compiled_code():
    code = compile("torch.relu(t) * k", "<expr>", "eval")

    def f(x):
        return eval(code, {"torch": torch}, {"t": x, "k": 3})
    return case(f, torch.randn(3))


class Owner:
    def __init__(self, w):
        self.w = w


@program(F)
def weakref_made_in_frame():
    def f(x, owner):
        r = weakref.ref(owner)
        return x * r().w, r() is owner
    owner = Owner(2.0)
    return case(f, torch.randn(2), owner)


@program(F)
def weak_key_dictionary_lookup():
    cache = weakref.WeakKeyDictionary()

    def f(x, owner):
        if owner not in cache:
            cache[owner] = owner.w * 2
        return x * cache[owner]
    owner = Owner(3.0)
    return case(f, torch.randn(2), owner, observe=lambda: len(cache))


@program(F)
def itertools_tee_two_passes():
    def f(xs):
        a, b = itertools.tee(iter(xs))
        total = sum(a)
        return [t - total for t in b]
    return case(f, [torch.randn(2), torch.randn(2)])


@program(F)
def itertools_tee_pairwise():
    # the pairwise recipe from the itertools docs (before itertools.pairwise)
    def pairwise(iterable):
        a, b = itertools.tee(iterable)
        next(b, None)
        return zip(a, b)

    def f(xs):
        return [b - a for a, b in pairwise(xs)]
    return case(f, [torch.randn(2) for _ in range(4)])


@program(F)
def max_over_tensors():
    def f(xs):
        return max(xs, key=lambda t: t.shape[0]).sum(), max(t.numel() for t in xs)
    return case(f, [torch.randn(2), torch.randn(5), torch.randn(3)])


@program(F)
def max_of_two_tensors():
    def f(x, y):
        m = max(x.sum(), y.sum())
        return x * m
    return case(f, torch.randn(3), torch.randn(3))


@program(F)
def max_of_two_tensors_with_nan():
    # CPython's max keeps the first item unless a later one compares greater: NaN
    # compares greater than nothing, so the first sum (NaN or not) decides as eager does
    def f(x, y):
        m = max(x.sum(), y.sum())
        return x * m, max(y.sum(), x.sum())
    return case(f, torch.tensor([1.0, 2.0]), torch.tensor([float("nan"), 1.0]))


@program(F)
def min_with_default():
    def f(x, sizes):
        return x * min(sizes, default=1), min([], default=0)
    return case(f, torch.randn(2), [4, 2, 7])


@functools.lru_cache(maxsize=None)
def _window(n):
    return tuple(range(n))


@program(F)
def lru_cache_called_with_constants():
    def f(x):
        idx = _window(3)
        return x[list(idx)] * len(_window(2))
    return case(f, torch.randn(5))


@program(F)
def lru_cache_holding_a_stale_entry():
    # the cache answers with what it stored before the global changed, and counts the hit
    state = {"scale": 2}

    @functools.lru_cache(maxsize=None)
    def factor(n):
        return n * state["scale"]

    factor(3)
    state["scale"] = 10

    def f(x):
        return x * factor(3)
    return case(f, torch.ones(2), observe=lambda: factor.cache_info())


@program(F)
def lru_cache_local_wrapper():
    def f(x):
        @functools.lru_cache(maxsize=4)
        def scale(k):
            return k * 1.5
        return x * scale(2) + scale(2)
    return case(f, torch.randn(2))


@program(F)
def write_attributes_of_passed_object():
    class Stats:
        def __init__(self):
            self.calls = 0
            self.last = None

    def f(x, stats):
        stats.calls += 1
        stats.last = x.mean()
        return x - stats.last
    stats = Stats()
    return case(f, torch.randn(3), stats, observe=lambda: (stats.calls, stats.last))


@program(F)
def write_attributes_of_global_object():
    def f(x):
        _STATE.steps += 1
        _STATE.scale = x.abs().max()
        return x / _STATE.scale
    _STATE.__dict__.clear()
    _STATE.steps = 0
    return case(f, torch.randn(3), observe=lambda: (_STATE.steps, _STATE.scale))


class _Namespace:
    pass


_STATE = _Namespace()


@program(F)
def del_attribute_of_user_object():
    def f(x, obj):
        y = x * obj.tmp
        del obj.tmp
        return y, hasattr(obj, "tmp")
    obj = _Namespace()
    obj.tmp = 2.0

    def restore():
        obj.tmp = 2.0
    c = case(f, torch.randn(2), obj, observe=lambda: vars(obj))
    c.then = [restore]
    return c


@program(F)
def del_local_user_object():
    def f(x):
        tmp = Owner(x * 2)
        y = tmp.w + 1
        del tmp
        return y
    return case(f, torch.randn(2))


@program(F)
def delattr_builtin_on_object():
    def f(x, obj):
        obj.cache = x.sum()
        delattr(obj, "cache")
        return x + 1, "cache" in vars(obj)
    obj = _Namespace()
    return case(f, torch.randn(2), obj)


@program(F)
def itertools_accumulate_tensors():
    def f(xs):
        return list(itertools.accumulate(xs, operator.mul))
    return case(f, [torch.randn(2) for _ in range(3)])


@program(F)
def chain_from_iterable():
    def f(groups):
        return torch.stack(list(itertools.chain.from_iterable(groups))).sum(0)
    return case(f, [[torch.randn(2)], [torch.randn(2), torch.randn(2)]])


@program(F)
def islice_of_generator():
    def powers(x):
        t = x
        while True:
            yield t
            t = t * x

    def f(x):
        return list(itertools.islice(powers(x), 1, 4))
    return case(f, torch.randn(2))


@program(F)
def vars_update_on_object():
    def f(x, obj):
        vars(obj).update(scale=2.0, shift=x.sum())
        return x * obj.scale + obj.shift
    obj = _Namespace()
    return case(f, torch.randn(2), obj, observe=lambda: sorted(vars(obj)))


@program(F)
def sorted_items_by_value():
    def f(x, weights):
        order = sorted(weights.items(), key=operator.itemgetter(1), reverse=True)
        return x * order[0][1], [k for k, _ in order]
    return case(f, torch.randn(2), {"a": 0.2, "b": 0.7, "c": 0.1})
