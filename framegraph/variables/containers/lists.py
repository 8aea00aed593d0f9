"""Sequences: tuple, list, torch.Size, namedtuple, slice and range trackers.

A sequence tracker holds a Python list of item trackers. Tuples (and Size,
namedtuples) are immutable; a list created during the trace is mutated in
place by its methods (``append``, ``extend``, ``pop``, ``l[i] = v``...),
exactly as CPython would, so later reads see the change. A list that came
from outside the frame has a source; mutating it records it in the side-effect
ledger (``side_effects.py``), which replays the final items after the graph.
"""
import operator
import types

import torch

from ...errors import unsupported
from ...guards.kinds import plain_constant
from ..core import space
from ..core.base import BoundMethodVariable, VariableTracker, known_type, type_lookup
from ..core.call_shapes import STAND_INS, builtin_base, check_method_shape, fits
from ..core.constant import ConstantVariable, items_of
from ..core.exceptions import python_operation, raise_in_trace
from ..core.number_protocol import sequence_index
from ..core.ops import _NOT_INPLACE, binary_op, compare, dunder_name, is_identical
from ..core.reprs import sequence_repr
from .sorting import list_sort


# Longer sequences are not built at trace time: `[0] * 2**62` raises MemoryError in
# CPython, and a long one would be a very long constant.
MAX_REPEAT = 1 << 16


_PLAIN_CONSTANTS = (int, float, complex, str, bytes, bool, type(None))
# A tuple of more plain constants than this is one constant: guarded as one value
# (guarded_as_one), its items wrapped without sources, rebuilt by one LOAD_CONST. It is
# the rest of a loop handed to a resume function, not sizes that a later call might
# make symbolic one by one.
LONG_CONSTANT_TUPLE = 64
PLAIN_ITEMS = (int, str, bytes, float, bool, type(None))


def guarded_as_one(tx, value: tuple, source, item_source) -> bool:
    """Is the tuple ``value`` from ``source`` guarded as one constant? A long one of plain items
    is; so is a short one of plain constants whose ``==`` is exact, which CONSTANT_MATCH
    checks item type by item type: a convolution's ``padding=(1, 1)`` is one check, not a
    length and two items. Not where the shape context makes an int item symbolic (one that
    changed between traces; ``item_source(source, i)`` is where it is read)."""
    if len(value) > LONG_CONSTANT_TUPLE:
        return all(type(v) in PLAIN_ITEMS for v in value)
    if not all(map(plain_constant, value)):
        return False
    shapes = tx.output.shapes
    return source is None or not any(type(v) is int and shapes.dynamic_int(v, item_source(source, i))
                                     for i, v in enumerate(value))


def _stand_in(var):
    """A real value of ``var``'s exact builtin type (the constant itself, an empty container), or None."""
    if var.is_python_constant() and type(var.as_python_constant()) in _PLAIN_CONSTANTS:
        return var.as_python_constant()
    kind = known_type(var)
    return STAND_INS[kind]() if kind in STAND_INS else None


def _builtin_operator_error(fn, a, b):
    """``[1] + (2,)``, ``[1] * "a"``: between operands of builtin types neither slot takes the
    other, and CPython raises a TypeError; the real operator on stand-ins of the same
    types raises the same one (its message names only the types)."""
    left, right = _stand_in(a), _stand_in(b)
    if left is None or right is None:
        return
    with python_operation(getattr(fn, "__name__", "operator")):
        try:
            fn(left, right)
        except (MemoryError, OverflowError):  # a size error of the stand-ins, not the operands'
            return


ORDERINGS = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}


def ordered_alike(a, b, fn) -> bool:
    """Do ``a`` and ``b`` order by list_richcompare (or tuplerichcompare, slice_richcompare):
    both lists, both tuples or both slices, neither class overriding the comparison?"""
    name = f"__{fn.__name__}__"
    for base in (list, tuple, slice):
        if all(issubclass(v.python_type(), base) and getattr(v.python_type(), name) is getattr(base, name)
               for v in (a, b)):
            return True
    return False


def sequence_order(tx, fn, a, b):
    """``a < b`` of two sequences: the first index where the items differ (identity, then
    ``==``) is compared with the operator; where none does, the lengths are. The sizes
    are read at each step, as CPython does (an ``__eq__`` may change a list)."""
    i = 0
    while i < len(a.items) and i < len(b.items):
        x, y = a.items[i], b.items[i]
        if not (is_identical(x, y) or compare(tx, "==", x, y).truth(tx)):
            return compare(tx, ORDERINGS[fn], x, y)
        i += 1
    return ConstantVariable(fn(len(a.items), len(b.items)))


