"""CPython's own TypeError for a call of a builtin with the wrong arguments.

``l.append()``, ``d.get()``, ``s.add(1, 2)``, ``d.keys(1)``, ``len(a, b)``,
``dict.pop(k, key=1)``: the C function rejects the call while parsing its
arguments, before it looks at any value, and the message depends only on the
call's shape (how many positional arguments, which keyword names). Real code
relies on it (``with self.assertRaises(TypeError): l.append()``), so the trace
must raise exactly that exception, and never let a model's own Python
signature fail instead (``<lambda>() missing 1 required positional argument``).

Rather than a table of arities and messages, the real C callable is asked:
it is called once per shape, on an empty instance of its type (the stand-in),
with placeholders for the arguments. Every slot of a placeholder (hash,
``__index__``, iteration, attribute lookup, comparison, truth, call...)
raises ``_Touched``: reaching one means the arguments were accepted and the
function went on to use them, so the shape is right and the models take over.
A ``TypeError`` raised before any placeholder was touched is the argument
parser's: CPython raises the same one for any values of that shape. Anything
else (the stand-in is empty: ``[].pop()`` raises IndexError; a message that
names the placeholder's type, or that ``0`` and ``None`` arguments do not
raise as well, is about a value) says nothing about the shape, and the
models decide.
"""
import collections
import functools
import inspect

from . import space
from .base import known_type
from .constant import ConstantVariable
from .exceptions import raise_python_error


class _Touched(Exception):
    """A placeholder was used: the call got past argument parsing."""


def _touched(*args, **kwargs):
    raise _Touched


class _Placeholder:
    """An argument whose every use raises ``_Touched``."""

    __slots__ = ()


for _slot in ("__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__hash__", "__eq__", "__ne__",
              "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__", "__iter__", "__next__",
              "__getitem__", "__setitem__", "__delitem__", "__contains__", "__index__", "__int__",
              "__float__", "__complex__", "__repr__", "__str__", "__format__", "__call__", "__add__",
              "__radd__", "__mul__", "__rmul__", "__or__", "__ror__", "__and__", "__rand__", "__sub__",
              "__rsub__", "__xor__", "__rxor__", "__reversed__", "__length_hint__", "__fspath__",
              "__buffer__", "__mro_entries__", "__instancecheck__", "__subclasscheck__"):
    setattr(_Placeholder, _slot, _touched)

_PLACEHOLDER = _Placeholder()
_NAME = _Placeholder.__name__

# The builtin container types whose C methods are probed, each with its stand-in.
STAND_INS = {
    list: list, tuple: tuple, dict: dict, set: set, frozenset: frozenset, collections.deque: collections.deque,
    collections.OrderedDict: collections.OrderedDict, collections.defaultdict: collections.defaultdict,
    range: lambda: range(0), str: str, bytes: bytes, int: int, bool: bool, float: float,
}
space.register(STAND_INS, 'STAND_INS')


def builtin_base(cls):
    """The builtin container type among ``cls``'s bases that a stand-in exists for, or None."""
    return next((klass for klass in getattr(cls, "__mro__", ()) if klass in STAND_INS), None)


def own_methods(cls, base) -> list:
    """The methods and properties ``cls`` adds above its builtin ``base`` (``class Tags(set):
    pass`` adds none: it behaves as the base, only its type differs)."""
    return [name for klass in cls.__mro__[:cls.__mro__.index(base)]
            for name, attr in vars(klass).items() if callable(attr) or isinstance(attr, property)]


def _attempt(fn, stand_in_type, nargs, kwnames, value):
    """What ``fn`` raises on a fresh stand-in with ``value`` for every argument, as
    (class, args), or None. Only those are kept: the exception itself would hold its
    traceback and ``__context__``, the tracer's frames and every tracker in them."""
    args = [value] * nargs
    if stand_in_type is not None:
        args.insert(0, STAND_INS[stand_in_type]())
    try:
        fn(*args, **dict.fromkeys(kwnames, value))
    except Exception as error:  # noqa: BLE001 - the probe wants whatever the C function raises
        return type(error), error.args
    return None


@functools.lru_cache(maxsize=4096)
def _shape_error(fn, stand_in_type, nargs, kwnames):
    """The exception the argument parser of ``fn`` raises for this shape, or None.

    A C function may also reject the placeholder's type without touching it
    (``deque(maxlen=p)`` checks for an int: "an integer is required"); that
    error is about the value, so the shape's error must come back, the same,
    for ``0`` and ``None`` arguments too (run only once the placeholder run
    showed the function did not get to its arguments)."""
    error = _attempt(fn, stand_in_type, nargs, kwnames, _PLACEHOLDER)
    if error is None or error[0] is not TypeError or _NAME in repr(error[1]):
        return None  # used an argument (_Touched), the stand-in's own error, or one about the value
    for value in (0, None):
        if _attempt(fn, stand_in_type, nargs, kwnames, value) != error:
            return None
    return error


@functools.lru_cache(maxsize=1024)
def _c_method(base, name):
    """``base``'s own C method ``name`` (a method or slot descriptor), or None."""
    fn = inspect.getattr_static(base, name, None)
    return fn if type(fn).__name__ in ("method_descriptor", "wrapper_descriptor") else None


def check_method_shape(receiver_type, name, args, kwargs):
    """Raise in the trace the TypeError CPython raises for ``obj.name(*args, **kwargs)``
    on an object of builtin ``receiver_type`` (or a subclass not overriding ``name``),
    when the C method rejects the call's shape; return otherwise."""
    base = builtin_base(receiver_type)
    fn = _c_method(base, name) if base is not None else None
    if fn is None:
        return
    error = _shape_error(fn, base, len(args), tuple(kwargs))
    if error is not None:
        raise_python_error(error[0](*error[1]), f"{base.__name__}.{name}")


