"""Attribute access: LOAD_ATTR, LOAD_METHOD, STORE_ATTR, DELETE_ATTR.

LOAD_METHOD pushes ``NULL, bound_method`` (the 3.11 shape of a call to a
plain callable), so CALL never needs to know whether the method was bound
by the tracker or by the tracer.
"""
from ...graph_breaks import unsupported
from ...variables.base import NULL
from ..registry import handler


@handler("LOAD_ATTR")
def LOAD_ATTR(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_ATTR
    # (obj -- obj.name)
    tx.push(tx.pop().getattr(tx, inst.argval))


@handler("LOAD_METHOD")
def LOAD_METHOD(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_METHOD
    # (obj -- NULL obj.name)   CPython may push (method, obj); both call the same
    obj = tx.pop()
    tx.push(NULL)
    tx.push(obj.getattr(tx, inst.argval))


@handler("STORE_ATTR")
def STORE_ATTR(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-STORE_ATTR
    # (value obj -- )
    obj = tx.pop()
    value = tx.pop()
    obj.setattr(tx, inst.argval, value)


@handler("DELETE_ATTR")
def DELETE_ATTR(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-DELETE_ATTR
    # (obj -- )
    obj = tx.pop()
    attrs = getattr(obj, "attrs", None)
    if attrs is None or not obj.mutable or inst.argval not in attrs:
        unsupported("side_effect", f"del {obj}.{inst.argval}")
    del attrs[inst.argval]
