"""Why a guard rejects a call, in words the user can act on.

``CompiledGuard.failure`` finds the first guard that rejects the inputs of a
call; ``explain`` turns it into one sentence for the ``recompiles`` log and
the recompile-limit warning. It re-reads the guarded value from the same
source the guard reads and asks the guard's kind (kinds.py, ``GuardKind.explain``)
what changed, from what, to what, and when there is one, what to do about it::

    size of L['x'] dim 0 changed from 8 to 16 (...mark_dynamic(x, 0)...)
    L['scale'] changed from 2.0 to 3.0 (a Python float: pass a tensor to avoid recompiling)
    id of G['fn'] changed (the function was replaced)

This runs only on a recompile, never on the per-call path.
"""
from .kinds import KINDS, sources_of
from .sources import FUNC, GLOBALS, held_objects


def explain(g, argnames, fn, slots) -> str:
    """One sentence on why guard ``g`` rejects ``slots`` (the frame's argument values)."""
    kind = KINDS[g.kind]
    scope = dict(zip(argnames, slots), **{GLOBALS: fn.__globals__, FUNC: fn}, **held_objects(sources_of(g)))
    if g.source is None:
        now = scope
    else:
        try:
            now = eval(g.source.expr(), {}, scope)  # noqa: S307  (our own generated expression)
        except Exception as e:
            return f"{g.source.name()} cannot be read any more ({type(e).__name__}: {e})"
    if kind.explain is None:
        return f"guard failed: {kind.line(g)}"
    return kind.explain(g, now)
