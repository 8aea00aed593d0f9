"""The TypeError CPython raises for a call whose arguments do not bind.

``f()`` for ``def f(a, b)`` raises ``TypeError("f() missing 2 required
positional arguments: 'a' and 'b'")`` from the call instruction, before the
callee's frame exists; code catches it (``assertRaises(TypeError, f)``,
dispatch that tries a signature and falls back). The wording depends on
every detail of the signature (counts, plurals, keyword-only names, the
function's ``__qualname__``), so rather than rewrite CPython's
``format_missing``/``too_many_positional`` this binds the call on a stand-in:
a function compiled with the same parameters, names and number of defaults
and an empty body, which CPython rejects with the very message. Values do
not matter to binding (only how many positional arguments and which
keywords), so the stand-in gets placeholders.
"""
import keyword
import types
from typing import Dict, Optional, Sequence

_STANDINS: Dict[str, types.CodeType] = {}


def binding_error(code: types.CodeType, qualname: str, ndefaults: int, kwdefaults: Sequence[str],
                  nargs: int, kwargs: Sequence[str]) -> Optional[str]:
    """The message of the TypeError that calling a function of ``code`` (``ndefaults``
    positional defaults, keyword-only defaults for ``kwdefaults``) with ``nargs``
    positional arguments and the keywords ``kwargs`` raises; None if that call binds
    or the parameters cannot be written as Python source."""
    source = _signature_source(code, ndefaults, kwdefaults)
    if source is None:
        return None
    body = _STANDINS.get(source)  # by the signature, not the code: no user code is kept alive
    if body is None:
        namespace = {}
        exec(compile(source, "<framegraph stand-in>", "exec"), namespace)  # noqa: S102 (our own text)
        body = _STANDINS[source] = namespace["standin"].__code__
    standin = types.FunctionType(body, {}, code.co_name, (None,) * ndefaults or None)
    standin.__kwdefaults__ = dict.fromkeys(kwdefaults) or None
    standin.__qualname__ = qualname  # the messages name the function by it
    try:
        standin(*[None] * nargs, **dict.fromkeys(kwargs))
    except TypeError as error:
        return str(error)
    return None


def _signature_source(code, ndefaults, kwdefaults) -> Optional[str]:
    """``def standin(<the parameters of code>): pass``, with defaults where code has them."""
    nargs, posonly, nkwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    names = code.co_varnames
    star = names[nargs + nkwonly] if code.co_flags & 0x04 else None          # CO_VARARGS
    starstar = (names[nargs + nkwonly + (star is not None)]
                if code.co_flags & 0x08 else None)                          # CO_VARKEYWORDS
    used = list(names[:nargs + nkwonly]) + [n for n in (star, starstar) if n]
    if not all(n.isidentifier() and not keyword.iskeyword(n) for n in used):
        return None  # a comprehension's ``.0``: never called by user code
    params = []
    for i, name in enumerate(names[:nargs]):
        params.append(f"{name}=None" if i >= nargs - ndefaults else name)  # defaults: the function's own
        if i == posonly - 1:
            params.append("/")
    if star is not None:
        params.append("*" + star)
    elif nkwonly:
        params.append("*")
    for name in names[nargs:nargs + nkwonly]:
        params.append(f"{name}=None" if name in kwdefaults else name)
    if starstar is not None:
        params.append("**" + starstar)
    return f"def standin({', '.join(params)}):\n    pass\n"
