"""Attribute access: LOAD_ATTR, LOAD_METHOD, LOAD_SUPER_ATTR, STORE_ATTR, DELETE_ATTR.

A method load (3.11's LOAD_METHOD, 3.12's LOAD_ATTR and LOAD_SUPER_ATTR with
the method bit) pushes ``NULL, bound_method`` (the shape of a call to a plain
callable), so CALL never needs to know whether the method was bound by the
tracker or by the tracer.
"""
from ... import pyver
from ...variables.core.base import NULL
from ...variables.callables.builtins import delete_attribute
from ..registry import handler


@handler("LOAD_ATTR")
def LOAD_ATTR(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-LOAD_ATTR
    # (obj -- obj.name), or with the method bit: 3.12 (obj -- NULL obj.name), 3.13 (obj -- obj.name NULL)
    obj = tx.pop()
    tx.push_callable(obj.getattr(tx, inst.argval), pyver.attr_is_method(inst.arg or 0))


@handler("LOAD_SUPER_ATTR", since=(3, 12))
def LOAD_SUPER_ATTR(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-LOAD_SUPER_ATTR
    # (super class self -- super(class, self).name), or with the method bit
    # (-- NULL super(class, self).name); bit 2 only says whether the source
    # spelled the two arguments, which the compiler passes either way
    global_super, cls, self = tx.popn(3)
    bound = global_super.call(tx, [cls, self], {})
    tx.push_callable(bound.getattr(tx, inst.argval), bool(inst.arg & 1))


@handler("LOAD_METHOD", until=(3, 11))
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
    delete_attribute(tx, tx.pop(), inst.argval)
