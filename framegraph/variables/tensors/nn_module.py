"""nn.Module instances: submodules, parameters and buffers as graph inputs.

A module from outside the frame is guarded by identity (ID_MATCH). Reading
``self.linear`` returns the submodule (guarded by identity too), reading
``self.weight`` returns a graph input bound to the source
``L['self']._parameters['weight']``: a plain dict lookup, re-read on every
call, so updates made in place between calls are seen (parameters are never
baked into the graph as constants). Other instance attributes (``training``,
``eps``) are guarded by value.

Calling a module inlines ``type(module).forward``; a module with hooks (or
global module hooks) inlines nn.Module's ``_call_impl`` instead, which runs
them as eager does. ``ModuleList``, ``Sequential``
and ``ModuleDict`` support ``len``, indexing and iteration; ``parameters()``
and friends return lists of trackers.
"""
import functools
import types

import torch
from torch import nn
from torch.nn.modules import module as module_mod

from ...errors import unsupported
from ...guards.sources import AttrSource, GetItemSource, module_member_source
from ..containers.lists import ListVariable, TupleVariable
from ..core import space
from ..core.base import BoundMethodVariable, VariableTracker, type_lookup
from ..core.constant import ConstantVariable
from ..iteration.iterators import ListIteratorVariable

_TABLES = ("_parameters", "_buffers", "_modules")


_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_HOOKS = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                 "_global_backward_pre_hooks")


# how nn.Module's call runs the global hooks: read by _call_impl as module globals,
# which a trace reads unguarded (torch's modules are assumed stable), so guarded here
_GLOBAL_HOOK_FLAGS = ("_global_forward_hooks_with_kwargs", "_global_forward_hooks_always_called")


def _hook_dicts(module) -> list:
    """The dicts whose entries nn.Module's __call__ would run around ``module.forward``."""
    own = [module.__dict__.get(name) for name in _HOOKS]
    return [d for d in own + [getattr(module_mod, name, None) for name in _GLOBAL_HOOKS] if isinstance(d, dict)]


def _global_hook_dicts() -> list:
    return [d for d in (getattr(module_mod, name, None) for name in _GLOBAL_HOOKS + _GLOBAL_HOOK_FLAGS)
            if isinstance(d, dict)]


