"""A small library module for tests: field validators looked up by typing origin,
as huggingface_hub's strict dataclasses do (``_BASIC_TYPE_VALIDATORS``). Its
globals are a module of its own, not the test's: a traced program reaches them
through the validator functions."""
import types
import typing


def _check_union(value, args):
    if not any(isinstance(value, a) for a in args):
        raise TypeError(f"{value!r} is none of {args}")


# validators by typing origin: objects (special forms, classes) as keys
BY_ORIGIN = {typing.Union: _check_union, types.UnionType: _check_union, list: None}


def type_check(value, expected):
    """Raise TypeError unless ``value`` matches the annotation ``expected``."""
    origin = typing.get_origin(expected)
    if check := BY_ORIGIN.get(origin):
        check(value, typing.get_args(expected))
    elif origin is None and not isinstance(value, expected):
        raise TypeError(f"{value!r} is not a {expected}")


def typed(expected):
    """A validator of one field."""
    def validator(value):
        type_check(value, expected)
    return validator
