"""Builder: real value + Source -> VariableTracker (and the guards it needs).

``wrap_value(tx, value, source)`` is how every value from outside the frame
enters the trace. It is a type table, not an isinstance ladder: an exact-type
lookup (``EXACT``) for the common types, then a short ordered list of base
classes (``BY_BASE``), then callables recognised by identity (builtins, torch
functions), then user objects. Each entry builds the tracker and installs the
guard that makes relying on the value sound:

    tensor          -> graph input (placeholder) + TENSOR_MATCH
    int/float/str.. -> ConstantVariable + CONSTANT_MATCH
    list/tuple/dict -> container of wrapped items + LENGTH / DICT_KEYS
    function/module/class/nn.Module -> ID_MATCH
    other objects   -> UserDefinedObjectVariable + TYPE_MATCH

The same source always yields the same tracker (``output.by_source``), so
identity (``a is b``) and de-duplication of graph inputs work.
``guard=False`` wraps without guards, for values whose stability is assumed
(attributes of torch and the standard library).
"""
import collections
import enum
import functools
import os
import re
import types
import typing
import weakref
from typing import Optional

import torch
from torch import nn

from .. import _C
from ..errors import unsupported
from ..guards.sources import (AttrSource, ConstSource, GetItemSource, ListItemSource, Source, TupleItemSource,
                              numpy_tensor_source)
from .callables.builtin_methods import is_unbound_builtin_method
from .callables.builtins import BUILTINS, BuiltinVariable, PURE
from .callables.functions import UserFunctionVariable
from .callables.partials import partial_class, wrap_partial
from .callables.trace_time import (EnvironVariable, ModelledCallVariable, NULL_CONTEXTS, NullContextClassVariable,
                                   OpaqueConstantVariable, PURE_CALLS, PureCallVariable, TYPING_MODELS,
                                   chosen_by_user)
from .callables.weak_refs import wrap_weakref
from .callables.twins import TwinFunctionVariable, has_twin
from .callables.wrappers import (BreakingCallVariable, LruCacheVariable, grad_mode_exit, is_grad_mode_exit,
                                 wrap_framegraph_wrapper)
from .containers.dicts import ConstDictVariable, hash_key, plain_key
from .containers.lazy_dict import wrap_lazy_dict
from .containers.lists import ListVariable, NamedTupleVariable, SizeVariable, TupleVariable, guarded_as_one
from .containers.object_dicts import is_object_keyed, wrap_object_keyed_dict
from .containers.sets import SCALARS, SetVariable, same_table
from .core import space
from .core.aliases import remember_object, same_object
from .core.base import VariableTracker, guard_identity, stable_module, type_lookup, user_code
from .core.call_shapes import own_methods
from .core.constant import (CONSTANT_TYPES, ConstantVariable, is_constant_value, is_struct_sequence,
                            wrap_constant)
from .core.exceptions import EXC_INFO_MODELS
from .iteration.iterators import ChangedSize, wrap_changed_size
from .objects.classes import CLASS_DECORATORS, DATACLASS_MODELS, ClassDecoratorVariable
from .objects.copying import COPY_MODELS
from .containers.modules import PythonModuleVariable
from .objects.supers import OBJECT_SLOTS, ObjectSlotVariable
from .objects.user_defined import UserDefinedClassVariable, UserDefinedObjectVariable, bind_class_attribute
from .subclasses.user_containers import is_user_frozenset_class, user_frozenset_of
from .subclasses.user_dict import is_user_dict_class, wrap_user_dict
from .subclasses.value_subclass import value_base, wrap_value_instance
from .tensors.checkpoint import CheckpointVariable, is_checkpoint
from .tensors.control_flow import wrap_operator
from .tensors.functional_call import FUNCTIONAL_CALLS, FunctionalCallVariable
from .tensors.ctx_managers import GRAD_MODE_CLASSES, GradModeClassVariable, STATE_SWITCHES, StateSwitchClassVariable
from .tensors.nn_module import NNModuleVariable
from .tensors.numpy_arrays import (NumpyArrayVariable, NumpyFunctionVariable, NumpyScalarTypeVariable,
                                   is_numpy_scalar_type, np, numpy_counterpart)
