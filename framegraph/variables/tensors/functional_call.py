"""``torch.func.functional_call(module, params, args)``: the module called with other tensors.

In eager it swaps the given tensors into the module's parameter and buffer
dicts, calls the module, and swaps the originals back. The trace does not
write the dicts: while the call is traced, reading one of those parameters
or buffers (``NNModuleVariable._member``) gives the tensor passed instead, so
the graph computes with it and the module is left as it was, as eager leaves
it. Tied weights (one tensor under two names) follow the name given, as
``tie_weights=True`` makes them in eager; names that are not parameters or
buffers of the module, and ``strict=True`` with a missing name, are breaks.
"""
import inspect

import torch

from ...errors import unsupported
from ..containers.dicts import ConstDictVariable
from ..containers.lists import BaseListVariable
from ..core.base import VariableTracker
from .nn_module import NNModuleVariable

FUNCTIONAL_CALLS = frozenset({torch.func.functional_call, torch.nn.utils.stateless.functional_call})
_SIGNATURE = inspect.signature(torch.func.functional_call)


def _pairs(var):
    if not isinstance(var, ConstDictVariable) or not all(k.is_python_constant() for k, _ in var.items.values()):
        unsupported("unsupported_call", f"functional_call's parameters are {var}, not a dict of names")
    return [(k.as_python_constant(), v) for k, v in var.items.values()]


def _overrides(module, given, tie_weights):
    """{(id(submodule), name): tracker} for every tensor slot the call replaces."""
    by_slot, names_of = {}, {}
    for name, tensor in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        names_of.setdefault(id(tensor), []).append(name)
    slots = {}
    for name, value in given.items():
        prefix, _, leaf = name.rpartition(".")
        try:
            owner = module.get_submodule(prefix)
        except AttributeError:
            unsupported("unsupported_call", f"functional_call: {name!r} names no submodule")
        d = owner.__dict__
        if leaf not in d.get("_parameters", ()) and leaf not in d.get("_buffers", ()):
            unsupported("unsupported_call", f"functional_call: {name!r} is not a parameter or buffer")
        slots[name] = (owner, leaf)
        by_slot[(id(owner), leaf)] = value
    if tie_weights:
        for name, (owner, leaf) in slots.items():
            tensor = getattr(owner, leaf)
            for tied in names_of.get(id(tensor), []):
                if tied not in given:
                    prefix, _, tied_leaf = tied.rpartition(".")
                    by_slot.setdefault((id(module.get_submodule(prefix)), tied_leaf), given[name])
    return by_slot


def _is_none(var):
    return var is None or var.is_python_constant() and var.as_python_constant() is None


def _arguments(var):
    """``args`` as ``_functional_call`` takes it: None is no arguments, a tuple is the
    arguments, anything else the one argument."""
    if _is_none(var):
        return []
    if isinstance(var, BaseListVariable) and issubclass(var.python_type(), tuple):
        return list(var.items)
    return [var]


class FunctionalCallVariable(VariableTracker):
    """``torch.func.functional_call`` itself."""

    def __init__(self, fn, **kwargs):
        super().__init__(**kwargs)
        self.fn = fn

    def python_type(self):
        return type(self.fn)

    def call(self, tx, args, kwargs):
        try:
            bound = _SIGNATURE.bind(*args, **kwargs)
        except TypeError as e:
            unsupported("unsupported_call", f"functional_call: {e}")
        bound.apply_defaults()
        a = bound.arguments
        module, dicts, call_args, call_kwargs = (a["module"], a["parameter_and_buffer_dicts"], a["args"],
                                                 a["kwargs"])
        if not isinstance(module, NNModuleVariable):
            unsupported("unsupported_call", f"functional_call of {module}")
        options = {name: a[name].as_python_constant() if isinstance(a[name], VariableTracker) else a[name]
                   for name in ("tie_weights", "strict")}
        given = {}
        for d in (dicts.items if isinstance(dicts, BaseListVariable) else [dicts]):
            for name, value in _pairs(d):
                if name in given:
                    unsupported("unsupported_call", f"functional_call: {name!r} given twice")
                given[name] = value
        if options["strict"]:
            unsupported("unsupported_call", "functional_call with strict=True")
        positional = _arguments(call_args)
        keywords = {} if _is_none(call_kwargs) else dict(_pairs(call_kwargs))
        overrides = _overrides(module.module, given, options["tie_weights"])
        saved = dict(tx.output.tensor_overrides)
        tx.output.tensor_overrides.update(overrides)
        try:
            return module.call(tx, positional, keywords)
        finally:
            tx.output.tensor_overrides.clear()
            tx.output.tensor_overrides.update(saved)

    def __repr__(self):
        return "FunctionalCallVariable()"
