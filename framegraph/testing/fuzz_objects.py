"""Fuzzer features on Python object semantics, where silent wrong answers were found (2026-12-01).

Each feature writes a few statements of a program into a `fuzz._Gen` (it is
bound as a method of it): module and object `__dict__`, OrderedDict
reordering, keyword merging, the identity of tensors through in-place ops,
tensors as set members and dict keys, namedtuple and dataclass subclasses,
builtin and itertools iterators, operators between builtins and user classes. A feature that makes a value whose type or
identity matters puts it in `gen.extras`, which the program returns, so the
comparison (`fuzz_compare.py`) checks its type, its identity relations and,
for an iterator, its position. `FEATURES` gives each feature's probability
per statement; the rest of the statements are the older constructs.
"""

_FZ = "fz = types.ModuleType('fz')\nfz.scale = 2\nfz.tag = 'a'\n"

_POINT = """class Pt(collections.namedtuple('Pt', 'a b')):
    __slots__ = ()
    def __new__(cls, a, b=1):
        return super().__new__(cls, a, b * 2)
    def __add__(self, other):
        return Pt(self.a + other.a, self.b + other.b)
    def total(self):
        return self.a * self.b
"""

_NT = """class NT(typing.NamedTuple):
    a: object
    b: int = 1
    def scaled(self, s):
        return NT(self.a * s, self.b + s)
"""

_DC = """@dataclasses.dataclass
class DC:
    a: object
    b: int = 0
    def total(self):
        return self.a + self.b

@dataclasses.dataclass
class DC2(DC):
    c: int = 3

@dataclasses.dataclass(frozen=True)
class FDC:
    a: object
    b: int = 0
"""

_OD = """class LastOD(collections.OrderedDict):
    def first(self):
        return next(iter(self))
"""

_KW = """def kwsum(t0, *args, **kw):
    return t0 * (len(args) + 1) + sum(v for v in kw.values() if isinstance(v, int)), sorted(kw)

def fwd(*args, **kwargs):
    return kwsum(*args, **kwargs)
"""


def _maybe_break(self, indent, p=0.3):
    if self.rng.random() < p:
        self.emit(indent, "framegraph.graph_break()")


def _dunder_dict(self, indent, depth):
    self.define("fz", _FZ)
    k, t = self.fresh("k"), self.fresh("t")
    src, i = self.rng.choice(self.tensors), self.int_expr()
    write = self.rng.choice([
        f"setattr(obj, 'tag', {i})", f"obj.__dict__['extra'] = {src}", f"setattr(fz, 'scale', fz.scale + {i})",
        f"fz.__dict__['scale'] = {i}", f"vars(obj)['count'] = obj.count + 1", f"fz.__dict__.update(tag={i})",
        "obj.__dict__.pop('tag', None)", f"setattr(fz, 'extra', {src})"])
    if self.rng.random() < 0.7:
        self.emit(indent, write)
        _maybe_break(self, indent)
    self.emit(indent, f"{k} = " + self.rng.choice([
        "obj.__dict__['count'] + len(vars(obj))", "int('count' in obj.__dict__) + int('tag' in vars(obj))",
        "fz.__dict__['scale'] + int('tag' in fz.__dict__)", "len(obj.__dict__) * 10 + obj.__dict__.get('tag', 7)",
        "fz.__dict__.get('missing', 3) + len([a for a in vars(fz) if not a.startswith('_')])",
        "len(sorted(obj.__dict__)) + int(vars(fz) is fz.__dict__)", "int(isinstance(obj.__dict__.get('extra'), "
        "torch.Tensor)) + int(hasattr(obj, 'extra'))", "fz.scale + getattr(fz, 'tag', 'b').count('a')"]))
    self.ints.append(k)
    if self.rng.random() < 0.4:
        self.emit(indent, self.rng.choice(["for kk in obj.__dict__:", "for kk in list(vars(fz)):",
                                           "for kk, vv in obj.__dict__.items():"]))
        self.emit(indent + 1, "if not kk.startswith('_'):")
        self.emit(indent + 2, "lst.append(kk)")
    if "extra" in write:
        self.emit(indent, f"{t} = {'obj' if write.startswith('obj') else 'fz'}.extra * 2")
        self.tensors.append(t)
    if self.rng.random() < 0.3:
        self.extras.append(self.rng.choice(["vars(obj)", "fz.__dict__", "obj.__dict__.keys()"]))


