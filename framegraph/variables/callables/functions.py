"""User functions, methods, closures and the cells they share.

Calling a user function inlines it: a nested translator runs its bytecode
over the caller's graph (``tracer/translator.py``). These trackers only know
what is needed for that: the code object, the globals it reads, the bound
arguments (``binding.bind_args`` applies defaults, ``*args`` and ``**kwargs``
exactly like CPython), and the closure cells; and, since functions are objects
too, their attributes (``function_attrs.py``: what the trace writes on one is
kept on its tracker, or replayed on the real function) and the library wrappers
whose calls are modelled (``CALL_MODELS``: recursive_repr, singledispatch).

* ``UserFunctionVariable``: a real function object from outside the frame.
* ``NestedUserFunctionVariable``: a function made by MAKE_FUNCTION during the
  trace (nested ``def``, ``lambda``, comprehensions on 3.11).
* ``UserMethodVariable``: a function bound to a tracked ``self``.
* ``CellVariable``: a closure cell; cells made in the trace are shared by
  identity between the frame and its nested functions.
"""
import types
from typing import Dict, List, Optional

from ... import bytecode
from ...errors import unsupported
from ...guards.sources import AttrSource, closure_cell_source
from ...guards.sources import GetItemSource
from ...side_effects import record_mutation
from ...side_effects import store_cell
from ..containers.dicts import ConstDictVariable
from ..containers.lists import TupleVariable
from ..core import space
from ..core.aliases import known_cell, remember_cell
from ..core.base import VariableTracker, type_lookup
from ..core.binding import bind_args
from ..core.constant import CONSTANT_TYPES, ConstantVariable, wrap_constant
from ..core.exceptions import raise_in_trace
from ..core.reprs import MODELS as REPR_MODELS
from .function_attrs import (STRUCT_ATTRS, check_delete, check_write, kwdefaults_of, nested_struct_attr,
                             no_attribute)
from .single_dispatch import MODELS as DISPATCH_MODELS


class CellVariable(VariableTracker):
    """A closure cell. ``contents`` is None while the cell is empty.

    ``cell_source`` re-reads the cell object itself (not its contents) for a
    cell from outside the frame: a free variable of the traced function, an
    item of a function's ``__closure__``, a cell a resume function received.
    A nested function rebuilt after the graph must share that very cell, so a
    later write through either side is seen by the other.
    """

    def __init__(self, contents=None, *, pre_existing=False, cell_source=None, **kwargs):
        super().__init__(**kwargs)
        self.contents = contents
        self.pre_existing = pre_existing
        self.cell_source = cell_source

    def python_type(self):
        return types.CellType

    def getattr(self, tx, name):
        """``cell.cell_contents``: ValueError for an empty cell, as cell_get_contents."""
        if name != "cell_contents":
            return super().getattr(tx, name)
        if self.contents is None:
            raise_in_trace(ValueError, "Cell is empty")
        return self.contents

    def setattr(self, tx, name, value):
        if name != "cell_contents":
            return super().setattr(tx, name, value)
        self.store(value, tx)

    def load(self, name):
        if self.contents is None:
            unsupported("exception", f"free variable {name!r} referenced before assignment")
        return self.contents

    def store(self, value, tx=None):
        if self.pre_existing:  # a cell from outside the frame: a side effect, replayed
            store_cell(tx, self, value)
        self.contents = value

    def reconstruct(self, cg):
        """The real cell: re-read, or (made in the trace) built as MAKE_CELL does,
        empty first and kept in a temporary before it is filled, so a function
        whose closure holds itself (a recursive nested ``def``) can be rebuilt."""
        if self.cell_source is not None:
            self.cell_source.reconstruct(cg)
            return
        if self.pre_existing:
            unsupported("graph_output", "a closure cell from outside the frame that cannot be re-read")
        cg.call_constant(types.CellType)
        temp = cg.remember(self)
        if self.contents is not None:
            cg.store_attr_later(temp, "cell_contents", self.contents)
        cg.load_fast(temp)

    def __repr__(self):
        return f"CellVariable({self.contents!r})"


class BaseUserFunctionVariable(VariableTracker):
    """What the inliner needs from any user function tracker."""

    def get_code(self) -> types.CodeType:
        raise NotImplementedError

    def get_globals(self) -> dict:
        raise NotImplementedError

    def closure_cells(self, tx) -> List[CellVariable]:
        raise NotImplementedError

    def bind(self, tx, args, kwargs) -> Dict[str, VariableTracker]:
        raise NotImplementedError

    def call(self, tx, args, kwargs):
        return tx.inline_call(self, list(args), dict(kwargs))

    def python_type(self):
        return types.FunctionType

    def bound_get(self):
        """``fn.__get__``: func_descr_get, bound to this function."""
        return FunctionGetVariable(self)