class NNModuleVariable(VariableTracker):
    @property
    def replay_kind(self):
        # attribute writes, replayed through nn.Module.__setattr__
        return "object" if self.source is not None else None

    def __init__(self, module: nn.Module, **kwargs):
        super().__init__(**kwargs)
        self.module = module
        self.identity = module
        self.attrs = {}  # attributes written in this trace (replayed after the graph)

    def python_type(self):
        return type(self.module)

    @property
    def mutable(self):
        return False

    def _member(self, tx, table: str, name: str):
        override = tx.output.tensor_overrides.get((id(self.module), name))
        if override is not None and table != "_modules":  # inside functional_call (functional_call.py)
            return override
        written = self._table_tracker(tx, table)
        if written is not None:
            return written.getitem(tx, ConstantVariable(name))
        value = self.module.__dict__[table][name]
        source = module_member_source(self.source, table, name) if self.source else None
        return tx.wrap(value, source)

    def _table_tracker(self, tx, table):
        """The trace's own tracker of this module's ``table`` dict, if the trace read it as
        a dict (``module._parameters[name] = t``, as ``torch.func.functional_call``
        swaps parameters): it holds what the dict holds now, the trace's writes included."""
        d = self.module.__dict__.get(table)
        return tx.output.aliases.tracker_of(d) if type(d) is dict else None

    def getattr(self, tx, name):
        if name in self.attrs:
            return self.attrs[name]
        d = self.module.__dict__
        for table in _TABLES:
            written = self._table_tracker(tx, table)
            if (name in d.get(table, ()) if written is None else written.contains(tx, ConstantVariable(name))):
                return self._member(tx, table, name)
        if name in d:
            return tx.wrap(d[name], AttrSource(self.source, name) if self.source else None)
        if name == "__class__":
            return tx.wrap(type(self.module))
        if name in _ITERATORS or name in _CONTAINER_METHODS and self._is_container():
            return BoundMethodVariable(self, name)
        return space.class_attribute(tx, self, name)

    def hasattr(self, tx, name):
        """Where ``nn.Module`` looks: the class, the instance dict, then parameters,
        buffers and submodules; each dict looked in is guarded to hold ``name`` or not."""
        if type_lookup(type(self.module), name)[0]:
            return True
        d = self.module.__dict__
        for table in ("__dict__",) + _TABLES:
            present = name in (d if table == "__dict__" else d.get(table, ()))
            if self.source is not None:
                tx.output.add_guard("DICT_CONTAINS", AttrSource(self.source, table), (name, present))
            if present:
                return True
        return False

    def setattr(self, tx, name, value):
        """``self.calls += 1``, ``self.last = y.detach()``: recorded and replayed after
        the graph with nn.Module's own ``__setattr__`` (so a buffer stays a buffer).
        Submodules and parameters assigned, and classes with their own
        ``__setattr__`` or a descriptor at ``name``, are a graph break."""
        d = self.module.__dict__
        cls = type(self.module)
        if (isinstance(value, NNModuleVariable) or name in d.get("_parameters", ())
                or name in d.get("_modules", ()) or type_lookup(cls, "__setattr__")[1] is not nn.Module.__setattr__
                or hasattr(type(type_lookup(cls, name)[1]), "__set__") or self.source is None
                or isinstance(value, VariableTracker) and value.python_type() is nn.Parameter):
            unsupported("side_effect", f"setting {cls.__name__}.{name}")
        self.check_mutable(f"setting .{name}", tx)
        self.attrs[name] = value

    def instance_dict_writes(self):
        """The written attributes nn.Module.__setattr__ stores in ``__dict__`` (a
        buffer's name stores into ``_buffers``); see instance_dict.py."""
        buffers = self.module.__dict__.get("_buffers", {})
        return {name: value for name, value in self.attrs.items() if name not in buffers}

    def call(self, tx, args, kwargs):
        hooks = _hook_dicts(self.module)
        if any(hooks):
            # nn.Module's own call runs them: traced as it is written, it reads each hook
            # dict (guarded, with its hooks) and calls the hooks around forward, as eager
            # does. Backward hooks stay a break (BackwardHook is not modelled).
            # The module's own dicts are read through its source (guarded with their
            # hooks); the global ones are guarded as they are (MODULE_HOOKS).
            tx.output.hook_dicts.update((id(d), d) for d in _global_hook_dicts())
            call_impl = type_lookup(type(self.module), "_call_impl")[1]
            return space.UserFunctionVariable(call_impl).call(tx, [self] + list(args), kwargs)
        tx.output.hook_dicts.update((id(d), d) for d in hooks)  # guarded to stay empty (MODULE_HOOKS)
        forward = self.getattr(tx, "forward")
        return forward.call(tx, args, kwargs)

    def call_method(self, tx, name, args, kwargs):
        if name in ("__call__", "_call_impl"):
            return self.call(tx, args, kwargs)
        if name in _CONTAINER_METHODS:
            return _CONTAINER_METHODS[name](self, tx, *args, **kwargs)
        if name in _ITERATORS:
            return self._named(tx, name, **{k: v.as_python_constant() for k, v in kwargs.items()})
        return self.getattr(tx, name).call(tx, args, kwargs)

    # ---- containers (ModuleList, Sequential, ModuleDict, ParameterList)
    def _table(self):
        return "_parameters" if isinstance(self.module, (nn.ParameterList, nn.ParameterDict)) else "_modules"

    def _child_names(self, tx):
        """The container's keys, guarded: ``append`` or ``del`` changes what a loop over it does."""
        return _guarded_keys(tx, self, self._table())

    def _child(self, tx, key):
        return self._member(tx, self._table(), key)

    def _is_container(self):
        return isinstance(self.module, _CONTAINERS)

    def _is_dict(self):
        return isinstance(self.module, (nn.ModuleDict, nn.ParameterDict))

    def unpack(self, tx):
        if self._is_dict():
            return [ConstantVariable(k) for k in self._child_names(tx)]
        if not isinstance(self.module, (nn.ModuleList, nn.Sequential, nn.ParameterList)):
            return self.call_method(tx, "__iter__", [], {}).unpack(tx)
        return [self._child(tx, k) for k in self._child_names(tx)]

    def length(self, tx):
        return len(self._child_names(tx))

    def truth(self, tx):
        """``bool(module)``, as CPython answers it: the class's ``__bool__``, else
        its ``__len__`` (a container is true when it has children), else True:
        ``if self.downsample:`` on an ``Optional[nn.Module]`` attribute."""

        for name in ("__bool__", "__len__"):
            found, fn = type_lookup(type(self.module), name)
            if not found:
                continue
            if fn in _CONTAINER_LENS:  # torch's own: the number of children, guarded
                return self.length(tx) > 0
            if not isinstance(fn, types.FunctionType):
                unsupported("unsupported_value", f"bool() of {type(self.module).__name__} ({name} is not Python)")
            result = space.bind_class_attribute(tx, self, fn, None).call(tx, [], {})
            return result.truth(tx) if name == "__bool__" else result.as_python_constant() > 0
        return True

    def getitem(self, tx, key):
        index = key.as_python_constant()
        names = self._child_names(tx)
        if self._is_dict():
            if index not in names:
                unsupported("operator_error", f"key {index!r} not in {type(self.module).__name__}")
            return self._child(tx, index)
        if isinstance(index, slice):
            return self._slice(tx, index, names)
        try:
            return self._child(tx, names[index])
        except (IndexError, TypeError):
            unsupported("operator_error", f"index {index!r} out of range for {type(self.module).__name__}")

    def _slice(self, tx, index, names):
        """``seq[1:]``, ``layers[::2]``: the new container eager makes, made here;
        its children are this container's (the same trackers and sources)."""
        if not isinstance(self.module, (nn.ModuleList, nn.Sequential)):
            unsupported("unsupported_call", f"slicing a {type(self.module).__name__}")
        sliced = self.module[index]
        children = dict(zip(sliced._modules, (self._child(tx, k) for k in names[index])))
        return SlicedContainerVariable(sliced, children)

    def contains(self, tx, item):
        return item.as_python_constant() in self._child_names(tx)

    def _named(self, tx, method, **kwargs):
        """parameters() / named_parameters() / children() / modules() ...: iterators over trackers."""
        named = method.startswith("named_")
        real = getattr(self.module, method if named else "named_" + method)
        if method in ("modules", "named_modules"):
            kwargs.pop("recurse", None)
        tables = ("_modules",) + (("_parameters",) if "param" in method else ("_buffers",) if "buffer" in method
                                  else ())
        for path, _ in self.module.named_modules():  # the tree's shape decides what is listed: guard it
            owner = self._at_path(tx, path, None)
            for table in tables:
                _guarded_keys(tx, owner, table)
        items = []
        for path, value in real(**kwargs):
            var = self._at_path(tx, path, value)
            items.append(TupleVariable([ConstantVariable(path), var]) if named else var)
        return ListIteratorVariable(items, from_generator=True)  # a generator, as in eager: next() works

    def _at_path(self, tx, path, value):
        var = self
        for part in path.split(".") if path else []:
            var = var.getattr(tx, part)
        return var

    def __repr__(self):
        return f"NNModuleVariable({type(self.module).__name__})"


