"""``type(name, bases, namespace)``: a class made by calling ``type`` in the trace.

The same as a class statement whose body only binds the namespace's items
(classes.py): the class is built now, a trace-time prototype, when every
value of the namespace is a fixed object the class may hold for every call
(a constant, a function read from outside, a builtin type) and creating it
runs nothing but what ``class_bases.admit`` allows. Where it outlives the
trace it is rebuilt as ``type(name, bases, namespace)`` from the trackers,
so each call gets its own class, then this trace's attribute writes to it are
redone (class_attrs.py).

``type.__new__`` takes ``__module__`` from the calling frame's globals when
the namespace has none; the call here runs in the tracer's frame, so the
traced frame's ``__name__`` is put in first, as the real call would find it.
"""
from ...errors import unsupported
from ..containers.dicts import ConstDictVariable
from ..core import space
from ..core.exceptions import python_operation, raise_in_trace
from .class_attrs import rebuild_writes, share_overlay
from .class_bases import admit
from .classes import _fixed_object, _held_as_is, _remember
from .user_defined import UserDefinedClassVariable, class_of


def _real(var, what):
    """The real object of a base (a fixed object) or of a namespace value (one the class
    may hold for every call: see classes._held_as_is)."""
    real = _fixed_object(var)
    if real is None or what != "the base" and not _held_as_is(real):
        unsupported("unsupported_call", f"type() with {what} {var}: not a fixed object")
    return real


@space.register
def type_builtin(tx, obj, *rest):
    """``type(obj)``, or ``type(name, bases, ns)``; another count is type_new's TypeError."""
    if len(rest) == 2:
        return make_class(tx, obj, *rest)
    if rest:
        raise_in_trace(TypeError, "type() takes 1 or 3 arguments")
    return class_of(tx, obj)


def make_class(tx, name_var, bases_var, ns_var):
    """``type(name, bases, ns)`` with three arguments (``type_new``)."""
    name = name_var.as_python_constant() if name_var.is_python_constant() else None
    if not isinstance(name, str) or not isinstance(ns_var, ConstDictVariable) or type(ns_var.items) is not dict:
        unsupported("unsupported_call", "type() with a name or namespace not known now")
    bases = [_real(b, "the base") for b in bases_var.unpack(tx)]
    namespace = {}
    for key, (key_var, value) in ns_var.items.items():
        if not isinstance(key_var.as_python_constant(), str):
            unsupported("unsupported_call", "type() with a namespace key that is not a string")
        namespace[key_var.as_python_constant()] = _real(value, f"the namespace's {key!r}")
    admit(name, bases, {}, namespace)
    namespace.setdefault("__module__", tx.f_globals.get("__name__"))
    with python_operation("type()"):  # its TypeErrors (a bad base, a layout conflict) are CPython's
        cls = type(name, tuple(bases), namespace)
    _remember(cls, functions=False)  # its functions were read from outside, not made with it
    var = TypeCalledClassVariable(cls, [name_var, bases_var, ns_var])
    share_overlay(tx, cls, var.writes)
    return var


class TypeCalledClassVariable(UserDefinedClassVariable):
    """A class ``type(name, bases, ns)`` made in the trace (the prototype)."""

    rebuilt = True  # its instances made in the trace are rebuilt with the class rebuilt

    def __init__(self, cls, arguments, **kwargs):
        super().__init__(cls, **kwargs)
        self.arguments = arguments
        self.writes = {}

    def reconstruct(self, cg):
        """``type(name, bases, ns)`` from the trackers, then this trace's writes."""
        cg.emit_op("PUSH_NULL")
        cg.load_const(type)
        for arg in self.arguments:
            cg(arg)
        cg.call(3)
        temp = cg.remember(self)
        rebuild_writes(cg, temp, self.writes)
        cg.load_fast(temp)

    def __repr__(self):
        return f"TypeCalledClassVariable({self.cls.__qualname__})"