def check_function_shape(fn, args, kwargs):
    """The same for a builtin function or constructor (``len(a, b)``, ``list(1, 2)``):
    raise CPython's TypeError when its argument parser rejects the call's shape;
    return when it accepts it or the probe cannot tell. Call it only where the
    shape is already in doubt (a model or the text signature refused it): for
    a builtin function the probe sees only that an argument was used."""
    try:
        error = _shape_error(fn, None, len(args), tuple(kwargs))
    except TypeError:  # an unhashable callable: nothing to probe
        return
    if error is not None:
        raise_python_error(error[0](*error[1]), getattr(fn, "__name__", repr(fn)))


@functools.lru_cache(maxsize=1024)
def _signature(fn):
    try:
        return _TextSignature.of(fn) or inspect.signature(fn)
    except (TypeError, ValueError):
        return None


class _TextSignature:
    """A C function's ``__text_signature__`` (``($module, obj, /, *, key=None)``) read for
    the one thing asked of it, whether a call's shape binds: ``inspect.signature`` tokenizes
    the text and evaluates its defaults, a quarter of a millisecond for each builtin a
    first trace meets. It reads what inspect reads: ``$`` names the bound first parameter
    (dropped where the function has a ``__self__``), ``/`` ends the positional-only ones,
    a bare ``*`` starts the keyword-only ones; a default it cannot show (``<unrepresentable>``)
    makes inspect refuse, so it refuses too."""

    __slots__ = ("positional", "posonly", "required", "varargs", "keywords", "kwrequired", "varkw")

    @classmethod
    def of(cls, fn):
        text = getattr(fn, "__text_signature__", None)
        if type(text) is not str or not (text.startswith("(") and text.endswith(")")) or "<" in text:
            return None
        params = [p.strip() for p in _top_level_split(text[1:-1])]
        if params and params[0].startswith("$"):
            if getattr(fn, "__self__", None) is not None:
                params.pop(0)
            else:
                params[0] = params[0][1:]
        self = cls()
        self.positional, self.posonly, self.required = [], 0, set()
        self.varargs = self.varkw = False
        self.keywords, self.kwrequired = set(), set()
        keyword_only = False
        for param in params:
            name, has_default = param.partition("=")[0].strip(), "=" in param
            if name == "/":
                self.posonly = len(self.positional)
            elif name == "*":
                keyword_only = True
            elif name.startswith("**"):
                self.varkw = True
            elif name.startswith("*"):
                self.varargs, keyword_only = True, True
            elif not name.isidentifier():
                return None
            elif keyword_only:
                self.keywords.add(name)
                if not has_default:
                    self.kwrequired.add(name)
            else:
                if not has_default:
                    self.required.add(name)
                self.positional.append(name)
        return self

    def bind(self, /, *args, **kwargs):
        """Signature.bind's checks of a call's shape: TypeError where it does not bind."""
        if len(args) > len(self.positional) and not self.varargs:
            raise TypeError("too many positional arguments")
        given = set(self.positional[:len(args)])
        for name in kwargs:
            if name in self.positional[self.posonly:] or name in self.keywords:
                if name in given:
                    raise TypeError(f"multiple values for argument {name!r}")
                given.add(name)
            elif not self.varkw:
                raise TypeError(f"an unexpected keyword argument {name!r}")
        if not (self.required | self.kwrequired) <= given:
            raise TypeError("missing a required argument")


def _top_level_split(text):
    """``text`` split at its commas outside brackets and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote and text[i - 1] != "\\" else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    tail = text[start:]
    return parts + [tail] if tail.strip() else parts


# (id of a signature, positional count, keyword names) -> (the signature, the answer):
# keyed by identity because a Signature hashes every parameter and default each
# time (a few us, asked thousands of times in a model's trace); the entry holds
# the signature, so the id cannot be reused while it is there
_BINDS: dict = {}


def _bound(sig, leading, args, kwargs) -> bool:
    """Whether ``sig`` takes ``leading`` + ``args`` positional and ``kwargs`` keyword
    arguments: a question of their count and names only, so asked once per shape."""
    key = (id(sig), leading + len(args), tuple(kwargs))
    hit = _BINDS.get(key)
    if hit is not None and hit[0] is sig:
        return hit[1]
    answer = _binds(sig, key[1], key[2])
    if len(_BINDS) >= 4096:
        _BINDS.clear()
    _BINDS[key] = (sig, answer)
    return answer


def _binds(sig, npositional, names) -> bool:
    try:
        sig.bind(*([None] * npositional), **dict.fromkeys(names))
    except TypeError:
        return False
    return True


def real_signature_rejects(fn, args, kwargs) -> bool:
    """Whether the builtin ``fn``'s own text signature rejects this call (unknown: False)."""
    try:
        sig = _signature(fn)
    except TypeError:  # unhashable
        return False
    return sig is not None and not _bound(sig, 0, args, kwargs)


def fits(model, leading, args, kwargs) -> bool:
    """Whether ``model(<leading>, *args, **kwargs)`` binds: a Python model of a builtin
    takes the call (its ``leading`` first parameters are the tracer's: ``tx``, ``self``)."""
    sig = _signature(model)
    return sig is None or _bound(sig, leading, args, kwargs)


def real_stand_in(var):
    """A real object of ``var``'s builtin type where its type alone decides an error (the
    constant itself, or an empty container of the same type); else None."""
    if isinstance(var, ConstantVariable):
        return var.value
    kind = known_type(var)
    if kind in STAND_INS:
        return STAND_INS[kind]()
    base = builtin_base(kind)
    if base is not None and not own_methods(kind, base) and type(kind) is type:
        return kind()  # `class Tags(set): pass`: the base's code, the subclass's name in messages
    return None
