"""The callback the C hook calls on a cache miss: skip, trace, or fall back.

For each frame the hook cannot answer from its cache, `ConvertFrame` decides:
  1. the quick filter (`skip.py`): SKIP, read in C from then on;
  2. otherwise trace it (`pipeline.trace_frame`), returning (guard, code) for
     the C cache, the code made all-positional for re-call (hook.md s. 3);
  3. if tracing cannot capture the frame (`Unsupported`) or the compiler
     fails, log why and let the frame run unmodified: the user gets eager's
     result. `fullgraph=True` or `config.strict` raise instead.
A per-code lock keeps two threads from tracing one code at the same time.
"""
import dataclasses
import inspect
import logging
import sys
import threading
import time
import weakref

import torch

from .. import _C
from ..config import config, on_reset
from ..diagnostics import logs, records
from ..diagnostics.records import CompileRecord
from ..errors import InternalError, Unsupported, unsupported
from ..variables.core.base import collect_trace_cycles
from . import skip, stance
from .cache import arg_names, recompile_reasons, remember_guard

log = logging.getLogger("framegraph")

_VAR_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

# Every code that got a mark or an entry from us, for framegraph.reset().
touched_codes = weakref.WeakSet()
_locks = weakref.WeakKeyDictionary()
_locks_guard = threading.Lock()
_warned = set()
# The last recompile reasons per code, for the recompile-limit warning.
_last_reasons = weakref.WeakKeyDictionary()
# How often a frame was run unmodified after a break errors.RETRY names.
retries = weakref.WeakKeyDictionary()
# Codes whose first call ran unmodified under set_stance("eager_then_compile").
_ran_once = weakref.WeakSet()
# code -> guards a callback handed to the hook that the hook may not have installed
# yet: it installs an entry after the callback returns, when the code's lock is free
# again, so a thread that waited on the lock could not see it and traced the same
# inputs a second time.
_handed_over = weakref.WeakKeyDictionary()

@on_reset
def _forget():
    touched_codes.clear()  # their entries and marks were dropped by reset() first
    retries.clear()
    _last_reasons.clear()
    _ran_once.clear()
    _handed_over.clear()


def as_positional(code):
    """`code` with every argument slot made positional, as re-call needs it."""
    return code.replace(
        co_argcount=len(arg_names(code)),
        co_posonlyargcount=0,
        co_kwonlyargcount=0,
        co_flags=code.co_flags & ~_VAR_FLAGS,
    )


def _lock_for(code):
    with _locks_guard:
        lock = _locks.get(code)
        if lock is None:
            lock = _locks[code] = threading.RLock()
        return lock


def _where(code):
    # the qualname's last part: a resume function's name says where it resumes (f_resume_at_7)
    return f"{code.co_qualname.rsplit('.', 1)[-1]} ({code.co_filename}:{code.co_firstlineno})"


def _warn_once(code, message):
    key = (code, message)
    if key not in _warned:
        _warned.add(key)
        log.warning(message)


_functorch_level = torch._C._functorch.maybe_current_level

# Python frames a trace may need on top of the frame's own (the translator, inlined
# calls, FakeTensor dispatch, logging). With fewer left under the recursion limit (a
# test that lowers it to provoke RecursionError), the frame runs unmodified: a
# RecursionError inside the tracer could escape through its logging, and leave a
# module half-imported for every later trace.
TRACE_HEADROOM = 250


def _builds_a_module(code, f_locals) -> bool:
    """An nn.Module's ``__init__``: building a model has no tensor work worth a graph,
    and nn.Module's attribute bookkeeping is not modelled. It and what it calls run
    as they are, like torch.compile does."""
    return (code.co_name == "__init__" and code.co_argcount > 0
            and isinstance(f_locals.get(code.co_varnames[0]), torch.nn.Module))


