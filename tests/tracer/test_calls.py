"""User functions are inlined into the caller's graph: helpers, closures, lambdas, *args."""
import functools

import pytest
import torch

import framegraph
from helpers import CountingBackend, check, run_counted

SCALE = 3


def level3(x):
    return x.sin() * SCALE


def level2(x, bias=1.0):
    return level3(x) + bias


def level1(x, *, power=2):
    return level2(x) ** power


def test_inlining_three_levels_deep_is_one_graph():
    def f(x):
        return level1(x) - 1

    check(f, torch.randn(4), ops=5)


def test_global_constant_is_guarded():
    def f(x):
        return x * SCALE

    cnt = CountingBackend()
    fn = framegraph.compile(f, backend=cnt)
    x = torch.randn(3)
    torch.testing.assert_close(fn(x), x * 3)
    global SCALE
    SCALE = 5
    try:
        torch.testing.assert_close(fn(x), x * 5)
    finally:
        SCALE = 3
    assert cnt.frame_count == 2


def test_closures_read_outer_values():
    offset = torch.tensor(2.0)
    factor = 4

    def f(x):
        return x * factor + offset

    check(f, torch.randn(3), ops=2)


def test_nested_def_and_lambda_capture_locals():
    def f(x, n):
        k = n + 1

        def inner(y):
            return y * k

        square = lambda y: y * y  # noqa: E731
        return square(inner(x)) + (lambda: k)()

    check(f, torch.randn(3), 2)


def test_closure_cell_written_by_the_frame():
    def f(x):
        total = x

        def add(y):
            nonlocal total
            total = total + y

        add(x)
        add(x * 2)
        return total

    check(f, torch.randn(3))


def test_defaults_kwargs_and_star_args():
    def helper(a, b=2, *rest, c, d=4, **extra):
        out = a * b + c * d
        for r in rest:
            out = out + r
        for key in sorted(extra):
            out = out - extra[key]
        return out

    def f(x, y):
        return helper(x, 3, y, y, c=1), helper(x, c=y, z=x, w=2.0)

    check(f, torch.randn(3), torch.randn(3))


def test_positional_only_names_may_also_arrive_in_star_star_kwargs():
    def helper(a, b=1, /, **extra):
        return a * b + sum(v for v in extra.values())

    def f(x):
        return helper(x, a=2, b=3), helper(x, 4)

    check(f, torch.randn(3))


def _calls_eager_rejects():
    def two(a, b):
        return a + b

    def kwonly(a, *, k):
        return a * k

    def posonly(a, /):
        return a

    return [
        lambda x: two(x),  # missing argument
        lambda x: two(x, x, x),  # too many positional
        lambda x: two(x, a=x),  # multiple values
        lambda x: two(x, c=x),  # unexpected keyword
        lambda x: kwonly(x, 2),  # keyword-only passed positionally
        lambda x: posonly(a=x),  # positional-only passed by keyword
    ]


def test_a_call_python_rejects_raises_the_same_type_error_compiled(framegraph_trace):
    for bad in _calls_eager_rejects():
        with pytest.raises(TypeError) as eager:
            bad(torch.ones(2))
        with pytest.raises(TypeError) as compiled:
            framegraph.compile(bad, backend="eager")(torch.ones(2))
        assert str(compiled.value) == str(eager.value)
    assert (framegraph_trace.frames, framegraph_trace.graphs) == (6, 0)
    # each bad call raises its TypeError in the trace; it escapes the frame and CPython raises it


def test_frame_with_star_args_and_kwargs():
    def f(x, *args, scale=1.0, **kwargs):
        out = x * scale
        for a in args:
            out = out + a
        return out * kwargs["k"]

    check(f, torch.randn(2), torch.randn(2), torch.randn(2), scale=2.0, k=3)


def test_call_function_ex_splats():
    def helper(a, b, c=0):
        return a + b + c

    def f(x):
        args = (x, x)
        kw = {"c": 1}
        return helper(*args, **kw), helper(*[x], **{"b": 2})

    check(f, torch.randn(3))


def test_recursion_unrolls_on_constants():
    def power(x, n):
        return x if n == 0 else x * power(x, n - 1)

    def f(x):
        return power(x, 4)

    check(f, torch.randn(3), ops=4)


def test_functools_reduce_and_map():
    def f(xs):
        return functools.reduce(lambda a, b: a + b, map(torch.relu, xs))

    check(f, [torch.randn(2) for _ in range(3)])


def test_compiled_function_called_with_keyword_arguments():
    def f(x, y=None, *, alpha=1.0):
        return x if y is None else x + alpha * y

    cnt = CountingBackend()
    fn = framegraph.compile(f, backend=cnt)
    x, y = torch.randn(2), torch.randn(2)
    torch.testing.assert_close(fn(x, y=y, alpha=2.0), f(x, y, alpha=2.0))
    torch.testing.assert_close(fn(x), x)
    assert cnt.frame_count == 1  # fn(x) returns x: a new entry without a graph


