"""Tuples, lists, dicts, sets, slices, ranges, iterators and comprehensions."""
import collections

import torch

import framegraph
from helpers import CountingBackend, assert_same, check


def test_list_of_tensors_loop_and_mutation():
    def f(xs):
        out = []
        for x in xs:
            out.append(x * 2)
        out.extend([xs[0], xs[-1]])
        out.insert(0, xs[1] + 1)
        last = out.pop()
        out[1] = out[1] - last
        del out[2]
        return out, len(out)

    check(f, [torch.randn(2) for _ in range(4)])


def test_loop_over_fifty_tensors_is_one_graph():
    def f(xs):
        total = xs[0]
        for x in xs[1:]:
            total = total + x.relu()
        return total

    check(f, [torch.randn(3) for _ in range(50)], ops=98)


def test_tuple_unpacking_and_star_unpacking():
    def f(pair, seq):
        a, b = pair
        first, *middle, last = seq
        return a + b, first, middle, last, (*pair, *middle)

    check(f, (torch.randn(2), torch.randn(2)), [1, 2, 3, 4, 5])


def test_dicts_build_read_update_iterate():
    def f(d, x):
        out = {"double": x * 2, **d}
        out.update(triple=x * 3)
        out["keys"] = len(out)
        total = x
        for k, v in d.items():
            total = total + v
        return out, total, out.get("missing", 7), "double" in out, list(out.keys())

    check(f, {"a": torch.randn(2), "b": torch.randn(2)}, torch.randn(2))


def test_sets_and_membership():
    def f(x, names):
        seen = {1, 2}
        seen.add(3)
        both = seen & {2, 3, 4}
        return x * len(both), 3 in seen, "b" in names, sorted(seen | {0})

    check(f, torch.randn(2), ["a", "b"])


def test_comprehensions_are_inlined():
    def f(xs):
        squares = [x * x for x in xs]
        by_index = {i: x.sum() for i, x in enumerate(xs) if i % 2 == 0}
        flags = {len(xs), 0}
        return squares, by_index, flags, tuple(x + 1 for x in xs)

    check(f, [torch.randn(2) for _ in range(3)])


def test_iterators_enumerate_zip_reversed_map_filter():
    def f(xs, ys):
        pairs = [a * b for a, b in zip(xs, ys)]
        backwards = [x for x in reversed(xs)]
        evens = list(filter(lambda i: i % 2 == 0, range(6)))
        plus = list(map(lambda a, b: a + b, xs, ys))
        it = iter(ys)
        first = next(it)
        return pairs, backwards, evens, plus, first, [i for i, _ in enumerate(xs, start=1)]

    xs = [torch.randn(2) for _ in range(3)]
    check(f, xs, [torch.randn(2) for _ in range(3)])


def test_builtins_over_constants_and_tensors():
    def f(x, nums):
        return (x * max(nums) + min(3, 4) + abs(-2) + sum(nums), all(n > 0 for n in nums),
                any(n > 5 for n in nums), sorted(nums, reverse=True), sum([x, x]), round(2.567, 2),
                int("7") + float(3) + bool(0), divmod(7, 2), isinstance(x, torch.Tensor),
                isinstance(nums, (list, tuple)), str(5) + "!", len(range(2, 10, 3)))

    check(f, torch.randn(2), [3, 1, 2])


def test_slices_and_ranges():
    def f(x, items):
        r = range(1, 10, 2)
        return x[1:3], x[::2], items[1:], items[::-1], r[2], list(r[1:3]), x[slice(0, 1)]

    check(f, torch.randn(6), [1, 2, 3, 4])


def test_namedtuples_in_and_out():
    Point = collections.namedtuple("Point", ["x", "y"])

    def f(p):
        q = Point(p.x * 2, y=p.y + 1)
        return q, q.x + q[1], p._fields

    check(f, Point(torch.randn(2), torch.randn(2)))