class FunctionGetVariable(VariableTracker):
    """``fn.__get__``: called with an instance, a bound method; with None, ``fn`` itself."""

    def __init__(self, fn_var, **kwargs):
        super().__init__(**kwargs)
        self.fn_var = fn_var

    def python_type(self):
        return types.MethodWrapperType

    def call(self, tx, args, kwargs):
        if kwargs or not 1 <= len(args) <= 2:
            unsupported("operator_error", f"calling {self} with {len(args)} arguments")
        obj = args[0]
        if obj.is_python_constant() and obj.as_python_constant() is None:
            return self.fn_var
        return UserMethodVariable(self.fn_var, obj)

    def reconstruct(self, cg):
        cg(self.fn_var)
        cg.load_attr("__get__")

    def __repr__(self):
        return f"FunctionGetVariable({self.fn_var!r})"


# The marker torch's ``assume_constant_result`` sets on a function, and that
# libraries which must not import torch set themselves (transformers' install
# probes, ``is_torch_greater_or_equal``): the function's answer is fixed for
# the life of the process, so a trace may run it and keep the answer.
CONSTANT_RESULT_MARK = "_dynamo_marked_constant"


def marked_constant_result(tx, fn, called, args, kwargs) -> Optional[VariableTracker]:
    """``called(*args, **kwargs)`` run now, as a constant, when ``fn`` carries the
    constant-result mark and every argument is a constant; else None (traced as
    usual). ``called`` is what the program calls: an ``lru_cache`` wrapper
    answers from its cache, as in eager. The call and its answer are kept on the
    trace's output: a stored trace is used by another process only where the
    call answers the same there."""
    if not getattr(fn, CONSTANT_RESULT_MARK, False):
        return None
    values = list(args) + list(kwargs.values())
    if not all(v.is_python_constant() for v in values):
        return None
    args = tuple(a.as_python_constant() for a in args)
    kwargs = {k: v.as_python_constant() for k, v in kwargs.items()}
    try:
        result = called(*args, **kwargs)
    except Exception:  # let the trace meet the error where eager does
        return None
    if not isinstance(result, CONSTANT_TYPES + (tuple,)):
        return None
    tx.output.constant_results.append((called, args, kwargs, result))
    return wrap_constant(result)


class _Defaults:
    """A function's ``__defaults__`` (a tuple) or ``__kwdefaults__`` (a dict) for
    ``bind_args``, each value wrapped by ``wrap(index or name, value)`` when first taken."""

    def __init__(self, values, wrap):
        self.values, self.wrap, self.taken = values, wrap, {}

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def __contains__(self, key):
        return key in self.values

    def __getitem__(self, key):
        if key not in self.taken:
            self.taken[key] = self.wrap(key, self.values[key])
        return self.taken[key]


