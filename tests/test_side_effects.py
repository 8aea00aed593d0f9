"""Side effects on objects from outside the frame: replayed once, after the graph.

Every test runs the function eagerly and compiled on fresh copies of its
arguments and compares the result *and* the final state of every argument.
"""
import collections

import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, check_breaks, run_counted

counter = 0


class Box:
    def __init__(self, **attrs):
        self.__dict__.update(attrs)

    def __eq__(self, other):  # compare final states, tensors included
        if type(other) is not type(self) or list(vars(self)) != list(vars(other)):
            return False
        assert_same(list(vars(self).values()), list(vars(other).values()))
        return True


@pytest.fixture(autouse=True)
def fresh():
    framegraph.reset()
    yield
    framegraph.reset()


def ones():
    return torch.ones(3)


# ---- containers from outside the frame
def test_list_methods():
    def f(x, lst):
        lst.append(x + 1)
        lst.extend([x * 2, 5])
        lst.insert(0, "first")
        popped = lst.pop(1)
        lst[0] = lst[0] + "!"
        del lst[-1]
        lst += [x - 1]
        lst.reverse()
        return popped, len(lst)

    check_breaks(f, lambda: (ones(), [1, 2]), graphs=1, breaks=0)


def test_list_sort_clear_remove():
    def f(x, a, b):
        a.sort(reverse=True)
        b.remove(2)
        b.clear() if len(b) > 5 else b.append(len(a))
        return x + sum(a)

    check_breaks(f, lambda: (ones(), [3, 1, 2], [1, 2, 3]), graphs=1, breaks=0)


def test_dict_and_set_updates():
    def f(x, d, od, s):
        d["new"] = x + 1
        d.update(k=3)
        d.pop("old")
        del d["gone"]
        d.setdefault("dflt", [])
        od["z"] = 1
        od.move_to_end if False else None
        s.add(4)
        s.discard(1)
        return x * 2

    check_breaks(f, lambda: (ones(), {"old": 1, "gone": 2}, collections.OrderedDict(a=1), {1, 2}),
                 graphs=1, breaks=0, calls=2)


def test_attribute_writes_on_an_outside_object_are_read_back():
    def f(x, box):
        box.y = x + 1
        box.n = box.n + 1
        return box.y * box.n

    check_breaks(f, lambda: (ones(), Box(n=1)), graphs=1, breaks=0, calls=2)


def test_nested_containers_and_aliases_are_one_object():
    def f(x, a, b, holder):
        a.append(x)
        holder.items.append(1)
        return len(b), len(holder.items)

    def args():
        shared = [0]
        return ones(), shared, shared, Box(items=shared)

    check_breaks(f, args, graphs=0, breaks=0)


# ---- globals and cells
def test_global_writes_are_replayed_and_read_back():
    def f(x):
        global counter, fresh_global
        counter = counter + 1
        fresh_global = counter * 10
        return x + fresh_global

    global counter
    counter = 0
    expected = f(ones())
    counter = 0
    result, _, brks, errors = run_counted(f, ones())
    assert_same(result, expected)
    assert (counter, fresh_global, brks, errors) == (1, 10, [], [])


def test_nonlocal_writes_in_the_frame_and_in_an_inlined_closure():
    def make():
        count = 0
        seen = []

        def bump():
            nonlocal count
            count += 1
            return count

        def f(x):
            nonlocal seen
            a = bump()
            b = bump()  # a second inlined call re-reads the cell written by the first
            seen = seen + [b]
            return x * a * b

        return f, lambda: (count, seen)

    f, state = make()
    expected = (f(ones()), state())
    f, state = make()
    result, cnt, brks, errors = run_counted(f, ones())
    assert_same((result, state()), expected)
    assert (cnt.frame_count, brks, errors) == (1, [], [])


# ---- new objects that escape
class Made(Box):
    def __init__(self, t, tag):
        self.t = t
        self.tag = tag


def test_new_objects_escape_into_outside_containers_and_the_result():
    def f(x, out, box):
        made = Made(x + 1, "new")
        out.append(made)
        box.child = made
        return made

    def args():
        return ones(), [], Box()

    expected_args = args()
    expected = f(*expected_args)
    got_args = args()
    result, cnt, brks, errors = run_counted(f, *got_args)
    assert result == expected and got_args[1] == expected_args[1] and got_args[2] == expected_args[2]
    assert result is got_args[1][0] is got_args[2].child  # one object, as in eager
    assert (cnt.frame_count, brks, errors) == (1, [], [])


