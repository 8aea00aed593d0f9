"""functools.partial objects: their attributes (func, args, keywords, __dict__), what they lack
(__get__, __name__), partial of partial, partial and partialmethod as methods."""
import functools
import operator

import torch

from . import case, program

F = "partials"


def affine(x, scale=1.0, shift=0.0):
    return x * scale + shift


@program(F)
def hasattr_get_on_partial():
    # the test functools.update_wrapper-style decorators make: is it a descriptor?
    def f(x):
        p = functools.partial(affine, scale=2.0)
        return p(x), hasattr(p, "__get__"), hasattr(affine, "__get__")
    return case(f, torch.randn(2))


@program(F)
def partial_passed_in_hasattr():
    def f(x, p):
        if hasattr(p, "__get__"):
            return x
        return p(x)
    return case(f, torch.randn(2), functools.partial(affine, shift=1.0))


@program(F)
def partial_func_args_keywords():
    def f(x, p):
        return p.func(x, *p.args, **p.keywords), p.func.__name__, p.args, dict(p.keywords)
    return case(f, torch.randn(2), functools.partial(affine, 3.0, shift=0.5))


@program(F)
def partial_made_inside_attrs():
    def f(x):
        p = functools.partial(torch.add, alpha=2)
        return p(x, x), p.func is torch.add, p.keywords["alpha"]
    return case(f, torch.randn(2))


@program(F)
def partial_dict_attribute():
    def f(x):
        p = functools.partial(affine, scale=3.0)
        p.tag = "scaled"
        return p(x), p.__dict__, p.tag
    return case(f, torch.randn(2))


@program(F)
def partial_of_partial_flattens():
    def f(x):
        p = functools.partial(affine, scale=2.0)
        q = functools.partial(p, shift=1.0)
        return q(x), q.func is affine, sorted(q.keywords)
    return case(f, torch.randn(2))


@program(F)
def partial_as_class_attribute():
    # a partial is not a descriptor: as a class attribute it is not bound to the instance
    class Block:
        act = functools.partial(torch.clamp, min=0.0)

        def forward(self, x):
            return self.act(x) + 1

    def f(x):
        return Block().forward(x)
    return case(f, torch.randn(3))


@program(F)
def partialmethod_bound():
    class Layer:
        def __init__(self, w):
            self.w = w

        def apply(self, x, mode):
            return x * self.w if mode == "mul" else x + self.w

        mul = functools.partialmethod(apply, mode="mul")
        add = functools.partialmethod(apply, mode="add")

    def f(x):
        layer = Layer(2.0)
        return layer.mul(x) + layer.add(x)
    return case(f, torch.randn(2))


@program(F)
def keyword_overridden_at_call():
    def f(x):
        p = functools.partial(affine, scale=2.0, shift=1.0)
        return p(x, shift=-1.0)
    return case(f, torch.randn(2))


@program(F)
def partial_in_activation_table():
    acts = {"gelu": functools.partial(torch.nn.functional.gelu, approximate="tanh"),
            "leaky": functools.partial(torch.nn.functional.leaky_relu, negative_slope=0.2)}

    def f(x, name):
        return acts[name](x)
    return case(f, torch.randn(4), "leaky")


@program(F)
def isinstance_and_callable_partial():
    def f(x, p):
        ok = isinstance(p, functools.partial) and callable(p)
        return x * ok, type(p).__name__
    return case(f, torch.randn(2), functools.partial(affine))


@program(F)
def reduce_with_partial():
    def f(xs):
        add_scaled = functools.partial(torch.add, alpha=0.5)
        return functools.reduce(add_scaled, xs)
    return case(f, [torch.randn(2) for _ in range(3)])


@program(F)
def map_partial_over_tensors():
    def f(xs):
        return list(map(functools.partial(affine, scale=-1.0), xs))
    return case(f, [torch.randn(2), torch.randn(2)])


@program(F)
def partial_of_closure():
    def f(x, k):
        def combine(a, b, scale):
            return (a + b) * scale
        p = functools.partial(combine, x, scale=k)
        return p(x.cos())
    return case(f, torch.randn(2), 3.0)


@program(F)
def partial_of_bound_method():
    class Acc:
        def __init__(self):
            self.items = []

        def add(self, x, scale):
            self.items.append(x * scale)
            return len(self.items)

    def f(x, acc):
        p = functools.partial(acc.add, scale=2.0)
        p(x)
        return p(x + 1), p.func.__self__ is acc
    acc = Acc()
    return case(f, torch.randn(2), acc, observe=lambda: acc.items)


@program(F)
def update_wrapper_on_partial():
    def f(x):
        p = functools.update_wrapper(functools.partial(affine, scale=4.0), affine)
        return p(x), p.__name__, p.__wrapped__ is affine
    return case(f, torch.randn(2))


@program(F)
def partial_of_type():
    def f(x):
        make = functools.partial(dict, scale=2.0)
        cfg = make(shift=1.0)
        return affine(x, **cfg), sorted(cfg)
    return case(f, torch.randn(2))


@program(F)
def partial_keywords_get():
    def f(x, p):
        dim = p.keywords.get("dim", 0)
        return p(x), dim
    return case(f, torch.randn(2, 3), functools.partial(torch.softmax, dim=1))


@program(F)
def getattr_wrapped_default():
    def f(x, p):
        inner = getattr(p, "__wrapped__", None)
        name = getattr(p, "__name__", "partial")
        return p(x), inner is None, name
    return case(f, torch.randn(2), functools.partial(affine, scale=0.5))


@program(F)
def partial_call_through_type():
    def f(x, p):
        return type(p).__call__(p, x) + p.__call__(x)
    return case(f, torch.randn(2), functools.partial(affine, shift=2.0))


@program(F)
def wraps_decorator_over_partial():
    def logged(fn, log):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            log.append(getattr(fn, "__name__", "?"))
            return fn(*args, **kwargs)
        return inner

    def f(x, log):
        g = logged(functools.partial(affine, scale=2.0), log)
        return g(x), g.__wrapped__.keywords["scale"]
    log = []
    return case(f, torch.randn(2), log, observe=lambda: log)


@program(F)
def partial_with_operator_function():
    def f(x):
        double = functools.partial(operator.mul, 2)
        return double(x) + double(3), double.args
    return case(f, torch.randn(2))
