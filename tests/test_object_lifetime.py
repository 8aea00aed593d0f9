"""Objects die where they die in eager, also across graph breaks.

An object the program drops after a break (``del big``, ``s = None``) must be
freed there, not when the compiled call returns: a weak reference, a
``__del__``, ``gc.collect()`` and peak memory all see the difference. Each
test watches an object through a weak reference from a probe that runs in
CPython (a break of its own), and states its graphs.
"""
import gc
import weakref

import pytest
import torch

import framegraph


class Probe:
    """Weak references to what the program shows it; ``alive()`` says which still live."""

    def __init__(self):
        self.refs = []

    def watch(self, obj):
        self.refs.append(weakref.ref(obj))

    @framegraph.disable  # a break: the references are read when the program runs, not when traced
    def alive(self):
        return [r() is not None for r in self.refs]


@pytest.fixture(autouse=True)
def fresh():
    framegraph.reset()
    yield
    framegraph.reset()


def both(trace, fn, make_args):
    """(eager's result, the compiled result, graphs): the probes' answers included. The
    backend keeps nothing of the graphs' inputs (a counting backend would)."""
    expected = fn(*make_args())
    result = framegraph.compile(fn, backend="eager")(*make_args())
    return expected, result, trace.graphs


def test_a_tensor_dropped_after_a_break_dies_there(framegraph_trace):
    def step(x, probe):
        big = x.repeat(100, 1) * 2
        framegraph.graph_break()
        probe.watch(big)
        y = big.sum(0)
        del big
        return y + 1, probe.alive()

    expected, result, graphs = both(framegraph_trace, step, lambda: (torch.ones(8), Probe()))
    assert expected[1] == [False]
    assert result[1] == [False]  # neither the calling frame nor the hook kept it
    torch.testing.assert_close(result[0], expected[0])
    assert graphs == 2


def test_a_graph_output_is_not_held_by_the_compiled_frame(framegraph_trace):
    def step(x, probe):
        big = x * 2  # a graph output, handed to the resume function
        framegraph.graph_break()
        probe.watch(big)
        big = big.sum()
        framegraph.graph_break()
        return big, probe.alive()

    expected, result, graphs = both(framegraph_trace, step, lambda: (torch.ones(1000), Probe()))
    assert result[1] == expected[1] == [False]
    assert graphs == 2


class Node:
    pass


def test_a_cycle_dropped_before_gc_collect_is_collected(framegraph_trace):
    # the shape of CPython's test_container_iterator: the iterator in a set refers back to the set
    def make_and_drop(x):
        obj = Node()
        ref = weakref.ref(obj)
        container = {obj, 1}
        obj.it = iter(container)
        del obj, container
        gc.collect()  # a break: CPython runs it, with nothing in the frame holding the cycle
        return x + 1, ref() is None

    expected, result, graphs = both(framegraph_trace, make_and_drop, lambda: (torch.ones(2),))
    assert result[1] is expected[1] is True
    assert graphs == 1


@pytest.mark.expect_fallback("unsupported_value")  # a resume function given the proxy runs as it is
def test_a_set_watched_through_a_proxy(framegraph_trace):
    def watch(x):
        x = x * 2  # the graph, before the proxy
        s = set("gallahad")
        proxy = weakref.proxy(s)
        same = str(proxy) == str(s)
        s = None
        gc.collect()
        try:
            str(proxy)
            return x + 1, same, "alive"
        except ReferenceError:
            return x - 1, same, "dead"

    expected, result, graphs = both(framegraph_trace, watch, lambda: (torch.ones(2),))
    assert result[1:] == expected[1:] == (True, "dead")
    assert graphs == 1


def test_a_weak_reference_made_in_the_trace(framegraph_trace):
    target = Node()

    def f(x):
        ref = weakref.ref(target)
        y = x + 1
        return y, ref is weakref.ref(target), ref.__callback__, ref

    expected, result, graphs = both(framegraph_trace, f, lambda: (torch.ones(2),))
    assert result[1:3] == expected[1:3] == (True, None)
    assert result[3] is expected[3]  # CPython's one reference to the object without a callback
    assert graphs == 1


def test_a_weak_reference_called_after_the_trace_dropped_its_object(framegraph_trace):
    def f(x):
        obj = Node()
        ref = weakref.ref(obj)
        obj = None  # the last reference: CPython frees it here
        return x + 1, ref() is None  # a break: CPython answers, not the trace

    expected, result, graphs = both(framegraph_trace, f, lambda: (torch.ones(2),))
    assert result[1] is expected[1] is True
    assert graphs == 1


def test_a_local_the_rest_never_reads_holds_its_object_to_the_end(framegraph_trace):
    # eager's frame keeps a bound local until it returns, read again or not
    class Thing:
        pass

    def keep(x, box, probe):
        thing = box.pop()  # from outside: handed to the resume function as it is
        probe.watch(thing)
        y = x * 2
        framegraph.graph_break()
        gc.collect()
        return y + 1, probe.alive()

    expected, result, graphs = both(framegraph_trace, keep, lambda: (torch.ones(2), [Thing()], Probe()))
    assert result[1] == expected[1] == [True]
    assert graphs == 2


class Failure(Exception):
    pass


@framegraph.disable  # a break: the exception comes out of CPython, into the resume function's handler
def fail_with(obj):
    raise Failure(obj)


def test_an_exception_caught_after_a_break_dies_when_its_handler_ends(framegraph_trace):
    class Thing:
        pass

    def handle(x, box, probe):
        thing = box.pop()
        probe.watch(thing)
        y = x * 2
        try:
            fail_with(thing)
        except Failure:
            y = y + 1
        thing = None
        gc.collect()  # the Failure, which held the thing, went with its handler
        return y, probe.alive()

    expected, result, graphs = both(framegraph_trace, handle, lambda: (torch.ones(2), [Thing()], Probe()))
    assert result[1] == expected[1] == [False]
    torch.testing.assert_close(result[0], expected[0])
    assert graphs == 1  # x * 2: the rest, from the handler on, runs in CPython
