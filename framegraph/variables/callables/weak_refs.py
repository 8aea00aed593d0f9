"""``weakref.ref`` objects from outside the frame: calling one reads its referent.

``ref()`` is the object the reference points to, or None once it died. The
tracker reads it through a source of its own, ``ref()``, so the referent is
guarded like any value read from outside (a tensor's metadata, an object's
identity, None): a reference whose object died fails its guard and the frame
recompiles. nn.RNN's ``_weights_have_changed`` compares its weights with the
references it keeps this way.
"""
import weakref

from ...errors import unsupported
from ...guards.sources import CallSource
from ..core.base import VariableTracker, known_type
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_in_trace


class WeakRefVariable(VariableTracker):
    """A ``weakref.ref`` read from outside (it has a source)."""

    def __init__(self, ref, **kwargs):
        super().__init__(**kwargs)
        self.ref = ref

    def python_type(self):
        return type(self.ref)

    def call(self, tx, args, kwargs):
        if args or kwargs:
            unsupported("unsupported_call", "weakref.ref() takes no arguments")
        return tx.wrap(self.ref(), CallSource(self.source))

    def __repr__(self):
        return f"WeakRefVariable({self.source.name()})"


class MadeWeakRefVariable(VariableTracker):
    """``weakref.ref(obj)`` made in the trace (no callback); after the graph it is
    ``weakref.ref(obj)`` of the real object (CPython shares one such reference per
    object, so identity holds too). Calling it is a break: whether the object still
    lives depends on references the trace cannot count (``obj = None`` may have
    dropped the last one), so CPython answers."""

    def __init__(self, referent, **kwargs):
        super().__init__(**kwargs)
        self.referent = referent

    def python_type(self):
        return weakref.ReferenceType

    def call(self, tx, args, kwargs):
        if args or kwargs:
            raise_in_trace(TypeError, f"weakref.ReferenceType() takes no arguments ({len(args) + len(kwargs)} given)")
        unsupported("unsupported_call", "calling a weak reference made in the trace (is its object alive?)")

    def getattr(self, tx, name):
        if name == "__callback__":
            return ConstantVariable(None)
        return super().getattr(tx, name)

    def reconstruct(self, cg):
        cg.emit_op("PUSH_NULL")
        cg.load_const(weakref.ref)
        cg(self.referent)
        cg.call(1)

    def __repr__(self):
        return f"MadeWeakRefVariable({self.referent!r})"


def make_weakref(tx, referent, *rest, **kwargs):
    """``weakref.ref(obj)`` in the trace; with a callback, or of a value that cannot be
    referred to weakly (``weakref.ref(1)``: CPython's TypeError), not modelled."""
    if rest or kwargs:
        unsupported("unsupported_call", "weakref.ref with a callback")
    kind = known_type(referent)
    if not isinstance(kind, type) or not kind.__weakrefoffset__:
        unsupported("unsupported_call", f"weakref.ref of a {getattr(kind, '__name__', referent)}")
    made = vars(tx.output).setdefault("weak_refs", {})  # one per object: `ref(o) is ref(o)` holds
    if id(referent) not in made:
        made[id(referent)] = (referent, MadeWeakRefVariable(referent))
    return made[id(referent)][1]


def wrap_weakref(tx, value, source):
    """builder rule for ``weakref.ref``: a reference with a source, or none (one made
    by the trace's own code is not modelled)."""
    if source is None or type(value) is not weakref.ReferenceType:
        unsupported("unsupported_value", "a weakref.ref made in the trace")
    tx.output.add_guard("TYPE_MATCH", source, weakref.ReferenceType)
    return WeakRefVariable(value, source=source)
