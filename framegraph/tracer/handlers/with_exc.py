"""``with`` blocks, ``raise`` and exception handling.

A ``with`` block's normal path is traced (BEFORE_WITH, then the exit call
that the compiler emits as an ordinary CALL with three Nones). Exception
handlers only run when something raises, which a successful trace never
does, so their opcodes end the trace if reached. ``raise`` (including a
failing ``assert`` on a trace-time value) ends the trace too: the frame then
runs unmodified and raises for real.
"""
from ...graph_breaks import unsupported
from ...variables.ctx_managers import enter_context
from ..registry import handler, unsupported_opcode


@handler("BEFORE_WITH")
def BEFORE_WITH(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-BEFORE_WITH
    # (ctx -- bound_exit enter_result)
    exit_fn, entered = enter_context(tx, tx.pop())
    tx.push(exit_fn)
    tx.push(entered)


@handler("RAISE_VARARGS")
def RAISE_VARARGS(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-RAISE_VARARGS
    # (exc? cause? -- )
    values = tx.popn(inst.arg)
    unsupported("exception", f"raise {values[0] if values else ''}".strip())


for _name in ("PUSH_EXC_INFO", "POP_EXCEPT", "RERAISE", "CHECK_EXC_MATCH", "WITH_EXCEPT_START",
              "PREP_RERAISE_STAR", "CHECK_EG_MATCH"):
    unsupported_opcode(_name, "exception", "exception handlers are not traced")
unsupported_opcode("BEFORE_ASYNC_WITH", "generator", "async with")
