"""PEP 604 unions (``int | None``) made inside compiled code: in isinstance
checks and in the annotations of nested functions."""
import torch

from helpers import assert_same_as_eager


def scale(x, factor=2):
    if isinstance(factor, int | float):  # BINARY_OP | on two classes
        return x * factor
    return x


def test_isinstance_with_a_union_is_one_graph():
    assert_same_as_eager(scale, torch.ones(2), graphs=1)


def with_helper(x):
    def pad(t: torch.Tensor | None = None, value: int | None = None) -> torch.Tensor | None:
        return t if value is None else t + value  # annotations are evaluated at the def

    return pad(x, 1), pad(x)


def test_a_nested_function_with_union_annotations_is_one_graph():
    assert_same_as_eager(with_helper, torch.ones(2), graphs=1)


def with_a_callback(x):
    import collections.abc

    Hook = collections.abc.Callable[[torch.Tensor], torch.Tensor]  # a GenericAlias subclass, list key
    def apply(fn: Hook, t):
        return fn(t)

    return apply(torch.relu, x), Hook


def test_a_callable_annotation_is_built_in_the_trace():
    assert_same_as_eager(with_a_callback, torch.ones(2), graphs=1)
