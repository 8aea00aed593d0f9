"""The handler table: complete for this Python, self-checking, stack effects verified."""
import dis

import pytest
import torch

import framegraph
from framegraph import pyver
from framegraph.config import config
from framegraph.errors import CATALOGUE, InternalError, Unsupported
from framegraph.tracer import registry, translator
from framegraph.tracer.registry import HANDLERS, UNSUPPORTED, handler
from helpers import CountingBackend, check


def test_every_opcode_has_a_handler_or_a_catalogued_refusal():
    assert registry.check_complete() == []
    for opname in pyver.OPNAMES:  # every opcode co_code can hold on this Python
        assert HANDLERS[opname].__name__ == opname
    for opname, entry in UNSUPPORTED.items():
        assert entry in CATALOGUE, opname


def test_registration_checks_itself():
    with pytest.raises(AssertionError, match="not an opcode"):
        handler("NOT_AN_OPCODE")(lambda tx, inst: None)
    with pytest.raises(AssertionError, match="registered twice"):

        @handler("NOP")
        def NOP(tx, inst):
            pass

    with pytest.raises(AssertionError, match="must be named"):
        handler("NOP")(lambda tx, inst: None)


def test_handlers_document_their_stack_contract():
    for opname, fn in HANDLERS.items():
        if opname in UNSUPPORTED or fn.__module__.endswith("stack"):
            continue
        doc = fn.__doc__ or ""
        source_has_contract = "--" in doc or _comment_has_contract(fn)
        assert source_has_contract, f"{opname} lacks its (inputs -- outputs) comment"


def _comment_has_contract(fn):
    import inspect

    try:
        source = inspect.getsource(fn)
    except OSError:
        return False
    return "--" in source


@pytest.mark.expect_internal_error("InternalError")
def test_debug_mode_catches_a_handler_with_a_wrong_stack_effect():
    def bad_pop_top(tx, inst):
        pass  # forgets to pop

    def f(x):
        x.sum()
        return x + 1

    good = translator.DISPATCH[dis.opmap["POP_TOP"]]
    translator.DISPATCH[dis.opmap["POP_TOP"]] = bad_pop_top
    config.strict = True
    try:
        with pytest.raises(InternalError, match="POP_TOP"):
            framegraph.compile(f, backend=CountingBackend())(torch.randn(2))
    finally:
        config.strict = False
        translator.DISPATCH[dis.opmap["POP_TOP"]] = good


def test_unsupported_opcode_raises_its_catalogue_entry():
    def f(x):
        try:
            return x + undefined_name  # noqa: F821
        except NameError:
            return x

    with pytest.raises(Unsupported) as info:
        framegraph.compile(f, backend=CountingBackend(), fullgraph=True)(torch.randn(2))
    assert info.value.entry is not None and info.value.entry.hint


def test_data_dependent_branch_is_reported_like_the_brief():
    def g(x):
        if x.sum() > 0:
            return x * 2
        return x + 1

    with pytest.raises(Unsupported) as info:
        framegraph.compile(g, backend=CountingBackend(), fullgraph=True)(torch.randn(3))
    assert info.value.entry.title == "Data-dependent branching"
    assert "torch.cond" in info.value.entry.hint
    assert "attempted to jump with TensorVariable()" in info.value.context


def test_unsupported_frame_still_gives_eager_results_without_fullgraph(framegraph_trace):
    def g(x):
        if x.sum() > 0:
            return x * 2
        return x + 1

    fn = framegraph.compile(g, backend=CountingBackend())
    for x in (torch.ones(3), -torch.ones(3)):
        torch.testing.assert_close(fn(x), g(x))
    assert framegraph_trace.graphs == 3  # a break at the branch: g before it, and each branch


def test_item_is_data_dependent():
    def f(x):
        return x * x.sum().item()

    with pytest.raises(Unsupported, match="data"):
        framegraph.compile(f, backend=CountingBackend(), fullgraph=True)(torch.randn(3))


def test_is_compiling_is_true_while_tracing_only():
    def f(x):
        if torch.compiler.is_compiling() and framegraph.is_compiling():
            return x + 1
        return x - 1

    cnt = CountingBackend()
    out = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.zeros(2))
    torch.testing.assert_close(out, torch.ones(2))
    assert cnt.frame_count == 1
    torch.testing.assert_close(f(torch.zeros(2)), -torch.ones(2))


def test_unpacking_the_wrong_number_of_values_is_cpythons_value_error():
    def two(v):
        a, b = v

    def four(v):
        a, b, c, d = v

    def starred(v):
        a, *b, c = v

    def f(x, values):
        out = []
        for unpack, arg in ((two, values), (four, values), (starred, values[:1])):
            try:
                unpack(arg)
            except ValueError as e:
                out.append(str(e))
        a = list(range(5))
        for where in (slice(0, 3), slice(0, 3, 2)):
            try:
                a[where] = 1
            except TypeError as e:
                out.append(str(e))
        return x + 1, out

    check(f, torch.ones(2), [1, 2, 3])
