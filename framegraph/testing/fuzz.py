"""Differential fuzzing: random small programs, run eagerly and compiled, must agree.

    python -m framegraph.testing.fuzz --programs 500 [--seed 0] [--backends eager,aot_eager]

A seeded generator writes Python functions that mix tensor ops, Python
arithmetic, containers, loops, conditionals on Python values and on tensor
values (graph breaks), helper calls, closures, in-place tensor mutation and
side effects on a list, a dict and an object passed in. Each program runs
eagerly and compiled (each backend, several input shapes and dtypes, calls
repeated so cache hits and recompiles happen) and must agree on the return
value, on the exception (type and message) and on the final state of every
mutated input. A mismatch prints the program and a reproduction.
"""
import argparse
import random
import sys
import textwrap
import traceback

import torch

_UNARY = ["torch.sin({})", "torch.cos({})", "torch.relu({})", "torch.tanh({})", "({}).abs()",
          "({}).exp().clamp(max=1e4)", "torch.sigmoid({})", "({}) * 0.5", "-({})", "({}).t().t()"]
_BINARY = ["({} + {})", "({} - {})", "({} * {})", "torch.maximum({}, {})", "torch.where({0} > {1}, {0}, {1})"]
_REDUCE = ["({}).sum()", "({}).mean()", "({}).amax()"]


class _Gen:
    """Writes one program; `self.rng` is the only source of randomness."""

    def __init__(self, rng):
        self.rng = rng
        self.tensors = ["x", "y"]
        self.ints = ["n"]
        self.lines = []
        self.helpers = []
        self.counter = 0

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
        kinds = ["assign", "assign", "int", "loop", "if_py", "if_tensor", "helper", "closure", "append",
                 "dict", "attr", "inplace", "item", "slice", "cat", "comprehension", "unpack", "while",
                 "try", "readback", "method"]
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


def generate(seed):
    """Source of one random program `prog(x, y, n, lst, d, obj)`, deterministic in `seed`."""
    gen = _Gen(random.Random(seed))
    for _ in range(gen.rng.randint(2, 7)):
        gen.statement(1, 0)
    result = " + ".join(gen.rng.sample(gen.tensors, min(3, len(gen.tensors))))
    gen.emit(1, f"return ({result}, {gen.rng.choice(gen.ints)})")
    body = "\n".join(gen.lines)
    return "import torch\n\n" + "\n".join(gen.helpers) + f"\ndef prog(x, y, n, lst, d, obj):\n{body}\n"


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


def _state(result, args):
    x, y, n, lst, d, obj = args
    return {"result": result, "x": x, "lst": list(lst), "d": dict(d), "count": obj.count}


def _same(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _run(fn, args):
    try:
        return _state(fn(*args), args), None
    except Exception as e:  # the program's own exception must match too
        return None, (type(e).__name__, str(e))


def check_program(source, backends=("eager",), cases=None, stats=None):
    """Run one program eagerly and compiled; return a list of mismatch descriptions.

    `stats` (a Counter), if given, counts the compiler's outcomes: frames
    compiled, frames with a graph break, frames that fell back to eager.
    """
    import framegraph
    from framegraph.convert_frame import observing

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
            expected, expected_err = _run(eager_ns["prog"], _inputs(shape, dtype, n))
            try:
                with observing(count):
                    got, got_err = _run(compiled, _inputs(shape, dtype, n))
            except BaseException as e:  # a framegraph error escaping is a mismatch too
                got, got_err = None, ("escaped " + type(e).__name__, traceback.format_exc(limit=3))
            if expected_err != got_err or (expected is not None and not _same(expected, got)):
                problems.append(f"backend={backend} shape={shape} dtype={dtype} n={n}: "
                                f"eager={expected_err or 'ok'} compiled={got_err or 'ok'}")
    return problems


def main(argv=None):
    """Run a fuzzing campaign; exit 1 if any program mismatched."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backends", default="eager")
    args = parser.parse_args(argv)
    import logging

    logging.getLogger("framegraph").setLevel(logging.ERROR)  # fallbacks are expected, not news
    import collections

    failures, stats = 0, collections.Counter()
    for seed in range(args.seed, args.seed + args.programs):
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
