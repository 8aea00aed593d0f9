"""isinstance() through a metaclass's __instancecheck__ written in Python."""
import torch

from helpers import assert_same_as_eager


def count_parameters(x, layer=torch.nn.Linear(2, 2)):
    # _ParameterMeta.__instancecheck__: a Parameter, or a tensor marked _is_param
    n = sum(1 for p in layer.parameters() if isinstance(p, torch.nn.Parameter))
    return layer(x) * n, isinstance(x, torch.nn.Parameter), isinstance(layer.weight * 2, torch.nn.Parameter)


def test_isinstance_of_parameter_is_one_graph():
    assert_same_as_eager(count_parameters, torch.ones(2), graphs=1)
