"""Sets from outside the frame that hold tuples, classes or builtin functions:
read as sets (guarded by value) instead of breaking the graph."""
import operator

import torch

import framegraph
from helpers import CountingBackend, assert_same, assert_same_as_eager

REDUCERS = {operator.add, operator.mul, max}
EDGES = {(0, 1), (1, 2), (2, 0)}


def combine(x, op=operator.add):
    if op not in REDUCERS:
        raise ValueError(op)
    return x * len(REDUCERS | {min}), sorted(b for a, b in EDGES if a < b)


def test_a_set_of_functions_and_tuples_is_one_graph():
    assert_same_as_eager(combine, torch.ones(2), graphs=1)


def test_changing_the_set_recompiles():
    edges = {(0, 1)}

    def count(x):
        return x * len(edges), (0, 1) in edges

    cnt = CountingBackend()
    compiled = framegraph.compile(count, backend=cnt)
    assert_same(compiled(torch.ones(2)), count(torch.ones(2)))
    edges.add((5, 6))
    assert_same(compiled(torch.ones(2)), count(torch.ones(2)))
    assert cnt.frame_count == 2


def test_set_and_frozenset_subclasses_from_outside_behave_as_their_base():
    """``class Tags(set): pass``: the base's methods and operators, results of the base type
    (set_or makes a plain set), in-place changes to the caller's own object."""
    class Tags(set):
        pass

    class Frozen(frozenset):
        pass

    def f(x, tags, frozen):
        out = [len(tags), 1 in tags, sorted(tags | {9}), type(tags | {9}).__name__,
               type(tags.copy()).__name__, tags == {1, 2}, sorted(frozen & {1}), type(frozen).__name__]
        tags.add(5)
        tags |= {6}
        tags.discard(1)
        return x + 1, out + [sorted(tags)]

    mine, theirs = Tags([1, 2]), Tags([1, 2])
    cnt = CountingBackend()
    result = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2), mine, Frozen([1, 3]))
    assert_same(result, f(torch.ones(2), theirs, Frozen([1, 3])))
    assert type(mine) is Tags and mine == theirs == {2, 5, 6} and cnt.frame_count == 1


def test_unhashable_and_unsupported_operands_name_the_real_types():
    class Tags(set):
        pass

    def f(x, tags):
        out = []
        for thunk in (lambda: hash({1}), lambda: hash([1]), lambda: hash(tags), lambda: tags & "abc",
                      lambda: {1}.update(operator.add), lambda: set(len)):
            try:
                thunk()
            except TypeError as e:
                out.append(str(e))
        return x + 1, out

    assert_same_as_eager(f, torch.ones(2), Tags([1]), graphs=1)


def test_a_set_key_is_looked_up_as_a_frozenset():
    """set_contains, discard and remove retry an unhashable set key as ``frozenset(key)``;
    ``add`` does not, and the KeyError of ``remove`` holds the key itself."""
    def f(x):
        s = {frozenset("ab"), 1}
        out = [set("ab") in s, set("xy") in s]
        s.discard(set("ab"))
        out.append(len(s))
        key = {3, 4}
        try:
            s.remove(key)
        except KeyError as e:
            out.append(e.args[0] is key)
        for thunk in (lambda: s.add(set()), lambda: [] in s):
            try:
                thunk()
            except TypeError as e:
                out.append(str(e))
        return x + 1, out

    assert_same_as_eager(f, torch.ones(2), graphs=1)
