"""Iteration: the builtin iterators, ``itertools``, generators and the iteration of user objects.
"""
# Every module is loaded with its family, so that what it registers in the space is there
# before any trace runs.
from . import generators, iteration_protocol, iterators, itertools_iters, object_iteration, odict_iter  # noqa: F401