@space.register
class UserFunctionVariable(BaseUserFunctionVariable):
    """A function object from outside the frame.

    ``by_identity``: the guards fix the object itself (ID_MATCH). A nested
    function made anew on every call is guarded by its code, globals and
    defaults instead (``builder._wrap_nested_function``): then the object is
    not a constant, and the attributes it reads are guarded one by one.
    """

    def __init__(self, fn, by_identity=True, **kwargs):
        super().__init__(**kwargs)
        self.fn = fn
        self.by_identity = by_identity or self.source is None
        self.attrs: Dict[str, VariableTracker] = {}  # struct attributes written in the trace

    def get_code(self):
        return self.fn.__code__

    def get_globals(self):
        return self.fn.__globals__

    def call(self, tx, args, kwargs):
        constant = marked_constant_result(tx, self.fn, self.fn, args, kwargs)
        model = CALL_MODELS.get(self.fn.__code__)  # recursive_repr, singledispatch wrappers
        if constant is None and model is not None:
            constant = model(tx, self, args, kwargs)
        return constant if constant is not None else super().call(tx, args, kwargs)

    def as_python_constant(self):
        if not self.by_identity:  # another call passes another object of the same code
            unsupported("unsupported_value", f"{self} is not a constant (a nested function made per call)")
        return self.fn

    def fn_name(self):
        return self.fn.__qualname__

    def closure_cells(self, tx):
        cells = []
        for i, cell in enumerate(self.fn.__closure__ or ()):
            source = closure_cell_source(self.source, i) if self.source is not None else None
            cell_source = source.base if source is not None else None
            var = known_cell(tx, cell, cell_source)
            if var is None:
                try:
                    contents = tx.wrap(cell.cell_contents, source)
                except ValueError:
                    contents = None
                var = CellVariable(contents, pre_existing=True, cell_source=cell_source)
                remember_cell(tx, cell, var)
            cells.append(var)
        return cells

    def bind(self, tx, args, kwargs):

        def default_source(attr, key):
            return None if self.source is None else _item(AttrSource(self.source, attr), key)

        # wrapped when a parameter takes them: a default the call overrides is never read,
        # so it needs no tracker and no guard
        defaults = _Defaults(self.fn.__defaults__ or (),
                             lambda i, v: tx.wrap(v, default_source("__defaults__", i)))
        kwdefaults = _Defaults(self.fn.__kwdefaults__ or {},
                               lambda k, v: tx.wrap(v, default_source("__kwdefaults__", k)))
        tracked = tx.output.aliases.tracker_of(self.fn.__kwdefaults__)
        if tracked is not None:  # the trace changed fn.__kwdefaults__: its items now
            kwdefaults = kwdefaults_of(tracked)
        name = self.attrs["__qualname__"].as_python_constant() if "__qualname__" in self.attrs else self.fn.__qualname__
        return bind_args(self.get_code(), name, defaults, kwdefaults, args, kwargs)

    def getattr(self, tx, name):
        """Struct attributes written in the trace, then the real ones (constants fixed
        by the function's identity, or guarded through the source), then its
        ``__dict__``: the tracker of the real dict once the trace wrote to it."""
        if name in self.attrs:
            return self.attrs[name]
        if name == "__get__":
            return self.bound_get()
        source = AttrSource(self.source, name) if self.source is not None else None
        if name in _FUNCTION_CONSTANTS:  # fixed by the function's identity (ID_MATCH), else guarded
            return tx.wrap(getattr(self.fn, name), None if self.by_identity else source)
        if name == "__dict__":
            return self.instance_dict(tx)
        if name == "__closure__":
            return TupleVariable(self.closure_cells(tx)) if self.fn.__closure__ else ConstantVariable(None)
        if name in _GUARDED_ATTRS and source is not None:
            return tx.wrap(getattr(self.fn, name), source)
        tracked = self._tracked_dict(tx)
        if tracked is not None:
            key = ConstantVariable(name)
            if tracked.contains(tx, key):
                return tracked.getitem(tx, key)
        elif name in self.fn.__dict__:  # __wrapped__, attributes set by decorators
            return tx.wrap(self.fn.__dict__[name], source)
        if hasattr(_plain_function, name) or self.source is None:
            return super().getattr(tx, name)
        if tracked is None:  # absent: guarded to stay so (the tracked dict guards its own keys)
            tx.output.add_guard("DICT_CONTAINS", AttrSource(self.source, "__dict__"), (name, False))
        no_attribute(name)

    def setattr(self, tx, name, value):
        """A side effect on the real function: a struct attribute is replayed as
        ``fn.name = value``; any other is an item of its ``__dict__`` (a dict
        side effect)."""
        check_write(name, value)
        if name in STRUCT_ATTRS:
            record_mutation(tx, self, f"setting .{name}")  # a real function, even without a source
            self.attrs[name] = value
        else:
            self.instance_dict(tx).setitem(tx, ConstantVariable(name), value)

    def delattr(self, tx, name):
        """``del fn.name``: an item of the real ``__dict__`` goes (a dict side effect)."""
        check_delete(name)
        key = ConstantVariable(name)
        d = self.instance_dict(tx)
        if not d.contains(tx, key):
            no_attribute(name)
        d.delitem(tx, key)

    # Struct attribute writes are replayed (``fn.name = value``) on the real function:
    # re-read from the source, or, for one reached without a source, loaded as the
    # object itself (a function compared by identity is a trace-time constant).
    replay_kind = "object"

    def instance_dict(self, tx):
        """The tracker of the real ``__dict__`` (one per function: aliases.py)."""
        if self.source is None:
            unsupported("unsupported_attribute", f"the __dict__ of {self}, which cannot be re-read")
        return tx.wrap(self.fn.__dict__, AttrSource(self.source, "__dict__"))

    def _tracked_dict(self, tx):
        return tx.output.aliases.tracker_of(self.fn.__dict__)

    def hasattr(self, tx, name):
        if name in self.attrs or hasattr(_plain_function, name):
            return True
        tracked = self._tracked_dict(tx)
        if tracked is not None:
            return tracked.contains(tx, ConstantVariable(name))
        found = name in self.fn.__dict__
        if self.source is not None:
            # an attribute of the function's __dict__, which may change (or, for a
            # function made per call, differ on the next object)
            tx.output.add_guard("DICT_CONTAINS", AttrSource(self.source, "__dict__"), (name, found))
        return found

    def __repr__(self):
        return f"UserFunctionVariable({self.fn.__qualname__})"


