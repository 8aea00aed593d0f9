"""Test helpers: a backend that counts graphs and ops, and comparison with eager.

    cnt = CountingBackend()
    fn = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert_same(fn(x), f(x))
    assert (cnt.frame_count, cnt.op_count) == (1, 2)

``check(f, *args)`` does all of that in one call and returns the counter.
Every compile in the suite states the graphs it expects: with a
CountingBackend, or, whatever the backend, with framegraph's pytest plugin
(framegraph_pytest.py, which also fails a test on any
undeclared fallback to eager): ``framegraph_trace.assert_compiles(f, x,
graphs=1)``, the ``@pytest.mark.framegraph_graphs(n)`` marker, or the
``framegraph_trace`` fixture's ``graphs``.
"""
import dis

import torch

import framegraph


class CountingBackend:
    """Backend that records every graph it gets and runs it as is."""

    def __init__(self):
        self.frame_count = 0
        self.op_count = 0
        self.graphs = []
        self.example_inputs = []

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        self.op_count += sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output"))
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        return gm.forward

    def targets(self, index=-1):
        """The call targets of a graph (functions or method names), in order."""
        return [n.target for n in self.graphs[index].graph.nodes if n.op.startswith("call")]


def assert_same(actual, expected, **tol):
    """Equal values, recursively through tuples, lists, dicts (in both of an OrderedDict's
    orders) and namedtuples; sets of values that hash alike in both runs in their order too."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"expected a tensor, got {type(actual).__name__}"
        torch.testing.assert_close(actual, expected, **tol)
        assert actual.requires_grad == expected.requires_grad
    elif type(expected).__module__ == "numpy" and hasattr(expected, "dtype"):  # an ndarray, a NumPy scalar
        import numpy as np

        assert type(actual) is type(expected), f"{type(actual)} != {type(expected)}"
        assert actual.dtype == expected.dtype and np.shape(actual) == np.shape(expected)
        # torch's kernels (sin, exp) may round differently from NumPy's in the last place
        np.testing.assert_allclose(actual, expected, rtol=tol.get("rtol", 1e-6), atol=tol.get("atol", 1e-6))
    elif isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected), f"{type(actual)} != {type(expected)}"
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e, **tol)
    elif isinstance(expected, dict):
        assert type(actual) is type(expected) and list(actual) == list(expected)
        # an OrderedDict's table too (dict's own keys()), which move_to_end leaves as it is
        assert list(dict.keys(actual)) == list(dict.keys(expected))
        for k in expected:
            assert_same(actual[k], expected[k], **tol)
    elif isinstance(expected, (set, frozenset)) and all(_hashed_by_value(e) for e in expected):
        assert type(actual) is type(expected) and list(actual) == list(expected), f"{actual!r} != {expected!r}"
    else:
        assert actual == expected, f"{actual!r} != {expected!r}"


def _hashed_by_value(value) -> bool:
    if type(value) in (tuple, frozenset):
        return all(_hashed_by_value(v) for v in value)
    return type(value) in (int, float, complex, str, bytes, bool, type(None))


def check(fn, *args, fullgraph=True, frames=1, ops=None, **kwargs):
    """Compile ``fn``, compare one call with eager, check graph (and op) counts."""
    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt, fullgraph=fullgraph)
    expected = fn(*args, **kwargs)
    actual = compiled(*args, **kwargs)
    assert_same(actual, expected)
    assert cnt.frame_count == frames, f"{cnt.frame_count} graphs, expected {frames}"
    if ops is not None:
        assert cnt.op_count == ops, f"{cnt.op_count} ops, expected {ops}: {cnt.targets() if cnt.graphs else []}"
    return cnt


def same_as_eager(fn, *args):
    """Compiled ``fn`` (backend ``eager``) returns what eager ``fn`` returns; the result. The
    caller states the graph count (``framegraph_trace.graphs``)."""
    expected = fn(*args)
    actual = framegraph.compile(fn, backend="eager")(*args)
    assert_same(actual, expected)
    return actual


def assert_same_as_eager(fn, *args, graphs, fullgraph=True, **kwargs):
    """Compiled ``fn`` returns what eager ``fn`` returns, on two calls, from ``graphs`` graphs."""
    cnt = CountingBackend()
    compiled = framegraph.compile(fn, backend=cnt, fullgraph=fullgraph)
    expected = fn(*args, **kwargs)
    for _ in range(2):
        assert_same(compiled(*args, **kwargs), expected)
    assert cnt.frame_count == graphs, f"{cnt.frame_count} graphs, expected {graphs}"
    return cnt


def opcodes_of(fn):
    """The set of opcode names in ``fn``'s bytecode (to show a test covers one)."""
    return {inst.opname for inst in dis.get_instructions(fn)}


def run_counted(fn, *args, fullgraph=False, **kwargs):
    """One compiled call: (result, CountingBackend, graph breaks, frame errors).

    Breaks and errors are read from every trace attempt (resume functions
    included), through convert_frame's observers.
    """
    from framegraph.diagnostics.records import observing

    cnt, breaks, errors = CountingBackend(), [], []

    def observe(record):
        if record.compiled is not None:
            breaks.extend(record.compiled.breaks)
        if record.error is not None:
            errors.append(record.error)

    with observing(observe):
        result = framegraph.compile(fn, backend=cnt, fullgraph=fullgraph)(*args, **kwargs)
    return result, cnt, breaks, errors


def check_breaks(fn, make_args, graphs, breaks, calls=1):
    """Compiled ``fn`` matches eager in result and in the final state of its
    arguments (built fresh by ``make_args()`` for each side); asserts the
    graph and break counts of the first call and that nothing fell back."""
    expected_args = make_args()
    expected = fn(*expected_args)
    for call in range(calls):
        args = make_args()
        result, cnt, found, errors = run_counted(fn, *args)
        assert_same(result, expected)
        assert_same(list(args), list(expected_args))
        if call == 0:
            assert not errors, errors
            assert (cnt.frame_count, len(found)) == (graphs, breaks), (cnt.frame_count, found)
    return found
