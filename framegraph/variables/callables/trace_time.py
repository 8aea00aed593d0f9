"""Library calls answered at trace time, and the immutable objects they return.

Some library functions are pure functions of values the guards already pin
down: ``inspect.signature(self.forward_chunk)`` depends only on a function
whose identity is guarded, ``torch.finfo(x.dtype)`` only on a dtype. Inlining
them would trace hundreds of lines of ``inspect`` for a constant, and some
cannot be traced at all (``torch.finfo`` is a C type). ``PURE_CALLS`` lists
them: the call runs for real on the real arguments (``real_value``), and the
result is a trace-time constant.

``OpaqueConstantVariable`` holds such a result when it is not a plain
constant (a Signature, a finfo): every attribute read, method call, ``len``
or iteration on it runs for real and is again a constant. That is sound
because these objects are immutable and were computed from guarded inputs.

Type annotations evaluated in function bodies are answered the same way:
``list[Tensor]`` (a ``types.GenericAlias``) is built at trace time by
``class_getitem`` and is an opaque constant, and ``typing.cast(typ, val)``
is its second argument (``TYPING_MODELS``); torch's foreach optimizers call
``cast(list[Tensor], ...)`` on every tensor list.

``chosen_by_user`` answers for the callables the user told framegraph how to
trace: ``disallow_in_graph(fn)`` is a break at the call, ``substitute_in_graph``
traces the substitute (or, folding through constants, runs ``fn`` now).

``EnvironVariable`` models ``os.environ`` reads (``os.environ.get(k, d)``):
the value is read at trace time. Environment variables are not guarded,
like torch.compile: configuration read once per process.
"""
import contextlib
import inspect
import os
import re
import types
import typing

import torch

from ...errors import unsupported
from ..containers.lists import ListVariable, TupleVariable
from ..core import space
from ..core.base import BoundMethodVariable, CallableVariable, VariableTracker
from ..core.constant import ConstantVariable, is_constant_value, wrap_constant
from ..core.exceptions import python_operation
from ..tensors.ctx_managers import ContextManagerVariable
from ..tensors.nn_module import NNModuleVariable
from ..tensors.torch_fn import is_disallowed
from .functions import UserFunctionVariable, UserMethodVariable
from .wrappers import BreakingCallVariable


@space.register
def real_value(var: VariableTracker):
    """The real Python object a tracker of a guarded or constant value stands for."""
    if isinstance(var, UserMethodVariable):
        return types.MethodType(real_value(var.fn_var), real_value(var.obj))
    if isinstance(var, UserFunctionVariable):
        return var.fn
    if isinstance(var, NNModuleVariable):
        return var.module
    if getattr(var, "value", None) is not None and not var.mutable:
        return var.value
    if var.is_python_constant():
        return var.as_python_constant()
    unsupported("unsupported_value", f"{var} has no real value at trace time")


def wrap_result(value) -> VariableTracker:
    """A trace-time result: a constant tracker, or an opaque immutable object."""
    if is_constant_value(value) or type(value) in (slice, range, torch.Size):
        return wrap_constant(value)
    if type(value) is tuple:
        return TupleVariable([wrap_result(v) for v in value])
    return OpaqueConstantVariable(value)


@space.register
class OpaqueConstantVariable(VariableTracker):
    """An immutable object computed at trace time; every use of it runs for real."""

    def __init__(self, value, **kwargs):
        super().__init__(**kwargs)
        self.value = value

    def python_type(self):
        return type(self.value)

    def as_python_constant(self):
        return self.value

    @property
    def mutable(self):
        return False

    def _run(self, fn, *args):
        with python_operation(type(self.value).__name__):  # what it raises, CPython raises
            return fn(*args)

    def getattr(self, tx, name):
        attr = self._run(getattr, self.value, name)
        if callable(attr) and not isinstance(attr, type):
            return PureCallVariable(attr)
        return wrap_result(attr)

    def hasattr(self, tx, name):
        return hasattr(self.value, name)

    def length(self, tx):
        return self._run(len, self.value)

    def unpack(self, tx):
        return [wrap_result(v) for v in self._run(list, self.value)]

    def getitem(self, tx, key):
        return wrap_result(self._run(lambda: self.value[real_value(key)]))

    def contains(self, tx, item):
        return self._run(lambda: real_value(item) in self.value)

    def truth(self, tx):
        return self._run(bool, self.value)

    def reconstruct(self, cg):
        cg.load_const(self.value)

    def __repr__(self):
        return f"OpaqueConstantVariable({type(self.value).__name__})"