def test_f_strings_and_percent_formatting():
    def f(x, name, n):
        label = f"{name}-{n:03d}-{n!r}"
        other = "%s=%d" % (name, n)
        return x * len(label), label, other

    check(f, torch.randn(2), "w", 7)


def test_torch_size_and_dtype_values():
    def f(x):
        shape = x.shape
        s = torch.Size([shape[0], 2])
        return x.new_zeros(s), shape[-1], tuple(shape), x.to(torch.float16).dtype == torch.float16, x.device.type

    check(f, torch.randn(3, 4))


def test_string_methods_and_constructors_fold():
    def f(x, names):
        label = ", ".join(names).upper()
        dev = torch.device("cpu")
        return x.to(dev) * len(label), label, type(x).__name__, label.startswith("A")

    check(f, torch.randn(2), ["a", "b"])


def test_in_place_sequence_and_set_operators_change_the_object_itself():
    def f(x, lst, s):
        alias_l, alias_s = lst, s
        lst *= 2
        s |= {2}
        s -= {1}
        try:
            s.remove(99)
            missing = "no error"
        except KeyError:
            missing = "KeyError"
        return x + 1, alias_l, alias_s, missing

    check(f, torch.ones(1), [1], {1})


def test_builtins_match_cpython_on_ties_and_bounds():
    def f(x):
        return (x + 1, max([("a", 1), ("b", 1)], key=lambda t: t[1]), max([3, 3.0]), min([2.0, 2]),
                [1, 2, 1].index(1, 1), (5, 6, 5).index(5, 1, 3), callable(x), callable(3), callable(len),
                callable(torch.nn.Linear))

    check(f, torch.ones(1))


def test_a_symbolic_shape_equals_a_tuple_of_the_same_sizes(framegraph_trace):
    import framegraph

    def f(x):
        b = x.shape[0]
        return x + 1, x.shape == (b, 3), x.shape == (4, 3), x.shape != (4, 3), x.shape in [(4, 3)]

    compiled = framegraph.compile(f, backend="eager")
    for n in (2, 4, 5):  # the second call recompiles with a symbolic batch size
        x = torch.ones(n, 3)
        assert compiled(x)[1:] == f(x)[1:]
    assert framegraph_trace.graphs == 3
    # n = 4 guards the symbolic size == 4 (the comparison with (4, 3)), so n = 5 recompiles too


def test_list_iterators_are_live_and_zip_stops_at_the_first_exhausted():
    def f(x):
        work = [1]
        for n in work:  # a worklist: items appended during the loop are visited
            if n < 8:
                work.append(n * 2)
        it = iter([2, 3])
        pairs = list(zip([10], it))
        return x * len(work), pairs, list(it)

    check(f, torch.ones(1))


def test_dict_views_are_live_and_set_like():
    def f(x):
        d = {"a": x, "b": 1}
        keys = d.keys()
        d["c"] = 2  # a view sees later changes
        extra = {"a", "z"} - d.keys()
        return (x + 1, list(keys), sorted(extra), d.keys() == {"a", "b", "c"}, "c" in keys,
                len(d.items()), d.keys() & {"b", "q"}, [k for k, v in d.items() if k != "a"])

    check(f, torch.ones(1))


def test_returned_dict_views_keep_their_type(framegraph_trace):
    def f(x):
        d = {"w": x + 1}
        return d.keys(), d.items(), d.values()

    import framegraph

    got, want = framegraph.compile(f, backend="eager")(torch.ones(1)), f(torch.ones(1))
    assert [type(v) for v in got] == [type(v) for v in want]
    assert list(got[0]) == ["w"] and [list(v) for v in got[1:]] == [[("w", torch.ones(1) + 1)], [torch.ones(1) + 1]]
    assert framegraph_trace.graphs == 1


def test_pure_builtins_consume_generators_of_constants():
    def f(x):
        names = ["a", "b"]
        label = ",".join(n.upper() for n in names)
        dims = "x".join(str(d) for d in x.shape)
        return x + len(label), label, dims, sum(d * 2 for d in x.shape), tuple(d for d in x.shape)

    check(f, torch.ones(2, 3))


