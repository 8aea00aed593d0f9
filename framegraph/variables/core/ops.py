"""Python operators over trackers: CPython's binary-op protocol, symbolically.

``binary_op(tx, fn, a, b)`` follows ``PyNumber_Add`` and friends:

1. a tensor on either side: the operator becomes one graph node;
2. two trace-time constants: the operator runs now and the result is a constant;
3. otherwise ``a.binop(fn, b)`` then ``b.binop(fn, a, reflected=True)`` (the
   nb_* slots of sequences, sets, user classes), first answer wins.

``compare`` does the same for ``<``, ``==``, ``is``, ``in``...; ``unary_op``
for ``-x``, ``~x``, ``+x``.
"""
import collections
import operator
import types

from ...errors import unsupported
from . import space
from .base import (VariableTracker, defines_in_python, guard_identity, is_heap_type, known_type, tp_name,
                   type_lookup)
from .call_shapes import real_stand_in
from .constant import ConstantVariable, wrap_constant
from .exceptions import ExceptionVariable, TracedException, python_operation, raise_in_trace


# BINARY_OP's argument indexes this table (dis._nb_ops order; in-place after 13).
NB_OPS = (
    operator.add, operator.and_, operator.floordiv, operator.lshift, operator.matmul, operator.mul,
    operator.mod, operator.or_, operator.pow, operator.rshift, operator.sub, operator.truediv,
    operator.xor, operator.iadd, operator.iand, operator.ifloordiv, operator.ilshift,
    operator.imatmul, operator.imul, operator.imod, operator.ior, operator.ipow, operator.irshift,
    operator.isub, operator.itruediv, operator.ixor,
)
COMPARE_OPS = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
    ">=": operator.ge,
}
# in-place operator -> the plain one, for immutable operands
_NOT_INPLACE = {NB_OPS[i + 13]: NB_OPS[i] for i in range(13)}
_DUNDER = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "truediv",
    operator.floordiv: "floordiv", operator.mod: "mod", operator.pow: "pow", operator.matmul: "matmul",
    operator.and_: "and", operator.or_: "or", operator.xor: "xor", operator.lshift: "lshift",
    operator.rshift: "rshift", operator.lt: "lt", operator.le: "le", operator.eq: "eq",
    operator.ne: "ne", operator.gt: "gt", operator.ge: "ge", divmod: "divmod",
}


def plain_operator(fn):
    """``operator.iadd`` -> ``operator.add``; any other operator is itself."""
    return _NOT_INPLACE.get(fn, fn)


def _fold_value(fn, *values):
    """``fn(*values)`` on constants, now; what it raises (``1 / 0``) is raised in the trace."""
    with python_operation("%s%r", fn.__name__, values):
        return fn(*values)


def _fold(fn, *values):
    return wrap_constant(_fold_value(fn, *values))


def _is_tensor(v):
    return isinstance(v, space.TensorVariable)


def _immutable_const(v):
    # `folds`: False for a tuple whose class has Python slots of its own (they are traced, not run now)
    return v.is_python_constant() and not isinstance(v, space.ListVariable) and not space.has_symbols(v) \
        and getattr(v, "folds", True)


def binary_op(tx, fn, a: VariableTracker, b: VariableTracker, written=None) -> VariableTracker:
    """``fn(a, b)`` for an operator ``fn`` (``written``: the in-place one the code used,
    when ``a += b`` is being answered as ``a + b``)."""
    if _is_tensor(a) or _is_tensor(b) or space.sym_operands(a, b):  # sizes stay symbolic (symint.py)
        result = _user_dunder_beside_tensor(tx, fn, a, b)
        if result is not None:
            return result
        if not _is_tensor(a):  # `n += t` with n not a tensor: int.__iadd__ does not exist, add
            fn = _NOT_INPLACE.get(fn, fn)
        return tx.output.call_function(tx, fn, [a, b], {})
    if _immutable_const(a) and _immutable_const(b):
        x, y = a.as_python_constant(), b.as_python_constant()
        result = _fold_value(fn, x, y)  # an in-place operator on immutables: the plain one, its own message
        # CPython hands back an operand itself where it can (``t * 1``, ``t + ()`` for
        # an exact tuple): so do we, keeping the operand's identity and its source
        for value, var in ((x, a), (y, b)):
            if type(value) is tuple and result is value:
                return var
        return wrap_constant(result)
    if fn in _SEQUENCE_SLOTS:
        result = _number_slot_before_sequence(tx, fn, a, b)
        if result is not None:
            return result
    tried = False
    order = ((a, b, False), (b, a, True))
    for x, y, reflected in (order[::-1] if _reflected_first(fn, a, b) else order):
        if reflected and written is operator.imul and _repeat_blocked(y, x):
            continue
        slot = getattr(x, "binop", None)
        if slot is None and _immutable_const(x) and isinstance(y, space.ValueSubclassVariable):
            slot = _constant_slot(x.as_python_constant())
        if slot is not None:
            result = slot(tx, fn, y, reflected)
            tried = True
            if not _is_not_implemented(result):
                return result
    if fn in _NOT_INPLACE:
        return binary_op(tx, _NOT_INPLACE[fn], a, b, written=fn)
    if tried and fn in _FALLBACK_COMPARE:
        return _FALLBACK_COMPARE[fn](tx, a, b)
    _raise_if_refused(written or fn, a, b)
    unsupported("unsupported_value", f"{getattr(fn, '__name__', fn)}({a}, {b})")