from .tensors.optim import OPTIM_MODELS, without_dynamo_patch
from .tensors.rng import is_rng_method
from .tensors.transforms import TRANSFORMS, JvpVariable, TransformVariable, VjpVariable
from .tensors.torch_fn import TRACE_TIME, TorchFunctionVariable, is_graph_callable, is_shape_hint
# Every floor, so that what each registers in the space is there before any trace runs.
from . import callables, containers, core, iteration, objects, subclasses, tensors  # noqa: F401


@space.register
class EnumVariable(ConstantVariable):
    """An enum member: compared by identity, never in the graph. A method its class
    defines in Python is bound to the member and inlined, as an instance's is."""

    def _user_method(self, name) -> bool:
        cls = type(self.value)
        return type(type_lookup(cls, name)[1]) is types.FunctionType and user_code(cls)

    def getattr(self, tx, name):
        if self._user_method(name):
            return space.class_attribute(tx, self, name)
        return super().getattr(tx, name)

    def call_method(self, tx, name, args, kwargs):
        if self._user_method(name):
            return self.getattr(tx, name).call(tx, args, kwargs)
        return super().call_method(tx, name, args, kwargs)


def _guard(tx, kind, source, value=None):
    if source is not None:
        tx.output.add_guard(kind, source, value)


# ---- one function per kind of value: (tx, value, source) -> tracker
def _wrap_tensor(tx, value, source):
    if source is None:
        unsupported("unsupported_value", "a tensor that cannot be re-read on the next call")
    return tx.output.add_input(value, source)


def _wrap_ndarray(tx, value, source):
    """An ndarray from outside: the tensor over its memory is a graph input, read on each
    call as ``torch.from_numpy(arr)`` and guarded as a tensor (numpy_arrays.py)."""
    if source is None:
        unsupported("unsupported_value", "an ndarray that cannot be re-read on the next call")
    try:
        tensor = torch.from_numpy(value)
    except (TypeError, ValueError) as e:  # dtype object, negative strides: NumPy's own
        unsupported("unsupported_value", f"an ndarray torch cannot view: {e}")
    _guard(tx, "TYPE_MATCH", source, np.ndarray)
    return NumpyArrayVariable(tx.output.add_input(tensor, numpy_tensor_source(source)), source=source)


def _wrap_numpy_function(tx, value, source):
    counterpart = numpy_counterpart(value)
    if counterpart is None:
        return _wrap_object(tx, value, source)
    guard_identity(tx, value, source)
    return NumpyFunctionVariable(value, counterpart, source=source)


def _wrap_constant(tx, value, source):
    if type(value) is int and source is not None and tx.output.shapes.dynamic_int(value, source):
        return tx.output.add_int_input(value, source)  # symbolic, not guarded by value (graph/dynamic.py)
    if type(value) is slice and source is not None:  # unhashable before 3.12: guard its parts
        _guard(tx, "TYPE_MATCH", source, slice)
        for part in ("start", "stop", "step"):
            bound = getattr(value, part)
            if type(bound) not in (int, type(None)):
                unsupported("unsupported_value", f"a slice with a {type(bound).__name__} {part}")
            _guard(tx, "CONSTANT_MATCH", AttrSource(source, part), bound)
    else:
        _guard(tx, "CONSTANT_MATCH", source, value)
    var = wrap_constant(value)
    var.source = source
    return var


_WRAPPING = set()  # ids of the sequences being wrapped


