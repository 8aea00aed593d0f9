"""Generator-based coroutines: send() into a started generator, throw() and close(), yield from
delegation, augmented assignment through yield, pipelines, generators that outlive the frame."""
import contextlib
import inspect

import torch

from . import case, program

F = "coroutines"


def coroutine(fn):
    """The classic priming decorator (PEP 342's example): advance to the first yield."""
    def start(*args, **kwargs):
        g = fn(*args, **kwargs)
        next(g)
        return g
    return start


@coroutine
def averager():
    total, count, average = None, 0, None
    while True:
        term = yield average
        total = term if total is None else total + term
        count += 1
        average = total / count


@program(F)
def send_running_average():
    def f(x, y):
        avg = averager()
        avg.send(x)
        return avg.send(y)
    return case(f, torch.randn(3), torch.randn(3))


@program(F)
def send_into_started():
    def scaler(factor):
        out = None
        while True:
            x = yield out
            out = x * factor

    def f(x):
        g = scaler(3)
        next(g)
        a = g.send(x)
        b = g.send(a.sin())
        return a, b
    return case(f, torch.randn(2))


@program(F)
def augmented_assignment_through_yield():
    def summer():
        total = 0
        while True:
            total += yield total

    def f(x):
        g = summer()
        next(g)
        g.send(x)
        return g.send(x * 2)
    return case(f, torch.randn(3))


@program(F)
def throw_into_yield_from():
    class Reset(Exception):
        pass

    def inner():
        acc = 0
        while True:
            try:
                acc = acc + (yield acc)
            except Reset:
                acc = 0

    def outer():
        yield from inner()

    def f(x):
        g = outer()
        next(g)
        g.send(x)
        g.send(x)
        zero = g.throw(Reset)
        return g.send(x * 5) + zero
    return case(f, torch.randn(2))


@program(F)
def close_caught_as_generator_exit():
    def worker(log):
        try:
            while True:
                yield
        except GeneratorExit:
            log.append("closed")

    def f(x, log):
        g = worker(log)
        next(g)
        g.close()
        return x * len(log)
    log = []
    return case(f, torch.randn(2), log, observe=lambda: log)


@program(F)
def close_runs_finally():
    def stream(x, log):
        try:
            for i in range(5):
                yield x * i
        finally:
            log.append("finally")

    def f(x, log):
        g = stream(x, log)
        a = next(g) + next(g)
        g.close()
        return a, list(log)
    log = []
    return case(f, torch.randn(2), log, observe=lambda: log)


@program(F)
def yield_from_returns_value():
    def collect(n):
        total = 0
        for _ in range(n):
            total = total + (yield)
        return total

    def delegate(results, n):
        while True:
            results.append((yield from collect(n)))

    def f(x):
        results = []
        g = delegate(results, 2)
        next(g)
        for t in (x, x * 2, x * 3, x * 4):
            g.send(t)
        return results
    return case(f, torch.randn(2))


@program(F)
def grouper_pipeline():
    # Fluent Python's averager/grouper: a delegating generator per key
    def avg():
        total, count = 0, 0
        while True:
            term = yield
            if term is None:
                break
            total = total + term
            count += 1
        return total / count

    def grouper(results, key):
        while True:
            results[key] = yield from avg()

    def f(data):
        results = {}
        for key, values in data.items():
            g = grouper(results, key)
            next(g)
            for v in values:
                g.send(v)
            g.send(None)
        return results
    return case(f, {"a": [torch.randn(2), torch.randn(2)], "b": [torch.randn(2)]})


@program(F)
def push_pipeline():
    # Beazley's coroutine pipeline: source pushes into filter pushes into sink
    @coroutine
    def sink(out):
        while True:
            out.append((yield))

    @coroutine
    def relu_filter(target):
        while True:
            t = yield
            target.send(t.relu())

    @coroutine
    def scale(target, k):
        while True:
            target.send((yield) * k)

    def f(xs):
        out = []
        pipe = scale(relu_filter(sink(out)), 2)
        for t in xs:
            pipe.send(t)
        return out
    return case(f, [torch.randn(3), torch.randn(3)])


