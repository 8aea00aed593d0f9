"""heapq, bisect and Counter inside compiled code: their C functions trace
through the standard library's own Python twin (variables/callables/twins.py)."""
import bisect
import collections
import heapq

import torch

from helpers import assert_same_as_eager, check_breaks


def top_k_tokens(logits, k: int = 2):
    """Beam search bookkeeping: a heap of (score, id) pairs kept at size k."""
    heap = []
    for token, score in enumerate([0.1, 0.7, 0.3, 0.9]):
        if len(heap) < k:
            heapq.heappush(heap, (score, token))
        else:
            heapq.heappushpop(heap, (score, token))
    best = sorted(heap, reverse=True)
    return logits[[t for _, t in best]], best


def test_a_heap_of_scores_is_one_graph():
    assert_same_as_eager(top_k_tokens, torch.randn(4, 3), graphs=1)


def lr_at(step, x):
    """A step schedule: find the segment of `step` among sorted milestones."""
    milestones = [10, 20, 40]
    bisect.insort(milestones, 30)
    return x * 0.1 ** bisect.bisect_right(milestones, step), milestones


def test_bisect_and_insort_are_one_graph():
    assert_same_as_eager(lr_at, 25, torch.ones(2), graphs=1)


def vocabulary(x):
    counts = collections.Counter("the cat and the hat".split())
    counts.update(["the", "mat"])
    return x * counts["the"], counts.most_common(2)


def test_counter_counts_in_the_trace():
    assert_same_as_eager(vocabulary, torch.ones(2), graphs=1)


def pop_empty(x):
    try:
        heapq.heappop([])
    except IndexError as e:
        return x + 1, str(e)  # C's message, "index out of range", not the twin's


def test_an_error_is_raised_by_the_c_function():
    check_breaks(pop_empty, lambda: (torch.ones(2),), graphs=0, breaks=1)


class Task:
    def __init__(self, priority):
        self.priority = priority

    def __lt__(self, other):  # user code runs in every comparison: C's order, C's checks
        return self.priority < other.priority


def schedule(x):
    heap = []
    for p in (3, 1, 2):
        heapq.heappush(heap, Task(p))
    return x * heap[0].priority


def test_items_with_python_comparisons_run_in_cpython():
    check_breaks(schedule, lambda: (torch.ones(2),), graphs=2, breaks=3)


def pushes_onto_a_tuple(x):
    try:
        heapq.heappush((1, 2), 0)  # C checks for a list; the twin would not
    except TypeError as e:
        return x, str(e)


def test_argument_checks_are_c_s():
    check_breaks(pushes_onto_a_tuple, lambda: (torch.ones(2),), graphs=0, breaks=1)


def test_the_program_still_sees_the_c_function():
    def alias(x):
        push = heapq.heappush
        h = [2]
        push(h, 1)
        return x + h[0], push

    assert_same_as_eager(alias, torch.ones(2), graphs=1)


def words(x):
    """A pure builtin's list result is a new list the program may change."""
    parts = "a,b,c".split(",")
    parts.append("d")
    return x * len(parts), "-".join(parts).upper(), dict.fromkeys(parts, 0)


def test_a_split_is_a_list_made_in_the_trace():
    assert_same_as_eager(words, torch.ones(2), graphs=1)
