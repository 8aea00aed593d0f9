"""Calls and function creation: KW_NAMES, CALL, CALL_FUNCTION_EX, MAKE_FUNCTION.

3.11's call shape is ``[NULL | callable, callable | self, *args]``: when the
slot below the callable is NULL the callable is called with ``args``,
otherwise the lower item is the callable and the upper one its first
argument. KW_NAMES (just before PRECALL/CALL) names the last arguments.
"""
from ...graph_breaks import unsupported
from ...variables.base import NULL
from ...variables.dicts import ConstDictVariable
from ...variables.functions import NestedUserFunctionVariable
from ..registry import handler


@handler("KW_NAMES")
def KW_NAMES(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-KW_NAMES
    # ( -- )   remembers the keyword names of the next CALL
    tx.kw_names = inst.argval


@handler("CALL")
def CALL(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-CALL
    # (NULL|callable callable|self arg_1 ... arg_n -- result)
    args = tx.popn(inst.arg)
    upper, lower = tx.pop(), tx.pop()
    fn = upper if lower is NULL else lower
    if lower is not NULL:
        args = [upper] + args
    kw_names = tx.kw_names or ()
    tx.kw_names = None
    split = len(args) - len(kw_names)
    kwargs = dict(zip(kw_names, args[split:]))
    tx.push(fn.call(tx, args[:split], kwargs))


@handler("CALL_FUNCTION_EX")
def CALL_FUNCTION_EX(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-CALL_FUNCTION_EX
    # (NULL callable args_tuple kwargs_dict? -- result)   flag 1: kwargs present
    kwargs = tx.pop() if inst.arg & 1 else ConstDictVariable([])
    args = tx.pop()
    fn = tx.pop()
    null = tx.pop()
    if null is not NULL:
        unsupported("unsupported_opcode", "CALL_FUNCTION_EX without NULL")
    if not isinstance(kwargs, ConstDictVariable):
        unsupported("unsupported_value", f"**{kwargs}")
    tx.push(fn.call(tx, args.unpack(tx), kwargs.as_plain_dict()))


@handler("MAKE_FUNCTION")
def MAKE_FUNCTION(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-MAKE_FUNCTION
    # (defaults? kwdefaults? annotations? closure? code -- function)   by flag bits 1, 2, 4, 8
    code = tx.pop().as_python_constant()
    closure = tx.pop().unpack(tx) if inst.arg & 0x08 else None
    annotations = tx.pop() if inst.arg & 0x04 else None  # kept to rebuild the function
    kwdefaults = tx.pop().as_plain_dict() if inst.arg & 0x02 else {}
    defaults = tx.pop().unpack(tx) if inst.arg & 0x01 else []
    tx.push(NestedUserFunctionVariable(code, code.co_qualname, tx.f_globals, defaults, kwdefaults,
                                       closure, annotations))
