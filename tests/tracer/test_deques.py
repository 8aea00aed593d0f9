"""``collections.deque`` as code uses it: sliding windows, BFS queues, rotations."""
import collections

import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, check


def test_a_bounded_deque_keeps_the_last_items():
    def f(xs):
        window = collections.deque(maxlen=3)
        for t in xs:
            window.append(t * 2)
        return sum(window), len(window), window.maxlen

    check(f, [torch.full((2,), float(i)) for i in range(5)])


def test_appendleft_on_a_full_deque_drops_the_right_end():
    def f(x):
        d = collections.deque([1, 2, 3], 3)
        d.appendleft(0)
        d.extendleft([-1, -2])
        d.rotate(1)
        return x * d[0], list(d), d.popleft(), d.pop(), list(d)

    check(f, torch.ones(2))


def test_a_breadth_first_walk_with_a_queue():
    def f(x, tree):
        queue, order = collections.deque(["root"]), []
        while queue:
            node = queue.popleft()
            order.append(node)
            queue.extend(tree.get(node, ()))
        return x * len(order), order

    check(f, torch.ones(2), {"root": ["a", "b"], "a": ["c"], "b": [], "c": ["d"]})


def test_a_deque_returned_from_the_frame_is_rebuilt_with_its_bound():
    def f(x):
        d = collections.deque([x, x + 1], maxlen=2)
        d.append(x + 2)
        return d

    cnt = CountingBackend()
    got = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    want = f(torch.ones(2))
    assert type(got) is collections.deque and got.maxlen == want.maxlen == 2
    assert_same(list(got), list(want))
    assert cnt.frame_count == 1


@pytest.mark.parametrize("op", ["pop", "insert", "index", "mutate"])
def test_deque_errors_are_cpythons(op):
    def f(x):
        d = collections.deque([1], maxlen=1)
        try:
            if op == "pop":
                d.pop()
                d.pop()
            elif op == "insert":
                d.insert(0, 5)
            elif op == "index":
                d[1:]
            else:
                for v in d:
                    d.append(v + 1)
        except (IndexError, TypeError, RuntimeError) as e:
            return x + 1, type(e).__name__, str(e)
        return x, "", ""

    check(f, torch.ones(2))