def _odict(self, indent, depth):
    od, k = self.fresh("od"), self.fresh("k")
    cls = "collections.OrderedDict"
    if self.rng.random() < 0.5:
        self.define("LastOD", _OD)
        cls = "LastOD"
    self.emit(indent, f"{od} = {cls}([('a', 1), ('b', {self.rng.choice(self.tensors)}), ('c', {self.int_expr()})])")
    for _ in range(self.rng.randint(1, 3)):
        self.emit(indent, self.rng.choice([
            f"{od}.move_to_end('a')", f"{od}.move_to_end('c', last=False)", f"{od}.move_to_end('b', last=True)",
            f"lst.append({od}.popitem(last=False)[0])", f"lst.append({od}.popitem()[0])",
            f"{od}['d'] = {self.int_expr()}", f"{od}.pop('a', None)", f"{od}.setdefault('e', 5)",
            f"{od}.update(a=0)"]))
        _maybe_break(self, indent, 0.2)
    self.emit(indent, f"{k} = " + self.rng.choice([
        f"int(collections.OrderedDict.fromkeys({od}) == collections.OrderedDict.fromkeys('abc')) + len({od})",
        f"int(collections.OrderedDict.fromkeys({od}) == dict.fromkeys('cba'))",
        f"int(collections.OrderedDict.fromkeys({od}) == collections.OrderedDict.fromkeys('cab'))",
        f"int(dict.fromkeys({od}) == dict.fromkeys('bca')) + int(list({od}) == sorted({od}))",
        f"len({od}) + int(next(reversed({od}), 'z') == 'a')"]
        + ([f"int({od}.first() == 'b') + len({od})"] if cls == "LastOD" else [])))
    self.ints.append(k)
    self.emit(indent, self.rng.choice([f"lst.append(list(reversed({od})))", f"lst.append(list({od}.items()))",
                                       f"lst.append(type({od}).__name__)", f"lst.append(list({od}.keys())[::-1])"]))
    if self.rng.random() < 0.5:
        self.extras.append(od)


def _kwmerge(self, indent, depth):
    self.define("kwsum", _KW)
    t, keys = self.fresh("t"), self.fresh("keys")
    src, i = self.rng.choice(self.tensors), self.int_expr()
    calls = [f"kwsum({src}, **{{'p': 1}}, **{{'q': {i}}})", f"fwd({src}, 2, p=1, **{{'q': {i}}})",
             f"kwsum({src}, **d)", f"fwd({src}, *[1, 2], **d, r={i})", f"kwsum({src}, {i}, **{{**d, 'p': 3}})",
             f"fwd(*({src},), **dict(d, q={i}))", f"kwsum({src}, p={i}, **{{'q': 1}})"]
    bad = [f"kwsum({src}, **{{'p': 1}}, **{{'p': {i}}})", f"kwsum({src}, p=1, **{{'p': {i}}})",
           f"fwd({src}, **{{'q': 1}}, q={i})", f"kwsum({src}, **{{'t0': {i}}})", "fwd(**d, **d)"]
    if self.rng.random() < 0.35:
        self.emit(indent, "try:")
        self.emit(indent + 1, f"{t}, {keys} = {self.rng.choice(bad)}")
        self.emit(indent, "except TypeError as e:")
        self.emit(indent + 1, f"{t}, {keys} = {src} * 0, [str(e)]")
    else:
        self.emit(indent, f"{t}, {keys} = {self.rng.choice(calls)}")
    self.emit(indent, f"lst.append({keys})")
    self.tensors.append(t)