@space.register
class BaseListVariable(VariableTracker):
    """Shared behaviour of every sequence of item trackers."""

    py_type = tuple

    def __init__(self, items, **kwargs):
        super().__init__(**kwargs)
        self.items = list(items)

    def python_type(self):
        return self.py_type

    def as_python_constant(self):
        return self.py_type(x.as_python_constant() for x in self.items)

    def is_python_constant(self) -> bool:
        if space.has_symbols(self):  # answer without specialising a size (as_python_constant would)
            return isinstance(self, TupleVariable) and all(x.is_python_constant() for x in self.items)
        return super().is_python_constant()

    def unpack(self, tx):
        return list(self.items)

    def repr(self, tx):
        """``repr([...])``: the items' traced reprs (reprs.sequence_repr); None for other kinds."""
        return sequence_repr(tx, self)

    def length(self, tx):
        return len(self.items)

    def truth(self, tx):
        return bool(self.items)

    def similar(self, items):
        """A new sequence of the same kind (slicing, +, *)."""
        return type(self)(items)

    def getitem(self, tx, key):
        index = sequence_index(tx, key)
        if isinstance(index, slice):
            with python_operation("%s[%r]", self, index):  # a zero step raises ValueError
                items = self.items[index]
            return self.similar(items)
        # the same lookup on a list or tuple of the same length raises what CPython raises
        # (a torch.Size and a namedtuple index like a tuple)
        stand_in = [None] * len(self.items)
        with python_operation("%s[%r]", self, index):
            (stand_in if issubclass(self.python_type(), list) else tuple(stand_in))[index]
        return self.items[operator.index(index)]

    def binop(self, tx, fn, other, reflected):
        """+ and * of sequences (nb_add / sq_concat, sq_repeat)."""
        if fn in (operator.add, operator.iadd) and type(other) is type(self) and not reflected:
            if fn is operator.iadd and isinstance(self, ListVariable):
                self.check_mutable("+=", tx)
                self.items.extend(other.items)
                return self
            return self.similar(self.items + other.items)
        if fn in (operator.add, operator.iadd) and isinstance(self, TupleVariable) and isinstance(other, TupleVariable):
            # a torch.Size on either side makes a Size (its __add__/__radd__); other tuples make a tuple
            items = other.items + self.items if reflected else self.items + other.items
            return (SizeVariable if SizeVariable in (type(self), type(other)) else TupleVariable)(items)
        if fn in (operator.mul, operator.imul) and other.python_type() is int:
            if len(self.items) * max(other.as_python_constant(), 0) > MAX_REPEAT:
                unsupported("operator_error", f"{self} * {other.as_python_constant()}: too long to build")
            if fn is operator.imul and isinstance(self, ListVariable):  # in place: aliases see it
                self.check_mutable("*=", tx)
                self.items *= other.as_python_constant()
                return self
            if type(self) is TupleVariable and self.py_type is tuple and (
                    other.as_python_constant() == 1 or not self.items):
                return self  # tuple_repeat: an exact tuple times 1 (or an empty one) is itself
            return self.similar(self.items * other.as_python_constant())
        if fn is operator.iadd and self.python_type() is list and not reflected:
            items = items_of(tx, other)  # list_inplace_concat: `l += (1, 2)` extends by any iterable
            self.check_mutable("+=", tx)
            self.items.extend(items)
            return self
        if fn in ORDERINGS and not reflected and ordered_alike(self, other, fn):
            return sequence_order(tx, fn, self, other)
        if not reflected:
            _builtin_operator_error(fn, self, other)
        return NotImplemented

    def find(self, tx, value, start=None, stop=None):
        """The first index of an item equal to ``value`` in ``items[start:stop]``, or None
        (``index``, ``remove``): identity first, then ``==``, as PyObject_RichCompare."""
        for i in range(len(self.items))[slice(start, stop)]:
            if i >= len(self.items):  # an __eq__ shortened the list: CPython reads its size each step
                break
            if is_identical(self.items[i], value) or compare(tx, "==", self.items[i], value).truth(tx):
                return i
        return None

    def _index_of(self, tx, value, bounds):
        """``index(value, start, stop)``: the errors are those of the real method on an
        empty sequence of the same builtin type (a bad ``start``; the ValueError, which
        shows the value's repr for a list or deque, or not for a tuple)."""
        stand_in = STAND_INS[builtin_base(self.python_type())]()
        with python_operation(f"{type(stand_in).__name__}.index"):
            try:
                stand_in.index(None, *bounds)
            except ValueError:
                pass  # the bounds are valid
        bounds = bounds + [None, None]
        found = self.find(tx, value, bounds[0], bounds[1])
        if found is not None:
            return ConstantVariable(found)
        known = (value.is_python_constant() or isinstance(value, ListVariable)) and space.is_constant_arg(value)
        if not known and not isinstance(stand_in, tuple):
            unsupported("operator_error", f"{type(stand_in).__name__}.index: ValueError showing the repr "
                                          f"of {value}")
        with python_operation(f"{type(stand_in).__name__}.index"):  # the repr of a list of constants too
            stand_in.index(space.constant_arg(value) if known else None)
        unsupported("operator_error", f"{type(stand_in).__name__}.index found nothing")  # pragma: no cover

    def call_method(self, tx, name, args, kwargs):
        check_method_shape(self.python_type(), name, args, kwargs)
        if name == "index" and not kwargs and 1 <= len(args) <= 3:
            return self._index_of(tx, args[0], [sequence_index(tx, a) for a in args[1:]])
        if name == "count" and not kwargs and len(args) == 1:
            return ConstantVariable(sum(is_identical(x, args[0]) or compare(tx, "==", x, args[0]).truth(tx)
                                        for x in list(self.items)))
        if name in ("__len__", "__getitem__", "__contains__", "__iter__"):
            return space.call_slot(tx, self, name, args)
        unsupported("unsupported_call", f"{self.py_type.__name__}.{name}")

    def reconstruct(self, cg):
        if self.source is not None:
            return super().reconstruct(cg)
        if self.py_type not in (tuple, list):  # a plain subclass made in the trace: T((items...))
            cg.call_const(self.py_type, [TupleVariable(self.items)])
            return
        if type(self) is TupleVariable and len(self.items) > LONG_CONSTANT_TUPLE \
                and all(type(i) is ConstantVariable and type(i.value) in PLAIN_ITEMS for i in self.items):
            cg.load_const(tuple(i.value for i in self.items))  # as CPython folds a literal tuple
            return
        for item in self.items:
            cg(item)
        cg.build(self.py_type, len(self.items))

    def __repr__(self):
        return f"{type(self).__name__}({self.items!r})"


