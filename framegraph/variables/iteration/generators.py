"""Generator objects made in the trace, run lazily, in step with their consumer.

Calling a generator function from traced code makes a ``GeneratorVariable``
holding a paused translator over the generator's code (``tracer/translator.py``
builds it). Like CPython's ``gen_send_ex``, each ``next()`` / ``send(v)``
runs the body from where it stopped to the next ``yield`` (whose value it
returns) or to its end (StopIteration); so the body's side effects, and
what it reads, happen exactly when they do in eager. ``throw(E)`` raises
``E`` at the paused ``yield``, for the body's own handlers to catch;
``close()`` throws ``GeneratorExit``. An exception that leaves the body
finishes the generator and propagates to the consumer; a ``StopIteration``
leaving it becomes ``RuntimeError`` (PEP 479). The resume that runs the body
to ``return value`` raises ``StopIteration(value)`` (``gen_send_ex``), which
``yield from`` reads as its result and a consumer as ``.value``; later
resumes raise a bare one.

Resumed from a different consumer (a helper that calls ``next(g)``), the
body runs with that consumer as its caller, as CPython links the frame to
the caller at each resume. A generator that is still alive when the graph
ends cannot be rebuilt (its frame exists only in the trace): that is a
catalogued ``generator`` break.
"""
import types

from ...errors import unsupported
from ..core.base import BoundMethodVariable, VariableTracker
from ..core.constant import ConstantVariable
from ..core.exceptions import ExceptionVariable, TracedException, is_exception_class, raise_in_trace
from ..core.iterator import IteratorVariable


