"""Differential fuzzing: random small programs, run eagerly and compiled, must agree.

    python -m framegraph.testing.fuzz --programs 500 [--seed 0] [--backends eager,aot_eager]

A seeded generator writes Python functions that mix tensor ops, Python
arithmetic, containers, loops, conditionals on Python values and on tensor
values (graph breaks), helper calls, closures, in-place tensor mutation and
side effects on a list, a dict and an object passed in. Each program runs
eagerly and compiled (each backend, several input shapes and dtypes, calls
repeated so cache hits and recompiles happen) and must agree on the return
value, on the exception (type and message) and on the final state of every
mutated input. Since 2026-12-01 it also writes Python object semantics
(`fuzz_objects.py`: `__dict__`, OrderedDict order, `**` merging, in-place
identity, tensor set members and dict keys, namedtuple and dataclass
subclasses, iterators), and values are compared with their types, dict
order, iterator positions and identity relations (`fuzz_compare.py`). A
mismatch prints the program and a reproduction.
"""
import argparse
import random
import sys
import textwrap
import traceback

import torch

from framegraph.testing.fuzz_compare import first_difference, same_state, state
from framegraph.testing.fuzz_objects import FEATURES

_UNARY = ["torch.sin({})", "torch.cos({})", "torch.relu({})", "torch.tanh({})", "({}).abs()",
          "({}).exp().clamp(max=1e4)", "torch.sigmoid({})", "({}) * 0.5", "-({})", "({}).t().t()"]
_BINARY = ["({} + {})", "({} - {})", "({} * {})", "torch.maximum({}, {})", "torch.where({0} > {1}, {0}, {1})"]
_REDUCE = ["({}).sum()", "({}).mean()", "({}).amax()"]


