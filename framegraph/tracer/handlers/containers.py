"""Building, unpacking, updating and subscripting containers; string formatting.

BUILD_* pop their items and push a new (mutable, source-less) container
tracker; the *_APPEND/_ADD/_UPDATE family used by comprehensions and
``[*a, *b]`` displays mutates the container ``arg`` slots below the top.
"""
import types

from ... import pyver
from ...errors import unsupported
from ...variables.core.constant import ConstantVariable
from ...variables.containers.dicts import ConstDictVariable
from ...variables.containers.sets import SetVariable
from ...variables.core.exceptions import raise_in_trace
from ...variables.containers.lists import ListVariable, TupleVariable
from ...variables.containers.ranges import SliceVariable
from ...variables.core.reprs import formatted_value
from ..registry import family_member, handler, unsupported_opcode


def build(opname, make):
    """BUILD_TUPLE / BUILD_LIST / BUILD_SET: (item_1 ... item_n -- container)."""

    def fn(tx, inst):
        tx.push(make(tx, tx.popn(inst.arg)))

    return family_member(opname, fn, "(item_1 ... item_n -- container)")


build("BUILD_TUPLE", lambda tx, items: TupleVariable(items))
build("BUILD_LIST", lambda tx, items: ListVariable(items))
build("BUILD_SET", lambda tx, items: SetVariable(items, tx=tx))  # members hashed as set_add does


