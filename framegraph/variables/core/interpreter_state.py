"""Interpreter state a trace reads: ``sys.get_int_max_str_digits()``, ``sys.getrecursionlimit()``.

Their answers are constants of the trace, guarded (INTERPRETER_STATE) so a
call after ``sys.set_int_max_str_digits(...)`` traces again. The int/str
digit limit is read implicitly too: ``int(s)`` of a long string and ``str(n)``
of a long int raise ValueError or not by it, so folding one of those at trace
time guards the limit as well. The setters change state for the rest of the
program and stay calls CPython makes (a graph break).
"""
import sys

from .constant import ConstantVariable

_GETTERS = (sys.get_int_max_str_digits, sys.getrecursionlimit) if hasattr(sys, "get_int_max_str_digits") \
    else (sys.getrecursionlimit,)
# below this many digits (bits, for ints) the limit is never checked (sys.int_info)
_DIGITS = getattr(sys.int_info, "str_digits_check_threshold", None)


def read_state(tx, getter):
    """``getter()``'s value now, as a constant guarded for later calls."""
    value = getter()
    tx.output.add_guard("INTERPRETER_STATE", None, (getter, value))
    return ConstantVariable(value)


def guard_digit_limit(tx, value) -> None:
    """Guard the int/str digit limit when converting ``value`` (a str, bytes or int being
    converted by ``int()``/``str()`` at trace time) depends on it."""
    if _DIGITS is None:
        return
    if isinstance(value, (str, bytes, bytearray)):
        long_enough = len(value) > _DIGITS
    elif isinstance(value, int):
        long_enough = value.bit_length() > _DIGITS * 3  # fewer bits than 3 per digit: under the threshold
    else:
        return
    if long_enough:
        read_state(tx, sys.get_int_max_str_digits)


MODELS = {getter: (lambda g: lambda tx: read_state(tx, g))(getter) for getter in _GETTERS}