# ---- tensors mutated in place
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_in_place_mutation_of_tensor_inputs(backend, framegraph_trace):
    def f(x, y):
        x.add_(1)
        y[0] = 0
        return x * y

    a, b = ones(), torch.arange(3.0)
    expected = f(a.clone(), b.clone())
    a2, b2 = a.clone(), b.clone()
    f(a2, b2)
    result = framegraph.compile(f, backend=backend, fullgraph=True)(a, b)
    assert_same(result, expected)
    assert_same((a, b), (a2, b2))
    assert framegraph_trace.graphs == 1


def test_in_place_calls_whose_result_is_unused_still_run(framegraph_trace):
    act = torch.nn.ReLU(inplace=True)

    def f(x):
        torch.nn.functional.relu(x, inplace=True)  # changes the caller's tensor
        y = x * 1
        act(y)
        z = x.clone()
        z.__setitem__(0, 5.0)
        z.__iadd__(1)
        torch.Tensor.__imul__(z, 2)
        return y, z

    a, b = torch.tensor([-1.0, 2.0]), torch.tensor([-1.0, 2.0])
    assert_same(framegraph.compile(f, backend="eager", fullgraph=True)(a), f(b))
    assert_same(a, b)
    assert framegraph_trace.graphs == 1


def test_unused_random_ops_still_draw_from_the_generator(framegraph_trace):
    def f(x):
        torch.randn(3)
        torch.nn.functional.dropout(x, 0.5)
        return torch.rand(2)

    torch.manual_seed(0)
    expected = (f(ones()), torch.rand(1))
    torch.manual_seed(0)
    assert_same((framegraph.compile(f, backend="eager", fullgraph=True)(ones()), torch.rand(1)), expected)
    assert framegraph_trace.graphs == 1


# ---- with graph breaks
def test_the_break_instruction_sees_the_replayed_state_and_replay_runs_once():
    snapshots = []

    @framegraph.disable
    def look(lst):
        snapshots.append(list(lst))

    def f(x, lst):
        lst.append(1)
        look(lst)
        lst.append(2)
        return x + len(lst)

    lst = []
    result, cnt, brks, errors = run_counted(f, ones(), lst)
    assert_same(result, ones() + 2)
    assert (lst, snapshots, len(brks), errors) == ([1, 2], [[1]], 1, [])


def test_a_module_attribute_write_runs_in_cpython():
    import types

    mod = types.ModuleType("fake_mod")
    mod.value = 1

    def f(x):
        mod.value = 2
        return x + mod.value

    result, cnt, brks, errors = run_counted(f, ones())
    assert_same(result, ones() + 2)
    assert mod.value == 2 and len(brks) == 1 and not errors


def test_fullgraph_failure_applies_nothing():
    def f(x, lst, box):
        lst.append(x)
        box.n = 5
        return x.sum().item()

    lst, box = [], Box(n=1)
    with pytest.raises(framegraph.Unsupported):
        framegraph.compile(f, backend="eager", fullgraph=True)(ones(), lst, box)
    assert lst == [] and box.n == 1


class Counting(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.calls = 0
        self.register_buffer("steps", torch.zeros(()))
        self.last = None

    def forward(self, x):
        self.calls += 1
        y = self.lin(x)
        self.last = y.detach()
        self.steps += 1
        return y * self.calls


def test_attribute_writes_on_a_module_are_replayed_without_a_break():
    eager, compiled_mod = Counting(), Counting()
    compiled_mod.load_state_dict(eager.state_dict())
    cnt = CountingBackend()
    compiled = framegraph.compile(compiled_mod, backend=cnt, fullgraph=True)
    x = torch.ones(1, 2)
    for _ in range(3):
        assert_same(compiled(x), eager(x))
        assert (compiled_mod.calls, compiled_mod.steps.item()) == (eager.calls, eager.steps.item())
        assert_same(compiled_mod.last, eager.last)
    assert "steps" in dict(compiled_mod.named_buffers())
