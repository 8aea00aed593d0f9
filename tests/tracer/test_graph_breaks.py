"""Graph breaks: the graph so far runs, the instruction runs in CPython, a resume
function continues. Each test compares with eager and counts graphs and breaks."""
import logging
import zlib

import pytest
import torch

import framegraph
from framegraph import pyver
from framegraph.breaks import resume
from framegraph.breaks.split import _logged

from helpers import assert_same, check_breaks, opcodes_of, run_counted


def g(x):  # the brief's example
    if x.sum() > 0:
        return x * 2
    return x + 1


@framegraph.disable
def untraced(x):
    return x


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def break_log():
    """The graph_breaks channel's records; logging is left as it was found."""
    _logged.clear()  # each site is logged once per process: forget the earlier tests'
    root, channel, handler = logging.getLogger("framegraph"), logging.getLogger("framegraph.graph_breaks"), _Records()
    propagate = root.propagate
    channel.addHandler(handler)
    framegraph.set_logs(graph_breaks=True)
    yield handler
    framegraph.set_logs(graph_breaks=False)
    channel.removeHandler(handler)
    root.propagate = propagate


# ---- the brief's g
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_briefs_g_is_two_graphs_and_one_break(sign):
    brks = check_breaks(g, lambda: (torch.full((4,), sign),), graphs=2, breaks=1)
    assert brks[0].entry.id == "data_dependent_branch"
    assert brks[0].user_stack == [f"{__file__}:{g.__code__.co_firstlineno + 1} in g"]


def test_the_briefs_g_in_explain():
    out = framegraph.explain(g)(torch.ones(3))
    assert (out.graph_count, out.graph_break_count) == (2, 1)
    assert out.break_reasons[0].reason == "Data-dependent branching"


def test_the_break_text_has_the_briefs_shape(break_log, framegraph_trace):
    framegraph.compile(g, backend="eager")(torch.ones(3))
    text = break_log.records[0].getMessage().splitlines()
    line = g.__code__.co_firstlineno + 1
    assert text[0] == f"Graph break in user code at {__file__}:{line}"
    assert text[1] == "Graph Break Reason: Data-dependent branching"
    assert text[2].startswith("  Explanation: Detected data-dependent branching")
    assert text[3] == "  Hint: Use `torch.cond` to express dynamic control flow."
    assert text[4] == "  Developer debug context: attempted to jump with TensorVariable()"
    assert text[-1].strip() == "if x.sum() > 0:"
    framegraph.reset()
    framegraph.compile(g, backend="eager")(torch.ones(3))
    assert len(break_log.records) == 1  # once per site
    assert framegraph_trace.graphs == 4  # two graphs per compile (the break)


def test_fullgraph_raises_the_catalogue_text_with_the_source_line():
    lst = []

    def f(x):
        lst.append(x)
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(framegraph.Unsupported) as info:
        framegraph.compile(f, backend="eager", fullgraph=True)(torch.ones(2))
    message = str(info.value)
    assert "Graph Break Reason: Data-dependent branching" in message
    assert f"{__file__}:{f.__code__.co_firstlineno + 2}" in message and "if x.sum() > 0:" in message
    assert info.value.entry.id == "data_dependent_branch" and lst == []  # nothing half-applied


# ---- every cause
def _if(x):
    if x.any():
        x = x + 1
    return x * 2


def _if_not(x):
    if not (x > 0).all():
        return x - 1
    return x + 1


def _while(x):
    while x.sum() < 20:
        x = x * 2
    return x


def _and(x, y):
    return (x.sum() > 0) and y


def _or(x, y):
    return (x.sum() > 0) or y


def _bool(x):
    return x + 1 if bool(x.sum() > 0) else x - 1


# The jump each compiles to: 3.11's opcode, then 3.12's (forward-only conditional
# jumps; `and`/`or` are COPY + POP_JUMP_IF).
@pytest.mark.parametrize("fn, graphs, breaks, opcodes", [
    (_if, 2, 1, ("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_IF_FALSE")),
    (_if_not, 2, 1, ("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_IF_TRUE")),
    (_while, 4, 4, ("POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_IF_FALSE")),
    (_and, 1, 1, ("JUMP_IF_FALSE_OR_POP", "POP_JUMP_IF_FALSE")),
    (_or, 1, 1, ("JUMP_IF_TRUE_OR_POP", "POP_JUMP_IF_TRUE")),
    (_bool, 2, 1, ("CALL", "CALL")),
])
def test_branching_on_a_tensor_breaks(fn, graphs, breaks, opcodes):
    assert opcodes[pyver.VERSION >= (3, 12)] in opcodes_of(fn)
    args = (lambda: (torch.ones(3),)) if fn.__code__.co_argcount == 1 else (lambda: (torch.ones(3), torch.zeros(3)))
    brks = check_breaks(fn, args, graphs=graphs, breaks=breaks)
    assert brks[0].entry.id in ("data_dependent_branch", "data_dependent_value")


