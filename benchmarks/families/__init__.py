"""Per-family corpora of Python constructs: small programs that do tensor work around one Python construct.

One module per family; each program is a build function, registered with
``@program(FAMILY)``, that returns a ``constructs.Case`` (the function to
compile and its inputs; the runner calls it twice and compares both calls, and
any state the program mutates, with eager). The programs are written from
CPython's documentation and tests and from the idioms of libraries that use
the construct (collections recipes, typing.NamedTuple, coroutine pipelines),
not from PyTorch's test suite.
"""
import importlib

from constructs import Case

PROGRAMS = {}  # name -> (family, build function), in the table's order
FAMILIES = ("descriptors", "coroutines", "constructors", "dict_protocol", "keys_sets", "partials", "others")


def program(family):
    """Register a build function under its own name in ``family``."""
    def register(build):
        assert build.__name__ not in PROGRAMS, f"two programs named {build.__name__}"
        PROGRAMS[build.__name__] = (family, build)
        return build
    return register


def case(fn, *args, observe=None, calls=2):
    """A Case that calls ``fn(*args)`` ``calls`` times (the same inputs again: state the first call
    leaves behind, a mutated list or a generator that outlived it, is part of what is compared)."""
    return Case(fn, *args, then=[_again] * (calls - 1), observe=observe)


def _again():
    pass


for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")