# + and * of the builtin sequences are sequence slots (sq_concat, sq_repeat and their
# in-place forms), which PyNumber_Add and friends try only after both operands'
# number slots: here the dunders a class statement gives number slots with.
_SEQUENCE_SLOTS = {
    operator.add: ("__add__", "__radd__"), operator.iadd: ("__add__", "__radd__", "__iadd__"),
    operator.mul: ("__mul__", "__rmul__"), operator.imul: ("__mul__", "__rmul__", "__imul__"),
}
_SEQUENCES = (str, bytes, list, tuple, bytearray, collections.deque)


def _number_slot_before_sequence(tx, fn, a, b):
    """``seq + obj``, ``seq * obj`` and their in-place forms for a builtin sequence ``seq``
    without a number slot: a Python ``__radd__``/``__rmul__`` of ``obj``'s class answers
    before the sequence concatenates or repeats (``'ab' * MyInt(2)``, ``lst += obj``);
    None where the sequence slot decides."""
    ta, tb = known_type(a), known_type(b)
    if not (isinstance(ta, type) and isinstance(tb, type) and issubclass(ta, _SEQUENCES)):
        return None
    names = _SEQUENCE_SLOTS[fn]
    if defines_in_python(ta, names):
        return None  # the class has a number slot of its own: the usual order
    plain = _NOT_INPLACE.get(fn, fn)
    if not _python_dunder(b, names[1]) or getattr(b, "binop", None) is None:
        return None
    result = b.binop(tx, plain, a, True)
    return None if _is_not_implemented(result) else result


def _repeat_blocked(a, b) -> bool:
    """``a *= seq``: PyNumber_InPlaceMultiply repeats ``seq`` only where ``a``'s type has no
    sequence methods at all; a class statement's class always has them (empty), so
    ``r = MyInt(2); r *= 'ab'`` is a TypeError where ``r = 2`` gives ``'abab'``."""
    ta, tb = known_type(a), known_type(b)
    return isinstance(ta, type) and isinstance(tb, type) and is_heap_type(ta) and not issubclass(ta, _SEQUENCES) \
        and issubclass(tb, _SEQUENCES) and not _python_dunder(b, "__rmul__")


def _python_dunder(var, name) -> bool:
    kind = known_type(var)
    return isinstance(kind, type) and name is not None and isinstance(type_lookup(kind, name)[1], types.FunctionType)


def _user_dunder_beside_tensor(tx, fn, a, b):
    """A Python dunder that answers before the tensor's: the left operand's own
    (``MyStr('a') == t`` asks ``MyStr.__eq__`` first), or the right operand's reflected
    one where the tensor declines, as it does any str or bytes (``t == MyStr('a')``).
    None where the tensor's operator decides."""
    if not _is_tensor(a) and getattr(a, "binop", None) is not None:
        for op in dict.fromkeys((fn, _NOT_INPLACE.get(fn, fn))):  # `a += t`: __iadd__, then __add__
            if _python_dunder(a, dunder_name(op)):
                result = a.binop(tx, op, b, False)
                if not _is_not_implemented(result):
                    return result
    plain = getattr(b, "plain", None)
    if _is_tensor(a) and isinstance(plain, (str, bytes)) and getattr(b, "binop", None) is not None:
        op = _NOT_INPLACE.get(fn, fn)
        if _python_dunder(b, dunder_name(op, reflected=True)):
            result = b.binop(tx, op, a, True)
            if not _is_not_implemented(result):
                return result
    return None


