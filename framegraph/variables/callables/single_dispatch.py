"""Calls of a ``functools.singledispatch`` function: the implementation is picked now.

The wrapper calls ``dispatch(args[0].__class__)``, which looks the class up in
a ``WeakKeyDictionary`` cache, then in ``registry``, then walks the MRO
(``functools._find_impl``). The cache is only a memo of the other two; the
model skips it and asks ``registry`` and ``_find_impl`` directly, which read
nothing else when no ABC is registered (``cache_token`` is None: with an ABC,
the answer also depends on every later ``ABC.register`` in the process, which
no guard sees, so that case is traced as written, a break at the weakref).

What the answer depends on is guarded: the class of the argument (its
tracker's type guard), the registry's keys and ``cache_token`` (the trackers
of the dispatch function's closure cells guard the token, and the model
guards the registry's keys in order), and
the implementation read from the registry (guarded by identity through its
item source). The implementation is then called with the arguments as given.
"""
import functools

from ..core.constant import ConstantVariable


def _cell(fn_var, tx, name):
    cells = fn_var.closure_cells(tx)
    return cells[fn_var.get_code().co_freevars.index(name)].contents


def call_singledispatch(tx, fn_var, args, kwargs):
    """``fn(*args, **kwargs)`` for a singledispatch ``fn``, or None to trace it as written."""
    if not args:
        return None  # its TypeError, as written
    cls = args[0].python_type()
    if any("__class__" in klass.__dict__ for klass in cls.__mro__[:-1]):
        return None  # args[0].__class__ is the object's own answer, not its type
    dispatch = _cell(fn_var, tx, "dispatch")
    impl = _pick(tx, dispatch, cls) if dispatch is not None and hasattr(dispatch, "get_code") else None
    return impl.call(tx, list(args), dict(kwargs)) if impl is not None else None


def call_dispatch(tx, fn_var, args, kwargs):
    """``fn.dispatch(cls)`` (singledispatchmethod calls it), or None to trace it as written."""
    if kwargs or len(args) != 1 or not args[0].is_python_constant() \
            or not isinstance(args[0].as_python_constant(), type):
        return None
    return _pick(tx, fn_var, args[0].as_python_constant())


def _pick(tx, dispatch, cls):
    """The tracker of the implementation ``dispatch(cls)`` returns, or None (not modelled)."""
    token, registry = _cell(dispatch, tx, "cache_token"), _cell(dispatch, tx, "registry")
    if not (isinstance(token, ConstantVariable) and token.value is None) or registry is None:
        return None
    if getattr(dispatch, "fn", None) is None or registry.source is None:
        return None
    real_registry = dispatch.fn.__closure__[dispatch.get_code().co_freevars.index("registry")].cell_contents
    if type(real_registry) is not dict:
        return None
    # a later register() adds a key: the MRO walk's answer may change
    tx.output.add_guard("DICT_KEYS", registry.source, (dict, tuple(real_registry)))
    impl = real_registry[cls] if cls in real_registry else functools._find_impl(cls, real_registry)
    key = next((k for k, v in real_registry.items() if v is impl), None)
    if key is None:
        return None
    return registry.getitem(tx, tx.wrap(key))


def _codes():
    made = functools.singledispatch(lambda arg: None)
    return made.__code__, made.dispatch.__code__


_WRAPPER, _DISPATCH = _codes()
MODELS = {_WRAPPER: call_singledispatch, _DISPATCH: call_dispatch}