class PureCallVariable(CallableVariable):
    """A callable from ``PURE_CALLS`` (or a method of an opaque constant): runs now."""

    def call(self, tx, args, kwargs):
        real_args = [real_value(a) for a in args]
        real_kwargs = {k: real_value(v) for k, v in kwargs.items()}
        with python_operation(str(getattr(self.fn, "__qualname__", self.fn))):
            result = self.fn(*real_args, **real_kwargs)
        return wrap_result(result)

    def __repr__(self):
        return f"PureCallVariable({getattr(self.fn, '__qualname__', self.fn)})"


# Functions (and classes) whose result depends only on their guarded arguments.
# Regular expressions: a Pattern and a Match are immutable, and re.compile's
# cache (re._cache, keyed by (type, pattern, flags)) only saves work.
PURE_CALLS = frozenset({
    inspect.signature, inspect.isclass, inspect.isfunction, inspect.ismethod, inspect.getmro,
    torch.finfo, torch.iinfo, torch.promote_types, torch.can_cast,
    re.compile, re.escape, re.search, re.match, re.fullmatch,
})


def is_pure_class_getitem(cls) -> bool:
    """Does ``cls[...]`` only build a generic alias? True for the builtin containers
    (a C ``__class_getitem__``), stdlib classes declaring ``classmethod(GenericAlias)``
    and ``typing.Generic`` subclasses; a metaclass ``__getitem__`` (an Enum's
    ``Color["RED"]``) or a user-written ``__class_getitem__`` is not."""
    if cls is type:  # CPython's PyObject_GetItem special-cases type[int]
        return True
    if getattr(type(cls), "__getitem__", None) is not None:
        return False
    for klass in cls.__mro__:
        if "__class_getitem__" in klass.__dict__:
            raw = klass.__dict__["__class_getitem__"]
            if isinstance(raw, types.ClassMethodDescriptorType):  # list, dict, tuple, ...
                return True
            if isinstance(raw, classmethod):  # collections.abc.Callable's is a GenericAlias subclass
                alias = raw.__func__
                return isinstance(alias, type) and issubclass(alias, types.GenericAlias) or klass is typing.Generic
            return False
    return False


def class_getitem(tx, cls, key: VariableTracker) -> VariableTracker:
    """``cls[key]`` on a class: a type annotation (``list[Tensor]``), built now.

    The result is immutable and depends only on the class (identity-guarded where
    it was read) and the key, which must be a trace-time constant."""
    if not is_pure_class_getitem(cls):
        unsupported("unsupported_value", f"{cls.__name__}[...]: not a generic alias")
    try:
        alias = cls[_annotation_key(key)]
    except Exception as e:
        unsupported("operator_error", f"{cls.__name__}[...]: {type(e).__name__}: {e}")
    return wrap_result(alias)


def _annotation_key(key):
    """The real key of ``cls[key]``: a constant, or a tuple or list of them
    (``Callable[[int], bool]``: the alias copies the list's items, keeping no list)."""
    if type(key) in (ListVariable, TupleVariable):
        items = [_annotation_key(item) for item in key.items]
        return items if type(key) is ListVariable else tuple(items)
    if not key.is_python_constant():
        unsupported("unsupported_value", f"[{key}]: the key is not a constant")
    return key.as_python_constant()


def _typing_cast(tx, typ, val):
    """``typing.cast(typ, val)``: ``val`` itself (a no-op at run time)."""
    return val


# Functions of the typing module modelled over trackers (see ModelledCallVariable).
TYPING_MODELS = {typing.cast: _typing_cast}


