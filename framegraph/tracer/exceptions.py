"""Unwinding a raised exception to its handler, as 3.11's exception table says.

An exception raised in traced code (a ``raise``, or an operation the tracer
ran on trace-time values: ``variables/exceptions.py``) leaves the handler
that ran the instruction as ``TracedException``. ``unwind(tx, inst, error)``
is what CPython's ``exception_unwind`` does for that instruction in that
frame: look up the instruction's exception-table entry; without one the
exception leaves the frame (an inlined call re-raises it at its caller's
CALL; the root frame ends the trace with the ``exception`` break, so CPython
raises it for real); with one, pop the stack to the entry's depth, push the
offset of the raising instruction when the entry asks for ``lasti``, push the
exception and jump to the handler. The handler's own opcodes (PUSH_EXC_INFO,
CHECK_EXC_MATCH, POP_EXCEPT, RERAISE, WITH_EXCEPT_START) are in
``handlers/with_exc.py``. Each frame an exception unwinds through, but for a
re-raise, goes at the head of its traceback (``ExceptionVariable.tb_frames``).

Chaining follows ``_PyErr_SetObject``: a new raise (not RERAISE or a bare
``raise``) sets ``__context__`` to the exception being handled, the innermost
PUSH_EXC_INFO not yet popped in this frame or a caller's, cutting a cycle
through the context chain. With none handled in the trace, the context is
what the compiled frame's caller handles, unknown at trace time.

Where CPython must take over (the exception escapes the compiled frame, or a
graph break happens while an ``except`` block runs), the break goes back to
the root instruction that started it all: ``root_raise``, the raise of the
outermost exception being handled then, or of this one. Running from there in
CPython raises and handles everything for real (``breaks/split.py``).
"""
from ..errors import Unsupported, unsupported
from ..variables.core.constant import ConstantVariable
from ..variables.core.exceptions import UNKNOWN_CONTEXT, TracedException, handled_exception


def unwind(tx, inst, error: TracedException):
    exc = error.value
    if not error.reraise:  # PyTraceBack_Here: a raise, or a call that raised, adds this frame
        exc.tb_frames = [tx] + (exc.tb_frames or [])
    if not error.chained:
        if not error.reraise:
            _chain(tx, exc)
        error.chained = True
    if tx.parent is None and not (error.reraise and exc.root_raise is not None):
        exc.root_raise = tx.exc_stack[0].root_raise if tx.exc_stack else (tx.steps - 1, inst)
    entry = inst.exn_entry
    if entry is None:
        if tx.parent is None:
            try:
                unsupported("exception", f"{exc.cls.__name__} escapes the compiled frame")
            except Unsupported as e:
                e.break_at = exc.root_raise  # CPython raises it again from there
                raise
        error.reraise = False  # in the caller it is raised anew by the CALL
        raise error
    del tx.stack[entry.depth:]
    if entry.lasti:
        tx.push(ConstantVariable(inst.offset))
    tx.push(exc)
    tx.ip = tx.index_of[id(entry.target)]
    tx._expected_depth = None  # the debug stack check restarts from the handler's depth


def _chain(tx, exc):
    handled = handled_exception(tx)
    if handled is None:
        exc.context = UNKNOWN_CONTEXT
        return
    if handled is exc:
        return
    link, seen = handled, {id(handled)}
    while link.context is not None and link.context is not UNKNOWN_CONTEXT:
        if link.context is exc:  # no new reference cycle through the chain
            link.context = None
            break
        link = link.context
        if id(link) in seen:  # a cycle the user made (a.__context__ = c): CPython stops there too
            break
        seen.add(id(link))
    exc.context = handled