def _wrap_sequence(tx, value, source):
    if is_struct_sequence(value):  # immutable: a constant, guarded by value
        return _wrap_constant(tx, value, source)
    if type(value) is tuple and guarded_as_one(tx, value, source, _item_source):
        _guard(tx, "CONSTANT_MATCH", source, value)
        return TupleVariable([ConstantVariable(v) for v in value], source=source)
    _guard(tx, "LENGTH", source, (type(value), len(value)))
    base = tuple if isinstance(value, tuple) else list
    item_source = _item_source
    if isinstance(type(value).__getitem__, types.FunctionType):  # a subclass's own: read the items themselves
        item_source = _BASE_ITEM_SOURCES[base]
    if id(value) in _WRAPPING:  # `a.append(a)`: each wrap would wrap it again
        unsupported("unsupported_value", f"a {type(value).__name__} that contains itself")
    _WRAPPING.add(id(value))
    try:
        items = [wrap_value(tx, v, item_source(source, i)) for i, v in enumerate(base.__iter__(value))]
    finally:
        _WRAPPING.discard(id(value))
    if isinstance(value, torch.Size):
        return SizeVariable(items, source=source)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return NamedTupleVariable(items, type(value), source=source)
    if isinstance(value, tuple) and type(value) is not tuple and type(type(value)) is type \
            and own_methods(type(value), tuple) and not getattr(value, "__dict__", None):
        # a tuple subclass with methods: they are traced, as a namedtuple's; no attribute of its own
        if type(value).__dictoffset__ and source is not None:
            _guard(tx, "DICT_KEYS", AttrSource(source, "__dict__"), (dict, ()))
        return NamedTupleVariable(items, type(value), source=source)
    var = (TupleVariable if isinstance(value, tuple) else ListVariable)(items, source=source)
    if type(value) is not base:  # `class Sub(list): pass`: list's behaviour, and type() is Sub
        _refuse_own_methods(type(value), base)
        var.py_type = type(value)
    return var


def _refuse_own_methods(cls, base):
    """A subclass of the builtin ``base`` is modelled as ``base`` only if it adds no
    methods or properties (and no instance attributes: it has no ``__dict__`` entries)."""
    own = own_methods(cls, base)
    if own:
        unsupported("unsupported_value", f"a {cls.__name__}, a {base.__name__} subclass "
                                         f"with methods of its own ({', '.join(own[:3])})")


def _wrap_set_subclass(tx, value, source):
    """``class Tags(set): pass`` from outside: a set (or frozenset) whose type is the subclass;
    a frozenset subclass with methods is the user frozenset tracker, its methods traced."""
    if getattr(value, "__dict__", None):
        unsupported("unsupported_value", f"a {type(value).__name__} with attributes of its own")
    if isinstance(value, frozenset) and own_methods(type(value), frozenset) and is_user_frozenset_class(type(value)):
        if source is not None:  # no attribute of its own to shadow a method
            _guard(tx, "DICT_KEYS", AttrSource(source, "__dict__"), (dict, ()))
        return user_frozenset_of(_wrap_set(tx, value, source))
    _refuse_own_methods(type(value), frozenset if isinstance(value, frozenset) else set)
    return _wrap_set(tx, value, source)


def _wrap_dict(tx, value, source):
    var = _dict_tracker(tx, value, source)
    if isinstance(value, collections.OrderedDict) and list(dict.keys(value)) != list(value):
        # move_to_end before the frame: dict's own views differ (dicts.py)
        var.table_from_outside = tuple(dict.keys(value))
        var.table = {hash_key(ConstantVariable(k)): None for k in var.table_from_outside}
    return var


