"""Callables: user functions and closures, builtins, builtin constructors and methods,
partials, and library calls answered at trace time.
"""
# Every module is loaded with its family, so that what it registers in the space is there
# before any trace runs.
from . import (builtin_methods, builtins, constructors, evaluation, function_attrs, functions,
               identity, operator_getters, partials, single_dispatch, trace_time, twins,
               weak_refs, wrappers)  # noqa: F401