@space.register
class TupleVariable(BaseListVariable):
    py_type = tuple

    @property
    def mutable(self):
        return False


@space.register
class SizeVariable(TupleVariable):
    """torch.Size: items are ConstantVariables, or SymNodeVariables for symbolic sizes.

    Slicing a Size gives a Size, as in eager (``s[1:]``), whatever its items."""

    py_type = torch.Size

    def similar(self, items):
        return SizeVariable(items)

    def getattr(self, tx, name):
        if name in ("numel", "count", "index"):
            return BoundMethodVariable(self, name)
        return super().getattr(tx, name)

    def call_method(self, tx, name, args, kwargs):
        if name == "numel" and not args:
            total = ConstantVariable(1)
            if all(isinstance(i, ConstantVariable) for i in self.items):
                return ConstantVariable(self.as_python_constant().numel())
            for item in self.items:  # symbolic sizes: the product is a graph value
                total = binary_op(tx, operator.mul, total, item)
            return total
        return super().call_method(tx, name, args, kwargs)

    def reconstruct(self, cg):
        if all(isinstance(i, ConstantVariable) for i in self.items):
            cg.load_const(self.as_python_constant())
        else:
            cg.call_const(torch.Size, [TupleVariable(self.items)])


# what collections.namedtuple writes into every class: not user slots
_GENERATED_DUNDERS = frozenset({"__new__", "__repr__", "__getnewargs__", "__match_args__", "__init_subclass__",
                                "__class_getitem__"})


