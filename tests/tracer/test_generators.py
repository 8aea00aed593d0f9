"""Generators run lazily, in step with their consumer, as CPython runs them.

Each ``next()`` runs the body to its next ``yield``: side effects happen when
the value is asked for, reads see what the consumer changed in between, and
``send``/``throw``/``close``/``yield from``/``contextlib.contextmanager`` behave
as in eager, in one graph.
"""
import contextlib

import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, check


def counting(log, n):
    for i in range(n):
        log.append(i)
        yield i


def test_side_effects_happen_when_each_value_is_taken():
    def f(x, log):
        g = counting(log, 3)
        first = next(g)
        return x * first + len(log), list(log)

    a, b = [], []
    cnt = CountingBackend()
    got = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2), a)
    assert_same(got, f(torch.ones(2), b))
    assert a == b == [0] and cnt.frame_count == 1


def test_the_body_reads_what_the_consumer_changed():
    def lengths(items):
        for _ in range(3):
            yield len(items)

    def f(x):
        seen = [0]
        for n in lengths(seen):
            seen.append(n)
        scale = x.clone()
        total = x * 0
        for t in (scale * 1 for _ in range(2)):
            scale.add_(1)
            total = total + t
        return total, seen

    check(f, torch.ones(2))


def test_send_throw_and_close():
    def accumulator(log):
        total = 0
        try:
            while True:
                try:
                    got = yield total
                    total += got
                except ValueError:
                    total = -1
        finally:
            log.append("closed")

    def f(x):
        log = []
        g = accumulator(log)
        next(g)
        g.send(2)
        a = g.send(3)
        b = g.throw(ValueError)
        g.close()
        return x * a, b, log

    check(f, torch.ones(2))


def test_yield_from_delegates_and_returns_a_value():
    def inner(x):
        yield x
        yield x * 2
        return x * 3

    def outer(x):
        last = yield from inner(x)
        yield last

    def f(x):
        return list(outer(x))

    check(f, torch.ones(2))


def test_a_generator_advanced_by_a_helper():
    def take(g, k):
        return [next(g) for _ in range(k)]

    def f(x):
        g = (x * i for i in range(5))
        head = take(g, 2)
        return head, sum(g)

    check(f, torch.ones(2))


def test_stop_iteration_leaving_the_body_is_a_runtime_error():
    def bad():
        yield 1
        next(iter([]))

    def f(x):
        try:
            list(bad())
        except RuntimeError as e:
            return x + 1, str(e)

    check(f, torch.ones(2))


@contextlib.contextmanager
def scaled(log, factor):
    log.append("enter")
    try:
        yield factor
    except ZeroDivisionError:
        log.append("handled")
    finally:
        log.append("exit")


def test_contextmanager_blocks():
    def f(x):
        log = []
        with scaled(log, 2) as k:
            y = x * k
        with scaled(log, 3) as k:
            y = y + k
        return y, log

    check(f, torch.ones(2))


def test_an_exception_leaving_a_contextmanager_block_is_thrown_into_the_generator():
    def f(x):
        log = []
        with scaled(log, 3):
            y = x + 1
            1 / 0  # contextlib throws it in at the yield; the generator handles it
        return y, log

    check(f, torch.ones(2))


def test_an_exception_the_contextmanager_does_not_handle_propagates():
    @contextlib.contextmanager
    def tracking(log):
        log.append("enter")
        try:
            yield
        finally:
            log.append("exit")

    def f(x):
        log = []
        try:
            with tracking(log):
                y = x * 2
                raise KeyError("k")
        except KeyError:
            log.append("caught")
        return y, log

    check(f, torch.ones(2))


@pytest.mark.expect_fallback("cannot_resume")
def test_a_generator_alive_at_a_graph_break_runs_the_frame_in_cpython():
    def f(x):
        g = (x * i for i in range(3))
        a = next(g)
        framegraph.graph_break()
        return a + next(g)

    cnt = CountingBackend()
    assert_same(framegraph.compile(f, backend=cnt)(torch.ones(2)), f(torch.ones(2)))
    assert cnt.frame_count == 0


def test_a_stop_iteration_leaking_from_a_generator_is_a_runtime_error_caused_by_it():
    """PEP 479: the RuntimeError's __cause__ and __context__ are the StopIteration."""
    def f(x):
        def gen():
            yield 1
            raise StopIteration("inner")

        it = gen()
        next(it)
        try:
            next(it)
        except RuntimeError as e:
            return x + 1, str(e), repr(e.__cause__), e.__context__ is e.__cause__, e.__suppress_context__

    check(f, torch.ones(2))


def test_contextmanager_reraises_the_users_stop_iteration_itself():
    """contextlib's __exit__ recognises the PEP 479 RuntimeError by its __cause__ and
    re-raises the very StopIteration the with block raised."""
    from contextlib import contextmanager

    @contextmanager
    def scope():
        yield

    def f(x):
        stop = StopIteration("spam")
        try:
            with scope():
                raise stop
        except Exception as ex:
            return x + 1, ex is stop, type(ex).__name__

    check(f, torch.ones(2))


def test_generator_state_attributes_as_inspect_reads_them():
    # genobject.c: gi_running while the body executes, gi_suspended at a yield, gi_frame None
    # once finished; inspect.getgeneratorstate is built from the three
    import inspect

    def two():
        yield 1
        yield 2

    def f(x):
        g = two()
        created = inspect.getgeneratorstate(g), g.gi_frame is None, bool(g.gi_frame), g.gi_suspended
        next(g)
        paused = inspect.getgeneratorstate(g), g.gi_running, g.gi_suspended
        g.close()
        return x * 2, created, paused, inspect.getgeneratorstate(g), g.gi_frame is None

    def g(x):
        def inside():
            yield box[0].gi_running, inspect.getgeneratorstate(box[0])
        box = [inside()]
        return x + 1, next(box[0])

    check(f, torch.ones(2))
    check(g, torch.ones(2))