def _reflected_first(fn, a, b) -> bool:
    """CPython asks the right operand first when its type is a proper subclass of the
    left's that can answer differently: ``binary_op1`` when its reflected slot is
    another (``1 + MyInt(2)`` calls ``MyInt.__radd__`` first), ``do_richcompare``
    whenever the subclass has a comparison (``0 == MyInt(2)`` calls ``MyInt.__eq__``).
    A comparison both types inherit from one C type answers alike either way round,
    so it keeps the plain order; a Python one is called with the subclass as self."""
    if fn in _NOT_INPLACE:
        return False  # `a += b` asks a.__iadd__ first; its fallback `a + b` applies the rule
    ta, tb = known_type(a), known_type(b)
    if not (isinstance(ta, type) and isinstance(tb, type)) or ta is tb or not issubclass(tb, ta):
        return False
    name = dunder_name(fn, reflected=True)
    overrides = type_lookup(tb, name)[1] is not type_lookup(ta, name)[1]
    return overrides or (fn in _SWAPPED and is_heap_type(ta))


_UNKNOWN = object()


def _constant_slot(value):
    """The C slot of a constant's builtin type, facing an instance of a user subclass of an
    immutable builtin: the C code reads that instance's value (``float.__eq__(3.0, MyInt(3))``
    is True), so the slot runs on the value."""
    def slot(tx, fn, other, reflected):
        method = getattr(type(value), dunder_name(fn, reflected) or "", None)
        if method is None:
            return NotImplemented
        return wrap_constant(_fold_value(method, value, other.plain))
    return slot


def _raise_if_refused(fn, a, b):
    """``set() | 19``: where the operand types alone decide, run the operator on real
    stand-ins of those types; its TypeError ("unsupported operand type(s) for |: 'set'
    and 'int'") is CPython's, raised in the trace."""
    def stand_in(v):
        if type(v) is ConstantVariable:
            return v.value  # None too
        real = v.fn if type(v) is space.BuiltinVariable else real_stand_in(v)
        return _UNKNOWN if real is None else real

    stand_ins = [stand_in(v) for v in (a, b)]
    if any(s is _UNKNOWN for s in stand_ins) or fn is operator.mod and isinstance(stand_ins[0], (str, bytes)):
        return  # unknown types, or %-formatting, whose errors depend on the values
    try:
        fn(*stand_ins)
    except TypeError as error:
        raise_in_trace(TypeError, str(error))
    except Exception:  # noqa: BLE001 - an empty stand-in's own error (ZeroDivisionError...): not the answer
        return


def _is_not_implemented(result):
    """A slot's answer that means "try the other operand": the sentinel itself, or
    a traced user dunder (a dataclass ``__eq__`` on another class) that returned it."""
    return result is NotImplemented or (type(result) is ConstantVariable and result.value is NotImplemented)


def _unorderable(symbol):
    def fallback(tx, a, b):
        message = (f"'{symbol}' not supported between instances of "
                   f"'{tp_name(a.python_type())}' and '{tp_name(b.python_type())}'")
        raise TracedException(ExceptionVariable(TypeError, [ConstantVariable(message)]))
    return fallback


# Both operands' comparison dunders returned NotImplemented: what CPython's
# do_richcompare does then (identity for == and !=, TypeError for the orderings).
_FALLBACK_COMPARE = {
    operator.eq: lambda tx, a, b: ConstantVariable(is_op(tx, a, b)),
    operator.ne: lambda tx, a, b: ConstantVariable(not is_op(tx, a, b)),
    **{fn: _unorderable(sym) for sym, fn in (("<", operator.lt), ("<=", operator.le), (">", operator.gt),
                                             (">=", operator.ge))},
}


