"""The C core, driven directly: the replacement code runs, the cache works,
and nothing a callback, guard or replacement does can crash the interpreter."""
import sys
import threading
import traceback
import weakref

import pytest
from hookutil import Replace, always, hooked

from framegraph import _C


def test_replacement_code_runs_and_is_cached():
    def f(a, b):
        return a + b

    def alt(a, b):
        return ("alt", a + b)

    cb = Replace(f, alt)
    with hooked(cb):
        assert f(1, 2) == ("alt", 3)
        assert f(3, 4) == ("alt", 7)
    assert len(cb.calls) == 1  # the second call was a cache hit
    assert f.__code__.co_name == "f" and f(1, 2) == 3  # f.__code__ untouched, hook gone
    [(guard, code, hits)] = _C.cache_entries(f.__code__)
    assert guard is always and hits == 1 and code.co_name == "alt"
    assert _C.cache_state(code) == "skip"  # replacement code is never intercepted itself
    _C.reset(f.__code__)
    assert _C.cache_entries(f.__code__) == []


def test_hook_installed_only_while_a_callback_is_set():
    assert not _C.is_installed()
    with hooked(lambda *a: None):
        assert _C.is_installed()
        with hooked(lambda *a: None):
            assert _C.is_installed()
        assert _C.is_installed()
    assert not _C.is_installed()


def test_guard_sees_every_argument_kind_as_slots():
    seen = []

    def f(a, /, b, c=3, *args, d, e=5, **kwargs):
        return "orig"

    def alt(a, /, b, c=3, *args, d, e=5, **kwargs):
        return ("alt", a, b, c, args, d, e, kwargs)

    def guard(fn, *slots):
        seen.append((fn, slots))
        return slots[0] != "miss"

    cb = Replace(f, alt, guard)
    with hooked(cb):
        assert f(1, 2, d=4) == ("alt", 1, 2, 3, (), 4, 5, {})
        assert f(1, 2, 7, 8, 9, d=4, e=6, z=0) == ("alt", 1, 2, 7, (8, 9), 4, 6, {"z": 0})
        assert f("miss", 2, d=4) == ("alt", "miss", 2, 3, (), 4, 5, {})
    # co_varnames order: positional, keyword-only, then *args and **kwargs
    assert seen[0] == (f, (1, 2, 7, 4, 6, (8, 9), {"z": 0}))
    assert cb.calls[0] == {"a": 1, "b": 2, "c": 3, "args": (), "d": 4, "e": 5, "kwargs": {}}
    assert len(_C.cache_entries(f.__code__)) == 2  # the failing guard caused a second entry
    _C.reset(f.__code__)


def test_closures_cells_and_nonlocal_writes():
    def make():
        total = 10

        def f(x):
            nonlocal total
            total += x
            return total

        def alt(x):
            nonlocal total
            total += 100 * x
            return ("alt", total)

        return f, alt, lambda: total

    f, alt, read = make()
    cb = Replace(f, alt)
    with hooked(cb):
        assert f(1) == ("alt", 110)
        assert f(1) == ("alt", 210)
    assert read() == 210
    assert cb.calls[0] == {"x": 1, "total": 10}  # free variables dereferenced by name
    f2, _, read2 = make()  # another closure over the same code: same entry, its own cells
    with hooked(cb):
        assert f2(2) == ("alt", 210)
    assert read2() == 210 and read() == 210
    _C.reset(f.__code__)


def test_argument_that_becomes_a_cell_only_in_the_replacement():
    def f(x):
        return x

    def alt(x):
        return (lambda: x)()

    with hooked(Replace(f, alt)):
        assert f(5) == 5
    _C.reset(f.__code__)


def test_methods_and_super():
    class Base:
        def m(self, x):
            return x

    class Child(Base):
        def m(self, x):
            return super().m(x) + 1

        def alt(self, x):
            return super().m(x) + 1000

    with hooked(Replace(Child.m, Child.alt)):
        assert Child().m(1) == 1001
    _C.reset(Child.m.__code__)


