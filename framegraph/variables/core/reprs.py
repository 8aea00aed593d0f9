"""``repr()`` of user objects, the recursion guard of ``recursive_repr`` wrappers, and
``format()`` (FORMAT_VALUE and the builtin), which falls back on ``str()``.

``repr(obj)`` runs ``type(obj).__repr__`` (the type's slot, never an instance
attribute); a Python ``__repr__`` is traced, and what it returns must be a str
(``PyObject_Repr``'s TypeError otherwise).

``reprlib.recursive_repr`` (and dataclasses' own copy of it on 3.11) wraps a
``__repr__`` so that a repr that reaches the same object again, on the same
thread, returns a fill value instead of recursing::

    key = id(self), _thread.get_ident()
    if key in repr_running: return fillvalue
    repr_running.add(key)
    try: result = user_function(self)
    finally: repr_running.discard(key)

Tracing those lines needs the id of an object that only exists after the
graph. The wrapper is modelled instead, with the same meaning: the trace keeps
its own stack of the (wrapper's set, object) pairs being repr'd, so a repr that
reaches an object already on it returns the fill value. The real set is left
alone, which is its state after the call in CPython too (added, then
discarded). What it holds on entry comes from outside the frame: reprs in
progress in callers of the compiled frame, or on other threads. An object made
in the trace cannot be among them (each entry's object is alive, held by the
frame that repr's it, and the new object is not that one), so the set is not
consulted; for an object from outside, the set must be empty (its contents are
guarded when its tracker is made), or the call is traced as written (a break).
"""
import dataclasses
import reprlib
import types

from ...errors import unsupported
from . import space
from .base import type_lookup
from .constant import ConstantVariable
from .exceptions import python_operation, raise_in_trace
from .ops import is_op


def _wrapper_code(decorator):
    return decorator(lambda self: "").__code__


# code object of a wrapper -> whether its closure holds its own fill value
WRAPPER_CODES = {_wrapper_code(reprlib.recursive_repr()): True}
if hasattr(dataclasses, "_recursive_repr"):  # 3.11: dataclasses' copy, with "..." built in
    WRAPPER_CODES[_wrapper_code(dataclasses._recursive_repr)] = False


def _active(tx):
    """The (repr_running tracker, object tracker) pairs of the reprs in progress in this trace."""
    return vars(tx.output).setdefault("repr_in_progress", [])


def call_recursive_repr(tx, fn_var, args, kwargs):
    """A call of a ``recursive_repr`` wrapper, or None to trace the wrapper as written."""
    if kwargs or len(args) != 1:
        return None  # its TypeError, as written
    code = fn_var.get_code()
    names = code.co_freevars
    cells = fn_var.closure_cells(tx)
    running = cells[names.index("repr_running")].contents
    user_function = cells[names.index("user_function")].contents
    fill = cells[names.index("fillvalue")].contents if WRAPPER_CODES[code] else ConstantVariable("...")
    if running is None or user_function is None or fill is None:
        return None
    obj = args[0]
    if obj.source is not None and running.length(tx) != 0:
        return None  # a repr of it may be in progress outside the frame: only the real set knows
    active = _active(tx)
    for wrapper_set, seen in active:
        if wrapper_set is running and is_op(tx, seen, obj):
            return fill
    active.append((running, obj))
    try:
        return user_function.call(tx, [obj], {})
    finally:
        active.pop()


MODELS = {code: call_recursive_repr for code in WRAPPER_CODES}


def user_repr(tx, obj):
    """``repr(obj)`` through a Python ``__repr__`` of its type, or None when it has none."""
    if not isinstance(obj, space.UserDefinedObjectVariable) and not hasattr(obj, "_override"):
        return None  # not a user object, nor a user subclass of a builtin container (Counter)
    fn = next((klass.__dict__["__repr__"] for klass in obj.python_type().__mro__
               if "__repr__" in klass.__dict__), None)
    if not isinstance(fn, types.FunctionType):
        return None  # object.__repr__ (an address) or a C slot: not modelled
    result = space.bind_class_attribute(tx, obj, fn, None).call(tx, [], {})
    if not result.is_python_constant():
        unsupported("unsupported_value", f"the repr of {obj} is not known at trace time ({result})")
    text = result.as_python_constant()
    if not isinstance(text, str):
        raise_in_trace(TypeError, f"__repr__ returned non-string (type {type(text).__name__})")
    return result