@space.register
def compare(tx, op: str, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    """``a <op> b`` for the six rich comparisons."""
    fn = COMPARE_OPS[op]
    if op in ("==", "!=") and not (_is_tensor(a) or _is_tensor(b)):
        if not (_immutable_const(a) and _immutable_const(b)) and not _has_binop(a, b):
            same = _structurally_equal(tx, a, b)
            if same is not None:
                return ConstantVariable(same if op == "==" else not same)
    return binary_op(tx, fn, a, b)


def _has_binop(a, b):
    """A user object, a namedtuple whose class defines comparisons of its own, or a
    tracker whose ``binop`` alone knows its equality (an id: identity.py)."""
    return any(hasattr(x, "binop") and type(x).__name__ == "UserDefinedObjectVariable"
               or getattr(x, "compares_by_binop", False)
               or getattr(x, "user_slot", lambda name: None)("__eq__") is not None for x in (a, b))


def _structurally_equal(tx, a, b):
    """== of containers and objects without a trace-time constant value."""
    if a is b:
        return True
    if isinstance(a, space.BaseListVariable) and isinstance(b, space.BaseListVariable):
        ta, tb = a.python_type(), b.python_type()
        # a list (or list subclass) equals only a list; any tuple (torch.Size, a namedtuple) a tuple
        same_kind = ta is tb or any(issubclass(ta, k) and issubclass(tb, k) for k in (list, tuple))
        if not same_kind or len(a.items) != len(b.items):
            return False
        return _items_equal(tx, a, b)
    if isinstance(a, space.ConstDictVariable) and isinstance(b, space.ConstDictVariable):
        return _dicts_equal(tx, a, b)
    views = [v for v in (a, b) if isinstance(v, space.DictViewVariable)]
    if any(v.kind == "values" for v in views):
        return a is b  # values views compare by identity
    members = [_set_members(v) for v in (a, b)]
    if all(m is not None for m in members):  # set_richcompare: a set equals a frozenset too
        return members[0] == members[1]
    if a.is_python_constant() != b.is_python_constant():
        return False
    return None


def _set_members(var):
    """The members of a set, frozenset or keys view, hashed as a set holds them; else None."""
    if isinstance(var, space.DictViewVariable) and var.kind == "keys":
        var = var.as_set()
    if isinstance(var, space.SetVariable):
        return set(var.members)
    if type(var) is ConstantVariable and type(var.value) in (set, frozenset):  # never a size: no guard
        return {space.SetMember(wrap_constant(v)) for v in var.value}
    return None


@space.register
def is_identical(x, y) -> bool:
    """``PyObject_RichCompareBool``'s identity shortcut (a NaN equals itself)."""
    return x is y or (x.is_python_constant() and y.is_python_constant()
                      and x.as_python_constant() is y.as_python_constant())


def _items_equal(tx, a, b) -> bool:
    """``list_richcompare`` after the length check: the first pair neither identical nor
    ``==`` decides, unless an ``__eq__`` shortened a list so that the walk is past its
    end: then the lengths decide (both are read again at every step, as CPython does)."""
    i = 0
    while i < len(a.items) and i < len(b.items):
        x, y = a.items[i], b.items[i]
        if not (is_identical(x, y) or compare(tx, "==", x, y).truth(tx)):
            break
        i += 1
    if i >= len(a.items) or i >= len(b.items):  # the walk ran off the end of one (or both)
        return len(a.items) == len(b.items)
    return False


def _dicts_equal(tx, a, b, ordered=True) -> bool:
    """``dict_richcompare``: the same keys, and each value identical or ``==``; two
    OrderedDicts must also have their keys in the same order (``OrderedDict.__eq__``),
    unless ``ordered`` is False (``dict.__eq__(od1, od2)``: dict's own comparison)."""
    space.note_operation(tx)  # keys hashed by Python code compare in this operation
    if len(a.items) != len(b.items):
        return False
    if ordered and issubclass(a.py_type, collections.OrderedDict) \
            and issubclass(b.py_type, collections.OrderedDict) and list(a.items) != list(b.items):
        return False
    for key, (_, va) in a.items.items():
        pair = b.items.get(key)
        if pair is None:
            return False
        if is_identical(va, pair[1]):
            continue
        if not compare(tx, "==", va, pair[1]).truth(tx):
            return False
    return True


def is_op(tx, a: VariableTracker, b: VariableTracker) -> bool:
    """``a is b``: identity of trackers, or of constant values."""
    if a is b:
        return True
    if a.is_python_constant() and b.is_python_constant():
        va, vb = a.as_python_constant(), b.as_python_constant()
        if type(va) in (list, dict, set) or type(vb) in (list, dict, set):
            return False
        return va is vb or (va == vb and type(va) is type(vb) and isinstance(va, (type(None), bool)))
    ident_a, ident_b = getattr(a, "identity", None), getattr(b, "identity", None)
    if ident_a is not None and ident_a is ident_b:
        return True
    if a.is_python_constant() or b.is_python_constant():
        return False  # a constant (None, True...) is never a non-constant tracked object
    if a.source is not None and a.source == b.source:
        return True
    if a.source is not None and b.source is not None and (a.mutable or b.mutable):
        # two objects from outside, met as two (the same one met twice is one tracker):
        # guarded to stay two, so that `f(t, t)` does not reuse the answer of `f(t, u)`
        tx.output.add_guard("IS_NOT_SAME", a.source, b.source)
        return False
    if a.mutable or b.mutable:
        return False  # created in the trace: a fresh object
    if _same_function(tx, a, b):
        return True
    if _outside_object(a) and _outside_object(b):  # two real objects: pinned, then compared
        for var in (a, b):
            guard_identity(tx, var.value, var.source)
        return a.value is b.value
    unsupported("unsupported_value", f"`is` between {a} and {b}")


def _outside_object(var) -> bool:
    """Does ``var`` stand for one real object made outside the trace (``identity``: that object)?"""
    value = getattr(var, "value", None)
    return value is not None and getattr(var, "identity", None) is value


def _same_function(tx, a, b) -> bool:
    """Functions guarded by their code, not their identity (made per call), that
    are one object now: ``a is b``, kept true by an IS_SAME guard. (Whether
    two different ones stay different has no guard: that case breaks.)"""
    if not (isinstance(a, space.UserFunctionVariable) and isinstance(b, space.UserFunctionVariable)):
        return False
    if a.fn is not b.fn or a.source is None or b.source is None:
        return False
    tx.output.add_guard("IS_SAME", a.source, b.source)
    return True


def contains_op(tx, item: VariableTracker, container: VariableTracker) -> bool:
    """``item in container`` (sq_contains)."""
    if container.is_python_constant() and item.is_python_constant() and not _is_tensor(item):
        item, container = item.as_python_constant(), container.as_python_constant()
        with python_operation("in"):
            return item in container
    return bool(container.contains(tx, item))


UNARY_OPS = {
    "UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos, "UNARY_INVERT": operator.invert,
}


def unary_op(tx, fn, a: VariableTracker) -> VariableTracker:
    if _is_tensor(a) or isinstance(a, space.SymNodeVariable):
        return tx.output.call_function(tx, fn, [a], {})
    if a.is_python_constant():
        return _fold(fn, a.as_python_constant())
    dunder = getattr(a, "_dunder", None)  # a user object: the slot looks at its type only
    if dunder is None:
        kind = known_type(a)
        if isinstance(kind, type) and not type_lookup(kind, _UNARY_DUNDERS[fn])[0]:  # `-{}`
            raise_in_trace(TypeError, f"bad operand type for {_UNARY_WORDS[fn]}: '{tp_name(kind)}'")
        return a.call_method(tx, _UNARY_DUNDERS[fn], [], {})
    result = dunder(tx, _UNARY_DUNDERS[fn], [])
    if result is NotImplemented:
        raise_in_trace(TypeError, f"bad operand type for {_UNARY_WORDS[fn]}: '{tp_name(a.python_type())}'")
    return result


_UNARY_WORDS = {operator.neg: "unary -", operator.pos: "unary +", operator.invert: "unary ~",
                operator.abs: "abs()"}
_UNARY_DUNDERS = {operator.neg: "__neg__", operator.pos: "__pos__", operator.invert: "__invert__",
                  operator.abs: "__abs__"}


def dunder_name(fn, reflected=False):
    """``operator.add`` -> ``__add__`` (``__radd__`` reflected, ``__iadd__`` in place);
    a reflected comparison is the swapped one (``a < b`` asks ``b.__gt__(a)``), and
    an in-place operator has no reflected form (None: ``a += b`` tries ``a.__iadd__``,
    then ``a + b``)."""
    if fn in _NOT_INPLACE:
        return None if reflected else "__i" + _DUNDER[_NOT_INPLACE[fn]] + "__"
    if fn in _SWAPPED:
        return "__" + _DUNDER[_SWAPPED[fn] if reflected else fn] + "__"
    return ("__r" if reflected else "__") + _DUNDER[fn] + "__"


_SWAPPED = {operator.lt: operator.gt, operator.le: operator.ge, operator.gt: operator.lt,
            operator.ge: operator.le, operator.eq: operator.eq, operator.ne: operator.ne}