def _dict_tracker(tx, value, source):
    if is_user_dict_class(type(value)):
        return wrap_user_dict(tx, value, source)
    if getattr(value, "__dict__", None):  # `od.x = [...]` on an OrderedDict: the trackers hold items only
        unsupported("unsupported_value", f"a {type(value).__name__} with attributes of its own")
    try:
        keys = list(value)
        if isinstance(value, collections.OrderedDict):  # its order list may disagree with its table
            list(value.items())
    except Exception as e:  # noqa: BLE001 - `dict.pop(od, k)`, a key's changing hash: the OrderedDict raises
        unsupported("unsupported_value", f"a {type(value).__name__} whose keys cannot be read ({e!r})")
    if len(keys) != len(value):
        # `dict.__setitem__(od, k, v)`, `dict.setdefault(od, ...)`: the key went into the table but
        # not into the OrderedDict's order list (odictobject.c keeps both), so iterating it shows
        # fewer keys than len() counts; a tracker holds one list of items and cannot be both
        unsupported("unsupported_value", f"a {type(value).__name__} whose order list holds {len(keys)} "
                                         f"keys and its table {len(value)} (a dict method called on it unbound)")
    if not all(isinstance(k, (str, int, float, bool, type(None), enum.Enum)) and plain_key(k) for k in keys):
        if is_object_keyed(value):  # optimizer.state: read lazily, one key at a time
            return wrap_object_keyed_dict(tx, value, source)
        unsupported("unsupported_value", "dict with keys that are not constants")
    var = wrap_lazy_dict(tx, value, source)  # items wrapped (and guarded) when read
    if var is None:
        _guard(tx, "DICT_KEYS", source, (type(value), tuple(value)))
        pairs = [(ConstantVariable(k), wrap_value(tx, v, _item_source(source, k))) for k, v in value.items()]
        var = ConstDictVariable(pairs, py_type=type(value), source=source)
    if type(value) is collections.defaultdict:  # __missing__ calls it: read (and guarded) like any attribute
        var.default_factory = wrap_value(tx, value.default_factory, AttrSource(source, "default_factory"))
    return var


def _plain_member(k) -> bool:
    if type(k) is tuple:
        return all(_plain_member(item) for item in k)
    return isinstance(k, CONSTANT_TYPES) and plain_key(k) or isinstance(k, (type, types.BuiltinFunctionType))


def _wrap_set(tx, value, source):
    # constants (tuples of them too), classes (dataclasses' _ATOMIC_TYPES) and builtin
    # functions: immutable, hashed and compared with no user code, so the set guard's
    # equality with a frozenset of them is CPython's own
    if not all(_plain_member(k) for k in value):
        unsupported("unsupported_value", "set of values that are not constants")
    _guard(tx, "SET_MATCH", source, (type(value), tuple(value), value.__sizeof__()))  # a set is not hashable
    members = [wrap_constant(v) if is_constant_value(v) else wrap_value(tx, v, None) for v in value]
    tracker = SetVariable(members, py_type=type(value), source=source)
    if all(type(v) in SCALARS for v in value) and not same_table(tracker.members, value):
        # added one by one, the table came out otherwise; the constants stand for themselves,
        # and set_merge copies the table, as `set(s)` does in CPython
        tracker.members = set(value)
        if not same_table(tracker.members, value):  # the order as read is right until a change
            tracker.table_known, tracker.outside_order = False, tuple(value)
    tracker.history = []  # what the trace does to the real set from here on
    return tracker


