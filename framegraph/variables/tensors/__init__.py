"""Tensors, sizes, torch callables and nn.Modules."""