def test_lambda_and_recursion():
    g = lambda x: x * 2  # noqa: E731
    with hooked(Replace(g, lambda x: x * 3)):
        assert g(2) == 6
    _C.reset(g.__code__)

    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    def alt(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2) + 1

    cb = Replace(fib, alt)
    with hooked(cb):
        assert fib(10) == 143  # every recursive call ran the replacement
    assert len(cb.calls) == 1
    [(_, _, hits)] = _C.cache_entries(fib.__code__)
    assert hits == 176
    _C.reset(fib.__code__)


def test_callback_may_call_the_function_it_compiles():
    def f(x):
        return x + 1

    def alt(x):
        return x + 100

    inner_results = []

    def cb(func, code, f_locals):
        if code is not f.__code__:
            return None
        inner_results.append(func(f_locals["x"]))  # runs unmodified: the hook is off here
        return always, Replace(f, alt).replacement.replace(co_flags=alt.__code__.co_flags)

    with hooked(cb):
        assert f(1) == 101
    assert inner_results == [2]
    _C.reset(f.__code__)


def test_exceptions_from_callback_guard_and_replacement_propagate():
    def f(x):
        return x

    def bad_callback(func, code, f_locals):
        if code is f.__code__:
            raise KeyError("from callback")

    with hooked(bad_callback):
        with pytest.raises(KeyError, match="from callback"):
            f(1)
        with pytest.raises(KeyError):
            f(1)  # nothing was cached
    assert f(1) == 1

    def bad_guard(fn, *slots):
        raise ValueError("from guard")

    with hooked(Replace(f, lambda x: -x, bad_guard)):
        assert f(1) == -1  # first call: the new entry runs without a guard check
        with pytest.raises(ValueError, match="from guard"):
            f(1)
    _C.reset(f.__code__)

    def alt(x):
        return 1 / 0

    with hooked(Replace(f, alt)):
        with pytest.raises(ZeroDivisionError) as info:
            f(1)
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == __file__ and last.name == "alt" and "1 / 0" in last.line
    _C.reset(f.__code__)


def test_keyboard_interrupt_from_callback_leaves_hook_usable():
    def f(x):
        return x

    state = {"raise": True}

    def cb(func, code, f_locals):
        if code is f.__code__ and state["raise"]:
            state["raise"] = False
            raise KeyboardInterrupt
        return None

    with hooked(cb):
        with pytest.raises(KeyboardInterrupt):
            f(1)
        assert f(2) == 2


def test_bad_callback_results_are_errors_not_crashes():
    def f(x, y):
        return x

    def other(x):
        return x

    for result, error in [
        ("nonsense", TypeError),
        ((always, "not code"), TypeError),
        ((always, other.__code__), ValueError),  # wrong argument count
        ((42, f.__code__), TypeError),  # guard not callable
    ]:
        with hooked(lambda func, code, loc, r=result: r if code is f.__code__ else None):
            with pytest.raises(error):
                f(1, 2)
        _C.reset(f.__code__)
    with pytest.raises(TypeError):
        _C.set_callback(42)
    with pytest.raises(TypeError):
        _C.cache_entries("not code")


def test_skip_marks():
    calls = []

    def leaf(x):
        return x

    def f(x):
        return leaf(x)

    def cb(func, code, f_locals):
        if code in (f.__code__, leaf.__code__):
            calls.append(code.co_name)
        return _C.SKIP if code is f.__code__ else None

    with hooked(cb):
        f(1)
        f(1)
    assert calls == ["f", "leaf", "leaf"] and _C.cache_state(f.__code__) == "skip"
    _C.reset(f.__code__)

    calls.clear()
    _C.mark_skip(f.__code__, recursive=True)
    with hooked(cb):
        f(1)
    assert calls == [] and _C.cache_state(f.__code__) == "skip_recursive"
    _C.reset(f.__code__)
    assert _C.cache_state(f.__code__) is None


