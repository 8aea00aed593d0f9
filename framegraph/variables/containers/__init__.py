"""Containers: tuples, lists, slices, ranges, dicts, sets, deques and their views and merges;
Python modules, as the namespaces of their attributes.
"""
# Every module is loaded with its family, so that what it registers in the space is there
# before any trace runs.
from . import (deques, dict_merge, dicts, lazy_dict, lists, mapping_proxy, modules, object_dicts, ranges, sets,
               sorting, traced_keys)  # noqa: F401
