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
side-effect replay), which hashes and compares the keys again, in the state the
frame ends in. That is only the same program when those calls give what they
gave here and change nothing, so a class is modelled only when its
``__hash__`` and ``__eq__`` (and the code they contain) write nothing and read
no module global that holds data (``be_bad = True`` read by ``__eq__``: a flag
the frame may flip), each traced call changes no state, and no key object gets
an attribute written once it is a key (its hash would change under the dict).
"""
import builtins
import dis
import types
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
            return compare(tx, "==", self.var, other_var).truth(tx)
        finally:  # (also when it raises: a raise after a change, rebuilt, would change it again)
            note_operation(tx)  # a nested dict operation in __eq__ set its own
            _refuse_state_change(tx, before, self.var, "__eq__")

    def __repr__(self):
        return f"TracedKey({self.var!r}, hash={self.hash})"


def _refuse_state_change(tx, before, var, name):
    if _state(tx) != before:
        unsupported("unsupported_value", f"a dict key of type {var.python_type().__name__} whose {name} "
                                         "changes state (the dict rebuilt after the graph would call it again)")


def runs_python_hash_and_eq(var) -> bool:
    """Whether ``var`` is a user object whose class hashes by a Python ``__hash__``."""
    from .user_defined import UserDefinedObjectVariable, _static

    return isinstance(var, UserDefinedObjectVariable) and isinstance(_static(var.python_type(), "__hash__")[1],
                                                                     types.FunctionType)


_WRITES = frozenset({"STORE_ATTR", "DELETE_ATTR", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF",
                     "DELETE_DEREF", "STORE_SUBSCR", "DELETE_SUBSCR", "IMPORT_NAME", "IMPORT_FROM",
                     "STORE_NAME", "DELETE_NAME"})


def _reads_only(fn) -> bool:
    """Whether ``fn``'s code (nested code included) writes nothing outside its frame and
    reads no module global that holds data (a class, a function or a module it may read)."""
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        for inst in dis.get_instructions(code):
            if inst.opname in _WRITES:
                return False
            if inst.opname == "LOAD_GLOBAL":
                if inst.argval not in fn.__globals__:  # a builtin; else a global the frame may still define
                    if inst.argval not in _BUILTINS:
                        return False
                    continue
                value = fn.__globals__[inst.argval]
                if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType)):
                    return False
    return True


_BUILTINS = vars(builtins)


def _modelled_class(cls) -> bool:
    from .user_defined import _static

    return all(_reads_only(fn) for fn in (_static(cls, "__hash__")[1], _static(cls, "__eq__")[1])
               if isinstance(fn, types.FunctionType))


def traced_key(tx, var) -> TracedKey:
    """Hash ``var`` as CPython's dict does (its ``__hash__``, inlined, checked and reduced
    as slot_tp_hash does), for one dict operation."""
    from .number_protocol import hash_of

    cls = var.python_type()
    if not _modelled_class(cls):
        unsupported("unsupported_value", f"a dict or set key of type {cls.__name__} whose __hash__ or __eq__ "
                                         "writes state or reads a module global")
    note_operation(tx)
    before = _state(tx)
    try:
        value = hash_of(tx, var).as_python_constant()
    finally:
        note_operation(tx)
        _refuse_state_change(tx, before, var, "__hash__")
    var.hashed_as_key = True  # an attribute written later would change its hash under the dict
    return TracedKey(var, value, tx.output)


def note_operation(tx) -> None:
    """A dict operation with a constant key begins: stored traced keys compare in ``tx``."""
    TracedKey._tx = weakref.ref(tx)