class ConvertFrame:
    """The per-`compile()` callback: `cb(func, code, f_locals) -> None | SKIP | (guard, code)`."""

    _shared = weakref.WeakValueDictionary()

    def __init__(self, options):
        self.options = options
        self.guards = weakref.WeakSet()  # the guards of the entries this callback made

    @classmethod
    def for_options(cls, options):
        """One callback per distinct options, so compiling a function twice the same way
        shares its cache entries (the C cache keeps entries per callback)."""
        try:
            key = (options.requested or options.backend, options.fullgraph, options.dynamic, options.mode,
                   None if options.options is None else frozenset(options.options.items()),
                   options.guard_filter_fn)
            hash(key)
        except TypeError:  # unhashable options: a callback of its own
            return cls(options)
        callback = cls._shared.get(key)
        if callback is None:
            callback = cls._shared[key] = cls(options)
        return callback

    def __repr__(self):
        return f"<framegraph callback backend={self.options.backend_name!r}>"

    def __call__(self, func, code, f_locals):
        if _C.recursion_headroom() < TRACE_HEADROOM:
            return None  # no room to trace (not even to log): this call runs as it is
        if _builtins.replaced():
            return _run_with_replaced_builtins(code)
        if skip.skip_recursive_reason(code) is not None:
            touched_codes.add(code)
            return _C.SKIP_RECURSIVE
        disabled = skip.torch_disabled(func)  # torch.compiler.disable: its author said "never compile"
        if disabled == "recursive":  # the wrapper's code is the same for every such function
            touched_codes.add(code)
            return _C.SKIP_RECURSIVE
        if disabled == "own":
            inner = getattr(func._torchdynamo_orig_callable, "__code__", None)
            if inner is not None:
                _C.mark_skip(inner)
                touched_codes.add(inner)
        reason = skip.skip_reason(code, func)
        if reason is not None:
            touched_codes.add(code)
            return _C.SKIP
        if skip.inside_an_import(sys._getframe(1)):
            return None
        if _builds_a_module(code, f_locals):
            touched_codes.add(code)
            return _C.SKIP_RECURSIVE
        if _functorch_level() is not None:
            # called inside torch.func.vmap/grad: its tensors are functorch wrappers a trace
            # would see as plain tensors. This call runs unmodified; the code stays traceable.
            return None
        with _lock_for(code):
            if self._cached_elsewhere(func, code, f_locals):
                return None
            return self._convert(func, code, f_locals, stance.current())

    def _cached_elsewhere(self, func, code, f_locals):
        """True if another thread cached an entry for these inputs meanwhile. Only
        this callback's entries count: the hook never runs another backend's."""
        entries = [guard for guard, _, _ in _C.cache_entries(code) if guard in self.guards]
        handed = _handed_over.get(code, [])
        handed[:] = [guard for guard in handed if guard not in entries]  # installed by now
        if not entries and not handed:
            return False
        slots = [f_locals.get(name) for name in arg_names(code)]
        # a guard handed over stays here until the hook installed it (it always does, unless
        # installing raised); reset() forgets them all
        return any(_safe_guard(guard, func, slots) for guard in entries + handed if guard in self.guards)

    def _convert(self, func, code, f_locals, now):
        entries_before = len(_C.cache_entries(code))
        if now.name != "default" and not _stance_allows(now, func, code, f_locals, entries_before):
            return None
        record = CompileRecord(code, entries_before=entries_before)
        if record.entries_before:
            record.reasons = recompile_reasons(func, code, f_locals)
            _last_reasons[code] = record.reasons
            logs.getLogger("recompiles").info(
                "Recompiling %s, because:\n%s", _where(code),
                "\n".join(f"  - {r}" for r in record.reasons))
        start = time.perf_counter()
        options = self.options
        if now.force_backend is not None:
            options = dataclasses.replace(options, backend=now.force_backend, backend_name=now.backend_name)
        try:
            return self._trace(func, code, f_locals, record, options)
        finally:
            record.seconds = time.perf_counter() - start
            if records.observers:
                records.notify(record)
            collect_trace_cycles()  # before the frame runs: a __del__ runs where CPython runs it

    def _trace(self, func, code, f_locals, record, options):
        strict = options.fullgraph or config.strict
        try:
            from .pipeline import trace_frame  # loads torch.fx machinery: only when first needed

            compiled = _stored(func, code, f_locals, options)
            if compiled is not None:
                record.from_cache = True
            else:
                try:
                    compiled = trace_frame(func, code, f_locals, options)
                except RecursionError as e:  # the program, not the tracer: a catalogued fallback
                    unsupported("trace_too_deep", f"{_where(code)}: {e}")
                _store(func, code, f_locals, compiled, options)
        except Unsupported as e:
            record.error = e
            if strict:
                raise
            if _retry_later(code, e):
                log.info("framegraph: running %s unmodified this time: %s", _where(code), e)
                record.fallback = "retry"
                return None
            _warn_once(code, f"framegraph: running {_where(code)} unmodified: {e}")
            return self._fallback(code, record)
        except Exception as e:
            record.error = e
            if strict:
                raise InternalError(f"framegraph failed to compile {_where(code)}: {e!r}") from e
            log.warning("framegraph: internal error compiling %s; running it unmodified: %r",
                        _where(code), e, exc_info=log.isEnabledFor(logging.DEBUG))
            return self._fallback(code, record)
        record.compiled = compiled
        touched_codes.add(code)
        _log_compiled(code, compiled)
        guard = remember_guard(compiled.guard)
        self.guards.add(guard)
        _handed_over.setdefault(code, []).append(guard)
        return guard, as_positional(compiled.code)

    @staticmethod
    def _fallback(code, record):
        # Nothing cached yet: never try this code again. Otherwise keep the
        # entries that work and run this call unmodified.
        if _C.cache_entries(code):
            record.fallback = "entries"
            return None
        record.fallback = "skip"
        touched_codes.add(code)
        return _C.SKIP


