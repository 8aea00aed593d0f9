"""Calls and function creation: KW_NAMES, CALL, CALL_KW, CALL_FUNCTION_EX,
MAKE_FUNCTION, SET_FUNCTION_ATTRIBUTE.

The call shape is two slots and the arguments. 3.11 and 3.12:
``[NULL | callable, callable | self, *args]``; 3.13: ``[callable,
NULL | self, *args]``. When one slot is NULL the other is called with
``args``; otherwise the lower item is the callable and the upper one its
first argument, in every version. KW_NAMES (3.11, 3.12: just before the
CALL) or CALL_KW's top of stack (3.13) names the last arguments.
"""
from ... import pyver
from ...errors import unsupported
from ...variables.core.base import NULL
from ...variables.containers.dicts import ConstDictVariable
from ...variables.core.exceptions import raise_in_trace
from ...variables.callables.functions import NestedUserFunctionVariable
from ..registry import handler


@handler("KW_NAMES", until=(3, 12))
def KW_NAMES(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-KW_NAMES
    # ( -- )   remembers the keyword names of the next CALL
    tx.kw_names = inst.argval


@handler("CALL")
def CALL(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-CALL
    # (NULL|callable callable|self arg_1 ... arg_n -- result)
    kw_names = tx.kw_names or ()
    tx.kw_names = None
    _call(tx, inst.arg, kw_names)


@handler("CALL_KW", since=(3, 13))
def CALL_KW(tx, inst):
    # https://docs.python.org/3.13/library/dis.html#opcode-CALL_KW
    # (callable self|NULL arg_1 ... arg_n kw_names -- result)
    _call(tx, inst.arg, tx.pop().as_python_constant())


def _call(tx, nargs, kw_names):
    args = tx.popn(nargs)
    upper, lower = tx.pop(), tx.pop()
    if lower is NULL or upper is NULL:
        fn = upper if lower is NULL else lower
    else:
        fn, args = lower, [upper] + args
    split = len(args) - len(kw_names)
    kwargs = dict(zip(kw_names, args[split:]))
    tx.push(fn.call(tx, args[:split], kwargs))


@handler("CALL_FUNCTION_EX")
def CALL_FUNCTION_EX(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-CALL_FUNCTION_EX
    # (NULL callable args_tuple kwargs_dict? -- result)   flag 1: kwargs present; 3.13: (callable NULL ...)
    kwargs = tx.pop() if inst.arg & 1 else ConstDictVariable([])
    args = tx.pop()
    fn, null = tx.pop(), tx.pop()
    if pyver.NULL_ABOVE_CALLABLE:
        fn, null = null, fn
    if null is not NULL:
        unsupported("unsupported_opcode", "CALL_FUNCTION_EX without NULL")
    if not isinstance(kwargs, ConstDictVariable):
        unsupported("unsupported_value", f"**{kwargs}")
    kwargs = kwargs.as_plain_dict()
    if not all(isinstance(key, str) for key in kwargs):  # the call unpacks the dict: _PyStack_UnpackDict
        raise_in_trace(TypeError, "keywords must be strings")
    tx.push(fn.call(tx, args.unpack(tx), kwargs))


@handler("MAKE_FUNCTION")
def MAKE_FUNCTION(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-MAKE_FUNCTION
    # (defaults? kwdefaults? annotations? closure? code -- function)   by flag bits 1, 2, 4, 8;
    # 3.13: (code -- function), the rest comes by SET_FUNCTION_ATTRIBUTE
    code = tx.pop().as_python_constant()
    if inst.arg is None:
        tx.push(NestedUserFunctionVariable(code, code.co_qualname, tx.f_globals, [], {}, None, None))
        return
    closure = tx.pop().unpack(tx) if inst.arg & 0x08 else None
    annotations = tx.pop() if inst.arg & 0x04 else None  # kept to rebuild the function
    kwdefaults = tx.pop().as_plain_dict() if inst.arg & 0x02 else {}
    defaults = tx.pop().unpack(tx) if inst.arg & 0x01 else []
    tx.push(NestedUserFunctionVariable(code, code.co_qualname, tx.f_globals, defaults, kwdefaults,
                                       closure, annotations))


@handler("SET_FUNCTION_ATTRIBUTE", since=(3, 13))
def SET_FUNCTION_ATTRIBUTE(tx, inst):
    # https://docs.python.org/3.13/library/dis.html#opcode-SET_FUNCTION_ATTRIBUTE
    # (value function -- function)   flag 1 defaults, 2 kwdefaults, 4 annotations, 8 closure
    fn, value = tx.pop(), tx.pop()
    if inst.arg == 0x08:
        fn.closure = value.unpack(tx)
    elif inst.arg == 0x04:
        fn.annotations = value
    elif inst.arg == 0x02:
        fn.kwdefaults = value.as_plain_dict()
    elif inst.arg == 0x01:
        fn.defaults = value.unpack(tx)
    else:
        unsupported("unsupported_opcode", f"SET_FUNCTION_ATTRIBUTE {inst.arg}")
    tx.push(fn)
