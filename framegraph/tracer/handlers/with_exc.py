"""``with`` blocks, ``raise`` and exception handling.

A ``with`` block's normal path is traced (BEFORE_WITH, then the exit call
that the compiler emits as an ordinary CALL with three Nones). ``raise``
(and an operation that raises) unwinds to a handler of the traced code when
there is one (``tracer/exceptions.py``): PUSH_EXC_INFO, CHECK_EXC_MATCH,
POP_EXCEPT and RERAISE run the ``except``, ``else`` and ``finally`` clauses
like CPython. An exception that leaves the traced frame (including a failing
``assert``) ends the trace: CPython raises it for real, running the frame from
the instruction that raised it. A ``with`` block left by an exception calls
``__exit__(type, exc, traceback)`` (WITH_EXCEPT_START), traced like any call.
"""
import torch

from ...errors import FramegraphError, unsupported
from ...variables.builder import wrap_value
from ...variables.callables.builtins import BuiltinVariable
from ...variables.core.constant import ConstantVariable
from ...variables.tensors.ctx_managers import enter_context
from ...variables.core.exceptions import (ExceptionVariable, TracedException, caller_handles_nothing,
                                          is_exception_class, make_exception, raise_in_trace, traceback_of)
from ..exceptions import handled_exception
from ..registry import handler, unsupported_opcode


@handler("BEFORE_WITH")
def BEFORE_WITH(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-BEFORE_WITH
    # (ctx -- bound_exit enter_result)
    exit_fn, entered = enter_context(tx, tx.pop())
    tx.push(exit_fn)
    tx.push(entered)


@handler("RAISE_VARARGS")
def RAISE_VARARGS(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-RAISE_VARARGS
    # (exc? cause? -- )   0: re-raise the exception being handled; 2: raise exc from cause
    values = tx.popn(inst.arg)
    if not values:
        handled = handled_exception(tx)
        if handled is None:  # with none handled by the callers either: do_raise's RuntimeError
            if not caller_handles_nothing(tx):
                unsupported("exception", "bare raise of the exception the caller handles")
            raise_in_trace(RuntimeError, "No active exception to reraise")
        raise TracedException(handled, reraise=True)
    exc = _instance(tx, values[0])
    if len(values) == 2:  # do_raise: the cause is an instance, a class (called) or None
        cause = values[1]
        cause = None if cause.is_python_constant() and cause.as_python_constant() is None else _instance(
            tx, cause, "exception causes must derive from BaseException")
        exc.cause, exc.suppress_context = cause, True
    raise TracedException(exc)


def _instance(tx, value, refusal="exceptions must derive from BaseException"):
    """What ``raise`` raises for ``value``: an exception instance, or a class called with no
    arguments; anything else is do_raise's TypeError (``raise 5``, ``raise (E1, E2)``)."""
    if isinstance(value, BuiltinVariable) or value.is_python_constant() and is_exception_class(
            value.as_python_constant()):
        value = make_exception(value.as_python_constant(), [], {}, tx)
    if not isinstance(value, ExceptionVariable):
        if _surely_not_exception(value):
            raise_in_trace(TypeError, refusal)
        unsupported("exception", f"raise {value}")
    return value


def _surely_not_exception(value) -> bool:
    """Whether ``value`` is known to be neither an exception class nor an instance of one."""
    if value.is_python_constant():
        constant = value.as_python_constant()
        return not is_exception_class(constant) and not isinstance(constant, BaseException)
    try:
        kind = value.python_type()
    except FramegraphError:
        return False
    return kind in _NOT_EXCEPTIONS


# containers and tensors, whose trackers know their type (a user object's may be an exception)
_NOT_EXCEPTIONS = (tuple, list, dict, set, frozenset, torch.Tensor, torch.nn.Parameter)


@handler("PUSH_EXC_INFO")
def PUSH_EXC_INFO(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-PUSH_EXC_INFO
    # (exc -- previous_exc exc)
    exc = tx.pop()
    tx.push(tx.exc_stack[-1] if tx.exc_stack else ConstantVariable(None))
    tx.exc_stack.append(exc)
    tx.push(exc)


@handler("POP_EXCEPT")
def POP_EXCEPT(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-POP_EXCEPT
    # (previous_exc -- )   restores the exception being handled before
    tx.pop()
    tx.exc_stack.pop()


@handler("CHECK_EXC_MATCH")
def CHECK_EXC_MATCH(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-CHECK_EXC_MATCH
    # (exc type -- exc matches)
    cls = tx.pop().as_python_constant()
    if not all(is_exception_class(c) for c in (cls if isinstance(cls, tuple) else (cls,))):
        raise_in_trace(TypeError, "catching classes that do not inherit from BaseException is not allowed")
    tx.push(ConstantVariable(issubclass(tx.peek().python_type(), cls)))


@handler("RERAISE")
def RERAISE(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-RERAISE
    # (lasti? exc -- )   lasti (when oparg) only sets the frame's f_lasti
    exc = tx.pop()
    if inst.arg:
        tx.pop()
    raise TracedException(exc, reraise=True)


@handler("WITH_EXCEPT_START")
def WITH_EXCEPT_START(tx, inst):
    # https://docs.python.org/3.11/library/dis.html#opcode-WITH_EXCEPT_START
    # (exit lasti prev_exc exc -- exit lasti prev_exc exc res)   res = exit(type(exc), exc, tb)
    exc = tx.peek()
    if not isinstance(exc, ExceptionVariable):
        unsupported("exception", f"with block left by {exc}")
    args = [wrap_value(tx, exc.cls), exc, traceback_of(exc.tb_frames)]
    tx.push(tx.peek(4).call(tx, args, {}))


_HANDLERS_NOT_TRACED = "except* handlers are not traced"
unsupported_opcode("CHECK_EG_MATCH", "exception", _HANDLERS_NOT_TRACED)
unsupported_opcode("PREP_RERAISE_STAR", "exception", _HANDLERS_NOT_TRACED, until=(3, 11))
unsupported_opcode("CLEANUP_THROW", "generator", "generator.throw() cleanup", since=(3, 12))
for _name in ("INTERPRETER_EXIT", "RESERVED"):  # never in a function's code
    unsupported_opcode(_name, why="not in user functions", since=(3, 12))
unsupported_opcode("BEFORE_ASYNC_WITH", "generator", "async with")