def _stored(func, code, f_locals, options):
    """A stored trace of this frame whose guards pass (runtime/trace_cache.py), or None."""
    if not config.cache_dir:
        return None
    from . import trace_cache

    return trace_cache.load(func, code, f_locals, options)


def _store(func, code, f_locals, compiled, options):
    if not config.cache_dir:
        return
    from . import trace_cache

    try:
        trace_cache.store(func, code, f_locals, compiled, options)
    except Exception as e:  # the trace is good; only its copy on disk is lost
        log.warning("framegraph: could not store the trace of %s: %r", _where(code), e,
                    exc_info=log.isEnabledFor(logging.DEBUG))


def _stance_allows(now, func, code, f_locals, entries_before) -> bool:
    """Whether the stance lets this cache miss compile; False: the frame runs unmodified."""
    if now.name == "eager_then_compile":
        if code in _ran_once:
            return True
        _ran_once.add(code)
        from ..graph.dynamic import observe_unmodified_call  # torch.fx machinery: only when used

        observe_unmodified_call(code, f_locals, arg_names(code))
        return False
    if not entries_before:
        return True
    if now.name == "fail_on_recompile":
        reasons = recompile_reasons(func, code, f_locals)
        raise stance.RecompileError(
            f"{_where(code)} needs a recompile, and the stance is 'fail_on_recompile':\n"
            + "\n".join(f"  - {r}" for r in reasons))
    return now.name != "eager_on_recompile"


class _Builtins:
    """Whether the program has replaced one of the builtins framegraph was imported
    with (``test_functools`` caches ``builtins.len`` in an lru_cache for a while): the
    dict's version tag says when to look, so the check costs one C call."""

    def __init__(self):
        import builtins

        self.dict = builtins.__dict__
        # "_" is the REPL's last result: it changes all the time
        self.names = {k: v for k, v in self.dict.items() if k != "_"}
        self.version = _C.dict_version(self.dict)

    def replaced(self) -> bool:
        version = _C.dict_version(self.dict)
        if version == self.version:
            return False
        get, missing = self.dict.get, self.names  # any object not in the dict
        if any(get(k, missing) is not v for k, v in self.names.items()):
            return True
        self.version = version  # only new names: nothing framegraph uses changed
        return False


_builtins = _Builtins()


def _run_with_replaced_builtins(code):
    """Run the frame unmodified this time, and tell the observers why."""
    record = CompileRecord(code, entries_before=0)
    try:
        unsupported("builtins_replaced", code.co_name)
    except Unsupported as e:
        record.error, record.fallback = e, "retry"
    for fn in list(records.observers):
        try:
            fn(record)
        except Exception:  # an observer's own Python may call the replaced builtin
            log.debug("framegraph: an observer failed while a builtin is replaced", exc_info=True)
    return None


def _retry_later(code, error) -> bool:
    """Should a frame that failed with ``error`` be traced again on its next call?"""
    from ..errors import RETRY

    entry = getattr(error, "break_entry", None) or error.entry
    if entry is None or entry.id not in RETRY:
        return False
    tries = retries.get(code, 0)
    if tries >= config.recompile_limit:
        return False
    retries[code] = tries + 1
    return True


def _log_compiled(code, compiled):
    """The bytecode, graph and guards channels, for one newly compiled frame."""
    from ..diagnostics import pretty

    if logs.enabled("bytecode"):
        logs.getLogger("bytecode").info("%s", pretty.format_code_change(code, compiled.code))
    gm = getattr(compiled, "graph_module", None)
    if gm is not None and logs.enabled("graph"):
        logs.getLogger("graph").info("%s", pretty.format_graph(gm, f"GRAPH {code.co_name} "
                                                                   f"({getattr(compiled, 'compiled_fn_name', '')})"))
    if logs.enabled("guards"):
        lines = getattr(compiled, "guard_lines", None) or getattr(compiled.guard, "lines", [])
        logs.getLogger("guards").info("%s", pretty.format_guards(_where(code), lines))


def _safe_guard(guard, func, slots):
    try:
        return bool(guard(func, *slots))
    except Exception:
        return False


def on_cache_limit(code):
    """Called once by the C hook when `code` reaches the recompile limit."""
    reasons = _last_reasons.get(code, [])
    log.warning(
        "framegraph: %s was recompiled %d times (framegraph.config.recompile_limit); "
        "it now runs unmodified for inputs that match no cached entry. Last reasons:\n%s",
        _where(code), config.recompile_limit, "\n".join(f"  - {r}" for r in reasons) or "  (none)")
    records.notify_limit(code)


_C.set_limit_hook(on_cache_limit)
_C.set_cache_limit(config.recompile_limit)