def _inplace_identity(self, indent, depth):
    t, u, k = self.fresh("t"), self.fresh("u"), self.fresh("k")
    op = self.rng.choice(["add_(1)", "mul_(2)", "clamp_(min=0)", "zero_()", "fill_(3)", "sub_(0.5)", "abs_()"])
    base = self.rng.choice([f"{self.rng.choice(self.tensors)}.clone()", "x", f"x.view(-1)", "y[1:]"])
    self.emit(indent, f"{t} = {base}")
    self.emit(indent, f"{u} = {t}.{op}" if self.rng.random() < 0.7 else f"{u} = {t}.{op}.mul_(1)")
    _maybe_break(self, indent)
    self.emit(indent, f"{k} = " + self.rng.choice([
        f"int({u} is {t})", f"int(id({u}) == id({t})) + int({u} is x)",
        f"int({t}._base is x) + int({u}._base is None)", f"len({{id({u}), id({t}), id(x)}})",
        f"int({u} is {t}) * 2 + int({u}.data_ptr() == x.data_ptr())"]))
    self.ints.append(k)
    if "view" not in base and "[" not in base:
        self.tensors.append(u)
    roll = self.rng.random()
    if roll < 0.4:
        self.extras += [u, t]
    elif roll < 0.6:
        self.extras.append(u)
    elif roll < 0.8:
        self.emit(indent, f"lst.append({u})")


def _tensor_keys(self, indent, depth):
    s, k = self.fresh("s"), self.fresh("k")
    src = self.rng.choice(self.tensors)
    if self.rng.random() < 0.5:
        self.emit(indent, f"{s} = " + self.rng.choice(["{x, y}", f"{{x, {src}, x}}", f"set([y, {src}])",
                                                       f"frozenset((x, {src}))"]))
        if "frozenset" not in self.lines[-1]:
            self.emit(indent, self.rng.choice([f"{s}.add({src})", f"{s}.discard(y)", f"{s}.add(x)",
                                               f"{s} |= {{y}}", f"{s} -= {{x}}"]))
        _maybe_break(self, indent)
        self.emit(indent, f"{k} = " + self.rng.choice([
            f"int(x in {s}) + int(y in {s}) * 2 + len({s}) * 4", f"int({src} in {s}) + int(x.clone() in {s})",
            f"len({s} & {{x}}) + len({s} | {{y}})", f"int({s} == {{x, y}})"]))
    else:
        self.emit(indent, f"{s} = " + self.rng.choice(["{x: 1, y: 2}", f"dict.fromkeys([y, {src}, y], 3)",
                                                       f"{{{src}: 'a', x: 'b'}}"]))
        self.emit(indent, self.rng.choice([f"{s}[x] = 5", f"{s}[{src}] = 7", f"{s}.pop(y, None)",
                                           f"{s}.setdefault(y, 9)"]))
        _maybe_break(self, indent)
        self.emit(indent, f"{k} = " + self.rng.choice([
            f"len({s}) + int(x in {s}) + int(y in {s}) * 2", f"sum(1 for kk in {s} if kk is x)",
            f"[i for i, kk in enumerate({s}) if kk is y][0] if y in {s} else -1"]))
        if self.rng.random() < 0.5:
            acc = self.fresh("t")
            self.emit(indent, f"{acc} = x * 0")
            self.emit(indent, f"for kk in {s}:")
            self.emit(indent + 1, f"{acc} = {acc} * 2 + kk")
            self.tensors.append(acc)
    self.ints.append(k)
    if self.rng.random() < 0.5:
        self.extras.append(s)


