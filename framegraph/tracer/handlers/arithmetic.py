"""Operators: BINARY_OP, comparisons, identity, membership and unary ops.

The operator semantics (tensor -> graph node, constants -> folded now,
containers and user classes -> their slots) live in ``variables/ops.py``;
the handlers only move operands.
"""
from ... import pyver
from ...variables.core.constant import ConstantVariable
from ...variables.containers.ranges import SliceVariable
from ...variables.tensors.tensor import TensorVariable
from ...variables.core.ops import NB_OPS, UNARY_OPS, binary_op, compare, contains_op, is_op, unary_op
from ..registry import family_member, handler


@handler("BINARY_OP")
def BINARY_OP(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-BINARY_OP
    # (lhs rhs -- result)   the argument indexes dis._nb_ops (+, -, +=, ...)
    lhs, rhs = tx.popn(2)
    tx.push(binary_op(tx, NB_OPS[inst.arg], lhs, rhs))


@handler("BINARY_SUBSCR")
def BINARY_SUBSCR(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-BINARY_SUBSCR
    # (container key -- container[key])
    container, key = tx.popn(2)
    tx.push(container.getitem(tx, key))


@handler("BINARY_SLICE", since=(3, 12))
def BINARY_SLICE(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-BINARY_SLICE
    # (container start end -- container[start:end])
    container, start, end = tx.popn(3)
    tx.push(container.getitem(tx, SliceVariable([start, end, ConstantVariable(None)])))


@handler("STORE_SLICE", since=(3, 12))
def STORE_SLICE(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-STORE_SLICE
    # (value container start end -- )   container[start:end] = value
    value, container, start, end = tx.popn(4)
    container.setitem(tx, SliceVariable([start, end, ConstantVariable(None)]), value)


@handler("COMPARE_OP")
def COMPARE_OP(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-COMPARE_OP
    # (lhs rhs -- result)   argval is one of dis.cmp_op; 3.13's bit 16: bool(result)
    lhs, rhs = tx.popn(2)
    result = compare(tx, inst.argval, lhs, rhs)
    if pyver.compare_to_bool(inst.arg or 0) and not isinstance(result, TensorVariable):
        result = ConstantVariable(result.truth(tx))  # a tensor: see TO_BOOL
    tx.push(result)


@handler("IS_OP")
def IS_OP(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-IS_OP
    # (lhs rhs -- bool)   `is`, or `is not` when the argument is 1
    lhs, rhs = tx.popn(2)
    tx.push(ConstantVariable(is_op(tx, lhs, rhs) != bool(inst.arg)))


@handler("CONTAINS_OP")
def CONTAINS_OP(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-CONTAINS_OP
    # (item container -- bool)   `in`, or `not in` when the argument is 1
    item, container = tx.popn(2)
    tx.push(ConstantVariable(contains_op(tx, item, container) != bool(inst.arg)))


def unary(opname, until=None):
    """UNARY_NEGATIVE / UNARY_POSITIVE (3.11) / UNARY_INVERT: (value -- op(value))."""

    def fn(tx, inst):
        tx.push(unary_op(tx, UNARY_OPS[opname], tx.pop()))

    return family_member(opname, fn, "(value -- op(value))", until=until)


for _name in UNARY_OPS:  # 3.12 spells +x CALL_INTRINSIC_1 INTRINSIC_UNARY_POSITIVE
    unary(_name, until=(3, 11) if _name == "UNARY_POSITIVE" else None)


@handler("UNARY_NOT")
def UNARY_NOT(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-UNARY_NOT
    # (value -- not value)
    tx.push(ConstantVariable(not tx.pop().truth(tx)))