@pytest.mark.parametrize("fn, graphs, breaks", [
    (lambda x: x * x.sum().item(), 2, 1),
    (lambda x: torch.tensor(x.tolist()) + x, 1, 1),  # nothing to capture before the break
    (lambda x: x * int(x.sum()), 2, 1),
    (lambda x: x * float(x.max()), 2, 1),
], ids=["item", "tolist", "int", "float"])
def test_tensor_to_python_value_breaks(fn, graphs, breaks):
    brks = check_breaks(fn, lambda: (torch.arange(3.0),), graphs=graphs, breaks=breaks)
    assert brks[0].entry.id == "data_dependent_value"


def test_print_breaks_and_prints_once(capsys):
    def f(x):
        y = x + 1
        print("y is", y.shape, sep=":")
        return y * 2

    brks = check_breaks(f, lambda: (torch.ones(2),), graphs=2, breaks=1)
    assert brks[0].entry.id == "side_effect_builtin"
    assert capsys.readouterr().out == "y is:torch.Size([2])\n" * 2  # eager, then compiled


def test_a_c_function_without_a_model_breaks():
    def f(x):
        y = x + 1
        crc = zlib.crc32(b"framegraph")
        return y * (crc % 7)

    brks = check_breaks(f, lambda: (torch.ones(2),), graphs=2, breaks=1)
    assert brks[0].entry.id == "unsupported_call" and "crc32" in brks[0].context


def test_explicit_graph_break():
    def f(x):
        y = x.sin()
        framegraph.graph_break()
        return y.cos()

    brks = check_breaks(f, lambda: (torch.ones(2),), graphs=2, breaks=1)
    assert brks[0].entry.id == "explicit_graph_break"
    assert framegraph.graph_break() is None


def test_a_disabled_function_breaks_and_a_compiled_one_is_inlined():
    inner = framegraph.compile(lambda t: t * 3, backend="eager")

    def f(x):
        y = untraced(x + 1)
        return inner(y) + 1

    brks = check_breaks(f, lambda: (torch.ones(2),), graphs=2, breaks=1)
    assert brks[0].entry.id == "disabled_function"


@pytest.mark.expect_fallback("unsupported_opcode")
def test_an_opcode_that_is_not_modelled_runs_the_frame_unmodified(caplog):
    def f(x):
        match x:
            case torch.Tensor():  # MATCH_CLASS
                return x + 1

    result, cnt, brks, errors = run_counted(f, torch.ones(2))
    assert_same(result, f(torch.ones(2)))
    assert (cnt.frame_count, brks) == (0, []) and "MATCH_CLASS" in str(errors[0])
    framegraph.reset()
    with pytest.raises(framegraph.Unsupported, match="MATCH_CLASS"):
        framegraph.compile(f, backend="eager", fullgraph=True)(torch.ones(2))


# ---- situations
def test_break_in_a_loop():
    def f(x):
        for i in range(3):
            x = x + i
            print(i)
        return x * 2

    check_breaks(f, lambda: (torch.ones(2),), graphs=4, breaks=3, calls=2)


def test_break_in_a_loop_over_enumerate_and_zip():
    def f(xs, ys):
        total = xs[0] * 0
        for i, (a, b) in enumerate(zip(xs, ys)):
            total = total + a * b + i
            framegraph.graph_break()
        return total

    check_breaks(f, lambda: ([torch.ones(2), torch.ones(2) * 2], [torch.ones(2), torch.ones(2)]),
                 graphs=2, breaks=2)


@pytest.mark.parametrize("mode", [True, False])
def test_break_inside_no_grad_restores_grad_mode_on_both_sides(mode):
    def f(x):
        y = x * 2
        with torch.no_grad():
            z = y + 1
            framegraph.graph_break()
            w = z * 3
            inside = torch.is_grad_enabled()
        return w + y, inside, torch.is_grad_enabled()

    with torch.set_grad_enabled(mode):
        check_breaks(f, lambda: (torch.ones(2, requires_grad=True),), graphs=2, breaks=1, calls=2)
        assert torch.is_grad_enabled() is mode