class _Gen:
    """Writes one program; `self.rng` is the only source of randomness."""

    def __init__(self, rng, features=FEATURES):
        self.rng = rng
        self.features = features  # feature -> probability per statement (fuzz_objects.py)
        self.tensors = ["x", "y"]
        self.ints = ["n"]
        self.lines = []
        self.helpers = []
        self.counter = 0
        self.uses_global = False
        self.extras = []  # expressions the program returns as well, for their type and identity
        self.defined = set()

    def define(self, key, source):
        """Add a helper (class, function, module object) once per program."""
        if key not in self.defined:
            self.defined.add(key)
            self.helpers.append(source)

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def tensor_expr(self, depth=0):
        r = self.rng.random()
        if depth > 2 or r < 0.3:
            return self.rng.choice(self.tensors)
        if r < 0.6:
            return self.rng.choice(_UNARY).format(self.tensor_expr(depth + 1))
        if r < 0.8:
            a, b = self.tensor_expr(depth + 1), self.tensor_expr(depth + 1)
            return self.rng.choice(_BINARY).format(a, b)
        return f"({self.tensor_expr(depth + 1)} * {self.int_expr()})"

    def int_expr(self):
        a = self.rng.choice(self.ints)
        return self.rng.choice([a, f"({a} + {self.rng.randint(1, 3)})", f"({a} * 2)", f"len(lst)",
                                f"({a} % 3)"])

    def statement(self, indent, depth):
        roll = self.rng.random() if self.features else 1.0  # no features: the programs of before 2026-12-01
        for feature, p in self.features.items():
            if roll < p:
                return feature(self, indent, depth)
            roll -= p
        kinds = ["assign", "assign", "int", "loop", "if_py", "if_tensor", "helper", "closure", "append",
                 "dict", "attr", "inplace", "item", "slice", "cat", "comprehension", "unpack", "while",
                 "try", "readback", "method"]
        kinds = kinds + _EXTRA_KINDS
        kind = self.rng.choice(kinds if depth < 2 else kinds[:3] + kinds[8:])
        getattr(self, f"_{kind}")(indent, depth)

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def _assign(self, indent, depth):
        name = self.fresh("t")
        self.emit(indent, f"{name} = {self.tensor_expr()}")
        self.tensors.append(name)

    def _int(self, indent, depth):
        name = self.fresh("k")
        self.emit(indent, f"{name} = {self.int_expr()}")
        self.ints.append(name)

    def _loop(self, indent, depth):
        acc, var = self.fresh("t"), self.fresh("i")
        self.emit(indent, f"{acc} = {self.rng.choice(self.tensors)}")
        self.emit(indent, f"for {var} in range({self.rng.randint(1, 4)}):")
        self.emit(indent + 1, f"{acc} = {acc} + {self.tensor_expr(2)} * {var}")
        self.tensors.append(acc)

    def _branch(self, indent, depth, cond):
        name = self.fresh("t")
        self.emit(indent, f"if {cond}:")
        self.emit(indent + 1, f"{name} = {self.tensor_expr()}")
        self.emit(indent, "else:")
        self.emit(indent + 1, f"{name} = {self.tensor_expr()}")
        self.tensors.append(name)

    def _if_py(self, indent, depth):
        self._branch(indent, depth, f"{self.int_expr()} > {self.rng.randint(0, 4)}")

    def _if_tensor(self, indent, depth):
        self._branch(indent, depth, f"{self.rng.choice(_REDUCE).format(self.rng.choice(self.tensors))} > 0")

    def _helper(self, indent, depth):
        name = self.fresh("helper")
        body = self.rng.choice(_UNARY).format("a")
        self.helpers.append(f"def {name}(a, b=2):\n    return {body} * b\n")
        out = self.fresh("t")
        self.emit(indent, f"{out} = {name}({self.rng.choice(self.tensors)}, b={self.int_expr()})")
        self.tensors.append(out)

    def _closure(self, indent, depth):
        scale, fn, out = self.fresh("c"), self.fresh("inner"), self.fresh("t")
        self.emit(indent, f"{scale} = {self.int_expr()}")
        self.emit(indent, f"def {fn}(a):")
        self.emit(indent + 1, f"return a * {scale} + 1")
        self.emit(indent, f"{out} = {fn}({self.rng.choice(self.tensors)})")
        self.tensors.append(out)

    def _append(self, indent, depth):
        self.emit(indent, f"lst.append({self.rng.choice(self.tensors)})")

    def _dict(self, indent, depth):
        self.emit(indent, f"d[{self.rng.choice(['a', 'b', 'c'])!r}] = {self.rng.choice(self.tensors)}")

    def _attr(self, indent, depth):
        self.emit(indent, f"obj.count = obj.count + {self.int_expr()}")

    def _inplace(self, indent, depth):
        target = self.rng.choice(self.tensors)
        name = self.fresh("t")
        if self.rng.random() < 0.3:
            self.emit(indent, f"x.mul_(1.5)")
        else:
            self.emit(indent, f"{name} = {target}.clone()")
            self.emit(indent, f"{name}.add_({self.rng.randint(1, 3)})")
            self.tensors.append(name)

    def _item(self, indent, depth):
        name = self.fresh("k")
        self.emit(indent, f"{name} = int({self.rng.choice(self.tensors)}.sum().item() > 0)")
        self.ints.append(name)


def _slice(self, indent, depth):
    name = self.fresh("t")
    expr = self.rng.choice(["{}[1:]", "{}[:, 0]", "{}[..., :2]", "{}.view(-1)", "{}.reshape(-1, 1)",
                            "{}[{}.sum(1) > 0]"])
    self.emit(indent, f"{name} = {expr.format(self.rng.choice(['x', 'y']), 'x')}")
    self.tensors.append(name) if "view" in expr or "[1:]" in expr else None


def _cat(self, indent, depth):
    name = self.fresh("t")
    a, b = self.rng.choice(["x", "y"]), self.rng.choice(["x", "y"])
    self.emit(indent, f"{name} = torch.cat([{a}, {b}], dim=0).chunk(2)[0]")
    self.tensors.append(name)


def _comprehension(self, indent, depth):
    name = self.fresh("t")
    self.emit(indent, f"{name} = sum([{self.rng.choice(self.tensors)} * i for i in range({self.int_expr()})]"
                      f" + [x * 0])")
    self.tensors.append(name)


def _unpack(self, indent, depth):
    a, b = self.fresh("t"), self.fresh("t")
    self.emit(indent, f"{a}, {b} = {self.rng.choice(self.tensors)}, {self.tensor_expr(2)}")
    self.tensors += [a, b]


