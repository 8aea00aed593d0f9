"""Exceptions raised and caught inside the trace.

Code uses exceptions for control flow: ``try: v = d[k] except KeyError: v =
default``, EAFP attribute access, ``Sequence.__iter__`` stopping on
``IndexError``. Two things raise in the trace, as in CPython:

* a ``raise`` statement (``handlers/with_exc.py``);
* an operation the tracer runs on trace-time values (``1 / 0`` on constants,
  a missing dict key, ``int("x")``, a missing attribute of a guarded object):
  ``python_operation()`` turns the real exception the real operation raised
  into a traced one, and the trackers that model an operation themselves
  (dict lookup, ``next()``) call ``raise_in_trace`` with the exception CPython
  raises there. Only those sites do it: an exception from framegraph's own
  code is a bug, never a traced exception.

Either way the tracer unwinds to a handler of the traced code when there is
one (``tracer/exceptions.py``); one that escapes the compiled frame ends the
trace, and CPython raises it for real.

``ExceptionVariable`` is an exception instance made in the trace: its class,
the arguments it was created with, and the chaining CPython records on
raising (``__context__``, ``__cause__``, ``__suppress_context__``). ``args``,
``str()`` and ``repr()`` are known only where the class keeps BaseException's
own ``__init__``/``__str__``/``__repr__`` (then they depend on ``args`` alone);
for a class that defines them in Python, reading them is a break.
``TracedException`` is the Python exception that carries it through the
tracer's own stack.
"""
import sys
import types

from ...errors import FramegraphError, unsupported
from . import space
from .base import BoundMethodVariable, VariableTracker, type_lookup
from .constant import ConstantVariable, wrap_constant

# __context__ of an exception raised while no exception of the trace was being
# handled: whatever the caller of the compiled frame is handling (unknown here).
UNKNOWN_CONTEXT = object()


