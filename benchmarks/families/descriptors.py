"""Builtin descriptors: methods of C types reached through the type (method_descriptor,
wrapper_descriptor, getset/member descriptors, classmethod_descriptor) and their attributes."""
import torch

from . import case, program

F = "descriptors"


def _running_sum():
    total = None
    while True:
        x = yield total
        total = x if total is None else total + x


@program(F)
def gen_send_through_type():
    # type(gen).send(gen, v) is what a scheduler holding the generator type calls
    def f(x):
        g = _running_sum()
        send = type(g).send
        send(g, None)
        send(g, x)
        return send(g, x * 2).sin()
    return case(f, torch.randn(4))


@program(F)
def gen_next_through_type():
    def f(x):
        g = (x * i for i in range(3))
        nxt = type(g).__next__
        return nxt(g) + nxt(g) + nxt(g)
    return case(f, torch.randn(3))


@program(F)
def list_iadd_unbound():
    def f(x):
        acc = [x]
        out = list.__iadd__(acc, [x * 2, x * 3])
        return out is acc, torch.stack(acc).sum(0)
    return case(f, torch.randn(3))


@program(F)
def list_append_unbound():
    def f(xs):
        out = []
        push = list.append
        for t in xs:
            push(out, t.relu())
        return torch.cat(out)
    return case(f, [torch.randn(2), torch.randn(3)])


@program(F)
def dict_keys_iter_through_type():
    def f(params):
        keys = params.keys()
        it = type(keys).__iter__(keys)
        return sum(params[k].sum() for k in it)
    return case(f, {"w": torch.randn(3), "b": torch.randn(2)})


@program(F)
def descriptor_name_and_qualname():
    # a registry keyed by the method's name, as a dispatcher introspecting callables does
    def f(x):
        names = (list.append.__name__, str.upper.__qualname__, int.__add__.__name__)
        return x * len("".join(names)), names
    return case(f, torch.randn(2))


@program(F)
def descriptor_objclass():
    def f(x):
        owner = list.append.__objclass__
        wrapper_owner = object.__init__.__objclass__
        return x + (owner is list) + 2 * (wrapper_owner is object)
    return case(f, torch.randn(2))


@program(F)
def wrapper_descriptor_call():
    def f(x):
        scale = float.__mul__(2.0, 1.5)
        shift = int.__add__(3, 4)
        return x * scale + shift
    return case(f, torch.randn(3))


@program(F)
def str_join_unbound():
    def f(x, parts):
        key = str.join(".", parts)
        return {key: x.cos()}
    return case(f, torch.randn(2), ["encoder", "layer", "0"])


@program(F)
def str_format_unbound():
    def f(x):
        name = str.format("{}_{:02d}", "block", 7)
        return x * len(name), name
    return case(f, torch.randn(3))


@program(F)
def dict_get_unbound():
    def f(x, opts):
        lr = dict.get(opts, "lr", 0.1)
        mom = dict.get(opts, "momentum", 0.9)
        return x * lr + mom
    return case(f, torch.randn(3), {"lr": 0.5})


@program(F)
def dict_setdefault_unbound():
    def f(x, cache):
        dict.setdefault(cache, "seen", []).append(1)
        return x * len(cache["seen"])
    cache = {}
    return case(f, torch.randn(3), cache, observe=lambda: cache)


@program(F)
def set_add_unbound():
    def f(x):
        s = {1, 2}
        set.add(s, 3)
        set.discard(s, 1)
        return x * sum(s)
    return case(f, torch.randn(2))


@program(F)
def tuple_index_count_unbound():
    def f(x, dims):
        return x.sum(tuple.index(dims, 1)) * tuple.count(dims, 0)
    return case(f, torch.randn(2, 3), (0, 1, 0))


@program(F)
def method_descriptor_get():
    def f(x):
        out = []
        append = list.append.__get__(out)
        append(x + 1)
        append(x - 1)
        return out
    return case(f, torch.randn(2))


@program(F)
def classmethod_descriptor_get():
    def f(x):
        fromkeys = dict.__dict__["fromkeys"].__get__(None, dict)
        d = fromkeys(["a", "b"], 2)
        return x * sum(d.values())
    return case(f, torch.randn(2))


@program(F)
def getset_descriptor_get():
    def f(x):
        real = int.__dict__["real"].__get__(5)
        return x * real
    return case(f, torch.randn(2))


class _Slotted:
    __slots__ = ("scale", "bias")

    def __init__(self, scale, bias):
        self.scale, self.bias = scale, bias


@program(F)
def member_descriptor_get_set():
    def f(x, p):
        _Slotted.scale.__set__(p, _Slotted.scale.__get__(p) + 1)
        return x * p.scale + _Slotted.bias.__get__(p, _Slotted)
    p = _Slotted(1.0, 0.5)
    return case(f, torch.randn(2), p, observe=lambda: p.scale)


@program(F)
def list_dunder_len_getitem():
    def f(xs):
        n = list.__len__(xs)
        return list.__getitem__(xs, n - 1) * n
    return case(f, [torch.randn(2), torch.randn(2)])


@program(F)
def dict_contains_unbound():
    def f(x, state):
        if dict.__contains__(state, "mask"):
            x = x * state["mask"]
        return x + 1
    return case(f, torch.randn(3), {"mask": torch.ones(3)})


@program(F)
def object_getattribute_setattr():
    class Holder:
        def __init__(self):
            self.w = torch.ones(2)

    def f(x, h):
        w = object.__getattribute__(h, "w")
        object.__setattr__(h, "last", x.sum())
        return x * w
    h = Holder()
    return case(f, torch.randn(2), h, observe=lambda: h.last)


@program(F)
def list_sort_unbound():
    def f(x, sizes):
        order = list(sizes)
        list.sort(order, reverse=True)
        return x.reshape(order[-1], -1) * order[0]
    return case(f, torch.randn(6), [2, 3, 1])


@program(F)
def descriptor_types_compare():
    # what inspect's ismethoddescriptor does: a type check on the descriptor's type
    import types

    def f(x):
        a = isinstance(list.append, types.MethodDescriptorType)
        b = isinstance(object.__init__, types.WrapperDescriptorType)
        c = type(str.join).__name__
        return x * (a + b), c
    return case(f, torch.randn(2))