def _records(self, indent, depth):
    v, w, k = self.fresh("r"), self.fresh("r"), self.fresh("k")
    src, i = self.rng.choice(self.tensors), self.int_expr()
    kind = self.rng.choice(["Pt", "NT", "DC", "FDC"])
    self.define(kind, {"Pt": _POINT, "NT": _NT}.get(kind, _DC))
    self.emit(indent, f"{v} = {kind}({src}, {i})")
    derived = {
        "Pt": [f"{v} + Pt(y)", f"{v}._replace(b=3)", f"Pt._make([{src}, 2])", f"Pt(*{v})"],
        "NT": [f"{v}.scaled(2)", f"{v}._replace(b=5)", f"NT(**{v}._asdict())", f"{v} + (1,)"],
        "DC": [f"dataclasses.replace({v}, b=5)", f"DC2({src}, c={i})", f"DC({v}.a, {v}.b)"],
        "FDC": [f"dataclasses.replace({v}, b={i} + 1)", f"FDC({v}.a * 2)"]}[kind]
    self.emit(indent, f"{w} = {self.rng.choice(derived)}")
    _maybe_break(self, indent)
    reads = {"Pt": [f"{v}.b + len({w})", f"int(isinstance({w}, Pt)) + {w}.b", f"int({v} == {w})",
                    f"int(type({w}) is Pt) + {v}.b", f"{w}[1] + int(isinstance({w}, tuple))"],
             "NT": [f"{v}.b + {w}.b", f"int(type({w}) is NT) + len({w})", f"{w}._asdict()['b'] if len({w}) == 2 "
                    f"else -1", f"int({v} == {w})"],
             "DC": [f"{v}.b + {w}.b", f"int({v} == {w}) + int(isinstance({w}, DC))",
                    f"len(dataclasses.fields({w})) + int(type({w}) is DC2)"],
             "FDC": [f"{v}.b + {w}.b", f"int({v} == {w}) + hash({v}.b)", f"int({w} != {v})"]}[kind]
    self.emit(indent, f"{k} = {self.rng.choice(reads)}")
    self.ints.append(k)
    if kind in ("DC", "FDC") and self.rng.random() < 0.5:  # mutate: a plain dataclass takes it, a frozen one raises
        self.emit(indent, "try:")
        self.emit(indent + 1, f"{w}.b = {i}")
        self.emit(indent, "except dataclasses.FrozenInstanceError as e:")
        self.emit(indent + 1, "lst.append(str(e))")
    if kind in ("Pt", "DC") and self.rng.random() < 0.4:
        t = self.fresh("t")
        self.emit(indent, f"{t} = {v}.total() * 1")
        self.tensors.append(t)
    self.extras.append(self.rng.choice([v, w, w, f"({v}, {w})"]))


_ITERATORS = [
    "zip(range(3), [x, y, {t}])", "map(lambda v: v * 2, [x, {t}])", "filter(None, [0, {i}, 1, 0, 2])",
    "filter(lambda v: v > 1, range({i} + 3))", "enumerate([x, y, {t}], start={i})", "reversed([x, y, {t}])",
    "reversed(range({i} + 2))", "iter([x, {t}, y])", "iter(d)", "iter(d.items())", "iter((x, y, {t}))",
    "iter(range({i} + 3))", "itertools.count({i})", "itertools.islice(range(10), 1, 8, 2)",
    "itertools.chain([x], [y, {t}])", "itertools.repeat({t}, 3)", "itertools.cycle([1, {i}])",
    "itertools.accumulate([1, 2, {i}])", "itertools.starmap(pow, [(2, 3), ({i}, 2)])",
    "itertools.takewhile(lambda v: v < 4, range(9))", "zip([x, y], 'ab', strict=False)",
    "itertools.zip_longest([1, 2, 3], 'a')", "iter(lst)", "map(int, str({i}) + '1')", "reversed({{'a': 1, 'b': x}})"]


