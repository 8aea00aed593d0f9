"""Instances of user subclasses of builtin types: list, set, dict, exceptions, int/float/str.
"""
# Every module is loaded with its family, so that what it registers in the space is there
# before any trace runs.
from . import builtin_subclass, user_containers, user_dict, user_exceptions, value_subclass  # noqa: F401
