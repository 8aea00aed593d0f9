"""The opcode -> handler table, which checks itself as it is filled.

Handlers live in ``tracer/handlers/<family>.py`` and register with
``@handler("NAME")``. Registration asserts that the opcode exists in the
running Python, that it is registered once, and that the function is named
after the opcode (so a stack trace names the instruction). Opcodes the tracer
does not model are registered with ``unsupported_opcode(NAME, entry)``: a
handler that raises that graph-break catalogue entry. ``check_complete``
(run by a test) asserts that every opcode in ``dis.opmap`` has one or the
other.

A handler is ``fn(tx, inst) -> None``: it pops its inputs from ``tx.stack``,
pushes its outputs, and may move ``tx.ip`` (jumps).
"""
import dis
from typing import Callable, Dict

from ..graph_breaks import CATALOGUE, unsupported

HANDLERS: Dict[str, Callable] = {}
UNSUPPORTED: Dict[str, str] = {}


def handler(opname: str):
    """Register the decorated function as the handler of ``opname``."""

    def register(fn):
        assert opname in dis.opmap, f"{opname} is not an opcode of this Python"
        assert fn.__name__ == opname, f"handler {fn.__name__} must be named {opname}"
        assert opname not in HANDLERS, f"{opname} registered twice"
        HANDLERS[opname] = fn
        return fn

    return register


def family_member(opname: str, fn: Callable, contract: str) -> Callable:
    """Register ``fn`` made by a family factory: named after ``opname``, documented
    with the family's ``(inputs -- outputs)`` contract."""
    fn.__name__ = fn.__qualname__ = opname
    fn.__doc__ = f"https://docs.python.org/3.11/library/dis.html#opcode-{opname}\n{contract}"
    return handler(opname)(fn)


def unsupported_opcode(opname: str, entry: str = "unsupported_opcode", why: str = ""):
    """Register ``opname`` as known but not modelled: it raises catalogue ``entry``."""
    assert entry in CATALOGUE, f"unknown graph-break entry {entry}"

    def refuse(tx, inst):
        unsupported(entry, f"{opname}" + (f": {why}" if why else ""))

    family_member(opname, refuse, f"( -- )   not modelled: raises {entry}")
    UNSUPPORTED[opname] = entry


def dispatch_table():
    """A list indexed by opcode number (None where no handler exists)."""
    table = [None] * 256
    for name, fn in HANDLERS.items():
        table[dis.opmap[name]] = fn
    return table


def check_complete():
    """The opcodes of this Python with neither a handler nor an unsupported entry."""
    return sorted(set(dis.opmap) - set(HANDLERS))