def _wrap_function(tx, value, source):
    if is_checkpoint(value):  # torch.utils.checkpoint.checkpoint: one node (checkpoint.py)
        guard_identity(tx, value, source)
        return CheckpointVariable(source=source)
    if getattr(value, "__code__", None) is _TORCH_DISABLED:  # torch._disable_dynamo(fn): torch's own
        return BreakingCallVariable(value, "unsupported_call",  # "do not compile this" mark, kept
                                    f"{value.__qualname__} is marked by torch._disable_dynamo")
    if getattr(value, "_torchdynamo_disable", False) or getattr(value, "__code__", None) is not None \
            and value.__code__.co_filename == _TORCH_EVAL_FRAME and hasattr(value, "_torchdynamo_orig_callable"):
        return _wrap_torch_compiled(tx, value, source)
    if _made_per_call(value):
        return _wrap_nested_function(tx, value, source)
    if value.__module__ is not None and value.__module__.startswith("numpy") and numpy_counterpart(value):
        return _wrap_numpy_function(tx, value, source)  # np.isclose, np.linalg.norm: written in Python
    guard_identity(tx, value, source)
    chosen = chosen_by_user(value, source)
    if chosen is not None:
        return chosen
    if value in TRANSFORMS:  # torch.vmap, torch.func.grad ...: one node (transforms.py)
        return TransformVariable(value, source=source)
    if value is torch.func.jvp:
        return JvpVariable(source=source)
    if value is torch.func.vjp:
        return VjpVariable(source=source)
    if value in FUNCTIONAL_CALLS:
        return FunctionalCallVariable(value, source=source)
    if value in NULL_CONTEXTS:  # torch.fx.traceback.annotate
        return NullContextClassVariable(value, source=source)
    if is_shape_hint(value):
        return ModelledCallVariable(value, lambda tx, *args, **kwargs: ConstantVariable(None), source=source)
    if value in PURE_CALLS:
        return PureCallVariable(value, source=source)
    if value in CLASS_DECORATORS:  # dataclass on a class the trace built: run now (classes.py)
        return ClassDecoratorVariable(value, source=source)
    # copy.deepcopy, optimizers' step counters (Python numbers), typing.cast(typ, val) is val,
    # dataclasses.fields without its generator: library functions modelled over trackers
    for models in (COPY_MODELS, OPTIM_MODELS, TYPING_MODELS, DATACLASS_MODELS):
        if value in models:
            return ModelledCallVariable(value, models[value], source=source)
    if value in TRACE_TIME or is_graph_callable(value):
        return TorchFunctionVariable(value, source=source)
    return UserFunctionVariable(value, source=source)


_TORCH_DISABLED = torch._disable_dynamo(lambda: None).__code__  # the code of its wrapper
# the file of torch.compile's wrappers (read by name: framegraph never imports torch._dynamo)
_TORCH_EVAL_FRAME = os.path.join(os.path.dirname(torch.__file__), "_dynamo", "eval_frame.py")


def _wrap_torch_compiled(tx, value, source):
    """A function wrapped by ``torch.compile`` or ``torch.compiler.disable``. Called
    inside a trace, a compiled one is the function it wraps, traced into this graph,
    as torch.compile itself treats a nested compiled call; a disabled one runs in
    CPython, as its author asked."""
    guard_identity(tx, value, source)
    original = without_dynamo_patch(value)
    if original is not value:  # torch._dynamo's own patch of torch.optim: as without it
        return wrap_value(tx, original, AttrSource(source, "_torchdynamo_orig_callable") if source else None)
    if getattr(value, "_torchdynamo_disable", False):
        return BreakingCallVariable(value, "unsupported_call",
                                    f"{value.__qualname__} is marked by torch.compiler.disable")
    inner = value._torchdynamo_orig_callable
    return wrap_value(tx, inner, AttrSource(source, "_torchdynamo_orig_callable") if source else None)


def _made_per_call(fn) -> bool:
    """A user function its enclosing function makes anew on every call (a nested
    ``def`` or ``lambda``, a closure from a factory such as transformers'
    ``and_masks``): its identity is new each time, so an identity guard fails
    on every call. Models of library functions stay recognised by identity."""
    if type(fn) is not types.FunctionType or "<locals>" not in fn.__code__.co_qualname:
        return False  # (torch ops come here too: they have no code)
    return not (fn in PURE_CALLS or fn in COPY_MODELS or fn in OPTIM_MODELS or fn in TYPING_MODELS
                or fn in TRACE_TIME or is_graph_callable(fn) or fn in TRANSFORMS
                or fn in (torch.func.jvp, torch.func.vjp) or fn in FUNCTIONAL_CALLS or fn in NULL_CONTEXTS
                or is_shape_hint(fn))