def _while(self, indent, depth):
    acc, k = self.fresh("t"), self.fresh("k")
    self.emit(indent, f"{acc}, {k} = x, 0")
    self.emit(indent, f"while {k} < {self.int_expr()}:")
    self.emit(indent + 1, f"{acc} = {acc} * 0.5 + y")
    self.emit(indent + 1, f"{k} += 1")
    self.tensors.append(acc)
    self.ints.append(k)


def _try(self, indent, depth):
    name = self.fresh("t")
    self.emit(indent, "try:")
    self.emit(indent + 1, f"{name} = {self.tensor_expr(2)}")
    self.emit(indent + 1, f"if {self.int_expr()} > 5:")
    self.emit(indent + 2, "raise ValueError('big')")
    self.emit(indent, "except ValueError:")
    self.emit(indent + 1, f"{name} = x - 1")
    self.tensors.append(name)


def _readback(self, indent, depth):
    name = self.fresh("t")
    self.emit(indent, f"lst.append({self.rng.choice(self.tensors)})")
    self.emit(indent, f"{name} = lst[-1] + len(lst)")
    self.tensors.append(name)


def _method(self, indent, depth):
    name = self.fresh("t")
    self.emit(indent, f"{name} = obj.scale({self.rng.choice(self.tensors)})")
    self.tensors.append(name)


for _fn in (_slice, _cat, _comprehension, _unpack, _while, _try, _readback, _method):
    setattr(_Gen, _fn.__name__, _fn)


# --- constructs added 2026-11-29 (see RELIABILITY.md) ---------------------

def _view_inplace(self, indent, depth):
    target = self.rng.choice(["x", "y"])
    self.emit(indent, self.rng.choice([f"{target}[0].add_(1)", f"{target}.view(-1)[:2].mul_(2)",
                                       f"{target}[:, 1:].sub_(0.5)", f"{target}.t()[0].zero_()"]))


def _alias(self, indent, depth):
    fn, out = self.fresh("alias"), self.fresh("t")
    self.helpers.append(f"def {fn}(a, b):\n    a.add_(1)\n    return b * 2 + a\n")
    arg = self.rng.choice(["x", "y", self.rng.choice(self.tensors) + ".clone()"])
    self.emit(indent, f"{out} = {fn}({arg}, {arg})")
    self.tensors.append(out)


def _lst_rmw(self, indent, depth):
    self.emit(indent, f"lst.append({self.int_expr()})")
    self.emit(indent, f"if {self.rng.choice(self.tensors)}.sum() > 0:")
    self.emit(indent + 1, "lst[-1] = lst[-1] * 2 + 1")
    self.emit(indent, "else:")
    self.emit(indent + 1, "lst[-1] -= 1")
    name = self.fresh("k")
    self.emit(indent, f"{name} = lst[-1] + len(lst)")
    self.ints.append(name)


def _dict_rmw(self, indent, depth):
    key = self.rng.choice(["a", "b", "cnt"])
    self.emit(indent, f"d[{key!r}] = d.get({key!r}, 0) + {self.int_expr()}")
    self.emit(indent, f"framegraph.graph_break()" if self.rng.random() < 0.5 else
              f"d['z'] = {self.rng.choice(self.tensors)}.sum()")
    name = self.fresh("k")
    self.emit(indent, f"{name} = int(d[{key!r}]) if not isinstance(d[{key!r}], torch.Tensor) else 0")
    self.ints.append(name)


def _dict_iter(self, indent, depth):
    acc = self.fresh("t")
    self.emit(indent, f"d['w'] = {self.rng.choice(self.tensors)}")
    self.emit(indent, f"{acc} = x * 0")
    self.emit(indent, self.rng.choice(["for kk, vv in d.items():", "for kk in sorted(d):",
                                       "for kk, vv in list(d.items())[::-1]:"]))
    self.emit(indent + 1, "if isinstance(d[kk], torch.Tensor):")
    self.emit(indent + 2, f"{acc} = {acc} + d[kk] * len(kk)")
    self.tensors.append(acc)


