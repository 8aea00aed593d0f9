"""framegraph._tensor_check.TensorCheck agrees with torch's TensorGuards on every case."""
import itertools

import pytest
import torch
from torch._C._dynamo.guards import TensorGuards

TensorCheck = pytest.importorskip("framegraph._tensor_check").TensorCheck


class MyTensor(torch.Tensor):
    pass


def tensors():
    base = torch.randn(4, 3)
    return {
        "float32 [4,3]": base,
        "float64": base.double(),
        "int64": base.long(),
        "transposed": torch.randn(3, 4).t(),
        "[4,4]": torch.randn(4, 4),
        "[4,3,1]": base.unsqueeze(-1),
        "requires_grad": base.clone().requires_grad_(),
        "parameter": torch.nn.Parameter(base.clone()),
        "frozen parameter": torch.nn.Parameter(base.clone(), requires_grad=False),
        "subclass": base.clone().as_subclass(MyTensor),
        "inference": _inference(base),
        "scalar": torch.tensor(1.0),
        "sliced": torch.randn(8, 3)[::2],
    }


def _inference(t):
    with torch.inference_mode():
        return t.clone()


def both(template, dynamic_dim=None):
    sizes, strides = list(template.size()), list(template.stride())
    if dynamic_dim is not None:
        sizes[dynamic_dim] = strides[dynamic_dim] = None
    ours = TensorCheck([template], [sizes], [strides])
    theirs = TensorGuards(template, dynamic_dims_sizes=[sizes], dynamic_dims_strides=[strides]).check
    return ours, theirs


@pytest.mark.parametrize("template_name, value_name", list(itertools.product(tensors(), repeat=2)))
def test_same_verdict_as_tensor_guards(template_name, value_name):
    ts = tensors()
    ours, theirs = both(ts[template_name])
    value = ts[value_name]
    assert ours(value) == theirs(value), f"{template_name} vs {value_name}"
    assert ours(value) == (template_name == value_name)


def test_dynamic_dims_accept_any_size_there():
    ours, theirs = both(torch.randn(4, 3), dynamic_dim=0)
    for value in (torch.randn(7, 3), torch.randn(1, 3), torch.randn(7, 4), torch.randn(7, 3).double()):
        assert ours(value) == theirs(value)
    assert ours(torch.randn(9, 3)) and not ours(torch.randn(9, 2))


def test_thread_local_dispatch_state_counts():
    template = torch.randn(2)
    ours, theirs = both(template)
    assert ours(template)
    with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.ADInplaceOrView)):
        assert ours(template) == theirs(template) == False  # noqa: E712


def test_many_tensors_and_bad_calls():
    ts = [torch.randn(2, 2) for _ in range(50)]
    check = TensorCheck(ts, [[2, 2]] * 50, [[2, 1]] * 50)
    assert check(*ts)
    assert not check(*ts[:-1], torch.randn(2, 3))
    with pytest.raises(TypeError):
        check(*ts[:-1])
    with pytest.raises(TypeError):
        TensorCheck([1], [[]], [[]])
    with pytest.raises(ValueError):
        TensorCheck([torch.randn(2)], [[2, 2]], [[1]])
    with pytest.raises(ValueError):
        TensorCheck([torch.randn(2)], [], [])
    assert not TensorCheck([torch.randn(2)], [[2]], [[1]])("not a tensor")


@pytest.mark.parametrize("value", [None, 3, "t", [torch.randn(4, 3)], torch.randn(4, 3).to_sparse(),
                                   torch.randn(4, 3, device="meta")], ids=repr)
def test_anything_that_is_not_the_expected_tensor_fails_without_raising(value):
    # A guard is called with whatever the frame holds now; a value of another
    # kind is a failed check (retrace), never an exception out of C++.
    check = TensorCheck([torch.randn(4, 3)], [[4, 3]], [[3, 1]])
    assert check(value) is False
    sub = TensorCheck([torch.randn(4, 3).as_subclass(MyTensor)], [[4, 3]], [[3, 1]])
    assert sub(value) is False and sub(torch.randn(4, 3)) is False
