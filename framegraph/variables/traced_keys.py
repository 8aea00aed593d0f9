"""Dict keys whose class hashes and compares by Python code (``__hash__``, ``__eq__``).

``class Key: def __hash__(self): return hash((self.a, self.b))`` as a key of a
dict made in the trace. CPython hashes the key once per dict operation, then
compares it, by ``stored == key``, with each stored key of equal hash that is
not the same object, in the order its probe sequence meets them. The trackers
of a dict sit in a real dict (``ConstDictVariable.items``) keyed by stand-ins;
a ``TracedKey`` stand-in carries the hash the traced ``__hash__`` returned, and
its ``__eq__`` runs the traced comparison. So the real dict asks for exactly
the comparisons CPython's would, in its order, and a comparison that mutates
the dict restarts the lookup as CPython's does.

What the graph's caller sees is rebuilt after the graph (a dict display, or the
side-effect replay), which hashes and compares the keys again. That is only
the same program when those calls change nothing: a ``__hash__`` or ``__eq__``
that writes any state (an attribute, a list, a global) is refused.
"""
import weakref

from ..errors import unsupported


def _state(tx):
    """What a call with side effects would change: the ledger and the trace's own mutations."""
    se = tx.output.side_effects
    return len(se), se.mutations, se.local_mutations


class TracedKey:
    """The stand-in of a key tracker in a real dict: its traced hash, its traced ``==``."""

    __slots__ = ("var", "hash", "output")
    # the translator of the dict operation in progress (note_operation), held weakly: a
    # finished trace's trackers must go (an object's __del__ runs when CPython drops it)
    _tx = staticmethod(lambda: None)

    def __init__(self, var, value, output):
        self.var, self.hash, self.output = var, value, output

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        from .constant import wrap_constant
        from .dicts import _Identity

        if isinstance(other, TracedKey) and other.var.identity is self.var.identity:
            return True  # the same object: CPython's dict does not call __eq__
        if isinstance(other, _Identity):
            return False  # a tensor or module key: only its identity equals it
        tx = TracedKey._tx()
        if tx is None or tx.output is not self.output:
            unsupported("unsupported_value", f"comparing a dict key of type {self.var.python_type().__name__} "
                                             "outside the dict operation that hashed it")
        from .ops import compare

        other_var = other.var if isinstance(other, TracedKey) else wrap_constant(other)
        before = _state(tx)
        try:
            equal = compare(tx, "==", self.var, other_var).truth(tx)
        finally:
            note_operation(tx)  # a nested dict operation in __eq__ set its own
        _refuse_state_change(tx, before, self.var, "__eq__")
        return equal

    def __repr__(self):
        return f"TracedKey({self.var!r}, hash={self.hash})"


def _refuse_state_change(tx, before, var, name):
    if _state(tx) != before:
        unsupported("unsupported_value", f"a dict key of type {var.python_type().__name__} whose {name} "
                                         "changes state (the dict rebuilt after the graph would call it again)")


def runs_python_hash_and_eq(var) -> bool:
    """Whether ``var`` is a user object whose class hashes by a Python ``__hash__``."""
    from .user_defined import UserDefinedObjectVariable, _static
    import types

    return isinstance(var, UserDefinedObjectVariable) and isinstance(_static(var.python_type(), "__hash__")[1],
                                                                     types.FunctionType)


def traced_key(tx, var) -> TracedKey:
    """Hash ``var`` as CPython's dict does (its ``__hash__``, inlined, checked and reduced
    as slot_tp_hash does), for one dict operation."""
    from .number_protocol import hash_of

    note_operation(tx)
    before = _state(tx)
    value = hash_of(tx, var).as_python_constant()
    note_operation(tx)
    _refuse_state_change(tx, before, var, "__hash__")
    return TracedKey(var, value, tx.output)


def note_operation(tx) -> None:
    """A dict operation with a constant key begins: stored traced keys compare in ``tx``."""
    TracedKey._tx = weakref.ref(tx)