class GeneratorVariable(IteratorVariable):
    py_type = types.GeneratorType

    def __init__(self, gtx, **kwargs):
        super().__init__(**kwargs)
        self.gtx = gtx                # the paused translator of the body
        self.started = False
        self.finished = False
        self.running = False          # a body that advances itself raises ValueError, as CPython
        self.return_value = None      # what the body returned (``yield from`` reads it)
        self.just_returned = False    # the last resume ran the body to its return

    # ---- the protocol
    def next(self, tx):
        return self.send(tx, ConstantVariable(None))

    def send(self, tx, value, throw=None):
        """Resume the body with ``value`` (or raise ``throw`` at the yield): the next
        yielded tracker, or None once the body returned."""
        if self.running:
            raise_in_trace(ValueError, "generator already executing")
        self.just_returned = False
        if self.finished:
            if throw is not None:
                raise throw
            return None
        if not self.started and throw is None and not _is_none(value):
            raise_in_trace(TypeError, "can't send non-None value to a just-started generator")
        gtx = self.gtx
        gtx.parent = tx  # the frame's caller is whoever resumes it
        self.running = True
        try:
            if not self.started:
                self.started = True
                if throw is not None:  # thrown before the first next(): raised at the first line
                    self.finished = True
                    raise throw
            elif throw is not None:
                gtx.paused = False
                _raise_at_yield(gtx, throw)
            else:
                gtx.paused = False
                gtx.push(value)  # what the paused YIELD_VALUE evaluates to
            gtx.run()
        except TracedException as error:
            self.finished = True
            if issubclass(error.value.cls, StopIteration):  # PEP 479, _PyErr_FormatFromCause
                converted = ExceptionVariable(RuntimeError, [ConstantVariable("generator raised StopIteration")])
                converted.cause = converted.context = error.value
                converted.suppress_context = True
                leaked = TracedException(converted)
                leaked.chained = True  # its __context__ is the StopIteration, not what the caller handles
                raise leaked from None
            raise
        finally:
            self.running = False
        if gtx.done:
            self.finished = True
            self.just_returned = True
            self.return_value = gtx.return_value
            return None
        return gtx.yielded_value

    def stop_args(self):
        """``StopIteration(value)`` from the resume that ran the body to ``return value``
        (``gen_send_ex``: none for None); a finished generator's later resumes raise a bare one."""
        value = self.return_value
        if not self.just_returned or value is None or _is_none(value):
            return []
        return [value]

    def throw(self, tx, exc):
        """``g.throw(exc)``: the body's next yielded value after handling it."""
        item = self.send(tx, ConstantVariable(None), throw=TracedException(exc))
        if item is None:
            self.raise_stop()
        return item

    def close(self, tx):
        """``g.close()``: GeneratorExit at the yield; yielding again is a RuntimeError."""
        if not self.started or self.finished:
            self.finished = True
            return ConstantVariable(None)
        try:
            item = self.send(tx, ConstantVariable(None), throw=TracedException(ExceptionVariable(GeneratorExit, [])))
        except TracedException as error:
            if issubclass(error.value.cls, (GeneratorExit, StopIteration)):
                return ConstantVariable(None)
            raise
        if item is not None:
            raise_in_trace(RuntimeError, "generator ignored GeneratorExit")
        return ConstantVariable(None)

    def call_method(self, tx, name, args, kwargs):
        if kwargs:
            unsupported("generator", f"generator.{name} with keyword arguments")
        if name == "send" and len(args) == 1:
            item = self.send(tx, args[0])
            if item is None:
                self.raise_stop()
            return item
        if name == "throw" and 1 <= len(args) <= 3:
            # throw(exc), or the old throw(type, value, traceback) contextlib still calls:
            # the value when it is an exception, else one made from the type
            value = args[1] if len(args) > 1 and isinstance(args[1], ExceptionVariable) else args[0]
            return self.throw(tx, _exception_of(value))
        if name == "close" and not args:
            return self.close(tx)
        return super().call_method(tx, name, args, kwargs)

    def getattr(self, tx, name):
        if name in ("send", "throw", "close", "__next__", "__iter__"):
            return BoundMethodVariable(self, name)
        if name in ("__name__", "__qualname__"):
            return ConstantVariable(getattr(self.gtx.code, "co_" + name.strip("_")))
        # genobject.c's getters: gi_running is the frame executing, gi_suspended a frame paused
        # at a yield; gi_frame is None once the generator finished (what inspect's
        # getgeneratorstate tells CLOSED from CREATED by)
        if name == "gi_running":
            return ConstantVariable(self.running)
        if name == "gi_suspended":
            return ConstantVariable(self.started and not self.finished and not self.running)
        if name == "gi_frame":
            return ConstantVariable(None) if self.finished else GeneratorFrameVariable(self)
        return super().getattr(tx, name)

    def reconstruct(self, cg):
        unsupported("generator", f"the generator {self.gtx.code.co_name} outlives the graph "
                                 "(its frame exists only in the trace)")

    def __repr__(self):
        return f"GeneratorVariable({self.gtx.code.co_name})"


class GeneratorFrameVariable(VariableTracker):
    """``g.gi_frame`` of a generator that has not finished: its frame exists (it is not None,
    and is true), but lives only in the trace, so nothing else of it is modelled."""

    def __init__(self, gen, **kwargs):
        super().__init__(**kwargs)
        self.gen = gen

    def python_type(self):
        return types.FrameType

    def truth(self, tx):
        return True

    def getattr(self, tx, name):
        unsupported("generator", f"frame.{name} of the generator {self.gen.gtx.code.co_name}")

    def reconstruct(self, cg):
        unsupported("generator", f"the frame of the generator {self.gen.gtx.code.co_name} outlives the graph")

    def __repr__(self):
        return f"GeneratorFrameVariable({self.gen.gtx.code.co_name})"


def _is_none(v):
    return v.is_python_constant() and v.as_python_constant() is None


def _exception_of(value):
    """``throw(E)`` or ``throw(E(...))``: the exception tracker to raise."""
    if isinstance(value, ExceptionVariable):
        return value
    if value.is_python_constant() and is_exception_class(value.as_python_constant()):
        return ExceptionVariable(value.as_python_constant(), [])
    unsupported("generator", f"throw({value})")


def _raise_at_yield(gtx, error):
    """Raise ``error`` where the body is paused, for its exception table to find a handler."""
    if gtx.delegating:  # `yield from sub`: CPython forwards throw() to the sub-iterator
        unsupported("generator", "throw() into a generator paused in yield from")
    gtx.raise_at(gtx.yield_instruction, error)
