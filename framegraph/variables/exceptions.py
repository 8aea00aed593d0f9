"""Exceptions raised and caught inside the trace.

Library code uses exceptions for control flow: ``Sequence.__iter__`` stops
on ``IndexError``, ``getattr`` fallbacks catch ``AttributeError``, optional
imports catch ``ImportError``. A ``raise`` that a handler in the traced code
catches is modelled, like CPython does it, by unwinding to the handler
(``tracer/exceptions.py``); one that escapes the traced frame ends the trace,
and the frame runs for real.

``ExceptionVariable`` is an exception instance made in the trace: its class
and constructor arguments (``__init__`` of user exception classes is not
inlined; ``args`` is what BaseException keeps). ``TracedException`` is the
Python exception that carries it through the tracer's own stack.
"""
from .base import VariableTracker
from .constant import ConstantVariable


class ExceptionVariable(VariableTracker):
    def __init__(self, cls, args, **kwargs):
        super().__init__(**kwargs)
        self.cls = cls
        self.args = list(args)

    def python_type(self):
        return self.cls

    def getattr(self, tx, name):
        from .lists import TupleVariable

        if name == "args":
            return TupleVariable(self.args)
        if name in ("__cause__", "__context__"):
            return ConstantVariable(None)
        return super().getattr(tx, name)

    def reconstruct(self, cg):
        cg.call_const(self.cls, self.args)

    def __repr__(self):
        return f"ExceptionVariable({self.cls.__name__})"


class TracedException(Exception):
    """Carries an ExceptionVariable from the raising instruction to a handler."""

    def __init__(self, value: ExceptionVariable):
        super().__init__(value.cls.__name__)
        self.value = value


def is_exception_class(value) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)


def make_exception(cls, args, kwargs):
    """``cls(*args)`` for an exception class (keyword arguments are dropped: only
    user subclasses take them, and the trace never reads them back)."""
    return ExceptionVariable(cls, args)
