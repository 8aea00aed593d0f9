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

CPython hashes once per operation, and so does the trace, so a ``__hash__``
that counts its calls counts right. The real dict may ask for a comparison
twice where CPython's asks once (a store looks the key up, then stores it), so
an ``__eq__`` that writes state (its code stores, or a traced call changed
something) is refused where it would be called.

A dict or set that leaves the graph is rebuilt after it (a display, or the
side-effect replay), which hashes and compares its keys again, in the state the
frame ends in. That is the same program only when those calls give what they
gave here and change nothing. So each stand-in notes what could make them
differ: a ``__hash__`` that changed state, a ``__hash__`` or ``__eq__`` that
writes or reads a module global holding data (``be_bad = True`` read by
``__eq__``: a flag the frame may flip), a key object that got an attribute
written after it was hashed; a container holding such a stand-in is then not
rebuilt (``check_rebuild``: the frame runs as it is).
"""
import builtins
import dis
import functools
import types
import weakref

from ...errors import unsupported
from ..core import space
from ..core.base import type_lookup
from ..core.constant import wrap_constant
from ..core.number_protocol import hash_of
from ..core.ops import compare


def _state(tx):
    """What a call with side effects would change: the ledger and the trace's own mutations."""
    se = tx.output.side_effects
    return len(se), se.mutations, se.local_mutations


class TracedKey:
    """The stand-in of a key tracker in a real dict: its traced hash, its traced ``==``."""

    __slots__ = ("var", "hash", "output", "unsafe")
    # the translator of the dict operation in progress (note_operation), held weakly: a
    # finished trace's trackers must go (an object's __del__ runs when CPython drops it)
    _tx = staticmethod(lambda: None)

    def __init__(self, var, value, output, unsafe=None):
        self.var, self.hash, self.output = var, value, output
        self.unsafe = unsafe  # why a rebuild would not be the same program, or None

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        if isinstance(other, TracedKey) and other.var.identity is self.var.identity:
            return True  # the same object: CPython's dict does not call __eq__
        if isinstance(other, space.IdentityKey):
            return False  # a tensor or module key: only its identity equals it
        tx = TracedKey._tx()
        if tx is None or tx.output is not self.output:
            unsupported("unsupported_value", f"comparing a dict key of type {self.var.python_type().__name__} "
                                             "outside the dict operation that hashed it")
        other_var = other.var if isinstance(other, TracedKey) else wrap_constant(other)
        # this dict may ask for a comparison twice where CPython's asks once (a store looks the
        # key up, then stores it): only a comparison that changes nothing may be asked again
        for key in (self, other):
            if isinstance(key, TracedKey) and _slot_scan(key.var.python_type(), "__eq__") == "writes":
                unsupported("unsupported_value", f"a dict or set key of type {key.var.python_type().__name__} "
                                                 "whose __eq__ writes state")
        before = _state(tx)
        try:
            return compare(tx, "==", self.var, other_var).truth(tx)
        finally:  # (also when it raises)
            note_operation(tx)  # a nested dict operation in __eq__ set its own
            if _state(tx) != before:
                unsupported("unsupported_value", f"a dict or set key of type {self.var.python_type().__name__} "
                                                 "whose __eq__ changed state")

    def __repr__(self):
        return f"TracedKey({self.var!r}, hash={self.hash})"


def check_rebuild(keys) -> None:
    """Before code that builds a real dict or set of these stand-ins (and so hashes and
    compares the keys again): refuse where that would not do what the trace did."""
    for key in keys:
        if type(key) is TracedKey and (key.unsafe or getattr(key.var, "key_changed", False)):
            why = key.unsafe or "it got an attribute written after it was hashed"
            unsupported("graph_output", f"rebuilding a dict or set keyed by a {key.var.python_type().__name__}: "
                                        f"{why} (the rebuild hashes and compares it again)")


def runs_python_hash_and_eq(var) -> bool:
    """Whether ``var`` is a user object whose class hashes by a Python ``__hash__``."""
    if not isinstance(var, space.UserDefinedObjectVariable):
        return False
    return isinstance(type_lookup(var.python_type(), "__hash__")[1], types.FunctionType)


_WRITES = frozenset({"STORE_ATTR", "DELETE_ATTR", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF",
                     "DELETE_DEREF", "STORE_SUBSCR", "DELETE_SUBSCR", "IMPORT_NAME", "IMPORT_FROM",
                     "STORE_NAME", "DELETE_NAME"})


@functools.lru_cache(maxsize=1024)
def _code_effects(code):
    """(whether ``code`` or code nested in it stores outside its frame, the globals it loads),
    read once per code object: every comparison of such keys asks."""
    codes, writes, names = [code], False, []
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        for inst in dis.get_instructions(code):
            writes = writes or inst.opname in _WRITES
            if inst.opname == "LOAD_GLOBAL":
                names.append(inst.argval)
    return writes, tuple(names)


def scan(fn):
    """What ``fn``'s code (nested code included) does beyond its frame: "writes" (a store to
    an attribute, item, global or cell), "reads a global" (a module global that holds data,
    or one not defined yet), or None (it may read classes, functions and modules). The
    globals are looked at now: what they hold may change."""
    writes, names = _code_effects(fn.__code__)
    if writes:
        return "writes"
    for name in names:
        if name not in fn.__globals__:  # a builtin; else a global the frame may still define
            if name not in _BUILTINS:
                return "reads a global"
        elif not isinstance(fn.__globals__[name], (type, types.FunctionType, types.BuiltinFunctionType,
                                                   types.ModuleType)):
            return "reads a global"
    return None


_BUILTINS = vars(builtins)


def _slot_scan(cls, name):
    fn = type_lookup(cls, name)[1]
    return scan(fn) if isinstance(fn, types.FunctionType) else None


def traced_key(tx, var) -> TracedKey:
    """Hash ``var`` as CPython's dict does (its ``__hash__``, inlined, checked and reduced
    as slot_tp_hash does), for one dict operation."""
    cls = var.python_type()
    found = _slot_scan(cls, "__hash__") or _slot_scan(cls, "__eq__")
    unsafe = f"its __hash__ or __eq__ {found}" if found else None
    note_operation(tx)
    before = _state(tx)
    try:
        value = hash_of(tx, var).as_python_constant()
    finally:
        note_operation(tx)
    if _state(tx) != before:
        unsafe = "its __hash__ changed state"
    var.hashed_as_key = True  # an attribute written later is noted (key_changed): its hash may differ
    return TracedKey(var, value, tx.output, unsafe)


@space.register
def note_operation(tx) -> None:
    """A dict operation with a constant key begins: stored traced keys compare in ``tx``."""
    TracedKey._tx = weakref.ref(tx)
