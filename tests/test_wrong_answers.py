"""Programs that once gave a different answer from eager, without a warning.

Each test compares the compiled result with eager and counts the graphs, so
that a silent fallback to eager (zero graphs) fails it as well.
"""
import torch
from torch import nn

import framegraph
from helpers import CountingBackend, assert_same, check, check_breaks, run_counted


def ones():
    return torch.ones(3)


# ---- 1. obj.__dict__ is the object's real dict, with the trace's writes
class WithFoo(nn.Module):
    def __init__(self):
        super().__init__()
        self.foo = 2.0
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        y = x + 1 if "foo" in self.__dict__ else x - 1
        self.seen = True  # a write in the trace: in __dict__ from here on
        keys = [k for k in self.__dict__ if not k.startswith("_")]
        return (y * self.__dict__["foo"], "bar" not in self.__dict__, len(self.__dict__), keys,
                self.__dict__.get("seen"), "linear" in self.__dict__)


class Settings:
    def __init__(self):
        self.scale = 3.0

    def __eq__(self, other):  # check_breaks compares the final states
        return type(other) is Settings and vars(self) == vars(other)


def test_module_instance_dict():
    m = WithFoo()
    check(m.forward, ones())
    assert "seen" in m.__dict__  # the write was replayed


def test_module_instance_dict_is_guarded():
    m = WithFoo()
    cnt = CountingBackend()
    fn = framegraph.compile(m.forward, backend=cnt, fullgraph=True)
    fn(ones())
    m.bar = 1.0  # "bar" not in self.__dict__ changes: a new graph, not the old answer
    expected = m.forward(ones())
    assert_same(fn(ones()), expected)
    assert cnt.frame_count == 2


def test_object_instance_dict_reads_and_writes():
    def f(x, s):
        d = s.__dict__
        before = ("scale" in d, "offset" not in d, len(d), list(d), d["scale"])
        s.offset = 1.0  # seen through the view taken before the write
        s.__dict__["scale"] = 5.0  # and a write through the dict is seen by s.scale
        return before, list(d.items()), x * s.scale + d["offset"]

    check_breaks(f, lambda: (ones(), Settings()), graphs=1, breaks=0)
