"""Wrong answers the differential fuzzer found, minimised: compiled must agree with eager.

Each program here once gave another answer compiled than eager (RELIABILITY.md lists
them); they all agree now, and each test states the graphs and breaks it expects.
"""
import textwrap

import pytest

from framegraph.testing.fuzz import check_program

PRELUDE = "import torch\nimport framegraph\n\nG = 0\n\n"
# A visible generator is a catalogued "generator" break; where the frame cannot
# resume from it (or from g.send), the frame runs unmodified (framegraph_pytest.py).
pytestmark = pytest.mark.allow_fallback("generator", "unsupported_attribute")

CASES = {
    # the body's side effects all happened at the first next(): lst == [0, 1, 2], eager [0]
    "generator_side_effect_partial": """
        def gen(a, out):
            for i in range(3):
                out.append(i)
                yield a * i

        def prog(x, y, n, lst, d, obj):
            g = gen(x, lst)
            return (next(g) + 1, n)
    """,
    # the eager run of an endless generator never finished (compiled call hung)
    "generator_endless": """
        def gen(a):
            i = 0
            while True:
                yield a * i
                i += 1

        def prog(x, y, n, lst, d, obj):
            return (sum(v for v, _ in zip(gen(x), range(3))) + 1, n)
    """,
    # g.send(...): AttributeError 'tuple_iterator' object has no attribute 'send'
    "generator_send": """
        def gen(a):
            for i in range(3):
                got = yield a * i

        def prog(x, y, n, lst, d, obj):
            g = gen(x)
            a = next(g)
            b = g.send(5)
            return (a + b, n)
    """,
    # the generator object's type leaked as tuple_iterator
    "generator_escapes": """
        def gen(a):
            yield a
            yield a * 2

        def prog(x, y, n, lst, d, obj):
            g = gen(x)
            lst.append(type(g).__name__)
            return (next(g), n)
    """,
    # a generator expression with a side effect, consumed partly
    "genexp_side_effect_partial": """
        def prog(x, y, n, lst, d, obj):
            g = (lst.append(i) or x * i for i in range(4))
            return (next(g) + next(g), n)
    """,
    # a side-effect-free generator reading state the consuming loop changes
    # between two values (an argument, a local, an attribute): eager reads
    # lazily, the trace ran it at the call, so a change before the last value
    # now falls back to eager
    "generator_reads_list_the_consumer_appends_to": """
        def gen(items):
            for i in range(3):
                yield len(items)

        def prog(x, y, n, lst, d, obj):
            for v in gen(lst):
                lst.append(v)
            return (x + len(lst), sum(lst))
    """,
    "generator_reads_local_list_the_consumer_appends_to": """
        def gen(items):
            for i in range(3):
                yield len(items)

        def prog(x, y, n, lst, d, obj):
            mine = [0]
            for v in gen(mine):
                mine.append(v)
            return (x + len(mine), sum(mine))
    """,
    "generator_reads_tensor_the_consumer_changes_in_place": """
        def gen(t):
            for i in range(3):
                yield t * 1

        def prog(x, y, n, lst, d, obj):
            total = x * 0
            mine = x.clone()
            for v in gen(mine):
                mine.add_(1)
                total = total + v
            return (total, n)
    """,
    "generator_reads_attribute_the_consumer_bumps": """
        def gen(o, a):
            for i in range(3):
                yield a * o.count

        def prog(x, y, n, lst, d, obj):
            t = x * 0
            for v in gen(obj, x):
                obj.count += 1
                t = t + v
            return (t, obj.count)
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression(name):
    source = PRELUDE + textwrap.dedent(CASES[name])
    assert check_program(source, backends=("eager",)) == [], source


# Generators the tracer keeps in the graph: consumed at once, or by a loop
# that changes nothing before taking the last value.
STILL_COMPILED = {
    "consumed_by_sum": """
        def gen(a, m):
            for i in range(m):
                yield a * i

        def prog(x, y, n, lst, d, obj):
            return (sum(gen(x, 3)) + sum(t * 2 for t in (y, x)), n)
    """,
    "loop_changing_nothing": """
        def gen(a, m):
            for i in range(m):
                yield a * i

        def prog(x, y, n, lst, d, obj):
            t = x * 0
            for v in gen(x, 3):
                t = t + v
            return (t, n)
    """,
}


@pytest.mark.parametrize("name", sorted(STILL_COMPILED))
def test_side_effect_free_generator_still_compiles(name):
    import collections
    source = PRELUDE + textwrap.dedent(STILL_COMPILED[name])
    stats = collections.Counter()
    assert check_program(source, backends=("eager",), stats=stats) == []
    assert stats["compiled"] > 0 and stats["graph_break"] == 0 and stats["eager"] == 0


# Found 2026-12-01 by the widened generator (object semantics, RELIABILITY.md).
def _sets_compared(x, y):
    s = {x, y}
    return (x + int(s == {x, y}) + 2 * int(s != {x}) + 4 * int({x} < s) + 8 * int(s <= {y})
            + 16 * int(s >= frozenset([x])) + 32 * int(s > s))


# a set of tensors compared with ==, <, <= ... was an internal error (the whole frame ran eagerly)
def test_set_comparison_is_traced():
    import torch

    import framegraph
    from helpers import CountingBackend, assert_same

    cnt = CountingBackend()
    x, y = torch.ones(2), torch.zeros(2)
    assert_same(framegraph.compile(_sets_compared, backend=cnt, fullgraph=True)(x, y), _sets_compared(x, y))
    assert cnt.frame_count == 1


def _forward_star_args(*args):
    return args[0] * args[1] + args[2]


# a guard read `args[0]`, `args[1]`, `args[2]` through a C SourceReader rooted at
# the `*args` tuple, which nothing compared: a new call's tuple was read as the
# first call's (stale ints, no recompile: 12 instead of 34), freed by then
def test_star_args_items_are_read_from_the_tuple_passed_in():
    import torch

    import framegraph
    from helpers import CountingBackend, assert_same

    cnt = CountingBackend()
    compiled = framegraph.compile(_forward_star_args, backend=cnt)
    x, y = torch.ones(2), torch.full((2,), 10.0)
    assert_same(compiled(x, 1, 2), _forward_star_args(x, 1, 2))
    assert_same(compiled(x, 1, 2), _forward_star_args(x, 1, 2))
    assert_same(compiled(y, 3, 4), _forward_star_args(y, 3, 4))
    assert cnt.frame_count == 2


# the same read of a freed dict: an interpreter crash (segfault) once its arena was unmapped;
# the fuzzer's campaigns crashed every few hundred programs
CRASH = """
import gc, torch, framegraph
def f(x, t):
    return x + t[0]['a'] + t[0]['b'] + t[0]['c']
cf = framegraph.compile(f, backend="eager")
x = torch.zeros(2)
junk = [{'a': i, 'b': 2, 'c': 3} for i in range(200000)]
t = (junk[-1],)
cf(x, t), cf(x, t)
del t, junk
gc.collect()
print(cf(x, ({'a': 5, 'b': 5, 'c': 5},)).tolist())
"""


def test_reader_of_a_freed_tuple_item_does_not_crash():
    import os
    import pathlib
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", CRASH], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[15.0, 15.0]"


class _Sized:
    def __init__(self, k):
        self.k = k

    def __len__(self):
        return self.k


def _len_of_sized(x, k):
    a = _Sized(k)
    try:
        n = len(a)
    except (TypeError, ValueError) as e:
        n = len(str(e))
    return x + n


# len() of an object whose __len__ returned -1 or 2.5 gave that value; CPython raises
# ValueError("__len__() should return >= 0") / TypeError
@pytest.mark.parametrize("k", [3, -1, 2.5])
def test_len_checks_what_dunder_len_returns(k):
    import torch

    import framegraph
    from helpers import CountingBackend, assert_same

    cnt = CountingBackend()
    x = torch.zeros(2)
    assert_same(framegraph.compile(_len_of_sized, backend=cnt)(x, k), _len_of_sized(x, k))
    # the raising cases raise in the trace and the frame's own except catches it
    assert cnt.frame_count == 1


def test_module_dict_written_through_update_is_seen_by_getattr():
    # fuzz seed 200078: fz.__dict__.update(...) was replayed after the graph, but
    # getattr(fz, ...) read the real module first and took the default
    import types

    import torch

    import framegraph
    from helpers import CountingBackend, assert_same

    def prog(x, fz, n):
        fz.__dict__.update(tag=n)
        return x + getattr(fz, "tag", 100), hasattr(fz, "tag"), fz.scale

    def fresh():
        fz = types.ModuleType("fz")
        fz.scale = 2
        return fz

    cnt = CountingBackend()
    x = torch.zeros(2)
    a, b = fresh(), fresh()
    assert_same(framegraph.compile(prog, backend=cnt)(x, a, 3), prog(x, b, 3))
    assert a.tag == b.tag == 3 and cnt.frame_count == 1


def test_a_returned_iterator_over_a_list_the_trace_appended_to():
    # fuzz seed 200059: the iterator was rebuilt (advanced) before the list's
    # appends were replayed, ran past the old end and raised StopIteration
    import torch

    import framegraph
    from helpers import CountingBackend, assert_same

    def prog(x, lst):
        lst.append(x + 1)
        it = iter(lst)
        lst.append(next(it, "end"))
        lst.append(next(it, None))
        return x * 2, it

    cnt = CountingBackend()
    a, b = [], []
    got, it_got = framegraph.compile(prog, backend=cnt)(torch.zeros(2), a)
    want, it_want = prog(torch.zeros(2), b)
    assert_same(got, want)
    assert type(it_got) is type(it_want) and len(list(it_got)) == len(list(it_want)) == 1
    assert len(a) == len(b) == 3 and cnt.frame_count == 1


# The frame's own iterator over the dict it changed cannot be rebuilt before the
# change is replayed: the frame runs unmodified, and returns what eager returns.
@pytest.mark.expect_fallback("cannot_resume")
def test_an_iterator_over_a_dict_the_trace_changed_is_not_rebuilt_early():
    # fuzz seed 200916: d['a'] = ... then iter(d); the iterator was rebuilt (and
    # advanced) before the insertion was replayed: StopIteration
    import torch

    import framegraph
    from helpers import CountingBackend, assert_same

    def prog(x, d):
        d["a"] = d.get("a", 0) + 1
        it = iter(d)
        first = next(it)
        return x + 1, first, it

    cnt = CountingBackend()
    a, b = {"z": 0}, {"z": 0}
    got = framegraph.compile(prog, backend=cnt)(torch.zeros(2), a)
    want = prog(torch.zeros(2), b)
    assert_same(got[:2], want[:2])
    assert list(got[2]) == list(want[2]) and a == b and cnt.frame_count == 0


def test_vars_of_an_object_is_its_dict_view():
    # fuzz seed 311781: vars(obj)['count'] = ... was not seen by obj.__dict__ reads
    # or obj.count later in the trace: a wrong count, and wrong tensor values
    import torch

    import framegraph
    from helpers import CountingBackend, assert_same

    class Obj:
        def __init__(self):
            self.count = 1

    def prog(x, obj):
        vars(obj)["count"] = obj.count + 1
        k = obj.__dict__["count"] + len(vars(obj))
        return x * k, obj.count

    cnt = CountingBackend()
    a, b = Obj(), Obj()
    assert_same(framegraph.compile(prog, backend=cnt)(torch.ones(2), a), prog(torch.ones(2), b))
    assert a.count == b.count == 2 and cnt.frame_count == 1


@pytest.mark.parametrize("start", [{}, {"a": 1}], ids=["empty", "one_key"])
def test_an_exhausted_dict_iterator_stays_exhausted_after_a_break(start):
    # fuzz seed 300243 (and 6 more): a loop ran a dict's iterator to its end before a
    # graph break, and the dict grew after it; the iterator handed to the resume
    # function was a fresh one over the grown dict, whose next() raised RuntimeError,
    # while eager's exhausted iterator has let go of its dict and just stops
    import torch

    import framegraph
    from helpers import CountingBackend, assert_same

    def prog(x, d):
        it = iter(d.items())
        for _ in it:
            pass
        framegraph.graph_break()
        d["w"] = x
        total = x * 0
        for k, v in list(d.items())[::-1]:
            total = total + d[k] * len(k)
        return total, it

    cnt = CountingBackend()
    a, b = dict(start), dict(start)
    got, it_got = framegraph.compile(prog, backend=cnt)(torch.ones(2), a)
    want, it_want = prog(torch.ones(2), b)
    assert_same(got, want)
    assert type(it_got) is type(it_want) and list(it_got) == list(it_want) == []
    assert a.keys() == b.keys() and cnt.frame_count == 1  # the empty graph before the break is not compiled
