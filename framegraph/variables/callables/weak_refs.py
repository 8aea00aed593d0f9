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
from ...guards.sources import WeakRefCallSource
from ..core.base import VariableTracker


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
        return tx.wrap(self.ref(), WeakRefCallSource(self.source))

    def __repr__(self):
        return f"WeakRefVariable({self.source.name()})"


def wrap_weakref(tx, value, source):
    """builder rule for ``weakref.ref``: a reference with a source, or none (one made
    by the trace's own code is not modelled)."""
    if source is None or type(value) is not weakref.ReferenceType:
        unsupported("unsupported_value", "a weakref.ref made in the trace")
    tx.output.add_guard("TYPE_MATCH", source, weakref.ReferenceType)
    return WeakRefVariable(value, source=source)
