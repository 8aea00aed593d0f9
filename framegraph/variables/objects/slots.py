"""``__slots__`` of a Python class: its members, and CPython's error for a name it lacks."""
import functools
import types

from ...errors import unsupported
from ..core.exceptions import raise_in_trace


@functools.lru_cache(maxsize=64)
def no_slot_message(class_name, name, in_class=False, deleting=False, has_dict=False) -> str:
    """CPython's AttributeError for setting (or deleting) ``name`` on an object with only
    ``__slots__`` (or, ``has_dict``, a missing instance attribute), ``in_class``: a plain
    class attribute of that name ("... is read-only"); its wording changed in 3.13, so it
    comes from a probe class of the same name."""
    namespace = {} if has_dict else {"__slots__": ()}
    if in_class:
        namespace[name] = None
    probe = object.__new__(type(class_name, (), namespace))
    try:
        delattr(probe, name) if deleting else setattr(probe, name, None)
    except AttributeError as e:
        return str(e)
    return f"'{class_name}' object has no attribute '{name}'"  # pragma: no cover


def is_slot(attr, name) -> bool:
    """Whether class attribute ``attr`` is the member ``__slots__`` made for ``name``."""
    if not isinstance(attr, types.MemberDescriptorType) or attr.__name__ != name:
        return False
    slots = attr.__objclass__.__dict__.get("__slots__", ())
    return name in ((slots,) if isinstance(slots, str) else slots)


def property_refusal(prop, cls, deleting):
    """The AttributeError of a property without a setter (deleter), worded by this CPython:
    the real property refusing a bare instance (``object.__new__``: no user code runs)."""
    try:
        bare = object.__new__(cls)
    except TypeError:
        unsupported("operator_error", f"property of {cls.__name__} without a {'deleter' if deleting else 'setter'}")
    try:
        prop.__delete__(bare) if deleting else prop.__set__(bare, None)
    except AttributeError as error:
        raise_in_trace(AttributeError, str(error))
    unsupported("operator_error", f"property of {cls.__name__} accepted what it should refuse")