class ExceptionVariable(VariableTracker):
    def __init__(self, cls, args, kwargs=None, **kw):
        super().__init__(**kw)
        self.cls = cls
        self.args = list(args)
        self.kwargs = dict(kwargs or {})
        self.cause = None            # tracker of __cause__ (``raise ... from cause``), or None
        self.context = None          # tracker of __context__, None, or UNKNOWN_CONTEXT
        self.suppress_context = False
        self.raised = False          # True once raised: __context__ is then decided
        # (step, instruction) of the root frame where running in CPython replays this
        # exception's raise and handling (tracer/exceptions.py); None until it reaches the root
        self.root_raise = None
        # the frames it unwound through, outermost first (tracer/exceptions.py): its
        # __traceback__; None until raised, or after with_traceback(None)
        self.tb_frames = None
        # for a class whose constructor parses its arguments (OSError(2, "x") is a
        # FileNotFoundError with errno 2): the class called, and the real exception it made
        # at trace time from constant arguments, which answers args and the parsed fields
        self.ctor = cls
        self.parsed = None

    def python_type(self):
        return self.cls

    def getattr(self, tx, name):
        if self.parsed is not None and name in parsed_fields(self.cls):
            return wrap_constant(getattr(self.parsed, name))
        if name == "args":
            self._check_plain("__init__", "args")
            return space.TupleVariable(list(self.args))
        if name == "__cause__":
            return self.cause if self.cause is not None else ConstantVariable(None)
        if name == "__context__":
            if self.context is UNKNOWN_CONTEXT:  # the caller's handled exception: guarded to be none
                if not caller_handles_nothing(tx):
                    unsupported("exception", "__context__ of an exception raised while the caller of the "
                                "compiled frame is handling one")
                return ConstantVariable(None)
            return self.context if self.context is not None else ConstantVariable(None)
        if name == "__suppress_context__":
            return ConstantVariable(self.suppress_context)
        if name == "__traceback__":
            return traceback_of(self.tb_frames)
        if name == "with_traceback":
            return BoundMethodVariable(self, name)
        if name == "__class__":
            return tx.wrap(self.cls)
        if name == "value" and issubclass(self.cls, StopIteration):
            # StopIteration_init: value is args[0], None without arguments
            self._check_plain("__init__", "StopIteration.value")
            return self.args[0] if self.args else ConstantVariable(None)
        unsupported("unsupported_attribute", f"{self.cls.__name__}.{name}")

    def hasattr(self, tx, name):
        if name in ("args", "__cause__", "__context__", "__suppress_context__", "__traceback__"):
            return True
        if self.parsed is not None and name in parsed_fields(self.cls):
            return True
        if name == "value" and issubclass(self.cls, StopIteration):
            return True
        if self.source is None and self.cls.__module__ == "builtins" and name != "__notes__":
            # made in the trace, of a builtin class: nothing wrote its __dict__ (the trace
            # sets only the chaining fields, which are slots), so the type answers
            return type_lookup(self.cls, name)[0]
        return None

    def setattr(self, tx, name, value):
        """``exc.__traceback__ = tb`` (contextlib re-attaches it in ``__exit__``): as
        ``with_traceback``; the chaining fields with BaseException's setters' checks."""
        if name not in _CHAINING_FIELDS or self.source is not None:  # one from outside: not replayed
            unsupported("unsupported_attribute", f"setting {self.cls.__name__}.{name}")
        if name == "__traceback__":
            self._set_traceback(value)
            return
        if name == "__suppress_context__":  # BaseException_set_suppress_context... a T_BOOL member
            if not (value.is_python_constant() and isinstance(value.as_python_constant(), bool)):
                unsupported("unsupported_attribute", f"setting {self.cls.__name__}.{name} to {value}")
            self.suppress_context = value.as_python_constant()
            return
        if value.is_python_constant() and value.as_python_constant() is None:
            chained = None
        elif isinstance(value, ExceptionVariable):
            chained = value
        else:  # exception_set_cause/_context: only an instance or None
            raise_in_trace(TypeError, f"exception {name[2:-2]} must be None or derive from BaseException")
        if name == "__cause__":
            self.cause, self.suppress_context = chained, True  # BaseException_set_cause
        else:
            self.context = chained

    def _set_traceback(self, tb):
        if isinstance(tb, TracebackVariable):
            self.tb_frames = list(tb.frames)  # a list: unwinding prepends frames to it
        elif tb.is_python_constant() and tb.as_python_constant() is None:
            self.tb_frames = None
        else:
            unsupported("unsupported_call", f"with_traceback({tb})")

    def call_method(self, tx, name, args, kwargs):
        if name == "with_traceback" and len(args) == 1 and not kwargs:
            self._set_traceback(args[0])
            return self
        return super().call_method(tx, name, args, kwargs)

    def _check_plain(self, slot, what):
        """``what`` depends on ``args`` alone where ``slot`` is BaseException's (C) one."""
        if _python_slot(self.cls, slot) or self.kwargs:
            unsupported("unsupported_attribute", f"{what} of a {self.cls.__name__} ({slot} is written in Python)")

    def real_copy(self) -> BaseException:
        """A real exception equal to this one in everything ``str``/``repr`` read."""
        self._check_plain("__init__", "str()")
        values = []
        for arg in self.args:
            if not arg.is_python_constant():
                unsupported("unsupported_value", f"str() of a {self.cls.__name__} with argument {arg}")
            values.append(arg.as_python_constant())
        return self.ctor(*values)

    def str(self, tx):
        """``str(exc)`` (tp_str)."""
        self._check_plain("__str__", "str()")
        return ConstantVariable(str(self.real_copy()))

    def repr(self, tx):
        """``repr(exc)`` (tp_repr)."""
        self._check_plain("__repr__", "repr()")
        return ConstantVariable(repr(self.real_copy()))

    def reconstruct(self, cg):
        if self.tb_frames:
            unsupported("graph_output", f"rebuilding a {self.cls.__name__} with its traceback")
        if self.cause is not None or self.context not in (None, UNKNOWN_CONTEXT) or self.kwargs:
            unsupported("graph_output", f"rebuilding a {self.cls.__name__} with its chained exceptions")
        cg.call_const(self.ctor, self.args)

    def __repr__(self):
        return f"ExceptionVariable({self.cls.__name__})"


def traceback_of(frames):
    """The tracker of a traceback over ``frames`` (translators, outermost first), or None."""
    return TracebackVariable(tuple(frames)) if frames else ConstantVariable(None)


class TracebackVariable(VariableTracker):
    """``exc.__traceback__`` of an exception raised in the trace: one entry per frame
    it unwound through. What code does with one is walk it and clear its frames
    (``traceback.clear_frames``, in unittest's ``assertRaises``): ``tb_frame`` and
    ``tb_next`` are modelled, anything else (line numbers) is a break."""

    def __init__(self, frames, **kwargs):
        super().__init__(**kwargs)
        self.frames = frames

    def python_type(self):
        return types.TracebackType

    def getattr(self, tx, name):
        if name == "tb_frame":
            return FrameVariable(self.frames[0])
        if name == "tb_next":
            return traceback_of(self.frames[1:])
        unsupported("unsupported_attribute", f"traceback.{name}")

    def __repr__(self):
        return f"TracebackVariable({len(self.frames)} frames)"