class EnvironVariable(VariableTracker):
    """``os.environ``: reads answered at trace time (not guarded, like torch.compile)."""

    def python_type(self):
        return type(os.environ)

    def getitem(self, tx, key):
        name = key.as_python_constant()
        if name not in os.environ:
            unsupported("operator_error", f"KeyError: environment variable {name!r}")
        return ConstantVariable(os.environ[name])

    def contains(self, tx, item):
        return item.as_python_constant() in os.environ

    def call_method(self, tx, name, args, kwargs):
        if name == "get":
            key = args[0].as_python_constant()
            default = args[1] if len(args) > 1 else kwargs.get("default", ConstantVariable(None))
            return ConstantVariable(os.environ[key]) if key in os.environ else default
        if name in ("__getitem__", "__contains__"):
            result = self.getitem(tx, args[0]) if name == "__getitem__" else self.contains(tx, args[0])
            return result if isinstance(result, VariableTracker) else ConstantVariable(result)
        unsupported("unsupported_call", f"os.environ.{name}")

    def getattr(self, tx, name):
        return BoundMethodVariable(self, name)


class ModelledCallVariable(VariableTracker):
    """A library function with a model over trackers (``copy.deepcopy``: see copying.py)."""

    def __init__(self, fn, model, **kwargs):
        super().__init__(**kwargs)
        self.fn, self.model = fn, model

    def python_type(self):
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def call(self, tx, args, kwargs):
        return self.model(tx, *args, **kwargs)

    def __repr__(self):
        return f"ModelledCallVariable({self.fn.__qualname__})"


class NullContextVariable(ContextManagerVariable):
    """A context manager with nothing to do in a graph: ``contextlib.nullcontext()``,
    ``torch.autograd.profiler.record_function(name)`` (it only labels a range
    for an active profiler; graphs are not profiled op by op, like torch.compile)
    and ``torch.fx.traceback.annotate(meta)`` (it labels the nodes torch's own
    tracers record, as flex_attention's block-mask code does)."""

    exits_like_nullcontext = True  # a resume function inside the block leaves it with nullcontext()

    def __init__(self, cls, value=None, **kwargs):
        super().__init__(**kwargs)
        self.cls, self.value = cls, value

    def python_type(self):
        return self.cls if isinstance(self.cls, type) else contextlib._GeneratorContextManager

    def enter(self, tx):
        return self.value if self.value is not None else ConstantVariable(None)

    def exit(self, tx):
        return ConstantVariable(None)


class NullContextClassVariable(CallableVariable):
    """The class of a NullContextVariable: calling it makes one."""

    @property
    def cls(self):
        return self.fn

    def call(self, tx, args, kwargs):
        value = args[0] if self.cls is contextlib.nullcontext and args else None
        return NullContextVariable(self.cls, value)


NULL_CONTEXTS = frozenset({contextlib.nullcontext, torch.autograd.profiler.record_function,
                           torch.fx.traceback.annotate})


# ---- callables the user told framegraph how to trace (runtime/policy.py)
# original -> (substitute, can_constant_fold_through): framegraph.substitute_in_graph
SUBSTITUTES = {}


def chosen_by_user(value, source):
    """The tracker of a callable the user told framegraph how to trace
    (runtime/policy.py), or None. Its identity is guarded already."""
    if is_disallowed(value):
        return BreakingCallVariable(value, "disallowed_in_graph",
                                    f"{getattr(value, '__qualname__', value)} is marked by disallow_in_graph")
    try:
        substitute = SUBSTITUTES.get(value)
    except TypeError:  # unhashable
        return None
    if substitute is None:
        return None
    traceable, fold = substitute

    def call_substitute(tx, *args, **kwargs):
        if fold and all(v.is_python_constant() for v in list(args) + list(kwargs.values())):
            try:
                result = value(*(a.as_python_constant() for a in args),
                               **{k: v.as_python_constant() for k, v in kwargs.items()})
            except Exception:  # the substitute meets the error where the original does
                result = _NO_RESULT
            if result is not _NO_RESULT and is_constant_value(result):
                return wrap_constant(result)
        return UserFunctionVariable(traceable).call(tx, list(args), kwargs)

    return ModelledCallVariable(value, call_substitute, source=source)


_NO_RESULT = object()