def test_ordered_dicts_and_defaultdicts_made_in_the_trace():
    def f(x):
        od = collections.OrderedDict()
        od["b"] = x + 1
        od["a"] = x * 2
        groups = collections.defaultdict(list)
        for i, name in enumerate(["p", "q", "p"]):
            groups[name].append(x * i)
        counts = collections.defaultdict(int)
        counts["n"] += 3
        return od, torch.stack(groups["p"]), len(groups), groups, counts

    check(f, torch.ones(2))


def test_itertools_product_pairwise_and_chain():
    import itertools

    def f(x):
        grid = [x * (i + j) for i, j in itertools.product(range(2), [1, 2])]
        steps = [b - a for a, b in itertools.pairwise([x, x * 2, x * 4])]
        flat = list(itertools.chain.from_iterable([[1, 2], (3,)]))
        return grid, steps, flat, list(itertools.product("ab", repeat=2))

    check(f, torch.ones(2))


Pair = collections.namedtuple("Pair", "a b")


def test_namedtuple_replace_and_asdict():
    def f(x, p):
        q = p._replace(b=x * 2)
        return q, q.b + 1, p._asdict()["a"], Pair(x, 1)._replace(a=3)

    check(f, torch.ones(2), Pair(1, torch.zeros(2)))


Point = collections.namedtuple("Point", "x y")


def test_hasattr_and_setattr_on_a_namedtuple():
    def f(t, p):
        q = p._replace(x=t)
        try:
            setattr(q, "x", 3)  # a field is read-only
        except AttributeError as e:
            error = str(e)
        return q.x + 1, hasattr(p, "y"), hasattr(p, "z"), getattr(p, "w", 5), p._asdict(), error

    check(f, torch.ones(2), Point(1, 2))


def test_defaultdict_without_a_factory_and_its_default_factory_attribute():
    def f(x):
        d = collections.defaultdict()
        out = [d.default_factory]
        try:
            d["missing"]
        except KeyError as e:        # no factory: __missing__ raises dict's KeyError
            out.append(e.args)
        d.default_factory = list      # a plain member: set later, used by the next miss
        d["a"].append(1)
        out.append(d.default_factory is list)
        return x + len(d["a"]), out, d

    check(f, torch.ones(2))


def test_union_with_a_defaultdict_keeps_the_defaultdicts_factory_on_either_side():
    def f(x):
        counts, names = collections.defaultdict(int, {1: 1, 2: 2}), {1: "a", 0: "b"}
        left, right = counts | names, names | counts   # defaultdict.__ror__ goes first
        return x + 1, [(type(r).__name__, r.default_factory, list(r.items())) for r in (left, right)]

    check(f, torch.ones(2))


def test_a_defaultdict_from_outside_fills_a_missing_key_with_its_factory():
    """``counts[name] += 1`` on a defaultdict the caller owns: the factory is read
    (and guarded) like an attribute, the insertion replayed after the graph."""
    def f(x, counts):
        counts["calls"] += 1
        counts["seen"] += int(x.shape[0])
        return x * 2

    mine, theirs = collections.defaultdict(int), collections.defaultdict(int)
    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    for _ in range(2):
        assert_same(compiled(torch.ones(3), mine), f(torch.ones(3), theirs))
    assert mine == theirs == {"calls": 2, "seen": 6}
    assert cnt.frame_count == 2  # the keys missing, then present: one graph each (guarded)


