"""``__slots__`` of a Python class: its members, and CPython's error for a name it lacks."""
import functools
import types


@functools.lru_cache(maxsize=64)
def no_slot_message(class_name, name) -> str:
    """CPython's AttributeError for setting ``name`` on an object with only ``__slots__``
    (its wording changed in 3.13), from a probe class of the same name."""
    probe = object.__new__(type(class_name, (), {"__slots__": ()}))
    try:
        setattr(probe, name, None)
    except AttributeError as e:
        return str(e)
    return f"'{class_name}' object has no attribute '{name}'"  # pragma: no cover


def is_slot(attr, name) -> bool:
    """Whether class attribute ``attr`` is the member ``__slots__`` made for ``name``."""
    if not isinstance(attr, types.MemberDescriptorType) or attr.__name__ != name:
        return False
    slots = attr.__objclass__.__dict__.get("__slots__", ())
    return name in ((slots,) if isinstance(slots, str) else slots)