def _loop_closures(self, indent, depth):
    fs, out = self.fresh("fs"), self.fresh("t")
    lam = self.rng.choice(["lambda a: a * i", "lambda a, i=i: a * i", "lambda a: a + i * i"])
    self.emit(indent, f"{fs} = [{lam} for i in range({self.rng.randint(1, 4)})]")
    src = self.rng.choice(self.tensors)
    self.emit(indent, self.rng.choice([f"{out} = sum(f({src}) for f in {fs})",
                                       f"{out} = {src} + sum([f({src}) for f in {fs}][-1:])"]))
    self.tensors.append(out)


def _nonlocal(self, indent, depth):
    cnt, fn, out = self.fresh("cnt"), self.fresh("bump"), self.fresh("t")
    self.emit(indent, f"{cnt} = {self.int_expr()}")
    self.emit(indent, f"def {fn}(a):")
    self.emit(indent + 1, f"nonlocal {cnt}")
    self.emit(indent + 1, f"{cnt} += 1")
    self.emit(indent + 1, f"return a + {cnt}")
    src = self.rng.choice(self.tensors)
    self.emit(indent, f"{out} = {fn}({fn}({src}))")
    self.tensors.append(out)
    self.ints.append(cnt)


def _kwonly(self, indent, depth):
    fn, out = self.fresh("kw"), self.fresh("t")
    self.helpers.append(f"def {fn}(a, *rest, s=2, off=1, **kw):\n"
                        f"    return a * s + off + len(rest) + kw.get('extra', 0)\n")
    src = self.rng.choice(self.tensors)
    call = self.rng.choice([f"{fn}({src})", f"{fn}({src}, off={self.int_expr()})",
                            f"{fn}({src}, 1, 2, s=-1)", f"{fn}({src}, extra=3)",
                            f"{fn}(*[{src}, {self.int_expr()}], **{{'s': 3}})"])
    self.emit(indent, f"{out} = {call}")
    self.tensors.append(out)


def _pybuiltins(self, indent, depth):
    name = self.fresh("k")
    a, b = self.int_expr(), self.int_expr()
    self.emit(indent, f"{name} = " + self.rng.choice([
        f"min({a}, {b}) + max(sorted([{a}, 3, {b}])[1], 0)",
        f"len(sorted([{a}, {b}], reverse=True)) + int(isinstance({a}, int))",
        f"max([{a}, {b}, len(lst)], key=lambda v: -v)",
        f"sum(sorted({{{a}, {b}, 1}})) + abs(-{a})",
        f"int(isinstance(lst, (list, tuple))) + min(len(d), {b})"]))
    self.ints.append(name)


def _tuple_helper(self, indent, depth):
    fn, a, k = self.fresh("pair"), self.fresh("t"), self.fresh("k")
    self.helpers.append(f"def {fn}(a, m):\n    return a + m, a.shape[0] + m, (m, -m)\n")
    self.emit(indent, f"{a}, {k}, (_, neg{k}) = {fn}({self.rng.choice(self.tensors)}, {self.int_expr()})")
    self.tensors.append(a)
    self.ints += [k, f"neg{k}"]


def _early_return(self, indent, depth):
    var = self.fresh("i")
    self.emit(indent, f"for {var} in range({self.int_expr()}):")
    self.emit(indent + 1, f"if {var} == {self.rng.randint(1, 4)}:")
    self.emit(indent + 2, f"return ({self.rng.choice(self.tensors)} + {var}, {var})")
    if self.rng.random() < 0.5:
        self.emit(indent + 1, f"if {self.rng.choice(self.tensors)}.sum() > {var}:")
        self.emit(indent + 2, f"return ({self.rng.choice(self.tensors)} - {var}, -{var})")


def _break_continue(self, indent, depth):
    acc, var = self.fresh("t"), self.fresh("i")
    self.emit(indent, f"{acc} = {self.rng.choice(self.tensors)}")
    self.emit(indent, f"for {var} in range({self.rng.randint(2, 6)}):")
    self.emit(indent + 1, f"if {var} % 2 == {self.rng.randint(0, 1)}:")
    self.emit(indent + 2, "continue")
    cond = self.rng.choice([f"{var} > {self.int_expr()}", f"{acc}.sum() > {self.rng.randint(0, 10)}"])
    self.emit(indent + 1, f"if {cond}:")
    self.emit(indent + 2, "break")
    self.emit(indent + 1, f"{acc} = {acc} * 0.5 + {var}")
    self.emit(indent, "else:")
    self.emit(indent + 1, f"{acc} = {acc} - 1")
    self.tensors.append(acc)


