"""The attributes of a function object, as CPython's ``funcobject.c`` defines them.

A function has a few attributes stored in its C struct (members and getsets:
``__name__``, ``__qualname__``, ``__doc__``, ``__module__``,
``__annotations__``, ``__defaults__``, ``__kwdefaults__``, ``__code__``, and
the read-only ``__globals__``, ``__closure__``, ``__builtins__``) and a
``__dict__`` for everything else (``__wrapped__``, what decorators set).
``functools.update_wrapper`` reads the first kind with ``getattr`` and
``setattr``s them on the wrapper, then updates the wrapper's ``__dict__`` with
the wrapped one's: both kinds must be real attributes in the trace.

Where the state lives:

* a function made in the trace (``NestedUserFunctionVariable``) keeps writes
  of the struct attributes in ``attrs`` and its ``__dict__`` as a dict tracker
  made on first use (``dict_var``); its ``reconstruct`` stores both on the
  function it builds;
* a function from outside the frame (``UserFunctionVariable``) keeps struct
  attribute writes in ``attrs`` and goes into the side-effect ledger as an
  "object" (``fn.attr = value`` replayed after the graph); its ``__dict__`` is
  the real dict, wrapped from its source, so a write to it is a dict side
  effect, replayed like any other.

Writes CPython checks are checked the same way (``__name__`` must be a str,
``__closure__`` is read-only); writes that change how a call binds
(``__code__``, ``__defaults__``, ``__kwdefaults__``) are not modelled (a break).
"""
import types

from ...errors import unsupported
from ..containers.dicts import ConstDictVariable
from ..containers.lists import TupleVariable
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_in_trace

# The struct attributes a write keeps on the tracker (the rest of funcobject.c's
# writable getsets change how calls bind, and are not modelled).
STRUCT_ATTRS = frozenset(name for name in ("__name__", "__qualname__", "__doc__", "__module__",
                                           "__annotations__", "__type_params__")
                         if name in types.FunctionType.__dict__)
READONLY = frozenset({"__closure__", "__globals__", "__builtins__"})
_NOT_MODELLED = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
_STR_ATTRS = ("__name__", "__qualname__")


def check_write(name, value):
    """Raise (in the trace) what CPython raises for ``fn.name = value``, or break
    for a write the trackers do not model; return normally when it is kept."""
    if name in READONLY:
        raise_in_trace(AttributeError, "readonly attribute")
    if name in _NOT_MODELLED or name == "__dict__":
        unsupported("unsupported_attribute", f"setting a function's {name}")
    if name in _STR_ATTRS:
        if not (value.is_python_constant() and isinstance(value.as_python_constant(), str)):
            raise_in_trace(TypeError, f"{name} must be set to a string object")
    if name == "__annotations__" and _python_type(value) is not dict:
        unsupported("unsupported_attribute", "setting a function's __annotations__ to a non-dict")
    if name == "__type_params__" and _python_type(value) is not tuple:
        unsupported("unsupported_attribute", "setting a function's __type_params__ to a non-tuple")


def kwdefaults_of(dict_var):
    """{name: tracker} of a ``__kwdefaults__`` dict tracker, as a call binds from it."""
    if any(not isinstance(k, str) for k in dict_var.items):
        unsupported("unsupported_call", "a function whose __kwdefaults__ has a key that is not a str")
    return {k: v for k, (_, v) in dict_var.items.items()}


def check_delete(name):
    """``del fn.name`` of a struct attribute: CPython's TypeError for the names, a break
    for the others (what deleting them leaves is not modelled)."""
    if name in READONLY:
        raise_in_trace(AttributeError, "readonly attribute")
    if name in _STR_ATTRS:
        raise_in_trace(TypeError, f"{name} must be set to a string object")
    if name in STRUCT_ATTRS or name in _NOT_MODELLED or name == "__dict__":
        unsupported("unsupported_attribute", f"deleting a function's {name}")


def _python_type(var):
    try:
        return var.python_type()
    except Exception:  # a tracker without a type: not what the check accepts
        return None


def no_attribute(name):
    """PyObject_GenericGetAttr's error for a name a function does not have."""
    raise_in_trace(AttributeError, f"'function' object has no attribute '{name}'")


def probe_function(code, f_globals):
    """A real function of ``code``, to read what CPython derives from the code and
    the globals at MAKE_FUNCTION: ``__doc__`` (the first constant if it is a str on
    3.11-3.13; the rule changes between versions, so CPython answers it) and
    ``__module__`` (the globals' ``__name__``)."""
    cells = tuple(types.CellType() for _ in code.co_freevars)
    return types.FunctionType(code, f_globals, None, None, cells or None)


def nested_struct_attr(tx, fn_var, name):
    """``fn.name`` for a struct attribute of a function made in the trace (not written
    in the trace), or None when ``name`` is not one."""
    if name == "__name__":
        return ConstantVariable(fn_var.code.co_name)
    if name == "__qualname__":
        return ConstantVariable(fn_var.qualname)
    if name in ("__doc__", "__module__"):
        return ConstantVariable(getattr(probe_function(fn_var.code, fn_var.f_globals), name))
    if name == "__code__":
        return ConstantVariable(fn_var.code)
    if name == "__defaults__":
        return TupleVariable(list(fn_var.defaults)) if fn_var.defaults else ConstantVariable(None)
    if name == "__kwdefaults__":  # the same dict each time, and the one calls bind from
        if fn_var.kwdefaults_var is None:
            if not fn_var.kwdefaults:
                return ConstantVariable(None)
            fn_var.kwdefaults_var = ConstDictVariable.from_kwargs(fn_var.kwdefaults)
        return fn_var.kwdefaults_var
    if name == "__closure__":
        return TupleVariable(list(fn_var.closure)) if fn_var.closure else ConstantVariable(None)
    if name == "__type_params__" and name in STRUCT_ATTRS:
        return TupleVariable([])
    if name == "__annotations__":
        # made on first read and kept, as func_get_annotations does
        flat = getattr(fn_var.annotations, "items", None) if fn_var.annotations is not None else []
        if not isinstance(flat, list):
            unsupported("unsupported_attribute", f"the annotations of {fn_var.qualname}")
        value = ConstDictVariable(list(zip(flat[::2], flat[1::2])))
        fn_var.attrs[name] = value
        return value
    return None