class FrameVariable(VariableTracker):
    """``tb.tb_frame``, a frame of the trace (its translator). ``clear()`` follows
    ``frame_clear``: an executing frame raises RuntimeError; a finished one drops its
    locals, which nothing in the trace can read any more (no frame object exists)."""

    def __init__(self, frame_tx, **kwargs):
        super().__init__(**kwargs)
        self.frame_tx = frame_tx

    def python_type(self):
        return types.FrameType

    def getattr(self, tx, name):
        if name == "clear":
            return BoundMethodVariable(self, name)
        unsupported("unsupported_attribute", f"frame.{name}")

    def call_method(self, tx, name, args, kwargs):
        if name != "clear" or args or kwargs:
            unsupported("unsupported_call", f"frame.{name}")
        running = tx
        while running is not None:
            if running is self.frame_tx:
                raise_in_trace(RuntimeError, "cannot clear an executing frame")
            running = running.parent
        return ConstantVariable(None)

    def __repr__(self):
        return f"FrameVariable({self.frame_tx.code.co_name})"


_CHAINING_FIELDS = ("__traceback__", "__suppress_context__", "__cause__", "__context__")


def _python_slot(cls, name) -> bool:
    """Whether ``cls`` gets ``name`` from a class written in Python (not BaseException's C slot)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return isinstance(klass.__dict__[name], types.FunctionType)
    return False


class TracedException(Exception):
    """Carries an ExceptionVariable from the raising instruction to a handler.

    ``reraise`` is True for RERAISE and a bare ``raise``, which re-raise the
    exception as it is (CPython restores it without chaining it again)."""

    def __init__(self, value: ExceptionVariable, reraise=False):
        super().__init__(value.cls.__name__)
        self.value = value
        self.reraise = reraise
        self.chained = False  # __context__ set at the innermost frame (tracer/exceptions.py)


def is_exception_class(value) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)


def make_exception(cls, args, kwargs, tx=None):
    """``cls(*args, **kwargs)`` for an exception class, where that only stores
    ``args`` (BaseException's ``__new__``/``__init__``), or an instance of a user
    exception class with its Python ``__init__`` inlined (user_exceptions.py, given the
    tracer ``tx``). Otherwise it is a break:
    a ``__new__`` or ``__init__`` written in Python runs code the tracer would
    skip, and OSError, ImportError, SyntaxError and the Unicode errors parse
    their arguments (``OSError(2, "x")`` is a FileNotFoundError)."""
    if tx is not None and space.is_user_exception_class(cls) and not parsed_fields(cls) \
            and not issubclass(cls, _KEYWORD_ARGS + _PARSING_ARGS):
        return space.new_user_exception(tx, cls, args, kwargs)
    for slot in ("__new__", "__init__"):
        if _python_slot(cls, slot):
            unsupported("unsupported_call", f"creating a {cls.__name__} (its {slot} is written in Python)")
    if issubclass(cls, _PARSING_ARGS):
        return _parsed_exception(cls, args, kwargs)
    if kwargs:
        if issubclass(cls, _KEYWORD_ARGS):  # name=, obj=, path=: their own C __init__ parses them
            unsupported("unsupported_call", f"creating a {cls.__name__} with keyword arguments")
        raise_in_trace(TypeError, f"{cls.__name__}() takes no keyword arguments")  # BaseException_new
    return ExceptionVariable(cls, args, kwargs)


def _parsed_exception(cls, args, kwargs):
    """``OSError(errno, strerror, filename)``, ``UnicodeDecodeError(...)``: the C constructor
    parses the arguments and may pick a subclass, so the real one runs at trace time, on
    constants only (it has no other effect)."""
    if not parsed_fields(cls) or kwargs or not all(arg.is_python_constant() for arg in args):
        unsupported("unsupported_call", f"creating a {cls.__name__} (its constructor parses the arguments)")
    with python_operation(f"creating a {cls.__name__}"):
        parsed = cls(*[arg.as_python_constant() for arg in args])
    value = ExceptionVariable(type(parsed), args)
    value.ctor, value.parsed = cls, parsed
    return value


# the fields each parsing constructor fills from its arguments (args among them: OSError
# keeps only errno and strerror there when given a filename)
_OS_FIELDS = ("args", "errno", "strerror", "filename", "filename2", "characters_written")
_UNICODE_FIELDS = ("args", "encoding", "object", "start", "end", "reason")
_PARSED_FIELDS = {
    OSError: _OS_FIELDS,
    SyntaxError: ("args", "msg", "filename", "lineno", "offset", "text", "end_lineno", "end_offset"),
    UnicodeEncodeError: _UNICODE_FIELDS, UnicodeDecodeError: _UNICODE_FIELDS,
    UnicodeTranslateError: _UNICODE_FIELDS,
}


def parsed_fields(cls) -> tuple:
    """The fields ``cls``'s C constructor parses (its nearest base in _PARSED_FIELDS), or ()."""
    for klass in cls.__mro__:
        if klass in _PARSED_FIELDS:
            return _PARSED_FIELDS[klass]
    return ()

_KEYWORD_ARGS = (AttributeError, NameError, ImportError)
_PARSING_ARGS = (OSError, ImportError, SyntaxError, UnicodeEncodeError, UnicodeDecodeError,
                 UnicodeTranslateError, BaseExceptionGroup)


@space.register
def raise_in_trace(cls, *args):
    """Raise ``cls(*args)`` (constant arguments) in the trace: what CPython raises here."""
    raise TracedException(ExceptionVariable(cls, [wrap_constant(a) for a in args]))


def raise_python_error(error: BaseException, context: str = ""):
    """Raise in the trace the real exception that a real operation on trace-time
    values raised. Builtin exception classes are fully described by their
    arguments; any other (raised by user code the operation ran) is a break."""
    cls = type(error)
    if cls.__module__ != "builtins" or issubclass(cls, _PARSING_ARGS) and not _rebuilt_by_args(error):
        unsupported("operator_error", f"{context}: {cls.__name__}: {error}")
    try:
        args = [wrap_constant(a) for a in error.args]
    except FramegraphError:
        unsupported("operator_error", f"{context}: {cls.__name__} with arguments that are not constants")
    if issubclass(cls, _PARSING_ARGS):  # compile()'s SyntaxError: its constructor parses them again
        raise TracedException(_parsed_exception(cls, args, {})) from None
    raise TracedException(ExceptionVariable(cls, args)) from None


def _rebuilt_by_args(error) -> bool:
    """Whether ``type(error)(*error.args)`` has every field ``error`` has (a SyntaxError's
    location is in its args; an OSError's filename is not)."""
    fields = parsed_fields(type(error))
    try:
        again = type(error)(*error.args)
    except Exception:  # noqa: BLE001 - args its constructor does not take back
        return False
    return bool(fields) and type(again) is type(error) and all(
        getattr(again, f, None) == getattr(error, f, None) for f in fields)


@space.register
class python_operation:
    """``with python_operation(context):`` around one real Python operation on
    trace-time values: the ``Exception`` it raises is the one CPython raises for
    this instruction, so it is raised in the trace. Put only the real operation
    inside, never tracker code. (A class, not a generator: constant folding
    runs it thousands of times per trace.) ``context % parts`` is the context,
    formatted only when there is an error (a repr of the values on each call was
    a tenth of some traces)."""

    __slots__ = ("context", "parts")

    def __init__(self, context: str = "", *parts):
        self.context, self.parts = context, parts

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if kind is None or not issubclass(kind, Exception) or issubclass(kind, (FramegraphError, TracedException)):
            return False
        raise_python_error(error, self.context % self.parts if self.parts else self.context)


def handled_exception(tx):
    """The exception being handled (``sys.exc_info()[1]``), or None when the trace
    handles none (the caller of the compiled frame may)."""
    while tx is not None:
        if tx.exc_stack:
            return tx.exc_stack[-1]
        tx = tx.parent
    return None


def caller_handles_nothing(tx) -> bool:
    """Whether no exception is being handled by the callers of the compiled frame, as now
    (the trace runs in their thread state), guarded for later calls (NO_HANDLED_EXCEPTION)."""
    if sys.exc_info()[1] is not None:
        return False
    tx.output.add_guard("NO_HANDLED_EXCEPTION", None)
    return True


def _exc_info(tx):
    """``sys.exc_info()``: the exception the trace handles, with its class and traceback;
    with none handled in the trace, the caller's, guarded to be none."""
    handled = handled_exception(tx)
    if handled is None:
        if not caller_handles_nothing(tx):
            unsupported("exception", "sys.exc_info() in a frame called while an exception is handled")
        return space.TupleVariable([ConstantVariable(None)] * 3)
    if not isinstance(handled, ExceptionVariable):
        unsupported("unsupported_call", f"sys.exc_info() while {handled} is handled")
    return space.TupleVariable([tx.wrap(handled.cls), handled, traceback_of(handled.tb_frames)])


def _exception(tx):
    """``sys.exception()``: the handled exception, or None (3.11)."""
    return _exc_info(tx).items[1]


EXC_INFO_MODELS = {sys.exc_info: _exc_info, **({sys.exception: _exception} if hasattr(sys, "exception") else {})}