def _shape_math(self, indent, depth):
    k, t = self.fresh("k"), self.fresh("t")
    src = self.rng.choice(["x", "y"])
    self.emit(indent, f"{k} = " + self.rng.choice([
        f"{src}.shape[0] * {src}.shape[1] - {src}.size(0)", f"{src}.numel() // {src}.shape[-1]",
        f"len({src}) + {src}.dim()", f"{src}.shape[0] % 3 + n"]))
    self.emit(indent, f"{t} = " + self.rng.choice([
        f"{src}.reshape({src}.shape[0] // 2, -1)", f"{src}.new_zeros({src}.shape) + {k}",
        f"{src}[: {k} % {src}.shape[0] + 1].sum(0) + {src}", f"{src}.expand({k} % 2 + 1, *{src}.shape)[0]"]))
    self.ints.append(k)
    if "reshape" not in self.lines[-1]:
        self.tensors.append(t)


def _cast(self, indent, depth):
    t = self.fresh("t")
    src = self.rng.choice(self.tensors)
    self.emit(indent, f"{t} = " + self.rng.choice([
        f"{src}.float() * 2", f"{src}.to(torch.float64) + 1", f"{src}.double().half().float()",
        f"({src} > 0).to({src}.dtype) + {src}", f"{src}.int().float()", f"{src}.to(y) - y"]))
    self.tensors.append(t)


def _no_grad(self, indent, depth):
    t = self.fresh("t")
    self.emit(indent, self.rng.choice(["with torch.no_grad():", "with torch.enable_grad():",
                                       "with torch.set_grad_enabled(n > 1):"]))
    self.emit(indent + 1, f"{t} = {self.tensor_expr(1)}")
    if self.rng.random() < 0.5:
        self.emit(indent + 1, f"obj.count += int(torch.is_grad_enabled())")
    self.tensors.append(t)


def _item_branch(self, indent, depth):
    name, v = self.fresh("t"), self.fresh("v")
    src = self.rng.choice(self.tensors)
    self.emit(indent, f"{v} = {src}.{self.rng.choice(['sum', 'max', 'mean'])}().item()")
    self.emit(indent, f"if {v} > {self.rng.choice(['0', '0.5', '-1'])}:")
    self.emit(indent + 1, f"{name} = {self.tensor_expr(1)} * {v}")
    self.emit(indent, "else:")
    self.emit(indent + 1, f"{name} = {self.tensor_expr(1)} - int({v})")
    self.tensors.append(name)


def _fstring(self, indent, depth):
    k = self.rng.choice(self.ints)
    self.emit(indent, "lst.append(" + self.rng.choice([
        f"f'k={{{k}}}'", f"'{{}}-{{:03d}}'.format({k}, n)", f"'%d/%s' % ({k}, len(lst))",
        f"f'{{{k}!r:>4}}' + str(x.shape[0])", f"str({self.rng.choice(self.tensors)}.dtype)"]) + ")")


def _recursion(self, indent, depth):
    fn, out = self.fresh("rec"), self.fresh("t")
    self.helpers.append(f"def {fn}(a, m):\n    if m <= 0:\n        return a\n"
                        f"    return {fn}(a * 0.5 + m, m - 1)\n")
    self.emit(indent, f"{out} = {fn}({self.rng.choice(self.tensors)}, {self.int_expr()} % 4)")
    self.tensors.append(out)


