"""The Python view of the per-code cache that lives in C (`co_extra`).

The C hook keeps, per code object, a tuple of (check function, replacement
code) entries. This module keeps the structured guard behind each check
function (its readable lines, and `failure()` that names the guard rejecting
given inputs) and answers questions about a function's cache: its entries
with guard lines and hit counts, and why given inputs would recompile.
"""
import dataclasses
import inspect
import types
from typing import List

from .. import _C

def remember_guard(guard):
    """The bare check function for the C cache; the structured guard stays reachable from it.

    A Python-level __call__ would cost every call, so C gets the function and
    the function carries its CompiledGuard as `compiled_guard`.
    """
    check = getattr(guard, "fn", guard)
    if check is not guard:
        check.compiled_guard = guard
    return check


def guard_of(check):
    """The structured guard behind a cached check function (or the function itself)."""
    return getattr(check, "compiled_guard", check)


def arg_names(code):
    """Names of the argument slots: positional, keyword-only, *args, **kwargs."""
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return code.co_varnames[:n]


@dataclasses.dataclass
class EntryInfo:
    """One cache entry of a code object, for people."""

    guard_lines: List[str]
    code: types.CodeType
    hits: int


def _code_of(fn_or_code):
    if isinstance(fn_or_code, types.CodeType):
        return fn_or_code
    fn = getattr(fn_or_code, "_framegraph_fn", fn_or_code)  # a compile() wrapper
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        raise TypeError(f"expected a Python function or code object, got {type(fn_or_code).__name__}")
    return code


def entries(fn_or_code) -> List[EntryInfo]:
    """The cache entries of a function (or code object), newest hit first."""
    out = []
    for check, code, hits in _C.cache_entries(_code_of(fn_or_code)):
        out.append(EntryInfo(list(getattr(guard_of(check), "lines", [])), code, hits))
    return out


def recompile_reasons(func, code, f_locals):
    """For each cache entry of `code`, the guard that rejects these inputs, in words."""
    slots = [f_locals.get(name) for name in arg_names(code)]
    reasons = []
    for check, _, _ in _C.cache_entries(code):
        explain = getattr(guard_of(check), "failure", None)
        try:
            reason = explain(func, *slots) if explain else None
        except Exception as e:  # a diagnostic must never break the program
            reason = f"(could not explain: {e!r})"
        reasons.append(reason or "a guard failed")
    return reasons