# ---- functions made in the trace outlive it (transformers' mask factories)
def and_masks(*mask_functions):
    def and_mask(batch, q_idx, kv_idx):
        result = q_idx.new_ones((), dtype=torch.bool)
        for mask in mask_functions:
            result = result & mask(batch, q_idx, kv_idx)
        return result
    return and_mask


def sliding_window(size):
    def inner_mask(batch, q_idx, kv_idx):
        return q_idx - kv_idx < size
    return inner_mask


def test_a_returned_closure_is_rebuilt_with_its_cells():
    def f(x, size):
        causal = lambda batch, q_idx, kv_idx: kv_idx <= q_idx  # noqa: E731
        return x + 1, and_masks(causal, sliding_window(size))

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    q, kv = torch.arange(6)[:, None], torch.arange(6)[None, :]
    for size in (2, 3):
        (y, mask), (expected_y, expected_mask) = compiled(torch.ones(2), size), f(torch.ones(2), size)
        assert torch.equal(y, expected_y)
        assert torch.equal(mask(0, q, kv), expected_mask(0, q, kv))
        assert mask.__qualname__ == "and_masks.<locals>.and_mask" and mask.__module__ == __name__
    assert cnt.frame_count == 2  # size is a constant of the graph: one per size


def test_a_rebuilt_function_keeps_defaults_keyword_defaults_annotations_and_recursion():
    def f(x, k):
        def power(t: torch.Tensor, n=2, *, scale=k) -> torch.Tensor:
            return t * scale if n == 0 else power(t, n - 1, scale=scale) * t
        return x.sum(), power

    cnt = CountingBackend()
    (_, power), (_, expected) = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2), 3), f(torch.ones(2), 3)
    x = torch.randn(3)
    assert torch.equal(power(x), expected(x)) and torch.equal(power(x, 0), x * 3)
    assert (power.__defaults__, power.__kwdefaults__) == ((2,), {"scale": 3})
    assert power.__annotations__ == {"t": torch.Tensor, "return": torch.Tensor}
    assert cnt.frame_count == 1


def test_a_cell_shared_with_a_closure_across_a_graph_break():
    def f(x):
        offset = x * 2
        calls = 0

        def add(y):
            nonlocal calls
            calls += 1
            return y + offset

        framegraph.graph_break()   # `add` and both cells are handed to the resume function
        offset = offset + 1        # the frame writes the cell: add sees it
        out = add(x)               # add writes `calls`: the frame sees it
        framegraph.graph_break()
        return out, calls, add

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    x = torch.ones(2)
    for _ in range(3):
        (out, calls, add), (e_out, e_calls, e_add) = compiled(x), f(x)
        assert torch.equal(out, e_out) and calls == e_calls == 1
        assert torch.equal(add(x), e_add(x))  # still the frame's cells: offset 3, calls now 2
        assert add.__closure__[0].cell_contents == e_add.__closure__[0].cell_contents == 2
    # x * 2, then offset + 1 and add(x); the last part has no tensor work. The
    # second resume function gets a new `add` each call: no recompile.
    assert cnt.frame_count == 2


def test_a_closure_made_anew_for_every_call_reuses_the_graph():
    # transformers builds its mask functions per forward: guarded by their code,
    # defaults and cell contents, not by the function object
    def f(x, mask, scale=lambda t: t * 2):
        q = torch.arange(4)[:, None]
        return scale(torch.where(mask(0, q, q.T), x, -x))

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    x = torch.randn(4, 4)
    for size in (2, 2, 2, 3, 3):
        mask = and_masks(sliding_window(size), lambda b, q, kv: kv <= q)
        assert torch.equal(compiled(x, mask), f(x, mask))
    assert cnt.frame_count == 2  # a new window size is a new cell value: one recompile
    other = and_masks(lambda b, q, kv: kv >= q)  # same code, other lambda inside
    assert torch.equal(compiled(x, other), f(x, other))
    assert torch.equal(compiled(x, other, lambda t: t - 1), f(x, other, lambda t: t - 1))
    assert cnt.frame_count == 4


def checkpointed(forward):
    @functools.wraps(forward)
    def forward_with_checkpointing(self, x):
        # transformers' GradientCheckpointingLayer: only the outermost wrapper acts
        outermost = type(self).forward is forward_with_checkpointing
        return forward(self, x) * (2 if outermost else 3)
    return forward_with_checkpointing


class CheckpointedLayer(torch.nn.Module):
    @checkpointed
    def forward(self, x):
        return x + 1


def test_a_decorated_method_compared_with_its_wrapper_by_identity():
    # the wrapper is guarded by its code, so `is` is answered now and kept by an IS_SAME guard
    check(CheckpointedLayer(), torch.ones(2), ops=2)


def test_a_torch_op_packet_passed_in_is_still_a_graph_call():
    # an OpOverloadPacket has no __code__ (reading it raises): not a nested function
    def f(x, op):
        return op(x) + 1

    check(f, torch.randn(3), torch.ops.aten.sin, ops=2)


@functools.lru_cache(maxsize=None)
def cached_scale(t, factor):
    return t * factor