def _wrap_nested_function(tx, fn, source):
    """Guard what a call of ``fn`` depends on instead of its identity (CPython
    runs a function from its code, globals, defaults and closure): the type,
    the code object, the globals dict, and how many defaults and which
    keyword defaults there are. The defaults' and the cells' contents are
    guarded like any other value when the call binds and reads them
    (``UserFunctionVariable.bind``/``closure_cells``), and so are the
    attributes it reads; ``is`` with another function is not known."""
    if source is not None:
        _guard(tx, "TYPE_MATCH", source, types.FunctionType)
        _guard(tx, "ID_MATCH", AttrSource(source, "__code__"), (id(fn.__code__), fn.__code__.co_qualname))
        _guard(tx, "ID_MATCH", AttrSource(source, "__globals__"),
               (id(fn.__globals__), f"globals of {fn.__module__}"))
        for attr, kind, shape in (("__defaults__", "LENGTH", len), ("__kwdefaults__", "DICT_KEYS", tuple)):
            value = getattr(fn, attr)
            if value is None:
                _guard(tx, "CONSTANT_MATCH", AttrSource(source, attr), None)
            else:
                _guard(tx, kind, AttrSource(source, attr), (type(value), shape(value)))
    return UserFunctionVariable(fn, by_identity=False, source=source)


def _wrap_method(tx, value, source):
    if is_grad_mode_exit(value):  # left on the stack by a graph break in a `with`
        return grad_mode_exit(tx, value, source)
    if not isinstance(value.__func__, types.FunctionType):
        # a method of a C callable (``logger.warning_once``, an lru_cache wrapper) left on
        # the stack by a graph break: opaque, and calling it is a graph break at the CALL
        return _wrap_object(tx, value, source)
    obj = wrap_value(tx, value.__self__, AttrSource(source, "__self__") if source else None)
    return bind_class_attribute(tx, obj, value.__func__, None)


def _wrap_module(tx, value, source):
    guard_identity(tx, value, source)
    return NNModuleVariable(value, source=source)


def _wrap_operator(tx, value, source):
    guard_identity(tx, value, source)
    var = wrap_operator(value, source)
    if var is None:
        return BreakingCallVariable(value, "unsupported_call", f"torch.ops.higher_order.{value.name()} "
                                    "is not modelled: it runs in CPython")
    return var


def _wrap_pymodule(tx, value, source):
    guard_identity(tx, value, source)
    return PythonModuleVariable(value, source=source)


def _wrap_class(tx, value, source):
    guard_identity(tx, value, source)
    if type(value).__hash__ is None:  # a metaclass with __eq__ and no __hash__: in no table below
        return UserDefinedClassVariable(value, source=source)
    if value in PURE_CALLS:
        return PureCallVariable(value, source=source)
    if value in NULL_CONTEXTS:
        return NullContextClassVariable(value, source=source)
    if value in GRAD_MODE_CLASSES:
        return GradModeClassVariable(value, source=source)
    if value in STATE_SWITCHES:
        return StateSwitchClassVariable(value, source=source)
    if value in BUILTINS or value in PURE or value.__module__ == "builtins":
        return BuiltinVariable(value, source=source)
    if value.__module__ == "numpy" and is_numpy_scalar_type(value):  # np.float32(2): recorded
        return NumpyScalarTypeVariable(value, source=source)
    return UserDefinedClassVariable(value, source=source)


