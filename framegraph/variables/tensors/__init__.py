"""Torch values: tensors, symbolic sizes, torch callables, nn.Modules, autograd.Function,
grad modes, random generators, optimizers, NumPy's ndarrays, activation checkpointing.
"""
# Every module is loaded with its family, so that what it registers in the space is there
# before any trace runs.
from . import (autograd_function, checkpoint, control_flow, ctx_managers, flex_attention, functional_call,  # noqa: F401
               nn_module, numpy_arrays, optim, rng, symint, tensor, tensor_hooks, torch_fn, transforms)
