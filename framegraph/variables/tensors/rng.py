"""Random number generators: reaching their state is a graph break (``rng_state``).

A ``random.Random`` (and every subclass: ``SystemRandom``, a user's) keeps its
state in its C base, ``_random.Random``: ``getrandbits``, ``random``, ``seed``,
``getstate`` and ``setstate`` are C methods, and the Python methods
(``shuffle``, ``randrange``, ``choice``, ``sample``, ``uniform``, ...) reach the
state only through them. The trace runs once, the compiled code on every
call, so a number drawn at trace time would be a constant of the compiled
code: the same "random" number on every call, and a generator advanced once
instead of once per call. The numbers also steer Python code (``shuffle``
swaps list items by them), which no graph can hold. So the tracer never calls
these C methods: reading one through an instance, calling the bound method
(``random.random`` is ``random._inst.random``) or creating a generator
(``_random.Random.__new__`` seeds it) is a graph break, and the call runs in
CPython: the values and the state are exactly eager's. The Python methods
are inlined up to the first C method they reach; the break is then at the
program's own call (an inlined call breaks at the root's CALL).

Not done, and why: running the calls on a copy of the state at trace time and
guarding on ``getstate()`` would be correct, but the state changes on every
call, so every call would retrace (up to the recompile limit) to capture what
one graph break already runs correctly.
"""
import _random
import types

from ...errors import unsupported

_C_BASE = _random.Random


def is_rng_method(attr) -> bool:
    """A method of the C generator: unbound (``_random.Random.getrandbits``) or bound
    to a generator (``random.random``, ``rng.getrandbits``)."""
    if isinstance(attr, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return issubclass(attr.__objclass__, _C_BASE)
    if isinstance(attr, types.BuiltinMethodType):
        return isinstance(attr.__self__, _C_BASE) or attr.__self__ is _C_BASE
    return False


def is_rng_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, _C_BASE)


def rng_break(what: str):
    unsupported("rng_state", f"{what}: the generator's state is outside the trace")
