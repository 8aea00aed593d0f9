"""Generators: the bodies of generators made in the trace, run lazily.

A generator function called from traced code runs in its own translator, one
``yield`` at a time, driven by its ``GeneratorVariable``
(``variables/generators.py``): RETURN_GENERATOR starts the body, YIELD_VALUE
pauses it, ``yield from`` delegates through SEND as CPython 3.11 does. A
generator as the compiled frame itself, ``await`` and async iteration end the
trace.
"""
from ... import pyver
from ...errors import unsupported
from ...variables.core.constant import ConstantVariable
from ...variables.iteration.generators import GeneratorVariable
from ..registry import handler, unsupported_opcode


def _in_generator(tx, what):
    if not getattr(tx, "is_generator", False):
        unsupported("generator", f"{what} in the compiled frame")


@handler("RETURN_GENERATOR")
def RETURN_GENERATOR(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-RETURN_GENERATOR
    # ( -- None)   the body starts at the first next(), whose None is popped next
    if not getattr(tx, "is_generator", False):
        unsupported("generator", "the compiled frame is a generator")
    tx.push(ConstantVariable(None))


@handler("YIELD_VALUE")
def YIELD_VALUE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-YIELD_VALUE
    # (value -- sent)   pauses the body; the resume pushes what was sent
    _in_generator(tx, "yield")
    tx.yielded_value = tx.pop()
    tx.yield_instruction = inst
    tx.delegating = tx.ip >= 2 and tx.instructions[tx.ip - 2].opname == "SEND"
    tx.paused = True


@handler("GET_YIELD_FROM_ITER")
def GET_YIELD_FROM_ITER(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-GET_YIELD_FROM_ITER
    # (iterable -- iterator)   a generator is its own iterator
    _in_generator(tx, "yield from")
    iterable = tx.pop()
    tx.push(iterable if isinstance(iterable, GeneratorVariable) else iterable.iter(tx))


@handler("SEND")
def SEND(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-SEND
    # (receiver value -- receiver result); when it returns, and jump: (-- return value) on 3.11,
    # (-- receiver return value) from 3.12 (END_SEND pops the receiver)
    _in_generator(tx, "send")
    value = tx.pop()
    receiver = tx.peek()
    if isinstance(receiver, GeneratorVariable):
        item = receiver.send(tx, value)
        result = receiver.return_value
    else:
        if not (value.is_python_constant() and value.as_python_constant() is None):
            unsupported("generator", f"send() to {receiver}")
        item, result = receiver.next(tx), None
    if item is None:  # the sub-iterator returned: its value is the value of `yield from`
        if not pyver.SEND_KEEPS_RECEIVER:
            tx.pop()
        tx.push(result if result is not None else ConstantVariable(None))
        tx.jump(inst)
    else:
        tx.push(item)


@handler("END_SEND", since=(3, 12))
def END_SEND(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-END_SEND
    # (receiver value -- value)   after a yield from / await finished
    value = tx.pop()
    tx.pop()
    tx.push(value)


for _name in ("GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "END_ASYNC_FOR"):
    unsupported_opcode(_name, "generator", "yield from / await / async iteration")
unsupported_opcode("ASYNC_GEN_WRAP", "generator", "async generators", until=(3, 11))
