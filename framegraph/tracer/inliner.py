"""Inlining: a call to a user function is traced into the caller's graph.

``inline_call(parent, fn_var, args, kwargs)`` binds the arguments (defaults,
``*args``, ``**kwargs``), gives the callee its closure cells, runs a nested
translator over the same OutputGraph and returns the callee's return value
tracker. No frame boundary survives in the graph: three levels of helpers
make one flat graph.

Generator functions (3.11 compiles generator expressions to them) are not
run at the call: the call binds the arguments and returns a
``GeneratorVariable`` over a paused ``GeneratorTranslator``, which runs the
body one ``yield`` at a time as the consumer asks (``variables/generators.py``),
so the body's side effects and reads happen when CPython's would.
"""
import inspect

from ..graph_breaks import unsupported
from ..variables.generators import GeneratorVariable
from .translator import TranslatorBase

MAX_INLINE_DEPTH = 32
_ASYNC = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


class InliningTranslator(TranslatorBase):
    """Runs one inlined call; RETURN_VALUE ends it with ``return_value`` set."""

    is_generator = False


class GeneratorTranslator(InliningTranslator):
    """A generator body, run up to each YIELD_VALUE (``paused``) and resumed by its
    ``GeneratorVariable``; RETURN_VALUE finishes it."""

    is_generator = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.yielded_value = None      # what the paused YIELD_VALUE yielded
        self.yield_instruction = None  # where it is paused (throw() raises there)
        self.delegating = False        # paused inside ``yield from`` (a SEND loop)


def inline_call(parent, fn_var, args, kwargs):
    code = fn_var.get_code()
    if code.co_flags & _ASYNC:
        unsupported("generator", f"calling the coroutine function {code.co_name}")
    if parent.depth >= MAX_INLINE_DEPTH:
        unsupported("inline_limit", f"{code.co_name} at depth {parent.depth}")
    symbolic_locals = fn_var.bind(parent, args, kwargs)
    for name, cell in zip(code.co_freevars, fn_var.closure_cells(parent)):
        symbolic_locals[name] = cell
    generator = bool(code.co_flags & inspect.CO_GENERATOR)
    kind = GeneratorTranslator if generator else InliningTranslator
    tx = kind(parent.output, code, fn_var.get_globals(), symbolic_locals, parent=parent, fn_var=fn_var)
    if generator:  # nothing of the body runs before the first next()
        return GeneratorVariable(tx)
    tx.run()
    return tx.return_value