@space.register
class NamedTupleVariable(TupleVariable):
    """An instance of a ``collections.namedtuple``/``typing.NamedTuple`` class, or of a
    Python tuple subclass with methods of its own (``class Pair(tuple): def total(self)``):
    a tuple whose class's Python methods and slots win over tuple's."""

    def __init__(self, items, cls, **kwargs):
        super().__init__(items, **kwargs)
        self.cls = cls

    def python_type(self):
        return self.cls

    def as_python_constant(self):
        values = [x.as_python_constant() for x in self.items]
        return self.cls(*values) if hasattr(self.cls, "_make") else tuple.__new__(self.cls, values)

    def similar(self, items):
        return TupleVariable(items)

    @property
    def folds(self) -> bool:
        """May an operator run on the real value now? Not where the class defines a dunder in
        Python: that code is traced (it could do anything), not run at trace time."""
        return not any(isinstance(attr, types.FunctionType) and name.startswith("__") and name.endswith("__")
                       for klass in self.cls.__mro__[:self.cls.__mro__.index(tuple)]
                       for name, attr in vars(klass).items() if name not in _GENERATED_DUNDERS)

    # ---- slots: a Python method of the class (``Pair.__add__``) wins over tuple's
    def user_slot(self, name):
        """The function a class above ``tuple`` defines for ``name``, or None (tuple's own)."""
        for klass in self.cls.__mro__:
            if klass is tuple:
                return None
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                return attr if isinstance(attr, types.FunctionType) else None
        return None

    def _call_slot(self, tx, name, args):
        return space.UserFunctionVariable(self.user_slot(name)).call(tx, [self] + list(args), {})

    def binop(self, tx, fn, other, reflected):
        names = [dunder_name(fn, reflected)]
        if fn in _NOT_INPLACE and not reflected:  # no __iadd__: `p += q` is p.__add__(q)
            names.append(dunder_name(_NOT_INPLACE[fn]))
        for name in names:
            if name is not None and self.user_slot(name) is not None:
                result = self._call_slot(tx, name, [other])
                if not (result.is_python_constant() and result.as_python_constant() is NotImplemented):
                    return result
        return super().binop(tx, fn, other, reflected)

    def getitem(self, tx, key):
        if self.user_slot("__getitem__") is not None:
            return self._call_slot(tx, "__getitem__", [key])
        return super().getitem(tx, key)

    def length(self, tx):
        if self.user_slot("__len__") is not None:
            return self._call_slot(tx, "__len__", []).as_python_constant()
        return super().length(tx)

    def unpack(self, tx):
        if self.user_slot("__iter__") is not None:
            return self._call_slot(tx, "__iter__", []).unpack(tx)
        return super().unpack(tx)

    def truth(self, tx):
        for name in ("__bool__", "__len__"):
            if self.user_slot(name) is not None:
                return self._call_slot(tx, name, []).truth(tx)
        return super().truth(tx)

    def contains(self, tx, item):
        if self.user_slot("__contains__") is not None:
            return self._call_slot(tx, "__contains__", [item]).truth(tx)
        return super().contains(tx, item)

    def builtin_method(self, tx, name, args, kwargs):
        """tuple's own slot, reached through ``super()`` from an override of the class's."""
        slot = {"__getitem__": BaseListVariable.getitem, "__len__": BaseListVariable.length,
                "__contains__": VariableTracker.contains, "__iter__": VariableTracker.iter}.get(name)
        if slot is None or kwargs:
            unsupported("unsupported_call", f"super().{name} of a {self.cls.__name__}")
        result = slot(self, tx, *args)
        return result if isinstance(result, VariableTracker) else ConstantVariable(result)

    def _fields(self):
        return getattr(self.cls, "_fields", None) or getattr(self.cls, "__match_args__", ())

    def getattr(self, tx, name):
        fields = self._fields()
        if name in fields:
            return self.items[fields.index(name)]
        if name in ("_replace", "_asdict") and hasattr(self.cls, "_make"):
            return BoundMethodVariable(self, name)
        return space.class_attribute(tx, self, name)

    def hasattr(self, tx, name):
        """A field or a class attribute; nothing else, unless instances have a ``__dict__``."""
        if name in self._fields() or type_lookup(self.cls, name)[0]:
            return True
        return None if self.cls.__dictoffset__ else False

    def setattr(self, tx, name, value):
        """A field is a read-only descriptor, and a plain namedtuple has no ``__dict__``: both
        raise AttributeError as CPython's do (a subclass's own attributes are not modelled)."""
        if name in self._fields():
            raise_in_trace(AttributeError, "can't set attribute")
        if not self.cls.__dictoffset__:
            raise_in_trace(AttributeError, f"'{self.cls.__name__}' object has no attribute '{name}'")
        unsupported("unsupported_attribute", f"setting {self.cls.__name__}.{name}")

    def call_method(self, tx, name, args, kwargs):
        fields = self._fields()
        if name == "_replace" and not args and set(kwargs) <= set(fields):  # a new tuple, fields swapped
            return NamedTupleVariable([kwargs.get(f, v) for f, v in zip(fields, self.items)], self.cls)
        if name == "_replace" and not args and hasattr(self.cls, "_make"):
            with python_operation(f"{self.cls.__name__}._replace"):  # "Got unexpected field names"
                tuple.__new__(self.cls, [None] * len(fields))._replace(**dict.fromkeys(kwargs))
        if name == "_asdict" and not args and not kwargs:
            return space.ConstDictVariable([(ConstantVariable(f), v) for f, v in zip(fields, self.items)])
        return super().call_method(tx, name, args, kwargs)

    def reconstruct(self, cg):
        if self.source is not None:
            return super().reconstruct(cg)
        if "n_sequence_fields" in self.cls.__dict__:  # a structseq (torch.return_types.max)
            cg.call_const(self.cls, [TupleVariable(self.items)])
            return
        # tuple.__new__(cls, items): no __new__, __init__ or __len__ of the user's runs
        cg.call_const(tuple.__new__, [ConstantVariable(self.cls), TupleVariable(self.items)])


