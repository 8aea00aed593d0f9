"""Loads and stores of locals, constants, globals and closure cells.

Locals live in ``tx.symbolic_locals``. Cell and free variables are stored
there as ``CellVariable``s: MAKE_CELL creates the cell (wrapping an
argument's current value), LOAD_CLOSURE pushes the cell itself (for
MAKE_FUNCTION), LOAD_DEREF/STORE_DEREF read and write its contents.
Writing a global, or a cell of an enclosing frame that exists outside the
trace, is a side effect on the caller's state: it goes into the side-effect
ledger and is replayed after the graph (``side_effects.py``).
"""
import sys

from ... import pyver
from ...errors import unsupported
from ...side_effects import store_global
from ...variables.core.base import NULL
from ...variables.builder import wrap_value
from ...variables.objects.classes import BuildClassVariable
from ...variables.core.constant import wrap_constant
from ...variables.callables.functions import CellVariable
from ..registry import handler, unsupported_opcode


@handler("LOAD_FAST")
def LOAD_FAST(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_FAST
    # ( -- value)
    tx.push(tx.load_local(inst.argval))


@handler("LOAD_FAST_CHECK", since=(3, 12))
def LOAD_FAST_CHECK(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-LOAD_FAST_CHECK
    # ( -- value)   a local that may be unbound (load_local refuses an unbound one)
    tx.push(tx.load_local(inst.argval))


@handler("LOAD_FAST_AND_CLEAR", since=(3, 12))
def LOAD_FAST_AND_CLEAR(tx, inst):
    # https://docs.python.org/3.12/library/dis.html#opcode-LOAD_FAST_AND_CLEAR
    # ( -- value | NULL)   an inlined comprehension (PEP 709) saves the outer
    # binding of its variable and unbinds it; a STORE_FAST restores it after
    tx.push(tx.load_local(inst.argval) if inst.argval in tx.symbolic_locals else NULL)
    tx.symbolic_locals.pop(inst.argval, None)


@handler("STORE_FAST")
def STORE_FAST(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-STORE_FAST
    # (value -- )   storing NULL (3.12, after LOAD_FAST_AND_CLEAR) unbinds it
    _store(tx, inst.argval, tx.pop())


def _store(tx, name, value):
    if value is NULL:
        tx.symbolic_locals.pop(name, None)
    else:
        tx.symbolic_locals[name] = value


@handler("LOAD_FAST_LOAD_FAST", since=(3, 13))
def LOAD_FAST_LOAD_FAST(tx, inst):
    # https://docs.python.org/3.13/library/dis.html#opcode-LOAD_FAST_LOAD_FAST
    # ( -- value1 value2)   argval is (name1, name2)
    for name in inst.argval:
        tx.push(tx.load_local(name))


@handler("STORE_FAST_LOAD_FAST", since=(3, 13))
def STORE_FAST_LOAD_FAST(tx, inst):
    # https://docs.python.org/3.13/library/dis.html#opcode-STORE_FAST_LOAD_FAST
    # (value -- value2)   stores into name1, then loads name2
    first, second = inst.argval
    _store(tx, first, tx.pop())
    tx.push(tx.load_local(second))


@handler("STORE_FAST_STORE_FAST", since=(3, 13))
def STORE_FAST_STORE_FAST(tx, inst):
    # https://docs.python.org/3.13/library/dis.html#opcode-STORE_FAST_STORE_FAST
    # (value2 value1 -- )   the top goes into name1, the next into name2
    first, second = inst.argval
    _store(tx, first, tx.pop())
    _store(tx, second, tx.pop())


@handler("DELETE_FAST")
def DELETE_FAST(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-DELETE_FAST
    # ( -- )
    tx.symbolic_locals.pop(inst.argval, None)


@handler("LOAD_CONST")
def LOAD_CONST(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_CONST
    # ( -- constant)
    tx.push(wrap_constant(inst.argval))


@handler("LOAD_GLOBAL")
def LOAD_GLOBAL(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_GLOBAL
    # ( -- NULL? value) or, 3.13, ( -- value NULL?)   the low bit of the argument asks for the NULL
    tx.push_callable(tx.load_global(inst.argval), pyver.load_global_push_null(inst.arg))


@handler("STORE_GLOBAL")
def STORE_GLOBAL(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-STORE_GLOBAL
    # (value -- )   a side effect on the module, replayed after the graph
    store_global(tx, inst.argval, tx.pop())


@handler("DELETE_GLOBAL")
def DELETE_GLOBAL(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-DELETE_GLOBAL
    # ( -- )
    unsupported("side_effect", f"deleting the global {inst.argval!r}")


@handler("MAKE_CELL")
def MAKE_CELL(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-MAKE_CELL
    # ( -- )   the local (maybe an argument) becomes a fresh cell holding its value
    current = tx.symbolic_locals.get(inst.argval)
    if current is not None:
        current = tx.load_local(inst.argval)
    tx.symbolic_locals[inst.argval] = CellVariable(current)


@handler("COPY_FREE_VARS")
def COPY_FREE_VARS(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-COPY_FREE_VARS
    # ( -- )   the closure cells were put into the locals when the call was bound
    pass


@handler("LOAD_CLOSURE", until=(3, 12))  # 3.13: a LOAD_FAST of the cell
def LOAD_CLOSURE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_CLOSURE
    # ( -- cell)
    tx.push(tx.cell(inst.argval))


@handler("LOAD_DEREF")
def LOAD_DEREF(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_DEREF
    # ( -- value)
    tx.push(tx.cell(inst.argval).load(inst.argval))


@handler("LOAD_CLASSDEREF", until=(3, 11))
def LOAD_CLASSDEREF(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_CLASSDEREF
    # ( -- value)   only in class bodies, which are never traced
    LOAD_DEREF(tx, inst)


@handler("STORE_DEREF")
def STORE_DEREF(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-STORE_DEREF
    # (value -- )
    tx.cell(inst.argval).store(tx.pop(), tx)


@handler("DELETE_DEREF")
def DELETE_DEREF(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-DELETE_DEREF
    # ( -- )
    cell = tx.cell(inst.argval)
    if cell.pre_existing:
        unsupported("side_effect", f"deleting the closure variable {inst.argval!r}")
    cell.contents = None


@handler("LOAD_ASSERTION_ERROR")
def LOAD_ASSERTION_ERROR(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_ASSERTION_ERROR
    # ( -- AssertionError)
    tx.push(wrap_value(tx, AssertionError))


@handler("IMPORT_NAME")
def IMPORT_NAME(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-IMPORT_NAME
    # (level fromlist -- module)   only modules that are already imported
    level, fromlist = (v.as_python_constant() for v in tx.popn(2))
    name = inst.argval
    if level != 0 or name not in sys.modules:
        unsupported("dynamic_import", f"import {name} (not imported yet, or relative)")
    module = sys.modules[name] if fromlist else sys.modules[name.partition(".")[0]]
    tx.push(wrap_value(tx, module))


@handler("IMPORT_FROM")
def IMPORT_FROM(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-IMPORT_FROM
    # (module -- module attribute)
    tx.push(tx.peek().getattr(tx, inst.argval))


unsupported_opcode("IMPORT_STAR", "dynamic_import", until=(3, 11))  # 3.12: an intrinsic


@handler("LOAD_BUILD_CLASS")
def LOAD_BUILD_CLASS(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-LOAD_BUILD_CLASS
    # ( -- builtins.__build_class__)   a class statement follows (variables/classes.py)
    tx.push(BuildClassVariable())


_NOT_TRACED = "module-level, class-body or interactive code is not traced"
for _name in ("LOAD_NAME", "STORE_NAME", "DELETE_NAME", "SETUP_ANNOTATIONS"):
    unsupported_opcode(_name, why=_NOT_TRACED)
unsupported_opcode("PRINT_EXPR", why=_NOT_TRACED, until=(3, 11))
for _name in ("LOAD_LOCALS", "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS"):
    unsupported_opcode(_name, why=_NOT_TRACED, since=(3, 12))
