"""The opcode -> handler table, which checks itself as it is filled.

Handlers live in ``tracer/handlers/<family>.py`` and register with
``@handler("NAME")``, or ``@handler("NAME", since=(3, 12))`` for an opcode
of some Python versions only (Lightning Thunder's interpreter registers
handlers with version ranges the same way). Registration asserts that the opcode exists in the
running Python, that it is registered once, and that the function is named
after the opcode (so a stack trace names the instruction). Opcodes the tracer
does not model are registered with ``unsupported_opcode(NAME, entry)``: a
handler that raises that graph-break catalogue entry. ``check_complete``
(run by a test on each Python) asserts that every opcode of the running
Python (``pyver.OPNAMES``) has one or the other.

A handler is ``fn(tx, inst) -> None``: it pops its inputs from ``tx.stack``,
pushes its outputs, and may move ``tx.ip`` (jumps).
"""
from typing import Callable, Dict

from .. import pyver
from ..errors import CATALOGUE, unsupported

HANDLERS: Dict[str, Callable] = {}
UNSUPPORTED: Dict[str, str] = {}


def serves(since=None, until=None) -> bool:
    """Whether the running Python is in ``[since, until]`` (minor versions,
    ``(3, 12)``; None is open-ended)."""
    return (since is None or pyver.VERSION >= since) and (until is None or pyver.VERSION <= until)


def handler(opname: str, since=None, until=None):
    """Register the decorated function as the handler of ``opname`` on the
    Pythons from ``since`` to ``until`` (inclusive; None: open-ended). Outside
    that range the function is left unregistered, and the opcode need not
    exist there."""

    def register(fn):
        in_range = serves(since, until)
        assert not in_range or opname in pyver.OPNAMES, f"{opname} is not an opcode of this Python"
        assert fn.__name__ == opname, f"handler {fn.__name__} must be named {opname}"
        if not in_range:
            return fn
        assert opname not in HANDLERS, f"{opname} registered twice"
        HANDLERS[opname] = fn
        return fn

    return register


def family_member(opname: str, fn: Callable, contract: str, since=None, until=None) -> Callable:
    """Register ``fn`` made by a family factory: named after ``opname``, documented
    with the family's ``(inputs -- outputs)`` contract."""
    fn.__name__ = fn.__qualname__ = opname
    fn.__doc__ = f"https://docs.python.org/{pyver.VERSION_NAME}/library/dis.html#opcode-{opname}\n{contract}"
    return handler(opname, since, until)(fn)


def unsupported_opcode(opname: str, entry: str = "unsupported_opcode", why: str = "",
                       since=None, until=None):
    """Register ``opname`` as known but not modelled: it raises catalogue ``entry``."""
    assert entry in CATALOGUE, f"unknown graph-break entry {entry}"

    def refuse(tx, inst):
        unsupported(entry, f"{opname}" + (f": {why}" if why else ""))

    family_member(opname, refuse, f"( -- )   not modelled: raises {entry}", since, until)
    if serves(since, until):
        UNSUPPORTED[opname] = entry


def dispatch_table():
    """A list indexed by opcode number (None where no handler exists)."""
    table = [None] * 256
    for name, fn in HANDLERS.items():
        table[pyver.opcode_of(name)] = fn
    return table


def check_complete():
    """The opcodes of this Python with neither a handler nor an unsupported entry."""
    return sorted(pyver.OPNAMES - set(HANDLERS))