def test_an_exception_at_the_break_inside_no_grad_restores_grad_mode(framegraph_trace):
    @framegraph.disable
    def fail(t):
        raise ValueError("no")

    def f(x):
        with torch.no_grad():
            y = fail(x)
        return y

    with pytest.raises(ValueError, match="no"):
        framegraph.compile(f, backend="eager")(torch.ones(2))
    assert torch.is_grad_enabled()
    assert (framegraph_trace.frames, framegraph_trace.graphs) == (1, 0)  # the break at fail(x) raises


@pytest.mark.parametrize("value", [1.0, -1.0])
def test_break_in_try_finally_and_try_except(value):
    @framegraph.disable
    def risky(t):
        if t.sum() > 0:
            raise ValueError("positive")
        return t

    def f(x, log):
        try:
            try:
                y = risky(x + 1)
            except ValueError:
                y = x * 10
        finally:
            log.append("finally")
        return y + 1

    # raising: the handler's resume function runs unmodified (it starts with PUSH_EXC_INFO)
    check_breaks(f, lambda: (torch.full((2,), value), []), graphs=1 if value > 0 else 2, breaks=1)


def test_break_inside_an_inlined_function_happens_at_the_call_site():
    def helper(t):
        u = t.sin()
        print("helper")
        return u.cos()

    def f(x):
        a = x + 1
        b = helper(a)
        return b * 2

    brks = check_breaks(f, lambda: (torch.ones(2),), graphs=4, breaks=2)
    outer, inner = brks
    line = f.__code__.co_firstlineno
    assert outer.user_stack[0] == f"{__file__}:{line + 2} in f"
    assert outer.user_stack[1].endswith(f":{helper.__code__.co_firstlineno + 2} in helper")
    assert inner.user_stack == outer.user_stack[1:]


def test_values_below_the_call_and_nulls_reach_the_resume_function():
    def f(x):
        z = x + 1
        return torch.cat([z, untraced(x * 2), z])

    check_breaks(f, lambda: (torch.ones(2),), graphs=2, breaks=1)


def test_keyword_and_star_calls_at_a_break():
    def f(x):
        parts = [x.shape, "b"]
        print(*parts, sep="|")
        return untraced(x=x + 1) * 2

    check_breaks(f, lambda: (torch.ones(2),), graphs=2, breaks=2)


def test_identity_of_objects_made_in_the_trace_survives_a_break():
    def f(x):
        lst = [x]
        d = {"a": lst, "b": lst}
        framegraph.graph_break()
        lst.append(x + 1)
        return d["a"] is d["b"], len(d["b"]), d["a"][1]

    check_breaks(f, lambda: (torch.ones(2),), graphs=1, breaks=1)


def test_five_breaks():
    def f(x):
        for _ in range(5):
            x = x.sin()
            framegraph.graph_break()
        return x

    check_breaks(f, lambda: (torch.ones(2),), graphs=5, breaks=5, calls=2)


def test_closures_survive_a_break():
    k = torch.ones(2) * 3

    def f(x):
        y = x * k
        framegraph.graph_break()
        return y + k

    check_breaks(f, lambda: (torch.ones(2),), graphs=2, breaks=1)


def test_resume_functions_are_cached_per_site(framegraph_trace):
    code = g.__code__
    framegraph.compile(g, backend="eager")(torch.ones(2))
    framegraph.reset()
    framegraph.compile(g, backend="eager")(torch.ones(2))
    assert len(resume._cache[code]) == 2  # one per branch, reused by the second trace
    assert framegraph_trace.graphs == 4


def test_zero_argument_super_after_a_break():
    class Base(torch.nn.Module):
        def forward(self, x):
            return x * 2

    class Child(Base):
        def forward(self, x):
            y = x + 1
            framegraph.graph_break()
            return super().forward(y) + 1

    check_breaks(Child(), lambda: (torch.ones(2),), graphs=2, breaks=1)


class _Logger:
    pass


@__import__("functools").lru_cache(None)
def _warn_once(logger, message):  # transformers' logger.warning_once
    return None


_Logger.warn_once = _warn_once


def test_a_method_of_a_c_callable_breaks_at_its_call():
    def f(x, logger):
        y = x + 1
        logger.warn_once("hi")  # binds like a function; the cache decides the call: it breaks
        return y * 2

    # f's graph up to the CALL of the lru_cache-wrapped method; the resume function has y * 2
    logger = _Logger()
    brks = check_breaks(f, lambda: (torch.ones(2), logger), graphs=2, breaks=1)
    assert [b.instruction.opname for b in brks] == ["CALL"]
    assert "lru_cache" in brks[0].context