def test_generators_and_class_bodies_are_never_intercepted():
    seen = []

    def gen(n):
        yield from range(n)

    def cb(func, code, f_locals):
        seen.append(code.co_name)
        return None

    with hooked(cb):
        assert list(gen(3)) == [0, 1, 2]

        class Body:
            x = 1

    assert "gen" not in seen and "Body" not in seen
    assert _C.cache_state(gen.__code__) == "skip"


def test_cache_limit_runs_unmodified_and_notifies_once():
    def f(x):
        return x

    limited = []
    _C.set_limit_hook(limited.append)
    _C.set_cache_limit(2)
    try:
        cb = Replace(f, lambda x: ("alt", x), lambda fn, x: fn.last == x)
        f.last = None

        def remember(func, code, loc):
            func.last = loc.get("x")
            return cb(func, code, loc)

        with hooked(remember):
            assert f(1) == ("alt", 1)
            assert f(2) == ("alt", 2)
            assert f(3) == 3  # third distinct input: past the limit, unmodified
            assert f(4) == 4
            assert f(2) == ("alt", 2)  # existing entries still serve their inputs
        assert limited == [f.__code__] and _C.cache_state(f.__code__) == "run_only"
    finally:
        from framegraph.runtime.convert_frame import on_cache_limit

        _C.set_limit_hook(on_cache_limit)
        _C.set_cache_limit(8)
        _C.reset(f.__code__)


def test_settrace_frames_pass_through():
    seen = []

    def f(x):
        return x

    def tracer(frame, event, arg):
        f(0)  # a frame started inside the trace function is never intercepted
        return None

    with hooked(lambda func, code, loc: seen.append(code.co_name)):
        sys.settrace(tracer)
        try:
            f(1)
        finally:
            sys.settrace(None)
    assert seen.count("f") == 1  # only the traced program's own call