# Library wrappers whose call is modelled (by the wrapper's code: every wrapper
# the decorator makes shares it); fn(tx, fn_var, args, kwargs) -> tracker, or
# None to inline the wrapper as written.
CALL_MODELS = {**REPR_MODELS, **DISPATCH_MODELS}

# Function attributes that cannot change without changing the function's identity
# in practice (code and names); read as trace-time constants.
_FUNCTION_CONSTANTS = frozenset({"__name__", "__qualname__", "__module__", "__doc__", "__code__"})
# Attributes read through their source, so that a change is seen by the guards.
_GUARDED_ATTRS = frozenset({"__defaults__", "__kwdefaults__", "__annotations__", "__type_params__"})


def _item(base, key):
    if base is None:
        return None
    return GetItemSource(base, key)


def _plain_function():
    pass


class NestedUserFunctionVariable(BaseUserFunctionVariable):
    """A function created by MAKE_FUNCTION during the trace."""

    def __init__(self, code, qualname, f_globals, defaults, kwdefaults, closure, annotations=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.code, self.qualname, self.f_globals = code, qualname, f_globals
        self.defaults: List[VariableTracker] = defaults
        self.kwdefaults: Dict[str, VariableTracker] = kwdefaults
        self.closure: Optional[List[CellVariable]] = closure
        # MAKE_FUNCTION's flat (name, value, ...) tuple; only read to rebuild the function
        self.annotations: Optional[VariableTracker] = annotations
        self.attrs: Dict[str, VariableTracker] = {}  # struct attributes written in the trace
        self.dict_var = None  # its __dict__ (a ConstDictVariable), made on first use
        self.kwdefaults_var = None  # its __kwdefaults__ dict, once read

    def get_code(self):
        return self.code

    def get_globals(self):
        return self.f_globals

    def fn_name(self):
        return self.qualname

    def closure_cells(self, tx):
        return list(self.closure or ())

    def bind(self, tx, args, kwargs):
        qualname = self.attrs["__qualname__"].as_python_constant() if "__qualname__" in self.attrs else self.qualname
        return bind_args(self.code, qualname, self.defaults, self.current_kwdefaults(), args, kwargs)

    def current_kwdefaults(self) -> Dict[str, VariableTracker]:
        """The keyword defaults now: those of ``__kwdefaults__`` once the trace read it (and
        may have changed it), else MAKE_FUNCTION's."""
        return kwdefaults_of(self.kwdefaults_var) if self.kwdefaults_var is not None else self.kwdefaults

    def getattr(self, tx, name):
        """A function's attributes (``function_attrs``): what the trace wrote, what
        MAKE_FUNCTION derived, then the function's ``__dict__``."""
        if name in self.attrs:
            return self.attrs[name]
        if name == "__get__":
            return self.bound_get()
        if name == "__dict__":
            return self.instance_dict()
        found = nested_struct_attr(tx, self, name)
        if found is not None:
            return found
        key = ConstantVariable(name)
        if self.dict_var is not None and self.dict_var.contains(tx, key):
            return self.dict_var.getitem(tx, key)
        if hasattr(_plain_function, name):  # __get__, __call__, __repr__...: what every function has
            return super().getattr(tx, name)
        no_attribute(name)

    def setattr(self, tx, name, value):
        """Kept on the tracker (a function made in the trace is this trace's own);
        ``reconstruct`` stores it on the function it builds."""
        check_write(name, value)
        self.check_mutable(f"setting .{name}", tx)
        if name in STRUCT_ATTRS:
            self.attrs[name] = value
        else:
            self.instance_dict().setitem(tx, ConstantVariable(name), value)

    def delattr(self, tx, name):
        """``del fn.name``: an item of its ``__dict__`` goes (``function_attrs.check_delete``)."""
        check_delete(name)
        key = ConstantVariable(name)
        if self.dict_var is None or not self.dict_var.contains(tx, key):
            no_attribute(name)
        self.dict_var.delitem(tx, key)

    def instance_dict(self):
        """The function's ``__dict__``, made on first use (empty, as CPython's)."""
        if self.dict_var is None:
            self.dict_var = ConstDictVariable([])
        return self.dict_var

    def hasattr(self, tx, name):
        """What every function has, what the trace wrote, and its ``__dict__``'s keys."""
        if name in self.attrs or hasattr(_plain_function, name):
            return True
        return self.dict_var is not None and self.dict_var.contains(tx, ConstantVariable(name))

    def reconstruct(self, cg):
        """``types.FunctionType(code, globals, None, defaults, closure)``, then the
        keyword defaults and annotations: what MAKE_FUNCTION builds (name, qualname
        and ``__module__`` come from the code and the globals, the same way). The
        closure's cells are the real ones (``CellVariable.reconstruct``). Then what
        the trace wrote: struct attributes, and the ``__dict__`` (assigned, so a
        reference to it elsewhere is the function's own)."""
        cg.emit_op("PUSH_NULL")
        cg.load_const(types.FunctionType)
        cg.load_const(self.code)
        cg.load_const(self.f_globals)
        cg.load_const(None)
        for items in (self.defaults, self.closure):
            if items:
                for item in items:
                    cg(item)
                cg.build(tuple, len(items))
            else:
                cg.load_const(None)
        cg.call(5)
        if self.kwdefaults_var is not None:
            _store_attr(cg, "__kwdefaults__", self.kwdefaults_var)  # the dict the trace holds
        elif self.kwdefaults:
            _store_dict_attr(cg, "__kwdefaults__",
                             [(ConstantVariable(k), v) for k, v in self.kwdefaults.items()])
        if self.annotations is not None and "__annotations__" not in self.attrs:
            flat = getattr(self.annotations, "items", None)
            if not isinstance(flat, list):
                unsupported("graph_output", f"the annotations of the nested function {self.qualname}")
            _store_dict_attr(cg, "__annotations__", list(zip(flat[::2], flat[1::2])))
        for name, value in self.attrs.items():
            _store_attr(cg, name, value)
        if self.dict_var is not None:
            _store_attr(cg, "__dict__", self.dict_var)

    def __repr__(self):
        return f"NestedUserFunctionVariable({self.qualname})"


def _store_attr(cg, name, value):
    """``fn.name = value`` with the function on top of the stack, left there."""
    cg.emit(bytecode.create_dup_top())
    cg(value)
    cg.emit_op("SWAP", arg=2)
    cg.emit_op("STORE_ATTR", argval=name)


def _store_dict_attr(cg, name, pairs):
    """``fn.name = {k: v, ...}`` with the function on top of the stack, left there."""
    cg.emit(bytecode.create_dup_top())
    for key, value in pairs:
        cg(key)
        cg(value)
    cg.build(dict, len(pairs))
    cg.emit_op("SWAP", arg=2)
    cg.emit_op("STORE_ATTR", argval=name)


class UserMethodVariable(VariableTracker):
    """``obj.method``: a function tracker bound to a tracked ``self``."""

    def __init__(self, fn_var: BaseUserFunctionVariable, obj: VariableTracker, **kwargs):
        super().__init__(**kwargs)
        self.fn_var, self.obj = fn_var, obj

    def call(self, tx, args, kwargs):
        return self.fn_var.call(tx, [self.obj] + list(args), kwargs)

    def python_type(self):
        return types.MethodType

    def getattr(self, tx, name):
        if name == "__self__":
            return self.obj
        if name == "__func__":
            return self.fn_var
        if name != "__doc__" and type_lookup(types.MethodType, name)[0]:
            # method_getattro: the method type's own first (`m.__class__` is MethodType,
            # `m.__eq__` compares methods), then the function's
            return super().getattr(tx, name)
        return self.fn_var.getattr(tx, name)

    def reconstruct(self, cg):
        """``types.MethodType(function, self)``; a function that cannot be rebuilt says so itself."""
        cg.emit_op("PUSH_NULL")
        cg.load_const(types.MethodType)
        cg(self.fn_var)
        cg(self.obj)
        cg.call(2)

    def __repr__(self):
        return f"UserMethodVariable({self.fn_var!r})"