def _generator(self, indent, depth):
    fn, out = self.fresh("gen"), self.fresh("t")
    side = self.rng.random() < 0.4  # a body with side effects, consumed partly
    self.helpers.append(f"def {fn}(a, m, out=None):\n    for i in range(m):\n"
                        + ("        out.append(i)\n" if side else "") + "        yield a * i\n    yield a\n")
    src = self.rng.choice(self.tensors)
    if side:
        self.emit(indent, f"{out} = " + self.rng.choice([
            f"next({fn}({src}, {self.int_expr()}, lst))", f"sum(zip(range(2), {fn}({src}, 3, lst)).__next__()[1:])",
            f"[v for v, _ in zip({fn}({src}, {self.int_expr()}, lst), range(2))][-1]"]))
        self.tensors.append(out)
        return
    self.emit(indent, f"{out} = " + self.rng.choice([
        f"sum({fn}({src}, {self.int_expr()}))", f"list({fn}({src}, 2))[-1] + {src}",
        f"next({fn}({src}, {self.int_expr()}))", f"torch.stack(tuple({fn}({src}, 1))).sum(0)",
        f"sum(t * 2 for t in {fn}({src}, 2))"]))
    self.tensors.append(out)


def _global_write(self, indent, depth):
    self.uses_global = True
    self.emit(indent, f"G = G + {self.int_expr()}" if self.rng.random() < 0.5 else
              f"G = {self.rng.choice(self.tensors)}.sum().item() if n > 1 else G + 1")
    name = self.fresh("k")
    self.emit(indent, f"{name} = int(G) % 5")
    self.ints.append(name)


def _module(self, indent, depth):
    cls, out = self.fresh("Mod"), self.fresh("t")
    self.helpers.append(
        f"class {cls}(torch.nn.Module):\n"
        f"    def __init__(self):\n        super().__init__()\n        self.calls = 0\n"
        f"        self.lin = torch.nn.Linear(3, 3)\n"
        f"        with torch.no_grad():\n"
        f"            self.lin.weight.copy_(torch.arange(9.).reshape(3, 3) / 10)\n"
        f"            self.lin.bias.fill_(0.5)\n"
        f"        self.register_buffer('b', torch.ones(3))\n"
        f"    def forward(self, a):\n        self.calls += 1\n"
        f"        return torch.relu(self.lin(a.float())) + self.b * self.calls\n"
        f"m{cls} = {cls}()\n")
    self.emit(indent, f"{out} = m{cls}({self.rng.choice(self.tensors)}).detach()")
    self.tensors.append(out)


def _user_class(self, indent, depth):
    cls, inst, out = self.fresh("Acc"), self.fresh("acc"), self.fresh("t")
    self.helpers.append(
        f"class {cls}:\n"
        f"    def __init__(self, scale, start=0):\n        self.scale = scale\n        self.total = start\n"
        f"    @property\n    def doubled(self):\n        return self.scale * 2\n"
        f"    def add(self, t):\n        self.total = self.total + self.bump()\n        return t * self.doubled\n"
        f"    def bump(self):\n        self.scale += 1\n        return self.scale\n"
        f"    def __len__(self):\n        return self.total\n")
    self.emit(indent, f"{inst} = {cls}({self.int_expr()})")
    self.emit(indent, f"{out} = {inst}.add({inst}.add({self.rng.choice(self.tensors)}))")
    if self.rng.random() < 0.5:
        self.emit(indent, f"obj.acc = {inst}")
    k = self.fresh("k")
    self.emit(indent, f"{k} = len({inst}) + {inst}.doubled")
    self.tensors.append(out)
    self.ints.append(k)


_EXTRA = (_view_inplace, _alias, _lst_rmw, _dict_rmw, _dict_iter, _loop_closures, _nonlocal, _kwonly,
          _pybuiltins, _tuple_helper, _early_return, _break_continue, _shape_math, _cast, _no_grad,
          _item_branch, _fstring, _recursion, _generator, _global_write, _module, _user_class)
_EXTRA_KINDS = [fn.__name__[1:] for fn in _EXTRA]
for _fn in _EXTRA:
    setattr(_Gen, _fn.__name__, _fn)


PRELUDE = ("import collections\nimport dataclasses\nimport itertools\nimport types\nimport typing\n\n"
           "import torch\nimport framegraph\n\nG = 0\n\n")


