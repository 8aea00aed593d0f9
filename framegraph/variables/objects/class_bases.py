"""Which bases, metaclass and keywords a class statement may be built with at trace time.

``__build_class__(body, name, *bases, metaclass=M, **kw)`` (Python/bltinmodule.c)
resolves each base that is not a class through its ``__mro_entries__``,
picks the most derived metaclass (``metaclass conflict`` otherwise), calls
``M.__prepare__(name, bases, **kw)``, runs the body in that namespace, then
``M(name, bases, ns, **kw)``: ``M.__new__`` (``type.__new__`` at the end:
the slots, ``__set_name__`` of the namespace's values, the first base's
``__init_subclass__(**kw)``), then ``M.__init__``.

classes.py runs all of it for real, now, once (see its docstring). That is
sound when every piece of Python code it runs is a function of the new class
alone, so that running it again on each call would do the same to a class no
one else sees. ``admit`` checks that, from what the statement names:

* the Python layers of the metaclass (those before ``type``) define none of
  ``__prepare__``, ``__new__``, ``__init__``, ``mro``, or are one of
  ``TRUSTED_METACLASSES``: the standard library's, which read the namespace and
  write the new class (``ABCMeta`` computes ``__abstractmethods__``;
  ``EnumType`` makes the members; ``NamedTupleMeta`` the namedtuple). Any other
  method of a metaclass (``__call__``, ``__getitem__``) runs only later, on
  use, and is inlined then (metaclasses.py);
* every ``__init_subclass__`` on the bases' MROs is the standard library's
  (``typing.Generic`` records ``__parameters__``, ``Protocol`` its flags): a
  user's hook may write a registry outside the class, so it breaks;
* ``__mro_entries__`` of a non-class base is typing's (``Generic[T]``,
  ``typing.NamedTuple``);
* the user code a trusted metaclass calls back is absent: ``EnumType`` makes
  each member with the class's ``__new__``/``__init__`` and numbers ``auto()``
  with ``_generate_next_value_``, so a body or a user base defining one of those
  breaks (``TRUSTED_METACLASSES`` lists them per metaclass);
* the keywords are constants or classes (``metaclass=M``, ``boundary=STRICT``).

What CPython raises on the way (the metaclass conflict, ``Cannot subclass
special typing classes``, an enum member reassigned in the body) is raised in
the trace where the statement raises it.
"""
import abc
import enum
import typing

from ...errors import unsupported

# The metaclasses whose __prepare__/__new__/__init__ run now, with the names of
# user functions of the class (its body, its user bases) that they call back.
_ENUM_CALLBACKS = ("__new__", "__init__", "_generate_next_value_")
TRUSTED_METACLASSES = {
    abc.ABCMeta: (),
    enum.EnumType: _ENUM_CALLBACKS,
    getattr(typing, "NamedTupleMeta", None): (),
    getattr(typing, "_ProtocolMeta", None): (),
    getattr(typing, "_TypedDictMeta", None): (),
}
TRUSTED_METACLASSES.pop(None, None)
# Modules whose __init_subclass__ and __mro_entries__ only touch the class being made.
_TRUSTED_MODULES = frozenset({"typing", "abc", "enum", "collections.abc", "_collections_abc", "builtins"})
# What creating the class calls on its metaclass (``mro``: type_ready computes the MRO with it).
_CREATION = ("__prepare__", "__new__", "__init__", "mro")


def _reject(name, why):
    unsupported("unsupported_call", f"class {name}: {why}")


def _trusted(obj) -> bool:
    return getattr(obj, "__module__", None) in _TRUSTED_MODULES


def _resolved(name, bases):
    """The classes ``__mro_entries__`` turns the bases into (``Generic[T]`` -> ``Generic``)."""
    resolved = []
    for base in bases:
        if isinstance(base, type):
            resolved.append(base)
            continue
        entries = getattr(base, "__mro_entries__", None)  # looked up on the object, as CPython does
        if entries is None or not _trusted(entries):
            _reject(name, f"base {base!r}: not a class, and no __mro_entries__ of the standard library")
        resolved.extend(b for b in entries(tuple(bases)) if isinstance(b, type))
    return resolved


def _metaclass_layers(meta):
    """The classes of ``meta``'s MRO written in Python (before ``type``)."""
    for klass in meta.__mro__:
        if klass is type or klass is object:
            return
        yield klass


def admit(name, bases, keywords, bound):
    """Check that ``class name(*bases, **keywords)`` with a body binding ``bound`` may
    be built now; ``keywords`` are real objects. Raises Unsupported otherwise."""
    for key, value in keywords.items():
        if not (isinstance(value, (type, str, int, float, bool, type(None), enum.Enum))):
            _reject(name, f"the keyword {key}={value!r} is not a constant or a class")
    resolved = _resolved(name, bases)
    meta = keywords.get("metaclass")
    if meta is None:
        meta = type(resolved[0]) if resolved else type
    if not isinstance(meta, type):
        _reject(name, f"metaclass {meta!r} is not a class")
    metas = {meta} | {type(b) for b in resolved}  # a conflict among them: CPython's TypeError, later
    callbacks = set()
    for candidate in metas:
        for layer in _metaclass_layers(candidate):
            if layer in TRUSTED_METACLASSES:
                callbacks.update(TRUSTED_METACLASSES[layer])
                continue
            defined = next((n for n in _CREATION if n in layer.__dict__), None)
            if defined is not None:
                _reject(name, f"its metaclass {layer.__name__} defines {defined} in Python")
    for base in resolved:
        for klass in base.__mro__:
            if "__init_subclass__" in klass.__dict__ and not _trusted(klass):
                _reject(name, f"{klass.__name__}.__init_subclass__ would run (a hook of user code)")
            hit = next((n for n in callbacks if n in klass.__dict__), None)
            if hit is not None and not _trusted(klass):
                _reject(name, f"its metaclass would call {klass.__name__}.{hit}")
    hit = next((n for n in callbacks if n in bound), None)
    if hit is not None:
        _reject(name, f"its metaclass would call the {hit} its body defines")
    if set(keywords) - {"metaclass"} and not any(layer in TRUSTED_METACLASSES for m in metas
                                                  for layer in _metaclass_layers(m)):
        _reject(name, f"keywords {sorted(set(keywords) - {'metaclass'})} for type.__init_subclass__")