def test_repr_of_dicts_and_their_views_is_cpythons():
    """The real type's repr on stand-ins of the items' reprs: this CPython's format
    (OrderedDict's changed in 3.12), a user __repr__ traced, ``{...}`` for itself."""
    class Point:
        def __repr__(self):
            return "Point()"

    def f(x):
        d = dict(a=1)
        nested = {1: Point(), "k": [1, "s"]}
        nested["self"] = nested
        return x + 1, [repr(d.keys()), repr(d.values()), repr(d.items()), repr({}), repr(nested), str(d),
                       repr(collections.OrderedDict(a=1)), repr(collections.defaultdict(list, b=2))]

    check(f, torch.ones(2))


def test_dict_union_with_what_it_does_not_take():
    """``d | None``: TypeError in the trace; ``dict.__or__(d, [])`` returns NotImplemented."""
    def f(x):
        d, out = {0: 0, 1: 1}, []
        for other in ([(1, 1)], None):
            try:
                d | other
            except TypeError as e:
                out.append(str(e))
        try:
            collections.defaultdict(int, {1: 2}) | None
        except TypeError as e:
            out.append(str(e))
        out.append(dict.__or__(d, [(1, 1)]) is NotImplemented)
        return x + 1, out

    check(f, torch.ones(2))


def test_defaultdict_missing_called_directly_and_copy_keeps_the_factory():
    def f(x):
        d = collections.defaultdict()
        out = []
        try:
            d.__missing__(42)
        except KeyError as e:
            out.append(e.args)
        d.default_factory = list
        out += [d.__missing__(42), dict(d)]
        copied = d.copy()
        out += [type(copied).__name__, copied.default_factory is list]
        return x + 1, out

    check(f, torch.ones(2))


def test_init_called_again_clears_first_then_refills():
    def f(x):
        s = set()
        s.__init__("abc")
        out = [sorted(s)]
        s.__init__(s)                 # cleared, then updated from itself: empty
        out.append(sorted(s))
        s.__init__("xy")
        for thunk in (lambda: s.__init__(s, 2), lambda: s.__init__(1)):
            try:
                thunk()
            except TypeError as e:
                out.append(str(e))
        out.append(sorted(s))         # the bad argument left it empty
        items = [1, 2]
        items.__init__((3, 4))
        out.append(list(items))
        items.__init__(items)
        return x + 1, out + [items]

    check(f, torch.ones(2))


def test_plain_tuple_and_frozenset_subclasses_made_in_the_trace():
    """``class Key(tuple): pass``: the base's behaviour, its own type, operators that make the
    base type, CPython's TypeErrors, and rebuilt as the subclass after the graph."""
    class Key(tuple):
        pass

    class Tags(frozenset):
        pass

    def f(x):
        key, tags = Key([1, 2]), Tags("ab")
        out = [type(key).__name__, key == (1, 2), type(key + (3,)).__name__, len(tags), type(tags).__name__,
               sorted(tags | {"c"}), type(tags | {"c"}).__name__, key[0]]
        for thunk in (lambda: Key(a=1), lambda: Tags(1, 2), lambda: Key(1, 2)):
            try:
                thunk()
            except TypeError as e:
                out.append(str(e))
        return x + 1, out, key, tags

    cnt = CountingBackend()
    result = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    expected = f(torch.ones(2))
    assert_same(result[:2], expected[:2])
    assert [type(v) for v in result[2:]] == [Key, Tags] and result[2:] == expected[2:] and cnt.frame_count == 1


def test_in_place_union_updates_from_any_iterable_of_pairs():
    """dict_ior is update(): ``d |= [(k, v)]`` works (``d | [...]`` does not), a defaultdict
    keeps its factory, and what update() refuses (None) is its TypeError."""
    def f(x):
        counts = collections.defaultdict(int, {1: 1, 2: 2})
        counts |= list({0: "zero", 1: "one"}.items())
        out = [counts.default_factory is int, dict(counts), list(counts)]
        try:
            counts |= None
        except TypeError as e:
            out.append(str(e))
        d, od = {"a": 1}, collections.OrderedDict(a=1)
        d |= [("b", 2)]
        od |= [("c", 3)]
        return x + 1, out + [d, list(od.items())]

    check(f, torch.ones(2))
