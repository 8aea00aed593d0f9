"""Unwinding a raised exception to its handler, as 3.11's exception table says.

``raise`` in traced code raises ``TracedException`` out of the handler that
ran it. ``unwind(tx, inst, error)`` is what CPython's ``exception_unwind``
does for that instruction in that frame: look up the instruction's
exception-table entry; without one the exception leaves the frame (an
inlined call re-raises it at its caller's CALL; the root frame ends the trace
with the ``exception`` break, so the frame raises for real in CPython); with
one, pop the stack to the entry's depth, push the offset of the raising
instruction when the entry asks for ``lasti``, push the exception and jump to
the handler. The handler's own opcodes (PUSH_EXC_INFO, CHECK_EXC_MATCH,
POP_EXCEPT, RERAISE) are in ``handlers/with_exc.py``.
"""
from ..graph_breaks import unsupported
from ..variables.constant import ConstantVariable
from ..variables.exceptions import TracedException


def unwind(tx, inst, error: TracedException):
    entry = inst.exn_entry
    if entry is None:
        if tx.parent is None:
            unsupported("exception", f"raise {error.value.cls.__name__} escapes the compiled frame")
        raise error
    del tx.stack[entry.depth:]
    if entry.lasti:
        tx.push(ConstantVariable(inst.offset))
    tx.push(error.value)
    tx.ip = tx.index_of[id(entry.target)]
    tx._expected_depth = None  # the debug stack check restarts from the handler's depth
