"""User classes and their instances: attribute lookup, class statements, metaclasses,
descriptors, ``super()``, copying.
"""
# Every module is loaded with its family, so that what it registers in the space is there
# before any trace runs.
from . import (class_attrs, class_bases, class_body, classes, copying, deleting,
               descriptors, dynamic_classes, instance_dict, instances, metaclasses,
               missing_attrs, slots, supers, user_defined)  # noqa: F401
