"""Inlining: a call to a user function is traced into the caller's graph.

``inline_call(parent, fn_var, args, kwargs)`` binds the arguments (defaults,
``*args``, ``**kwargs``), gives the callee its closure cells, runs a nested
translator over the same OutputGraph and returns the callee's return value
tracker. No frame boundary survives in the graph: three levels of helpers
make one flat graph.

Generator functions (3.11 compiles generator expressions to them) are run
to completion eagerly by ``GeneratorTranslator``: every YIELD_VALUE appends
to a list and resumes with None, and the call returns an iterator over the
yielded trackers. That is exact for generators that are only iterated
(``sum(x for x in xs)``, ``tuple(gen)``), which is what compiled code does.
Where running early would be visible the call is ``Unsupported`` (the frame
breaks there): a body with side effects (mutation of an object, a global or
a closure cell), more than ``MAX_YIELDS`` values (an endless generator), a
body that raises (CPython raises at the ``next()`` that reaches it), and a
generator object that outlives the graph (``send``, a graph break with it
in a local, storing or returning it).
"""
import inspect

from ..graph_breaks import unsupported
from ..side_effects import changes
from ..variables.exceptions import TracedException
from ..variables.iterators import ListIteratorVariable
from .translator import TranslatorBase

MAX_INLINE_DEPTH = 32
_ASYNC = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


class InliningTranslator(TranslatorBase):
    """Runs one inlined call; RETURN_VALUE ends it with ``return_value`` set."""

    is_generator = False


class GeneratorTranslator(InliningTranslator):
    """Runs a generator body to the end, collecting what it yields."""

    is_generator = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.yielded = []


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
    se = getattr(parent.output, "side_effects", None)
    mutations = se.mutations if se is not None else 0
    try:
        tx.run()
    except TracedException as error:
        if generator:  # CPython raises it later, at the next() that reaches it, not at the call
            unsupported("generator", f"the generator {code.co_name} raises {error.value.cls.__name__}")
        raise
    if generator:
        if se is not None and se.mutations != mutations:
            # run to the end now, its side effects would happen before (or
            # without) the consumer asking for the values: wrong answers
            unsupported("generator", f"the generator {code.co_name} has side effects")
        it = ListIteratorVariable(tx.yielded, from_generator=True)
        # the values were computed now: if the consumer changes outside state
        # before it has them all, the generator would have seen the change
        it.mutations_seen = changes(parent)
        return it
    return tx.return_value
