"""Making an instance of a class whose ``__new__`` is written in Python: ``type.__call__``.

CPython's ``type_call`` (Objects/typeobject.c, 3.11) runs two steps, and so
does ``type_call`` here, inlining the user's code of each:

1. ``obj = cls.__new__(cls, *args, **kwargs)``: the ``__new__`` found on the
   MRO (a staticmethod, called with the class first);
2. only if ``obj`` is an instance of ``cls``: ``type(obj).__init__(obj, *args,
   **kwargs)``; ``object.__init__`` there ignores the arguments, since the
   class overrides ``__new__`` (``object_init``'s excess-argument rule).

``object.__new__(cls)``, which such a ``__new__`` reaches through
``super().__new__(cls)``, is ``object_new``: a new ``UserDefinedObjectVariable``
with no attributes, whose class is the tracker passed in (so it is rebuilt as
``object.__new__(cls)`` plus its attributes, like any object made in the
trace). Its errors are CPython's: extra arguments when the class also
overrides ``__new__`` or does not override ``__init__``, an abstract class, and
a class whose layout is not ``object``'s (``object.__new__(X) is not safe``: a
break here).
"""
import types

from ..errors import unsupported


def _resolved(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def type_call(tx, cls_var, args, kwargs):
    """``cls(*args, **kwargs)`` for a class whose ``__new__`` is a Python function."""
    from .functions import UserFunctionVariable
    from .user_defined import bind_class_attribute

    cls = cls_var.cls
    new = _resolved(cls, "__new__")
    fn = new.__func__ if isinstance(new, staticmethod) else new
    if not isinstance(fn, types.FunctionType):
        unsupported("unsupported_call", f"creating a {cls.__name__} (its __new__ is a {type(new).__name__})")
    obj = UserFunctionVariable(fn).call(tx, [cls_var] + list(args), kwargs)
    kind = obj.python_type()
    if not (isinstance(kind, type) and issubclass(kind, cls)):
        return obj  # not an instance of cls: __init__ is not called
    init = _resolved(kind, "__init__")
    if init is object.__init__:
        return obj  # the class overrides __new__: object.__init__ ignores the arguments
    if not isinstance(init, types.FunctionType):
        unsupported("unsupported_call", f"creating a {cls.__name__} (its __init__ is a {type(init).__name__})")
    result = bind_class_attribute(tx, obj, init, None).call(tx, list(args), kwargs)
    if not (result.is_python_constant() and result.as_python_constant() is None):
        from .exceptions import raise_in_trace

        raise_in_trace(TypeError, f"__init__() should return None, not '{result.python_type().__name__}'")
    return obj


def _layout_is_objects(cls) -> bool:
    """What ``tp_new_wrapper`` checks before ``object.__new__(cls)``: past the classes
    whose ``__new__`` is Python code, the first base's ``__new__`` is object's."""
    base = cls
    while base is not None and isinstance(base.__new__, types.FunctionType):
        base = base.__base__
    return base is None or base.__new__ is object.__new__


def object_new(tx, cls_var=None, *args, **kwargs):
    """``object.__new__(cls, *args, **kwargs)`` (object_new)."""
    from .exceptions import python_operation, raise_in_trace
    from .user_defined import UserDefinedClassVariable, UserDefinedObjectVariable

    if not isinstance(cls_var, UserDefinedClassVariable) or not isinstance(cls_var.cls, type):
        unsupported("unsupported_call", f"object.__new__({cls_var})")
    cls = cls_var.cls
    if type(cls) is not type or not _layout_is_objects(cls):
        unsupported("unsupported_call", f"object.__new__({cls.__name__}): not a plain object layout")
    if args or kwargs:
        if cls.__new__ is not object.__new__:
            raise_in_trace(TypeError, "object.__new__() takes exactly one argument (the type to instantiate)")
        if cls.__init__ is object.__init__:
            raise_in_trace(TypeError, f"{cls.__name__}() takes no arguments")
    if getattr(cls, "__abstractmethods__", None):  # object_new refuses: its TypeError, as it words it
        with python_operation(f"creating a {cls.__name__}"):
            object.__new__(cls)
    obj = UserDefinedObjectVariable(None, cls)
    obj.class_var = cls_var  # type(obj) is this tracker, with its source
    return obj