class SlicedContainerVariable(NNModuleVariable):
    """A container made while tracing (``seq[:2]``); it has no source of its own."""

    def __init__(self, module, children, **kwargs):
        super().__init__(module, **kwargs)
        self.children = children

    def _member(self, tx, table, name):
        if table == "_modules" and name in self.children:
            return self.children[name]
        return super()._member(tx, table, name)


def _guarded_keys(tx, var, table):
    """The keys of ``var.module.<table>``, guarded when the module comes from outside."""
    if var._table_tracker(tx, table) is not None:  # read (and maybe written) as a dict in the trace
        unsupported("side_effect", f"iterating over {type(var.module).__name__}.{table} after the trace "
                                   "read it as a dict")
    value = var.module.__dict__.get(table, {})
    if var.source is not None and type(value) is dict:
        tx.output.add_guard("DICT_KEYS", AttrSource(var.source, table), (dict, tuple(value)))
        for key, item in value.items():  # `bias=None` is listed by no iterator: guard it stays None
            if item is None:
                tx.output.add_guard("CONSTANT_MATCH", GetItemSource(AttrSource(var.source, table), key), None)
    return list(value)


_CONTAINERS = (nn.ModuleList, nn.ModuleDict, nn.Sequential, nn.ParameterList, nn.ParameterDict)
_CONTAINER_LENS = {c.__len__ for c in _CONTAINERS}
_ITERATORS = {"parameters", "named_parameters", "buffers", "named_buffers", "children",
              "named_children", "modules", "named_modules"}


