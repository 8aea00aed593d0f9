"""Opcode handlers, one module per family; importing this registers them all.

Each handler is named after its opcode and starts with the opcode's docs link
and its ``(inputs -- outputs)`` stack contract, top of stack on the right.
Families that differ only in one function (binary operators, conditional
jumps, container builders) come from a factory.
"""
from . import (  # noqa: F401
    arithmetic, attributes, calls, containers, control_flow, generators, intrinsics, load_store, stack,
    with_exc,
)
