"""``functools.partial`` objects, as CPython's ``_functools`` builds and calls them.

``PartialVariable`` holds the three things a partial is: ``func``, ``args``
(a tuple tracker) and ``keywords`` (a dict tracker). It follows
``Modules/_functoolsmodule.c`` of 3.11:

* ``partial_new``: the first argument must be callable; a partial of a partial
  whose instance ``__dict__`` was never created is flattened (``func`` is the
  inner function, ``args`` the inner's then the new ones, ``keywords`` the
  inner's updated with the new ones). A partial made in this trace has no
  ``__dict__``, so it flattens; for one from outside the frame the tracer
  cannot see whether CPython would flatten (reading ``__dict__`` creates it),
  so the new partial keeps it as its ``func``: calling is the same either way,
  and reading ``func``/``args``/``keywords`` of that outer partial is a break.
* ``partial_call``: ``func(*args, *call_args, **{**keywords, **call_kwargs})``,
  so keywords given at the call override the stored ones.
* ``func``, ``args``, ``keywords`` are read-only members; ``keywords`` is the
  partial's own dict (mutating it changes later calls), so the tracker hands
  out the same dict tracker every time.

A partial from outside the frame (an argument, ``self.act`` of a module) is
wrapped by the builder from its three members, each read through its source
(``p.func``, ``p.args``, ``p.keywords``): they get the guards any value read
there gets (identity of the function, length and items of the tuple, keys and
values of the dict), which is everything a call depends on. A partial that
leaves the trace (returned, or live across a graph break) is rebuilt: from its
source when it has one, else as ``functools.partial(func, *args, **keywords)``.
"""
import functools

from ..errors import unsupported
from ..guards.sources import AttrSource
from .base import VariableTracker
from .constant import ConstantVariable
from .dicts import ConstDictVariable
from .lists import TupleVariable


class PartialVariable(VariableTracker):
    def __init__(self, func, args: TupleVariable, keywords: ConstDictVariable, *, flat=True, **kwargs):
        super().__init__(**kwargs)
        self.func, self.args, self.keywords = func, args, keywords
        self.flat = flat  # False: ``func`` is a partial CPython may have flattened into this one

    def python_type(self):
        return functools.partial

    def call(self, tx, args, kwargs):
        keywords = {k.as_python_constant(): v for k, v in self.keywords.items.values()}
        keywords.update(kwargs)
        return self.func.call(tx, list(self.args.unpack(tx)) + list(args), keywords)

    def getattr(self, tx, name):
        if name in _MEMBERS:
            if not self.flat:
                unsupported("unsupported_attribute", f"partial.{name} of a partial of a partial from "
                            "outside the frame (whether CPython flattened it depends on its __dict__)")
            return getattr(self, name)
        if name == "__call__":
            from .base import BoundMethodVariable

            return BoundMethodVariable(self, "__call__")
        unsupported("unsupported_attribute", f"functools.partial.{name}")

    def call_method(self, tx, name, args, kwargs):
        if name == "__call__":
            return self.call(tx, args, kwargs)
        return super().call_method(tx, name, args, kwargs)

    def hasattr(self, tx, name):
        return hasattr(functools.partial, name) or None

    def reconstruct(self, cg):
        if self.source is not None:
            return super().reconstruct(cg)
        from .. import bytecode

        pairs = list(self.keywords.items.values())
        cg.emit(bytecode.create_instruction("PUSH_NULL"))
        cg.load_const(functools.partial)
        cg(self.func)
        for item in self.args.items:
            cg(item)
        for _, value in pairs:
            cg(value)
        names = [k.as_python_constant() for k, _ in pairs]
        nargs = 1 + len(self.args.items) + len(pairs)
        cg.call_kw(nargs, names) if names else cg.call(nargs)

    def __repr__(self):
        return f"PartialVariable({self.func!r})"


_MEMBERS = ("func", "args", "keywords")


def make_partial(tx, *args, **kwargs):
    """``functools.partial(func, *args, **keywords)`` called in the trace (partial_new)."""
    from .exceptions import raise_in_trace

    if not args:
        raise_in_trace(TypeError, "type 'partial' takes at least one argument")
    func, args = args[0], list(args[1:])
    if not _is_callable(func):
        raise_in_trace(TypeError, "the first argument must be callable")
    keywords = dict(kwargs)
    flat = True
    if isinstance(func, PartialVariable):
        if func.source is None and func.flat:  # made in this trace: no __dict__, CPython flattens
            args = list(func.args.items) + args
            keywords = {**{k.as_python_constant(): v for k, v in func.keywords.items.values()}, **keywords}
            func = func.func
        else:
            flat = False
    return PartialVariable(func, TupleVariable(args), ConstDictVariable.from_kwargs(keywords), flat=flat)


def _is_callable(var) -> bool:
    """``callable()`` of the first argument: its type defines ``__call__``."""
    if isinstance(var, ConstantVariable):
        return callable(var.value)
    return any("__call__" in klass.__dict__ for klass in var.python_type().__mro__)


def wrap_partial(tx, value, source):
    """A ``functools.partial`` from outside the frame, read member by member
    (``source`` None: a value assumed stable, wrapped without guards)."""

    if source is not None:
        tx.output.add_guard("TYPE_MATCH", source, functools.partial)
    func, args, keywords = (tx.wrap(getattr(value, name), AttrSource(source, name) if source else None)
                            for name in _MEMBERS)
    return PartialVariable(func, args, keywords, flat=True, source=source)


# The classes whose call the builder models here (``functools.partial(f, ...)``).
PARTIAL_MODELS = {functools.partial: make_partial}