class Padder(torch.nn.Module):
    @functools.lru_cache(maxsize=8)
    def pad(self, t, n):
        return torch.nn.functional.pad(t, (0, n))

    def forward(self, x):
        return self.pad(x + 1, 2)


def test_lru_cache_is_traced_through_where_eager_surely_misses():
    # the key holds a tensor made in the graph: no cached entry can match it
    check(lambda x: cached_scale(x.relu(), 3), torch.randn(3), ops=2)
    check(Padder(), torch.randn(2, 3), ops=2)


def test_lru_cache_with_arguments_the_cache_may_hold_is_a_graph_break(framegraph_trace):
    # eager returns the stored object (on a hit: the tensor computed for the first x)
    def f(x):
        return cached_scale(x, 2) + 1

    compiled = framegraph.compile(f, backend="eager")
    x = torch.ones(2)
    first = compiled(x)
    x.add_(1)  # changed in place: eager's cache hit returns the stale result, so must we
    assert torch.equal(compiled(x), f(x)) and torch.equal(compiled(x), first)
    # the call runs in CPython, whose miss runs `t * factor` as a frame of its own: one
    # graph, then `+ 1` in the resume function; later calls hit the cache
    assert framegraph_trace.graphs == 2


def test_an_lru_cache_made_in_the_frame_counts_hits_as_eager():
    # a wrapper made in the trace starts empty, so every hit and miss is known
    def f(x):
        @functools.lru_cache(maxsize=4)
        def scale(k):
            return k * 1.5

        first, again = scale(2), scale(2)
        return x * first + again, scale.cache_info(), scale.__name__, scale.__wrapped__(4)

    check(f, torch.ones(2), ops=2)


def test_a_bounded_lru_cache_evicts_and_keeps_identity_of_hits():
    def f(x):
        @functools.lru_cache(maxsize=1)
        def pick(k, *, s=1):
            return (k, s)

        a, b = pick(1), pick(1)
        pick(2)  # evicts pick(1)
        c = pick(1)
        d = pick(1, s=1)  # another key: a keyword is part of it
        return x + 1, a is b, a is c, c is d, pick.cache_info()

    check(f, torch.ones(2))


def test_cache_clear_empties_an_lru_cache_made_in_the_frame():
    def f(x):
        @functools.lru_cache
        def square(n):
            return n * n

        square(3), square(3)
        before = square.cache_info()
        square.cache_clear()
        return x * square(4), before, square.cache_info()

    check(f, torch.ones(2))


def test_an_empty_lru_cache_made_in_the_frame_is_returned_as_a_working_wrapper():
    def f(x):
        return x + 1, functools.lru_cache(maxsize=None)(lambda n: n + 1)

    cnt = CountingBackend()
    y, wrapper = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert cnt.frame_count == 1 and torch.equal(y, torch.full((2,), 2.0))
    assert wrapper(3) == 4 and wrapper(3) == 4
    assert wrapper.cache_info() == functools._CacheInfo(1, 1, None, 1)


@pytest.mark.expect_fallback("graph_output")
def test_an_lru_cache_that_escapes_holding_entries_runs_in_cpython():
    # its entries are objects made in the trace, which nothing outside it can put back
    # in a new wrapper's cache: the frame runs unmodified, and says why
    def f(x):
        @functools.lru_cache
        def halve(n):
            return n / 2

        halve(3)
        return x + 1, halve

    result, cnt, breaks, errors = run_counted(f, torch.ones(2))
    assert torch.equal(result[0], torch.full((2,), 2.0)) and cnt.frame_count == 0
    assert [e.entry.id for e in errors] == ["graph_output"] and "lru_cache" in str(errors[0])
    assert result[1].cache_info() == functools._CacheInfo(0, 1, 128, 1) and result[1](3) == 1.5


def shifted(x, by=1.0, *, scale=2.0):
    return (x + by) * scale


def _compiled_before_and_after_new_defaults(f, x):
    """(compiled f, its answer once shifted's defaults are 7.0 and scale=9.0, the backend)."""
    cnt = CountingBackend()
    fn = framegraph.compile(f, backend=cnt, fullgraph=True)
    torch.testing.assert_close(fn(x), f(x))
    saved = shifted.__defaults__, shifted.__kwdefaults__
    shifted.__defaults__, shifted.__kwdefaults__ = (7.0,), {"scale": 9.0}
    try:
        return fn(x), cnt
    finally:
        shifted.__defaults__, shifted.__kwdefaults__ = saved


def test_a_default_the_call_overrides_is_not_guarded():
    x = torch.randn(3)
    after, cnt = _compiled_before_and_after_new_defaults(lambda x: shifted(x, 0.5, scale=3.0), x)
    torch.testing.assert_close(after, (x + 0.5) * 3.0)  # neither default was read: the graph still holds
    assert cnt.frame_count == 1


def test_a_default_the_call_takes_is_guarded():
    x = torch.randn(3)
    after, cnt = _compiled_before_and_after_new_defaults(lambda x: shifted(x), x)
    torch.testing.assert_close(after, (x + 7.0) * 9.0)
    assert cnt.frame_count == 2
