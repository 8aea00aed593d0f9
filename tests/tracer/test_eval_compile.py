"""``eval()`` of an expression known at trace time, and ``compile()``.

CPython's own tests check an object's repr by evaluating it back
(``eval(repr(od)) == od``) and compare operators by building the expression
(``eval('a %s b' % op)``); the expression sees the frame's locals, then its
globals, then the builtins.
"""
import collections

import torch

from helpers import same_as_eager

SCALE = 3


def test_eval_sees_locals_then_globals_then_builtins(framegraph_trace):
    def fn(x):
        small, big = {1, 2}, {1, 2, 3}
        checks = []
        for op in ("<", "<=", "==", ">"):  # (a comprehension's eval would see its own locals)
            checks.append(eval(f"small {op} big"))
        OrderedDict = collections.OrderedDict  # the name its repr uses, a local as in test_ordered_dict
        od = OrderedDict([("c", 1), ("b", 2)])
        return x * eval("SCALE + len(small)"), checks, eval(repr(od)) == od, eval("  abs(-2)")

    framegraph_trace.assert_compiles(fn, torch.ones(2))


def test_eval_reads_a_closure_cell_of_the_frame(framegraph_trace):
    def fn(x):
        factor = 4

        def scaled():
            return eval("x * factor") if factor else x

        return scaled()

    framegraph_trace.assert_compiles(fn, torch.ones(2))


def test_compile_gives_the_code_or_cpythons_syntax_error(framegraph_trace):
    def fn(x):
        code = compile("1 + 2", "<expr>", "eval")
        try:
            compile("None = 1", "<stmt>", "single")
        except SyntaxError as error:
            return x + 1, code.co_filename, error.msg
        return x, code.co_filename, None

    framegraph_trace.assert_compiles(fn, torch.ones(2))


def test_eval_of_a_store_is_left_to_cpython(framegraph_trace):
    def fn(x):
        # := writes eval's locals mapping, not the frame: CPython runs it at a graph break
        return x + eval("(y := 3)")

    same_as_eager(fn, torch.ones(2))
    assert framegraph_trace.graphs == 1  # x + ..., in the resume function
