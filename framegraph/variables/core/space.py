"""The space: how the core and the lower families reach a tracker kind defined above them.

The families stand in floors (``variables/__init__.py`` lists them): a module
imports the core and the floors below its own, never one above. Where a lower
module must make or recognise a value of a higher family (the core's default
``iter()`` makes a list iterator; the operator protocol asks whether an operand
is a tensor; a list's ``sort`` calls a user function), it goes through this
space, as PyPy's type modules go through ``space.newtuple`` and CPython's
``abstract.c`` through the type slots: the family registers what it offers
when its module is loaded, and the caller looks it up when it runs::

    @space.register
    class TupleVariable(BaseListVariable): ...        # in containers/lists.py

    return space.TupleVariable(items)                 # in core/binding.py

Registration checks itself: a name is registered once. Every family is
imported when ``framegraph.variables`` is, so the space is complete before
any trace runs; a missing name is an ``AttributeError`` that names it.
"""
import sys

_REGISTERED = {}


def register(obj, name=None):
    """Offer ``obj`` (a tracker class, a function, or a table under ``name``) to the
    modules below its family; returns it unchanged, so it serves as a decorator."""
    name = name or obj.__name__
    if _REGISTERED.get(name, obj) is not obj:
        raise RuntimeError(f"space: {name} is registered twice ({_REGISTERED[name].__module__} "
                           f"and {obj.__module__})")
    _REGISTERED[name] = obj
    setattr(sys.modules[__name__], name, obj)
    return obj


def __getattr__(name):
    raise AttributeError(f"space: no family registered {name!r} (is its module imported by its "
                         f"package's __init__?)")
