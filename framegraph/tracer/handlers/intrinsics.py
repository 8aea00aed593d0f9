"""3.12's CALL_INTRINSIC_1 and CALL_INTRINSIC_2: operations without an opcode.

3.12 folded a few rare 3.11 opcodes (UNARY_POSITIVE, LIST_TO_TUPLE,
IMPORT_STAR, PRINT_EXPR, ASYNC_GEN_WRAP, PREP_RERAISE_STAR...) and the
PEP 695 typing helpers into two opcodes whose oparg picks a function
(``Include/internal/pycore_intrinsics.h``). The ones ordinary functions
use are modelled like the 3.11 opcodes; the rest are catalogued refusals.
"""
from ...errors import unsupported
from ...variables.containers.lists import TupleVariable
from ...variables.core.ops import UNARY_OPS, unary_op
from ..registry import handler

# pycore_intrinsics.h, CALL_INTRINSIC_1's opargs.
_INTRINSIC_1 = ("INVALID", "PRINT", "IMPORT_STAR", "STOPITERATION_ERROR", "ASYNC_GEN_WRAP",
                "UNARY_POSITIVE", "LIST_TO_TUPLE", "TYPEVAR", "PARAMSPEC", "TYPEVARTUPLE",
                "SUBSCRIPT_GENERIC", "TYPEALIAS")
# CALL_INTRINSIC_2's opargs.
_INTRINSIC_2 = ("INVALID", "PREP_RERAISE_STAR", "TYPEVAR_WITH_BOUND", "TYPEVAR_WITH_CONSTRAINTS",
                "SET_FUNCTION_TYPE_PARAMS")

def _stopiteration_error(tx, exc):
    """PEP 479 in a generator's own handler: a StopIteration leaving the body becomes
    ``RuntimeError('generator raised StopIteration')`` from it; anything else is unchanged."""
    from ...variables.core.constant import ConstantVariable
    from ...variables.core.exceptions import ExceptionVariable

    if not getattr(tx, "is_generator", False):
        unsupported("generator", "CALL_INTRINSIC_1 STOPITERATION_ERROR in the compiled frame")
    if not (isinstance(exc, ExceptionVariable) and issubclass(exc.cls, StopIteration)):
        return exc
    error = ExceptionVariable(RuntimeError, [ConstantVariable("generator raised StopIteration")])
    error.cause = error.context = exc  # _PyErr_FormatFromCause
    error.suppress_context = True
    return error


_MODELLED_1 = {
    "STOPITERATION_ERROR": _stopiteration_error,
    "UNARY_POSITIVE": lambda tx, value: unary_op(tx, UNARY_OPS["UNARY_POSITIVE"], value),
    "LIST_TO_TUPLE": lambda tx, value: TupleVariable(value.unpack(tx)),
}


# The catalogue entry of a refused intrinsic (the 3.11 opcode's entry).
_REFUSALS = {"ASYNC_GEN_WRAP": "generator",
             "IMPORT_STAR": "dynamic_import"}


def _name(table, arg):
    return table[arg] if 0 <= arg < len(table) else f"<{arg}>"


@handler("CALL_INTRINSIC_1", since=(3, 12))
def CALL_INTRINSIC_1(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-CALL_INTRINSIC_1
    # (value -- result)   result = intrinsic[oparg](value)
    name = _name(_INTRINSIC_1, inst.arg)
    if name not in _MODELLED_1:
        unsupported(_REFUSALS.get(name, "unsupported_opcode"), f"CALL_INTRINSIC_1 {name}")
    tx.push(_MODELLED_1[name](tx, tx.pop()))


@handler("CALL_INTRINSIC_2", since=(3, 12))
def CALL_INTRINSIC_2(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-CALL_INTRINSIC_2
    # (value2 value1 -- result)   except* and PEP 695 generics only: not traced
    unsupported("unsupported_opcode", f"CALL_INTRINSIC_2 {_name(_INTRINSIC_2, inst.arg)}")
