"""Jumps, loops and return.

Conditional jumps need a condition known at trace time: a constant, a
container's length, ``x is None``... A tensor condition is data-dependent
branching (the brief's example: ``if x.sum() > 0``), catalogued
``data_dependent_branch``. Loops are unrolled: JUMP_BACKWARD simply jumps,
and FOR_ITER advances the iterator tracker.
"""
from ... import pyver
from ...variables.core.base import NULL
from ...variables.core.constant import ConstantVariable, wrap_constant
from ...variables.tensors.tensor import TensorVariable
from ..registry import family_member, handler


def jump(opname):
    """JUMP_FORWARD / JUMP_BACKWARD / JUMP_BACKWARD_NO_INTERRUPT: ( -- )."""

    def fn(tx, inst):
        tx.jump(inst)

    return family_member(opname, fn, "( -- )   jumps to the target")


for _name in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"):
    jump(_name)


def _is_none(tx, value):
    return value.is_python_constant() and value.as_python_constant() is None


# opname -> (predicate on the popped value, jump when it returns this)
_POP_JUMPS = {
    "TRUE": (lambda tx, v: v.truth(tx), True),
    "FALSE": (lambda tx, v: v.truth(tx), False),
    "NONE": (_is_none, True),
    "NOT_NONE": (_is_none, False),
}


def pop_jump(opname, predicate, when, since=None, until=None):
    """POP_JUMP_{FORWARD,BACKWARD}_IF_{TRUE,FALSE,NONE,NOT_NONE} (3.11),
    POP_JUMP_IF_{TRUE,FALSE,NONE,NOT_NONE} (3.12): (cond -- )."""

    def fn(tx, inst):
        if predicate(tx, tx.pop()) is when:
            tx.jump(inst)

    return family_member(opname, fn, "(cond -- )   jumps when the predicate of cond holds",
                         since, until)


for _cond, (_predicate, _when) in _POP_JUMPS.items():
    for _direction in ("FORWARD", "BACKWARD"):
        pop_jump(f"POP_JUMP_{_direction}_IF_{_cond}", _predicate, _when, until=(3, 11))
    pop_jump(f"POP_JUMP_IF_{_cond}", _predicate, _when, since=(3, 12))


def jump_or_pop(opname, when):
    """JUMP_IF_TRUE_OR_POP / JUMP_IF_FALSE_OR_POP: (cond -- cond) if jumping, else (cond -- )."""

    def fn(tx, inst):
        if tx.peek().truth(tx) is when:
            tx.jump(inst)
        else:
            tx.pop()

    return family_member(opname, fn, "(cond -- cond) when jumping, (cond -- ) otherwise",
                         until=(3, 11))


jump_or_pop("JUMP_IF_TRUE_OR_POP", True)  # 3.12 compiles `or`/`and` with COPY and POP_JUMP_IF
jump_or_pop("JUMP_IF_FALSE_OR_POP", False)


@handler("GET_ITER")
def GET_ITER(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-GET_ITER
    # (iterable -- iter(iterable))
    tx.push(tx.pop().iter(tx))


@handler("FOR_ITER")
def FOR_ITER(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-FOR_ITER
    # (iterator -- iterator next_item), or when exhausted: 3.11 (iterator -- )
    # and jump; 3.12 jumps to its END_FOR, which CPython skips with the
    # iterator popped. The tracer runs that END_FOR instead, on
    # (iterator NULL), which is the stack dis.stack_effect describes.
    item = tx.peek().next(tx)
    if item is None:
        if pyver.FOR_ITER_EXIT:
            tx.push(NULL)
        else:
            tx.pop()
        tx.jump(inst)
    else:
        tx.push(item)


def end_for(pops, since, until):
    """END_FOR, reached from an exhausted FOR_ITER (see there): 3.12 pops
    (iterator NULL); 3.13 pops the NULL and a POP_TOP after it the iterator."""

    def fn(tx, inst):
        tx.popn(pops)

    return family_member("END_FOR", fn, f"({' '.join(['iterator', 'NULL'][2 - pops:])} -- )", since, until)


end_for(2, since=(3, 12), until=(3, 12))
end_for(1, since=(3, 13), until=None)


@handler("TO_BOOL", since=(3, 13))
def TO_BOOL(tx, inst):
    # https://docs.python.org/3.13/library/dis.html#opcode-TO_BOOL
    # (value -- bool(value))   before each conditional jump, which needs an exact bool.
    # A tensor stays as it is: the jump then breaks the graph on it like 3.12's,
    # and the jump CPython runs at the break is given its TO_BOOL back (breaks/split.py)
    value = tx.pop()
    tx.push(value if isinstance(value, TensorVariable) else ConstantVariable(value.truth(tx)))


@handler("RETURN_VALUE")
def RETURN_VALUE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-RETURN_VALUE
    # (value -- )   ends this translator; the root then compiles the graph
    tx.return_value = tx.pop()
    tx.done = True


@handler("RETURN_CONST", since=(3, 12))
def RETURN_CONST(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-RETURN_CONST
    # ( -- )   returns co_consts[consti]
    tx.return_value = wrap_constant(inst.argval)
    tx.done = True