def user_str(tx, obj):
    """``str(obj)`` (PyObject_Str) through its type's Python ``__str__``; with object's
    ``__str__``, the repr (a Python ``__repr__``); None when neither is Python code."""
    if not isinstance(obj, space.UserDefinedObjectVariable):
        return None
    fn = next((klass.__dict__["__str__"] for klass in obj.python_type().__mro__
               if "__str__" in klass.__dict__), None)
    if fn is object.__str__:
        return user_repr(tx, obj)
    if not isinstance(fn, types.FunctionType):
        return None
    result = space.bind_class_attribute(tx, obj, fn, None).call(tx, [], {})
    if not result.is_python_constant():
        unsupported("unsupported_value", f"the str of {obj} is not known at trace time ({result})")
    if not isinstance(result.as_python_constant(), str):
        raise_in_trace(TypeError, f"__str__ returned non-string (type {type(result.as_python_constant()).__name__})")
    return result


def container_repr(tx, var, parts, fill, wrap):
    """``repr()`` of a builtin container tracker, as its tp_repr builds it: ``wrap`` of the
    items' reprs joined (``parts(item_repr)`` lists them), each item's repr traced; one
    already being repr'd in this trace is ``fill`` (Py_ReprEnter: ``{...}``, ``[...]``)."""
    running = vars(tx.output).setdefault("container_reprs", [])
    if any(v is var for v in running):
        return ConstantVariable(fill)
    running.append(var)
    try:
        texts = parts(lambda item: space.builtin_repr(tx, item).as_python_constant())
    finally:
        running.pop()
    return ConstantVariable(wrap(", ".join(texts)))


def sequence_repr(tx, var):
    """``repr()`` of an exact list or tuple tracker: the real type's repr of stand-ins for the
    items' traced reprs (``(x,)``, ``[...]`` for a list inside itself); None for another type
    (a namedtuple, torch.Size: their own reprs)."""
    kind = var.python_type()
    if kind not in (list, tuple):
        return None
    return container_repr(tx, var, lambda item_repr: [repr(kind(repr_stand_in(item_repr(v)) for v in var.items))],
                          "[...]" if kind is list else "(...)", lambda text: text)


class _ReprStandIn:
    """A real object whose repr is a given text (and callable: a defaultdict's factory)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

    def __call__(self):
        raise AssertionError("a repr stand-in is never called")


def repr_stand_in(text):
    """A real object that ``repr()`` shows as ``text``, distinct from every other (a dict key)."""
    return _ReprStandIn(text)


def formatted_value(tx, value, conversion, spec):
    """``format(value, spec)`` after f-string ``conversion`` (0 none, 1 ``!s``, 2 ``!r``, 3 ``!a``):
    FORMAT_VALUE, and the ``format()`` builtin."""
    if conversion == 2 and not value.is_python_constant():
        # f"{x!r}" is format(repr(x), spec): repr() as the builtin's model does it (a
        # Python __repr__ is traced: a dataclass field holding another dataclass)
        value, conversion = space.builtin_repr(tx, value), 0
    if conversion == 1 and hasattr(value, "str"):  # f"{x!s}": the tracker's tp_str
        value, conversion = value.str(tx), 0
    if conversion == 0 and hasattr(value, "formatted"):  # format(obj, spec): its type's __format__
        return value.formatted(tx, spec)
    if not value.is_python_constant() and (conversion == 1 or conversion == 0 and not spec):
        # f"{obj}" is format(obj, ""): object.__format__ is str(obj), a Python __str__ traced
        plain_format = isinstance(value, space.UserDefinedObjectVariable) and \
            type_lookup(value.python_type(), "__format__")[1] is object.__format__
        traced = user_str(tx, value) if conversion == 1 or plain_format else None
        if traced is not None:
            value, conversion = traced, 0
    if not value.is_python_constant():
        unsupported("unsupported_value", f"formatting {value} (only constants are formatted)")
    constant = (lambda v: v, str, repr, ascii)[conversion](value.as_python_constant())
    with python_operation("format()"):  # format(3, "x y"): ValueError
        return ConstantVariable(format(constant, spec))