@program(F)
def pull_pipeline():
    def source(xs):
        yield from xs

    def offset(it, b):
        for t in it:
            yield t + b

    def square(it):
        for t in it:
            yield t * t

    def f(xs):
        return sum(square(offset(source(xs), 1.0)))
    return case(f, [torch.randn(2), torch.randn(2), torch.randn(2)])


@program(F)
def generator_outlives_frame():
    def counter(x):
        i = 0
        while True:
            i += 1
            yield x * i

    def f(x, holder):
        g = counter(x)
        first = next(g)
        holder.append(g)
        return first.cos()
    holder = []
    return case(f, torch.randn(2), holder, observe=lambda: [next(g) for g in holder])


@program(F)
def generator_passed_in_and_resumed():
    def steps(n):
        for i in range(n):
            yield i

    def f(x, g):
        return x * next(g)
    return case(f, torch.randn(2), steps(10))


@program(F)
def stop_iteration_value():
    def finisher():
        total = 0
        while True:
            v = yield
            if v is None:
                return total
            total = total + v

    def f(x):
        g = finisher()
        next(g)
        g.send(x)
        g.send(x)
        try:
            g.send(None)
        except StopIteration as e:
            return e.value
        return None
    return case(f, torch.randn(3))


@program(F)
def throw_uncaught_propagates():
    def gen(x):
        yield x
        yield x * 2

    def f(x):
        g = gen(x)
        first = next(g)
        try:
            g.throw(ValueError("stop"))
        except ValueError as e:
            return first + len(str(e))
        return first
    return case(f, torch.randn(2))


@program(F)
def throw_runs_finally_and_yields():
    def gen(log):
        try:
            yield 1
        finally:
            log.append("cleanup")
        yield 2

    def f(x, log):
        g = gen(log)
        next(g)
        try:
            g.throw(KeyError)
        except KeyError:
            pass
        return x + len(log)
    log = []
    return case(f, torch.randn(2), log, observe=lambda: log)


@program(F)
def generator_state_inspection():
    def gen():
        yield 1
        yield 2

    def f(x):
        g = gen()
        s0 = inspect.getgeneratorstate(g)
        next(g)
        s1 = inspect.getgeneratorstate(g)
        g.close()
        s2 = inspect.getgeneratorstate(g)
        return x * 2, (s0, s1, s2)
    return case(f, torch.randn(2))


@program(F)
def close_unstarted():
    def gen(x):
        yield x

    def f(x):
        g = gen(x)
        g.close()
        return x.sin(), g.gi_frame is None, list(g)
    return case(f, torch.randn(2))


@program(F)
def send_none_is_next():
    def gen(x):
        a = yield x
        b = yield a
        yield b

    def f(x):
        g = gen(x)
        first = g.send(None)
        second = g.send(first * 2)
        return first, second, g.send(None)
    return case(f, torch.randn(2))


@program(F)
def contextmanager_generator():
    @contextlib.contextmanager
    def scaled(state, k):
        old = state["scale"]
        state["scale"] = k
        try:
            yield state
        finally:
            state["scale"] = old

    def f(x, state):
        with scaled(state, 3) as s:
            y = x * s["scale"]
        return y + state["scale"]
    state = {"scale": 1}
    return case(f, torch.randn(2), state, observe=lambda: state)


@program(F)
def running_max_coroutine():
    @coroutine
    def running_max():
        best = None
        while True:
            t = yield best
            best = t if best is None else torch.maximum(best, t)

    def f(xs):
        m = running_max()
        out = None
        for t in xs:
            out = m.send(t)
        return out
    return case(f, [torch.randn(3), torch.randn(3), torch.randn(3)])


@program(F)
def zip_of_generators():
    def evens(xs):
        yield from xs[::2]

    def odds(xs):
        yield from xs[1::2]

    def f(xs):
        return [a - b for a, b in zip(evens(xs), odds(xs))]
    return case(f, [torch.randn(2) for _ in range(4)])


@program(F)
def generator_exit_return_value_on_close():
    def gen():
        try:
            yield
        except GeneratorExit:
            return "done"

    def f(x):
        g = gen()
        next(g)
        r = g.close()  # None before 3.13, "done" from 3.13 on
        return x + 1, r
    return case(f, torch.randn(2))