def _items(m, tx):
    return ListVariable([TupleVariable([ConstantVariable(k), m._child(tx, k)]) for k in m._child_names(tx)])


_CONTAINER_METHODS = {
    "__len__": lambda m, tx: ConstantVariable(m.length(tx)),
    "__getitem__": lambda m, tx, k: m.getitem(tx, k),
    "__contains__": lambda m, tx, k: ConstantVariable(m.contains(tx, k)),
    "keys": lambda m, tx: ListVariable([ConstantVariable(k) for k in m._child_names(tx)]),
    "values": lambda m, tx: ListVariable([m._child(tx, k) for k in m._child_names(tx)]),
    "items": _items,
}



class ModuleMadeInTraceVariable(NNModuleVariable):
    """``nn.MaxPool1d(2)``, ``nn.ConstantPad1d(...)`` built inside ``forward``: a
    torch.nn module with no parameters and no buffers, from constant arguments.

    It is built for real at trace time (under a forked RNG, so trying a module
    that would initialise weights draws nothing) and read like any module; if it
    outlives the graph it is built again from the same arguments, a new object,
    as eager makes one per call. Its attributes cannot be written in the trace.
    """

    def __init__(self, module, args, kwargs, **kw):
        super().__init__(module, **kw)
        self.ctor_args, self.ctor_kwargs = args, kwargs

    def setattr(self, tx, name, value):
        unsupported("side_effect", f"setting {name} on a {type(self.module).__name__} made in the trace")

    def reconstruct(self, cg):
        """Built again, a new object as eager makes one per call: ``cls(*args, **kwargs)``."""
        cls = type(self.module)
        cg.call_constant(functools.partial(cls, **self.ctor_kwargs) if self.ctor_kwargs else cls, *self.ctor_args)


def new_module(tx, cls, args, kwargs):
    """The tracker of ``cls(*args, **kwargs)`` for an nn.Module class, or a graph break."""
    if not cls.__module__.startswith("torch.nn.modules.") or type(cls).__call__ is not type.__call__:
        unsupported("unsupported_call", f"creating a {cls.__name__} inside compiled code")
    if not all(v.is_python_constant() for v in [*args, *kwargs.values()]):
        unsupported("unsupported_call", f"creating a {cls.__name__} from non-constant arguments")
    consts = [a.as_python_constant() for a in args]
    kwconsts = {k: v.as_python_constant() for k, v in kwargs.items()}
    with torch.random.fork_rng(devices=[]):
        try:
            module = cls(*consts, **kwconsts)
        except Exception as e:  # eager raises it: let CPython do so
            unsupported("unsupported_call", f"creating a {cls.__name__}: {type(e).__name__}: {e}")
    if any(True for _ in module.parameters()) or any(True for _ in module.buffers()):
        unsupported("unsupported_call", f"creating a {cls.__name__} (it has parameters or buffers) "
                                        "inside compiled code")
    return ModuleMadeInTraceVariable(module, tuple(consts), kwconsts)
