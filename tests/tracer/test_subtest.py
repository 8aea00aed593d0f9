"""``self.subTest(...)``: unittest's generator context manager, traced with the test.

``TestCase.subTest`` is a ``contextlib.contextmanager`` generator that sets
``self._subtest`` and enters ``self._outcome.testPartExecutor`` (another
one); generators run lazily, in step with the ``with`` block, so a test whose
subtests pass is one graph, and the result object hears of each subtest as it
does uncompiled.
"""
import unittest

import pytest
import torch

import framegraph


class Doubling(unittest.TestCase):
    __test__ = False  # run by the tests below, compiled and not, never by pytest itself
    x = torch.ones(2)

    def test_doubling(self):
        out = []
        for i in range(3):
            with self.subTest(i=i):
                self.assertEqual(i * 2, i + i)
                out.append(self.x * i)
            with self.subTest("nested", i=i), self.subTest(j=-i):
                self.assertNotEqual(i, i + 1)
        self.results = out

    def test_failing(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertEqual(i % 2, 0)
        self.results = [self.x + 1]


class Recorder(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.subtests = []

    def addSubTest(self, test, subtest, err):
        self.subtests.append((subtest._message, subtest.params.get("i"), err is None))
        super().addSubTest(test, subtest, err)


def _run(name, compiled):
    case, result = Doubling(name), Recorder()
    if compiled:
        setattr(case, name, framegraph.compile(getattr(case, name), backend="eager"))
    case.run(result)
    failures = [(str(test), text.splitlines()[-1]) for test, text in result.failures]
    return result.testsRun, result.subtests, failures, [r.tolist() for r in case.results]


def test_passing_subtests_are_one_graph(framegraph_trace):
    assert _run("test_doubling", True) == _run("test_doubling", False)
    assert framegraph_trace.graphs == 1


@pytest.mark.expect_fallback("cannot_resume")
def test_a_failing_subtest_runs_the_test_in_cpython(framegraph_trace):
    """testPartExecutor calls sys.exc_info() for the failure: a break inside the subTest
    block, where the generator cannot be handed over, so the frame runs as it is."""
    assert _run("test_failing", True) == _run("test_failing", False)
    assert framegraph_trace.graphs == 0