def _wrap_builtin(tx, value, source):
    if str(getattr(value, "__module__", None)).startswith("numpy") and numpy_counterpart(value):
        return _wrap_numpy_function(tx, value, source)  # np.zeros, np.dot: NumPy's C functions
    guard_identity(tx, value, source)  # a global rebound to another builtin must not reuse the graph
    chosen = chosen_by_user(value, source)
    if chosen is not None:
        return chosen
    if value in PURE_CALLS:
        return PureCallVariable(value, source=source)
    if value in OBJECT_SLOTS:
        return ObjectSlotVariable(value, source=source)
    if value in TRACE_TIME or is_graph_callable(value):
        return TorchFunctionVariable(value, source=source)
    if value in BUILTINS or value in PURE or getattr(value, "__module__", None) in ("math", "_operator"):
        return BuiltinVariable(value, source=source)
    if is_unbound_builtin_method(value):  # toHex = float.hex; toHex(x): call_unbound, as `float.hex(x)` is
        return BuiltinVariable(value, source=source)
    owner = getattr(value, "__self__", None)
    if isinstance(value, types.BuiltinMethodType) and not isinstance(owner, (type, types.ModuleType)) \
            and owner is not None and is_constant_value(owner):
        # a stored C method of an immutable constant (keyword.iskeyword is
        # frozenset(kwlist).__contains__): folded on constant arguments like the constant's methods
        return BuiltinVariable(value, source=source)
    if value in EXC_INFO_MODELS:  # sys.exc_info(): the exception the trace handles
        return ModelledCallVariable(value, EXC_INFO_MODELS[value], source=source)
    if has_twin(value):  # heapq.heappush: its Python twin is traced (twins.py)
        return TwinFunctionVariable(value, source=source)
    if is_rng_method(value):  # random.random: the generator's state is not the trace's (rng.py)
        return BreakingCallVariable(value, "rng_state", f"{value.__qualname__}(): the generator's state "
                                                        "is outside the trace")
    # no model: a value like any other, but calling it is a graph break (wrappers.py)
    owner = getattr(value, "__self__", None)  # slot wrappers (object.__setattr__) have none
    if owner is not None and not isinstance(owner, types.ModuleType):
        return BreakingCallVariable(value, "unsupported_call",
                                    f"method {value.__qualname__} of a {type(owner).__name__}")
    return BreakingCallVariable(value, "unsupported_call", f"C function {getattr(value, '__qualname__', value)}")


def _wrap_lru_cache(tx, value, source):
    guard_identity(tx, value, source)
    return LruCacheVariable(value, source=source)


def _wrap_enum(tx, value, source):
    guard_identity(tx, value, source)
    return EnumVariable(value, source=source)


def _wrap_annotation(tx, value, source):
    """An immutable object whose every use runs now: a type annotation (``list[Tensor]``
    stored in a global, a ``typing`` form such as ``Optional``, ``List[int]``, a TypeVar:
    subscripting them is a pure, cached computation), or a compiled regular expression
    and its matches (``PAT.match(name).group(1)`` on a constant name is a constant)."""
    guard_identity(tx, value, source)
    return OpaqueConstantVariable(value, source=source)


def _wrap_proxy(tx, value, source):
    """A ``weakref.proxy``: every operation forwards to a referent that may die at any
    time (then ReferenceError); not modelled."""
    unsupported("unsupported_value", f"a {type(value).__name__}")


def _wrap_object(tx, value, source):
    if callable(value) and not hasattr(type(value), "__call__"):  # pragma: no cover
        unsupported("unsupported_value", type(value).__name__)
    if partial_class(type(value)):  # a copy of partial's C type, a subclass keeping its C code
        return wrap_partial(tx, value, source)
    if issubclass(type(value), functools.partial):  # a subclass with its own __call__, __new__, ...
        unsupported("unsupported_value", f"a subclass of functools.partial ({type(value).__name__})")
    if value_base(type(value)) is not None:  # class Name(str): its value, and an object
        return wrap_value_instance(tx, value, source)
    _guard(tx, "TYPE_MATCH", source, type(value))
    return UserDefinedObjectVariable(value, source=source)


