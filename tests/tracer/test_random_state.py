"""``random``: the generator's state stays outside the trace (``variables/tensors/rng.py``).

A number drawn at trace time would be a constant of the compiled code, so every
call into a ``random.Random``'s C methods is a graph break and runs in CPython.
Each test calls the compiled function several times from one seed and checks
the values and the generator's state against eager from the same seed.
"""
import random

import torch

import framegraph
from helpers import assert_same


def shuffled(x, rng):
    items = list(range(8))
    rng.shuffle(items)
    return x + 1, items, rng.randrange(100), rng.choice("abcdef"), rng.random()


def module_functions(x):
    items = [3, 1, 2]
    random.shuffle(items)
    return x * 2, items, random.randint(0, 9), random.random()


def _same_sequence(fn, make_rng, calls=3):
    eager_rng, compiled_rng = make_rng(), make_rng()
    compiled = framegraph.compile(fn, backend="eager")
    for _ in range(calls):
        assert_same(compiled(torch.ones(2), compiled_rng), fn(torch.ones(2), eager_rng))
    assert compiled_rng.getstate() == eager_rng.getstate()


def test_a_random_instance_draws_in_cpython_on_every_call(framegraph_trace):
    _same_sequence(shuffled, lambda: random.Random(7))
    assert framegraph_trace.graphs == 3


class Dice(random.Random):
    """A user's generator: its Python methods over the C state."""

    def roll(self):
        return self.randrange(1, 7)


def test_a_subclass_of_random_is_the_same(framegraph_trace):
    _same_sequence(lambda x, rng: (x + 1, rng.roll(), rng.roll()), lambda: Dice(3))
    assert framegraph_trace.graphs == 1


def test_the_module_functions_keep_the_global_state(framegraph_trace):
    state = random.getstate()
    try:
        random.seed(11)
        expected = [module_functions(torch.ones(2)) for _ in range(3)]
        random.seed(11)
        compiled = framegraph.compile(module_functions, backend="eager")
        actual = [compiled(torch.ones(2)) for _ in range(3)]
        assert_same(actual, expected)
        assert framegraph_trace.graphs == 2
    finally:
        random.setstate(state)


def test_a_generator_made_in_the_trace_is_made_in_cpython(framegraph_trace):
    def fn(x):
        rng = random.Random(5)
        return x + 1, rng.random(), rng.randrange(10)

    assert_same(framegraph.compile(fn, backend="eager")(torch.ones(2)), fn(torch.ones(2)))
    assert framegraph_trace.graphs == 1