@handler("BUILD_MAP")
def BUILD_MAP(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-BUILD_MAP
    # (key_1 value_1 ... key_n value_n -- dict)
    flat = tx.popn(2 * inst.arg)
    tx.push(ConstDictVariable(list(zip(flat[::2], flat[1::2])), tx=tx))


@handler("BUILD_CONST_KEY_MAP")
def BUILD_CONST_KEY_MAP(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-BUILD_CONST_KEY_MAP
    # (value_1 ... value_n keys_tuple -- dict)
    keys = tx.pop().unpack(tx)
    tx.push(ConstDictVariable(list(zip(keys, tx.popn(inst.arg)))))


@handler("BUILD_STRING")
def BUILD_STRING(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-BUILD_STRING
    # (str_1 ... str_n -- joined)
    tx.push(ConstantVariable("".join(v.as_python_constant() for v in tx.popn(inst.arg))))


@handler("BUILD_SLICE")
def BUILD_SLICE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-BUILD_SLICE
    # (start stop step? -- slice)
    items = tx.popn(inst.arg)
    tx.push(SliceVariable(items + [ConstantVariable(None)] * (3 - len(items))))


@handler("FORMAT_VALUE", until=(3, 12))
def FORMAT_VALUE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-FORMAT_VALUE
    # (value fmt_spec? -- formatted)   flags & 3: conversion (str, repr, ascii); & 4: spec
    spec = tx.pop().as_python_constant() if inst.arg & 0x04 else ""
    tx.push(formatted_value(tx, tx.pop(), inst.arg & 0x03, spec))


@handler("CONVERT_VALUE", since=(3, 13))
def CONVERT_VALUE(tx, inst):
    # https://docs.python.org/3.13/library/dis.html#opcode-CONVERT_VALUE
    # (value -- converted)   oparg 1 str, 2 repr, 3 ascii
    tx.push(formatted_value(tx, tx.pop(), inst.arg, ""))


@handler("FORMAT_SIMPLE", since=(3, 13))
def FORMAT_SIMPLE(tx, inst):
    # https://docs.python.org/3.13/library/dis.html#opcode-FORMAT_SIMPLE
    # (value -- format(value))
    tx.push(formatted_value(tx, tx.pop(), 0, ""))


@handler("FORMAT_WITH_SPEC", since=(3, 13))
def FORMAT_WITH_SPEC(tx, inst):
    # https://docs.python.org/3.13/library/dis.html#opcode-FORMAT_WITH_SPEC
    # (value spec -- format(value, spec))
    spec = tx.pop().as_python_constant()
    tx.push(formatted_value(tx, tx.pop(), 0, spec))


def _updater(opname, method):
    """LIST_APPEND, SET_ADD, LIST_EXTEND, SET_UPDATE, DICT_UPDATE, DICT_MERGE:
    (container ... item -- container ...): call ``method`` on stack[-arg]."""

    def fn(tx, inst):
        item = tx.pop()
        tx.peek(inst.arg).call_method(tx, method, [item], {})

    return family_member(opname, fn, "(container ... item -- container ...)   calls a method of stack[-arg]")


_updater("LIST_APPEND", "append")
_updater("SET_ADD", "add")
_updater("LIST_EXTEND", "extend")
_updater("SET_UPDATE", "update")


def _raise_type_error(message: str):
    from ...variables.core.exceptions import ExceptionVariable, TracedException

    raise TracedException(ExceptionVariable(TypeError, [ConstantVariable(message)]))


def _mapping_items(tx, mapping, not_a_mapping: str) -> list:
    """The (key, value) trackers ``PyDict_Update``/``_PyDict_MergeEx`` read: a dict's
    own items, else ``keys()`` and ``mapping[key]``; without ``keys``, a TypeError."""
    if isinstance(mapping, ConstDictVariable):
        return list(mapping.items.values())
    if mapping.hasattr(tx, "keys") is False:
        _raise_type_error(not_a_mapping)
    keys = mapping.call_method(tx, "keys", [], {}).unpack(tx)
    return [(key, mapping.getitem(tx, key)) for key in keys]


_FUNCTION_KINDS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, type)


def _function_str(tx, var) -> str:
    """CPython's ``_PyObject_FunctionStr`` (what its call errors name the callee by):
    ``module.qualname()``, without the module for builtins."""
    from ...variables.callables.trace_time import real_value

    fn = real_value(var)
    if not isinstance(fn, _FUNCTION_KINDS):  # its __qualname__ could run user code
        unsupported("operator_error", f"a ** argument error for {var}")
    module = getattr(fn, "__module__", None)
    prefix = f"{module}." if module is not None and module != "builtins" else ""
    return f"{prefix}{fn.__qualname__}()"


@handler("DICT_UPDATE")
def DICT_UPDATE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-DICT_UPDATE
    # (dict ... mapping -- dict ...)   {**a, **b}: a later key wins
    update = tx.pop()
    target = tx.peek(inst.arg)
    for key, value in _mapping_items(tx, update, f"'{update.python_type().__name__}' object is not a mapping"):
        target.setitem(tx, key, value)


@handler("DICT_MERGE")
def DICT_MERGE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-DICT_MERGE
    # (fn args dict ... mapping -- fn args dict ...)   f(**a, **b): a key given twice
    # is a TypeError naming fn (ceval.c, format_kwargs_error), not an overwrite
    update = tx.pop()
    target = tx.peek(inst.arg)
    # the call's two slots below the args: (NULL fn), or (fn NULL) on 3.13
    fn = tx.peek(inst.arg + (3 if pyver.NULL_ABOVE_CALLABLE else 2))
    if update.hasattr(tx, "keys") is False and not isinstance(update, ConstDictVariable):
        _raise_type_error(f"{_function_str(tx, fn)} argument after ** must be a mapping, "
                          f"not {update.python_type().__name__}")
    for key, value in _mapping_items(tx, update, ""):
        if target.contains(tx, key):
            if not key.is_python_constant():
                unsupported("operator_error", f"{key} given twice as a keyword argument")
            _raise_type_error(f"{_function_str(tx, fn)} got multiple values for keyword argument "
                              f"'{key.as_python_constant()}'")
        target.setitem(tx, key, value)


@handler("MAP_ADD")
def MAP_ADD(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-MAP_ADD
    # (dict ... key value -- dict ...)
    key, value = tx.popn(2)
    tx.peek(inst.arg).setitem(tx, key, value)


@handler("LIST_TO_TUPLE", until=(3, 11))
def LIST_TO_TUPLE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LIST_TO_TUPLE
    # (list -- tuple)
    tx.push(TupleVariable(tx.pop().unpack(tx)))


@handler("UNPACK_SEQUENCE")
def UNPACK_SEQUENCE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-UNPACK_SEQUENCE
    # (seq -- item_n ... item_1)
    seq = tx.pop()
    items = seq.unpack(tx)
    if len(items) != inst.arg:
        _wrong_count(seq, len(items), inst.arg)
    for item in reversed(items):
        tx.push(item)


@handler("UNPACK_EX")
def UNPACK_EX(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-UNPACK_EX
    # (seq -- after_n ... list_of_rest before_1...)   low byte: before, high byte: after
    before, after = inst.arg & 0xFF, inst.arg >> 8
    seq = tx.pop()
    items = seq.unpack(tx)
    if len(items) < before + after:
        _wrong_count(seq, len(items), before, after)
    rest = ListVariable(items[before:len(items) - after])
    for item in reversed(items[:before] + [rest] + items[len(items) - after:]):
        tx.push(item)


def _wrong_count(seq, got, before, after=None):
    """The ValueError of unpacking ``got`` values into ``before`` targets (and a starred
    one and ``after`` more), worded by this CPython: the same unpack of placeholders.
    Only for a list or tuple: of any other iterable CPython stops reading one item past the
    targets, and the trace took them all."""
    if type(seq) not in (ListVariable, TupleVariable):
        unsupported("operator_error", f"cannot unpack {got} values into {before}")
    targets = [f"_{i}" for i in range(before)]
    if after is not None:
        targets += ["*_rest"] + [f"_{before + i}" for i in range(after)]
    namespace = {}
    exec(f"def unpack(values):\n    {', '.join(targets)}, = values\n", namespace)  # noqa: S102 - our own text
    try:
        namespace["unpack"]((None,) * got)
    except ValueError as error:
        raise_in_trace(ValueError, str(error))
    raise AssertionError(f"unpacking {got} values into {targets} did not fail")


@handler("STORE_SUBSCR")
def STORE_SUBSCR(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-STORE_SUBSCR
    # (value container key -- )
    value, container, key = tx.popn(3)
    container.setitem(tx, key, value)


@handler("DELETE_SUBSCR")
def DELETE_SUBSCR(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-DELETE_SUBSCR
    # (container key -- )
    container, key = tx.popn(2)
    container.delitem(tx, key)


@handler("GET_LEN")
def GET_LEN(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-GET_LEN
    # (obj -- obj len(obj))
    tx.push(ConstantVariable(tx.peek().length(tx)))


for _name in ("MATCH_CLASS", "MATCH_KEYS", "MATCH_MAPPING", "MATCH_SEQUENCE"):
    unsupported_opcode(_name, why="structural pattern matching is not traced yet")
