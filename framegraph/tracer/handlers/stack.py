"""Stack manipulation and no-op instructions.

https://docs.python.org/3.11/library/dis.html#opcode-NOP and neighbours.
"""
from ...variables.core.base import NULL
from ..registry import family_member, handler, unsupported_opcode


def nop(opname, since=None, until=None):
    """A handler that does nothing (the instruction has no effect on the trace)."""

    def fn(tx, inst):
        pass

    return family_member(opname, fn, "( -- )", since, until)


# ( -- ): no effect on the symbolic state. PRECALL (3.11) only prepares CALL;
# EXTENDED_ARG and CACHE never reach the tracer (decode folds them away).
for _name in ("NOP", "RESUME", "EXTENDED_ARG", "CACHE"):
    nop(_name)
nop("PRECALL", until=(3, 11))


for _name in ("ENTER_EXECUTOR", "EXIT_INIT_CHECK"):  # never in co_code: tier-2 and __init__ shims
    unsupported_opcode(_name, why="not in user functions' co_code", since=(3, 13))


@handler("POP_TOP")
def POP_TOP(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-POP_TOP
    # (value -- )
    tx.pop()


@handler("PUSH_NULL")
def PUSH_NULL(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-PUSH_NULL
    # ( -- NULL)
    tx.push(NULL)


@handler("COPY")
def COPY(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-COPY
    # (item_i ... -- item_i ... item_i)
    tx.push(tx.peek(inst.arg))


@handler("SWAP")
def SWAP(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-SWAP
    # (item_i ... top -- top ... item_i)
    i = inst.arg
    tx.stack[-1], tx.stack[-i] = tx.stack[-i], tx.stack[-1]