EXACT = {
    **{t: _wrap_constant for t in CONSTANT_TYPES},
    weakref.ProxyType: _wrap_proxy, weakref.CallableProxyType: _wrap_proxy,
    slice: _wrap_constant, range: _wrap_constant, torch.Size: _wrap_sequence,
    tuple: _wrap_sequence, list: _wrap_sequence, dict: _wrap_dict,
    collections.OrderedDict: _wrap_dict, set: _wrap_set, frozenset: _wrap_set, ChangedSize: wrap_changed_size,
    types.FunctionType: _wrap_function, types.MethodType: _wrap_method,
    types.ModuleType: _wrap_pymodule, types.BuiltinFunctionType: _wrap_builtin,
    types.MethodDescriptorType: _wrap_builtin, types.WrapperDescriptorType: _wrap_builtin,
    types.MethodWrapperType: _wrap_builtin, types.ClassMethodDescriptorType: _wrap_builtin,
    _C.Wrapper: wrap_framegraph_wrapper, functools._lru_cache_wrapper: _wrap_lru_cache,
    os._Environ: lambda tx, value, source: EnvironVariable(source=source),
    types.GenericAlias: _wrap_annotation, types.UnionType: _wrap_annotation,  # int | None
    re.Pattern: _wrap_annotation, re.Match: _wrap_annotation,  # immutable: every use runs now
    functools.partial: wrap_partial, weakref.ReferenceType: wrap_weakref,
}
if np is not None:  # NumPy on tensors (numpy_arrays.py)
    EXACT.update({np.ndarray: _wrap_ndarray, np.ufunc: _wrap_numpy_function,
                  type(np.sum): _wrap_numpy_function})
BY_BASE = (
    (torch.Tensor, _wrap_tensor),
    (nn.Module, _wrap_module),
    (enum.Enum, _wrap_enum),
    (type, _wrap_class),
    (tuple, _wrap_sequence),
    (list, _wrap_sequence),
    (dict, _wrap_dict),
    ((set, frozenset), _wrap_set_subclass),
    ((torch._ops.OpOverload, torch._ops.OpOverloadPacket), _wrap_function),
    (torch._ops.HigherOrderOperator, _wrap_operator),
    # the base class of typing's special forms, aliases and TypeVars (private, but
    # present from 3.7 to 3.13); an object with no such base is wrapped as usual
    (getattr(typing, "_Final", ()), _wrap_annotation),
    ((typing.TypeVar, typing.ParamSpec), _wrap_annotation),  # C types from 3.12 on, not _Final
)


def _in_stable_code(tx) -> bool:
    """Is ``tx`` running code of a module whose globals a trace does not guard (torch's)?"""
    return stable_module((getattr(tx, "f_globals", None) or {}).get("__name__"))


def wrap_value(tx, value, source: Optional[Source] = None, guard: bool = True) -> VariableTracker:
    """The tracker for ``value`` read from ``source`` (None: a value made in the trace)."""
    cache = tx.output.by_source
    if source is None and type(value) is types.FunctionType and user_code(value) and _in_stable_code(tx):
        # a user's function that torch's own code hands over from state it keeps unguarded
        # (a global module hook): its cells, defaults and globals need sources, to be guarded
        # and written back. (Reached without a source in user code, through a class's
        # functions and their closures, it is fixed by the class, as it always was.)
        source, guard = ConstSource.of(value), False
    if source is not None and source in cache:
        return cache[source]
    alias = same_object(tx, value, source)  # a mutable object met before, through another source
    if alias is not None:
        return alias
    guard_source = source if guard else None
    kind = EXACT.get(type(value))
    if kind is None:
        # by the real type: a weakref.proxy's __class__ is its referent's, but it is no set
        kind = next((fn for base, fn in BY_BASE if issubclass(type(value), base)), None)
    if kind is None:
        kind = _wrap_object
    if kind is _wrap_tensor:
        var = kind(tx, value, source)
    else:
        # a container that holds itself (lru_cache's circular ``root`` list) would
        # wrap its items forever: the objects being wrapped are this one's ancestors
        ancestors = vars(tx.output).setdefault("wrapping", set())
        if id(value) in ancestors:
            unsupported("unsupported_value", f"a {type(value).__name__} that contains itself")
        ancestors.add(id(value))
        try:
            var = kind(tx, value, guard_source)
        finally:
            ancestors.discard(id(value))
        var.source = source
    if source is not None:
        cache[source] = var
        remember_object(tx, value, var)
    return var


def _item_source(source, index):
    return GetItemSource(source, index) if source is not None else None


_BASE_ITEM_SOURCES = {
    tuple: lambda source, i: TupleItemSource(source, i) if source is not None else None,
    list: lambda source, i: ListItemSource(source, i) if source is not None else None,
}