def generate(seed, features=FEATURES):
    """Source of one random program `prog(x, y, n, lst, d, obj)`, deterministic in `seed` and `features`."""
    gen = _Gen(random.Random(seed), features)
    for _ in range(gen.rng.randint(2, 7)):
        gen.statement(1, 0)
    result = " + ".join(gen.rng.sample(gen.tensors, min(3, len(gen.tensors))))
    extras = "".join(f", {e}" for e in list(dict.fromkeys(gen.extras))[:4])
    gen.emit(1, f"return ({result}, {gen.rng.choice(gen.ints)}{extras})")
    if gen.uses_global:
        gen.lines.insert(0, "    global G")
    body = "\n".join(gen.lines)
    return (PRELUDE + "\n".join(gen.helpers)
            + f"\ndef prog(x, y, n, lst, d, obj):\n{body}\n")


class Obj:
    """The mutable object passed to every program."""

    def __init__(self):
        self.count = 0

    def scale(self, t):
        self.count += 1
        return t * (self.count + 1)


def _inputs(shape, dtype, n):
    g = torch.Generator().manual_seed(hash((shape, str(dtype), n)) % 2**31)
    x = torch.randn(shape, generator=g).to(dtype)
    y = torch.randn(shape, generator=g).to(dtype)
    return [x, y, n, [], {}, Obj()]


def _run(fn, args, ns=None):
    try:
        return state(fn(*args), args, ns), None
    except Exception as e:  # the program's own exception must match too
        return None, (type(e).__name__, str(e))


def check_program(source, backends=("eager",), cases=None, stats=None):
    """Run one program eagerly and compiled; return a list of mismatch descriptions.

    `stats` (a Counter), if given, counts the compiler's outcomes: frames
    compiled, frames with a graph break, frames that fell back to eager.
    """
    import framegraph
    from framegraph.diagnostics.records import observing

    def count(record):
        if stats is not None:
            outcome = ("eager" if record.compiled is None else
                       "graph_break" if getattr(record.compiled, "breaks", None) else "compiled")
            stats[outcome] += 1

    cases = cases or [((4, 3), torch.float32, 2), ((4, 3), torch.float32, 2), ((6, 3), torch.float32, 3),
                      ((4, 3), torch.float64, 1)]
    problems = []
    for backend in backends:
        eager_ns, compiled_ns = {}, {}
        exec(compile(source, "<fuzz>", "exec"), eager_ns)  # noqa: S102
        exec(compile(source, "<fuzz>", "exec"), compiled_ns)  # noqa: S102
        compiled = framegraph.compile(compiled_ns["prog"], backend=backend)
        for shape, dtype, n in cases:
            expected, expected_err = _run(eager_ns["prog"], _inputs(shape, dtype, n), eager_ns)
            try:
                with observing(count):
                    got, got_err = _run(compiled, _inputs(shape, dtype, n), compiled_ns)
            except BaseException as e:  # a framegraph error escaping is a mismatch too
                got, got_err = None, ("escaped " + type(e).__name__, traceback.format_exc(limit=3))
            if expected_err != got_err or (expected is not None and not same_state(expected, got)):
                where = "" if expected_err or got_err else "; " + first_difference(expected, got)
                problems.append(f"backend={backend} shape={shape} dtype={dtype} n={n}: "
                                f"eager={expected_err or 'ok'} compiled={got_err or 'ok'}{where}")
    return problems


def main(argv=None):
    """Run a fuzzing campaign; exit 1 if any program mismatched."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backends", default="eager")
    parser.add_argument("--progress", help="file that holds the seed being run (the one an interpreter crash hit)")
    args = parser.parse_args(argv)
    import collections
    import logging

    logging.getLogger("framegraph").setLevel(logging.ERROR)  # fallbacks are expected, not news
    failures, stats = 0, collections.Counter()
    for seed in range(args.seed, args.seed + args.programs):
        if args.progress:
            with open(args.progress, "w") as f:
                f.write(f"{seed}\n")
        source = generate(seed)
        problems = check_program(source, tuple(args.backends.split(",")), stats=stats)
        if problems:
            failures += 1
            print(f"--- seed {seed}: {len(problems)} mismatch(es)\n{textwrap.indent(source, '    ')}")
            print("\n".join("    " + p for p in problems))
    print(f"{args.programs} programs, {failures} with mismatches; frames traced: "
          + ", ".join(f"{k} {v}" for k, v in sorted(stats.items())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