def _iterators(self, indent, depth):
    it = self.fresh("it")
    t, i = self.rng.choice(self.tensors), self.int_expr()
    self.emit(indent, f"{it} = {self.rng.choice(_ITERATORS).format(t=t, i=i)}")
    for _ in range(self.rng.randint(0, 2)):
        self.emit(indent, self.rng.choice([f"lst.append(next({it}, None))", f"lst.append(next({it}, 'end'))",
                                           f"for v in {it}:\n" + "    " * (indent + 1) + "break"]))
        _maybe_break(self, indent, 0.35)
    if self.rng.random() < 0.3:
        self.emit(indent, f"lst.append(type({it}).__name__)")
    if self.rng.random() < 0.75:
        self.extras.append(it)
    else:
        self.emit(indent, f"lst.append(list(itertools.islice({it}, 5)))")


_OPERANDS = """class Base:
    def __eq__(self, other): return ('Base.eq', type(other).__name__)
    def __lt__(self, other): return 'Base.lt'
    def __gt__(self, other): return 'Base.gt'
    def __add__(self, other): return 'Base.add'
    def __radd__(self, other): return 'Base.radd'
    def __repr__(self): return type(self).__name__
    __hash__ = object.__hash__

class Derived(Base):
    def __eq__(self, other): return NotImplemented if isinstance(other, int) else 'Derived.eq'
    def __gt__(self, other): return 'Derived.gt'
    def __radd__(self, other): return 'Derived.radd'

class Inherits(Base):
    pass

class EqualsAll(int):
    def __eq__(self, other): return True
    __hash__ = int.__hash__

class Reflects(int):
    def __radd__(self, other): return 'Reflects.radd'
    def __rmul__(self, other): return 'Reflects.rmul'
    def __lt__(self, other): return 'Reflects.lt'

class Words(str):
    def __radd__(self, other): return 'Words.radd'
    def __eq__(self, other): return 'Words.eq'
    __hash__ = str.__hash__

class Joins:
    def __iter__(self): return iter((7, 8))
    def __radd__(self, other): return ('Joins.radd', len(other))
    def __repr__(self): return 'Joins'

class Position:
    def __index__(self): return 1
    def __repr__(self): return 'Position'
"""

_OPERAND_EXPRS = ["1", "2.5", "'ab'", "[1, 2]", "(1, 2)", "Base()", "Derived()", "Inherits()", "EqualsAll(3)",
                  "Reflects(2)", "Words('ab')", "Joins()", "Position()", "True", "None"]
_OPERATIONS = ["{a} + {b}", "{a} * {b}", "{a} == {b}", "{a} != {b}", "{a} < {b}", "{a} > {b}", "{a} in [0, 1, 2]",
               "{a} in range(4)", "{a} in ('ab', 1)", "[5, 6, 7][{a}]", "'xyz'[{a}:]", "divmod({a}, {b})"]


def _operators(self, indent, depth):
    """Binary operators, comparisons, ``in`` and subscripts between builtins and user
    classes: which operand answers first (a subclass's reflected method), NotImplemented,
    ``__index__``, in-place operators on lists, CPython's TypeErrors."""
    self.define("Base", _OPERANDS)
    a, b = (self.rng.choice(_OPERAND_EXPRS) for _ in range(2))
    if self.rng.random() < 0.2:
        a = self.rng.choice(self.tensors)
    inplace = self.rng.random() < 0.25
    r = self.fresh("r")
    self.emit(indent, "try:")
    if inplace:
        self.emit(indent + 1, f"{r} = {a}")
        self.emit(indent + 1, f"{r} {self.rng.choice(['+=', '*='])} {b}")
    else:
        self.emit(indent + 1, f"{r} = {self.rng.choice(_OPERATIONS).format(a=a, b=b)}")
    self.emit(indent, "except (TypeError, IndexError, ZeroDivisionError) as e:")
    self.emit(indent + 1, f"{r} = str(e)")
    _maybe_break(self, indent, 0.15)
    self.emit(indent, f"lst.append({r})")


FEATURES = {_dunder_dict: 0.06, _odict: 0.05, _kwmerge: 0.05, _inplace_identity: 0.06, _tensor_keys: 0.05,
            _records: 0.06, _iterators: 0.07, _operators: 0.06}