@space.register
class ListVariable(BaseListVariable):
    py_type = list
    replay_kind = "list"

    def as_python_constant(self):
        unsupported("unsupported_value", "a list is not a trace-time constant")

    # The real list operation on ``items`` (a list of trackers as long as the list) raises
    # what CPython's raises on the list: a bad index, a slice of another size, a str index.
    def setitem(self, tx, key, value):
        self.check_mutable("list item assignment", tx)
        index = sequence_index(tx, key)
        if isinstance(index, slice) and value.is_python_constant() and isinstance(value.as_python_constant(), (
                int, float, complex, bool, type(None))):  # not iterable: the real list's TypeError, worded
            with python_operation("list item assignment"):  # by this CPython ("can only assign an iterable")
                list(self.items)[index] = value.as_python_constant()
        items = value.unpack(tx) if isinstance(index, slice) else value
        with python_operation("list item assignment"):
            list(self.items)[index] = items  # first on a copy: nothing is dropped if it raises
        old = self.items[index]
        self.check_dropped(old if isinstance(index, slice) else [old], "list item assignment")
        self.items[index] = items

    def delitem(self, tx, key):
        self.check_mutable("del list item", tx)
        index = sequence_index(tx, key)
        with python_operation("list item deletion"):
            del list(self.items)[index]
        old = self.items[index]
        self.check_dropped(old if isinstance(index, slice) else [old], "del list item")
        del self.items[index]

    def iter(self, tx):
        return space.LiveListIteratorVariable(self)

    def call_method(self, tx, name, args, kwargs):
        handler = _LIST_METHODS.get(name)
        if handler is None:
            return super().call_method(tx, name, args, kwargs)
        check_method_shape(self.python_type(), name, args, kwargs)  # `l.append()`: CPython's TypeError
        if not fits(handler, 2, args, kwargs):
            unsupported("unsupported_call", f"list.{name} with these arguments")
        self.check_mutable(f"list.{name}", tx)
        return handler(self, tx, *args, **kwargs) or ConstantVariable(None)


def _insert(lst, tx, i, v):
    index = sequence_index(tx, i)
    with python_operation("list.insert"):  # a str index: CPython's TypeError
        lst.items.insert(index, v)


def _pop(lst, tx, i=None):
    index = -1 if i is None else sequence_index(tx, i)
    with python_operation("list.pop"):  # an empty list, an index out of range: the same IndexError
        return lst.items.pop(index)


def _remove(lst, tx, v):
    found = lst.find(tx, v)
    if found is None:
        raise_in_trace(ValueError, "list.remove(x): x not in list")
    lst.check_dropped([lst.items[found]], "list.remove")
    del lst.items[found]


def _init(lst, tx, iterable=None):
    """``l.__init__(iterable)`` (list___init__): cleared first, then extended (``l.__init__(l)``
    leaves it empty)."""
    lst.items.clear()
    if iterable is not None:
        lst.items.extend(items_of(tx, iterable))


_LIST_METHODS = {
    "__init__": _init,
    "append": lambda lst, tx, v: lst.items.append(v),
    "extend": lambda lst, tx, v: lst.items.extend(items_of(tx, v)),
    "insert": _insert,
    "pop": _pop,
    "clear": lambda lst, tx: lst.items.clear(),
    "reverse": lambda lst, tx: lst.items.reverse(),
    "copy": lambda lst, tx: ListVariable(lst.items),
    "remove": _remove,
    "sort": list_sort,
    "__setitem__": lambda lst, tx, key, value: lst.setitem(tx, key, value),
    "__delitem__": lambda lst, tx, key: lst.delitem(tx, key),
}