def test_four_threads_two_with_callbacks():
    def f(x):
        return x

    def alt(x):
        return ("alt", x)

    results = {}
    barrier = threading.Barrier(4)

    def worker(i, with_callback):
        barrier.wait()
        if with_callback:
            with hooked(Replace(f, alt)):
                results[i] = [f(i) for _ in range(2000)]
        else:
            results[i] = [f(i) for _ in range(2000)]

    threads = [threading.Thread(target=worker, args=(i, i % 2 == 0)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == [("alt", 0)] * 2000 and results[2] == [("alt", 2)] * 2000
    assert results[1] == [1] * 2000 and results[3] == [3] * 2000
    _C.reset(f.__code__)


def test_a_callback_keeps_the_slot_while_another_thread_is_in_a_compiled_call():
    def f(x):
        return x

    inside, leave, seen = threading.Event(), threading.Event(), []

    def other():
        with hooked(lambda *a: None):
            inside.set()
            assert leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)

    def callback(func, code, f_locals):
        if code is f.__code__:
            seen.append(_C.is_installed())
        return None

    with hooked(callback):
        assert f(1) == 1
    leave.set()
    thread.join()
    assert seen == [True]
    _C.reset(f.__code__)


def test_refcounts_stable_over_many_calls():
    def make():
        cell = object()

        def f(a):
            return cell

        def alt(a):
            return cell

        return f, alt

    f, alt = make()
    arg = object()
    cb = Replace(f, alt)
    with hooked(cb):
        f(arg)
        before = (sys.getrefcount(arg), sys.getrefcount(f.__closure__[0]),
                  sys.getrefcount(f.__code__), sys.getrefcount(alt.__code__))
        for _ in range(20000):
            f(arg)
        after = (sys.getrefcount(arg), sys.getrefcount(f.__closure__[0]),
                 sys.getrefcount(f.__code__), sys.getrefcount(alt.__code__))
    assert before == after
    _C.reset(f.__code__)


def test_wrapper_sets_the_callback_only_during_the_call():
    seen = []

    def cb(func, code, f_locals):
        return None

    def f(x, *, y=0):
        seen.append(_C.get_callback())
        return x + y

    wrapped = _C.Wrapper(f, cb)
    assert wrapped(1, y=2) == 3 and seen == [cb]
    assert _C.get_callback() is None and not _C.is_installed()
    off = _C.Wrapper(f, None)
    with hooked(cb):
        assert off(1) == 1
        assert _C.get_callback() is cb
    assert seen[-1] is None


def test_wrapper_binds_as_a_method_and_restores_on_exceptions():
    class A:
        def m(self, x):
            if x < 0:
                raise ValueError("negative")
            return (self, x)

        w = _C.Wrapper(m, lambda *a: None)

    a = A()
    assert a.w(2) == (a, 2)
    with pytest.raises(ValueError, match="negative"):
        a.w(-1)
    assert _C.get_callback() is None


def test_wrapper_cycles_are_collected():
    import gc
    import weakref

    ns = {}
    exec("def f(x):\n    return g(x)\n", ns)  # f's globals hold the wrapper that holds f
    ns["g"] = _C.Wrapper(ns["f"], None)
    ref = weakref.ref(ns["g"])
    del ns
    gc.collect()
    assert ref() is None


def test_a_guard_that_resets_its_own_code_is_safe():
    # The guard runs while the hook holds the code's cache state; reset() drops
    # the cache from under it (an invalidation policy, a finaliser, a user's
    # framegraph.reset() in a guard-evaluated property). It must not free what
    # the hook still reads.
    def f(a):
        return a

    def alt(a):
        return ("alt", a)

    def resetting_guard(fn, a):
        _C.reset(f.__code__)
        return a == 1

    cb = Replace(f, alt, guard=resetting_guard)
    with hooked(cb):
        assert f(1) == ("alt", 1)  # compiled
        assert f(1) == ("alt", 1)  # guard resets, passes: runs the held entry
        assert f(2) == ("alt", 2)  # cache was reset: compiled again
        for i in range(200):
            assert f(i % 3) == ("alt", i % 3)
    _C.reset(f.__code__)


def test_finalisers_that_reset_the_code_while_an_entry_is_added():
    # Adding an entry allocates, which may run the garbage collector and with
    # it any finaliser: one that resets the code being cached.
    import gc

    def f(a):
        return a

    def alt(a):
        return ("alt", a)

    class Resets:
        def __del__(self):
            _C.reset(f.__code__)

    class Cycle:
        pass

    def make_garbage():
        for _ in range(50):
            c = Cycle()
            c.me, c.r = c, Resets()

    cb = Replace(f, alt)
    old = gc.get_threshold()
    gc.set_threshold(1)
    try:
        with hooked(cb):
            for i in range(100):
                make_garbage()
                assert f(i) == ("alt", i)
    finally:
        gc.set_threshold(*old)
        gc.collect()
    _C.reset(f.__code__)


class Watched:
    pass


def test_hand_over_moves_the_arguments_into_the_callee():
    def callee(obj, probe):
        ref = weakref.ref(obj)
        obj = None  # the last reference: neither hand_over nor the caller's list keeps one
        probe.append(ref() is None)
        return "done"

    probe = []
    args = [callee, Watched(), probe]
    with hooked(lambda *a: None):  # the hook releases the caller's references
        assert _C.hand_over(args) == "done"
    assert args == [] and probe == [True]
    assert _C.hand_over([max, 1, 2]) == 2  # not a Python function: an ordinary call
    for bad in ((), [], "f"):
        with pytest.raises(TypeError):
            _C.hand_over(bad)
    with pytest.raises(ZeroDivisionError):
        _C.hand_over([lambda: 1 / 0])


def test_a_recalled_frame_does_not_keep_its_arguments():
    def f(obj, probe):
        return obj

    def alt(obj, probe):
        ref = weakref.ref(obj)
        obj = None  # the hook's original frame of f gave its slots over
        probe.append(ref() is None)
        return "alt"

    probe = []
    with hooked(Replace(f, alt)):  # (the callback keeps the locals of the call it compiles)
        assert _C.hand_over([f, Watched(), probe]) == "alt"
        assert _C.hand_over([f, Watched(), probe]) == "alt"  # a cache hit: the re-call
    assert probe == [False, True]
