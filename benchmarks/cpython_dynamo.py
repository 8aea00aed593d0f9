"""torch.compile's side of the CPython-test harness (framegraph/testing/cpython.py).

framegraph/ never imports torch._dynamo; the harness loads this file from the
checkout for ``--modes dynamo``. It compiles each test method with
``torch.compile(backend="eager", fullgraph=False)``, with the two settings
torch's own CPython-test runner uses (unittest assertions and class bodies
traced), and counts graph breaks and frames not converted from its counters.
"""
from collections import Counter


class _DynamoWatch:
    """torch._dynamo's counters around one test: graph breaks, frames not converted."""

    def __init__(self):
        import torch._dynamo
        from torch._dynamo.utils import counters

        self.dynamo, self.counters = torch._dynamo, counters

    def _now(self):
        frames = self.counters["frames"]
        return sum(self.counters["graph_break"].values()), frames["total"] - frames["ok"]

    def start(self):
        self.dynamo.reset()
        self.before = self._now()
        self.reasons = Counter(self.counters["graph_break"])

    def stop(self):
        breaks, unconverted = (a - b for a, b in zip(self._now(), self.before))
        causes = [f"break:{r[:60]}" for r, n in self.counters["graph_break"].items()
                  if n > self.reasons.get(r, 0)]
        if breaks and not causes:
            causes.append("break")
        if unconverted:
            causes.append("frame_not_converted")
        return sorted(causes), []


def compiler():
    """(function compiling a bound test method, its watch) for torch.compile."""
    import torch
    import torch._dynamo

    torch._dynamo.config.enable_trace_unittest = True
    torch._dynamo.config.enable_trace_load_build_class = True
    return (lambda m: torch.compile(m, backend="eager", fullgraph=False)), _DynamoWatch()
