"""Containers: tuples, lists, slices, ranges, dicts, sets, deques and their views and merges.
"""
# Every module is loaded with its family, so that what it registers in the space is there
# before any trace runs. dicts.py comes first: it imports the modules that build on it
# (sets, dict_merge) at its end.
from . import lists, dicts  # noqa: F401
from . import deques, dict_merge, lazy_dict, mapping_proxy, object_dicts, sets, sorting, traced_keys  # noqa: F401
