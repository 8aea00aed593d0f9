"""Jumps, loops and return.

Conditional jumps need a condition known at trace time: a constant, a
container's length, ``x is None``... A tensor condition is data-dependent
branching (the brief's example: ``if x.sum() > 0``), catalogued
``data_dependent_branch``. Loops are unrolled: JUMP_BACKWARD simply jumps,
and FOR_ITER advances the iterator tracker.
"""
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


def pop_jump(opname, predicate, when):
    """POP_JUMP_{FORWARD,BACKWARD}_IF_{TRUE,FALSE,NONE,NOT_NONE}: (cond -- )."""

    def fn(tx, inst):
        if predicate(tx, tx.pop()) is when:
            tx.jump(inst)

    return family_member(opname, fn, "(cond -- )   jumps when the predicate of cond holds")


for _direction in ("FORWARD", "BACKWARD"):
    for _cond, (_predicate, _when) in _POP_JUMPS.items():
        pop_jump(f"POP_JUMP_{_direction}_IF_{_cond}", _predicate, _when)


def jump_or_pop(opname, when):
    """JUMP_IF_TRUE_OR_POP / JUMP_IF_FALSE_OR_POP: (cond -- cond) if jumping, else (cond -- )."""

    def fn(tx, inst):
        if tx.peek().truth(tx) is when:
            tx.jump(inst)
        else:
            tx.pop()

    return family_member(opname, fn, "(cond -- cond) when jumping, (cond -- ) otherwise")


jump_or_pop("JUMP_IF_TRUE_OR_POP", True)
jump_or_pop("JUMP_IF_FALSE_OR_POP", False)


@handler("GET_ITER")
def GET_ITER(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-GET_ITER
    # (iterable -- iter(iterable))
    tx.push(tx.pop().iter(tx))


@handler("FOR_ITER")
def FOR_ITER(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-FOR_ITER
    # (iterator -- iterator next_item), or (iterator -- ) and jump when exhausted
    item = tx.peek().next(tx)
    if item is None:
        tx.pop()
        tx.jump(inst)
    else:
        tx.push(item)


@handler("RETURN_VALUE")
def RETURN_VALUE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-RETURN_VALUE
    # (value -- )   ends this translator; the root then compiles the graph
    tx.return_value = tx.pop()
    tx.done = True

