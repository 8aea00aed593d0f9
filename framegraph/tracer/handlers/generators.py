"""Generators: only generator bodies run eagerly by ``GeneratorTranslator``.

A generator expression or generator function called from traced code runs to
completion at once (see ``inliner.py``): RETURN_GENERATOR starts it, each
YIELD_VALUE records a value and resumes with None. Everything else here
(``yield from``, ``await``, async iteration) ends the trace.
"""
from ...graph_breaks import unsupported
from ...variables.constant import ConstantVariable
from ...variables.iterators import ListIteratorVariable
from ..registry import handler, unsupported_opcode

MAX_YIELDS = 1000  # run eagerly, an endless generator must stop somewhere


@handler("RETURN_GENERATOR")
def RETURN_GENERATOR(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-RETURN_GENERATOR
    # ( -- None)   the frame resumes with the first sent value, popped next
    if not getattr(tx, "is_generator", False):
        unsupported("generator", "the compiled frame is a generator")
    tx.push(ConstantVariable(None))


@handler("YIELD_VALUE")
def YIELD_VALUE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-YIELD_VALUE
    # (value -- sent)   sent is None: the consumer only iterates
    if not getattr(tx, "is_generator", False):
        unsupported("generator", "yield in the compiled frame")
    if len(tx.yielded) >= MAX_YIELDS:
        unsupported("generator", f"more than {MAX_YIELDS} values yielded (an endless generator?)")
    tx.yielded.append(tx.pop())
    tx.push(ConstantVariable(None))


@handler("GET_YIELD_FROM_ITER")
def GET_YIELD_FROM_ITER(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-GET_YIELD_FROM_ITER
    # (iterable -- iterator)   eagerly: everything it yields is yielded now
    if not getattr(tx, "is_generator", False):
        unsupported("generator", "yield from in the compiled frame")
    tx.yielded.extend(tx.pop().unpack(tx))
    tx.push(ListIteratorVariable([]))


@handler("SEND")
def SEND(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-SEND
    # (iterator value -- result) and jump: the iterator was drained by GET_YIELD_FROM_ITER
    if not getattr(tx, "is_generator", False):
        unsupported("generator", "send in the compiled frame")
    tx.popn(2)
    tx.push(ConstantVariable(None))
    tx.jump(inst)


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
