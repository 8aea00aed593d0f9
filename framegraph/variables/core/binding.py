"""Binding call arguments to a Python function's parameters, as CPython does.

``bind_args`` applies CPython's rules (positional, then keyword, then
defaults; extras to ``*args``/``**kwargs``) to trackers. A call CPython
rejects raises CPython's own TypeError in the trace: its message is the one a
stub function with the same parameters and ``__qualname__`` raises for the
same call (the wording, counts and order of the checks vary between versions,
and CPython knows them).
"""
import functools
import inspect
from typing import Dict, Optional

from ...errors import unsupported
from . import space
from .base import VariableTracker
from .exceptions import raise_in_trace

def bind_args(code, name, defaults, kwdefaults, args, kwargs) -> Dict[str, VariableTracker]:
    """Bind tracker arguments to ``code``'s parameters with CPython's rules:
    positional, then keyword, then defaults; extras to ``*args``/``**kwargs``.
    A call CPython rejects raises CPython's own TypeError in the trace (``name``:
    the function's ``__qualname__``, which the message names)."""
    def _reject(why):
        _rejected(code, name, len(defaults), tuple(kwdefaults), len(args), tuple(kwargs), why)

    nargs, posonly, nkwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    names = code.co_varnames
    positional, kwonly = names[:nargs], names[nargs:nargs + nkwonly]
    star = names[nargs + nkwonly] if code.co_flags & inspect.CO_VARARGS else None
    starstar = (names[nargs + nkwonly + (star is not None)]
                if code.co_flags & inspect.CO_VARKEYWORDS else None)
    if len(args) > nargs and star is None:
        _reject(f"takes {nargs} positional arguments but {len(args)} were given")
    given = dict(zip(positional, args))
    extra = {}
    for key, value in kwargs.items():
        if key in kwonly or key in positional[posonly:]:
            if key in given:
                _reject(f"got multiple values for argument {key!r}")
            given[key] = value
        elif starstar is not None:
            extra[key] = value
        else:
            _reject(f"got an unexpected keyword argument {key!r}")
    first_default = nargs - len(defaults)
    result = {}
    for i, param in enumerate(positional):
        if param in given:
            result[param] = given[param]
        elif i >= first_default:
            result[param] = defaults[i - first_default]
        else:
            _reject(f"missing required argument {param!r}")
    for param in kwonly:
        if param in given:
            result[param] = given[param]
        elif param in kwdefaults:
            result[param] = kwdefaults[param]
        else:
            _reject(f"missing required keyword-only argument {param!r}")
    if star is not None:
        result[star] = space.TupleVariable(list(args[nargs:]))
    if starstar is not None:
        result[starstar] = space.ConstDictVariable.from_kwargs(extra)
    return result


def _rejected(code, qualname, ndefaults, kwdefault_names, nargs, kwnames, why):
    """Raise the TypeError CPython raises for this call; a break if the stub accepts it
    (the model and CPython disagree: let CPython decide)."""
    message = _binding_error(code, qualname, ndefaults, kwdefault_names, nargs, kwnames)
    if message is None:
        unsupported("operator_error", f"calling {qualname}: {qualname}() {why}")
    raise_in_trace(TypeError, message)


@functools.lru_cache(maxsize=256)
def _binding_error(code, qualname, ndefaults, kwdefault_names, nargs, kwnames) -> Optional[str]:
    """CPython's message for calling a function of ``code``'s signature with ``nargs``
    positional arguments and keywords ``kwnames``: the error of a stub with the same
    parameters (and an empty body) under the same ``__qualname__`` (the wording, the
    counts and the order of the checks are CPython's own, for every version)."""
    names = code.co_varnames
    nposargs, posonly, nkwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    params = [name + ("=None" if i >= nposargs - ndefaults else "") for i, name in enumerate(names[:nposargs])]
    if posonly:
        params.insert(posonly, "/")
    rest = nposargs + nkwonly
    if code.co_flags & inspect.CO_VARARGS:
        params.append("*" + names[rest])
        rest += 1
    elif nkwonly:
        params.append("*")
    params += [name + ("=None" if name in kwdefault_names else "") for name in names[nposargs:nposargs + nkwonly]]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append("**" + names[rest])
    namespace = {}
    exec(f"def stub({', '.join(params)}): pass", namespace)  # noqa: S102 (a signature, no body)
    stub = namespace["stub"]
    stub.__qualname__ = qualname
    try:
        stub(*[None] * nargs, **dict.fromkeys(kwnames))
    except TypeError as e:
        return str(e)
    return None
