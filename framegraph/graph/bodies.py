"""Bodies of torch's control-flow operators, traced as graphs of their own.

``torch.cond``, ``while_loop``, ``scan`` and ``map`` take Python callables. In a
graph each callable is a GraphModule the operator's node holds (a ``get_attr``
node), and what the callable reads from outside its arguments (a closure's
tensor, a module's parameter, a tensor computed earlier in the frame) is handed
to it as an extra operand: it is *lifted*. torch requires that of a body, so
that every backend sees each body as a pure function of its operands.

A body is traced by the same translator, on the same FakeTensorMode, with
``OutputGraph.graph`` swapped for the body's graph. A tensor of an enclosing
graph used inside the body becomes a placeholder of the body's graph, once,
lifted through every body in between when bodies nest. The enclosing graph's
inputs are still made there (``add_input`` writes to the root graph), so a
parameter first read inside a body is a graph input like any other.
"""
import re
from typing import List

import torch
import torch.fx

from ..errors import unsupported


class Body:
    """One body being traced: its graph and what it lifted from the enclosing one."""

    def __init__(self, name: str):
        self.name = name
        self.graph = torch.fx.Graph()
        self.lifted = {}  # node of the enclosing graph -> its placeholder here, in lifting order
        self.submodules = {}  # name -> GraphModule of the bodies of operators inside this body
        self._last_placeholder = None

    def placeholder(self, name: str, example) -> torch.fx.Node:
        """A new input of this body, after the ones it has."""
        if self._last_placeholder is None:
            ctx = self.graph.inserting_before(next(iter(self.graph.nodes), None))
        else:
            ctx = self.graph.inserting_after(self._last_placeholder)
        with ctx:
            node = self.graph.placeholder(re.sub(r"\W", "_", name))  # a dict key ("0.weight") names it
        node.meta["example_value"] = example
        self._last_placeholder = node
        return node

    def lift_unused(self, outer: torch.fx.Node) -> None:
        """Make ``outer`` an input of this body although it does not read it: the
        branches of ``cond`` (the cond and body of ``while_loop``) take the same operands."""
        if outer not in self.lifted:
            self.lifted[outer] = self.placeholder(outer.name, outer.meta.get("example_value"))

    def order_lifted(self, order: List[torch.fx.Node]) -> None:
        """Put the lifted placeholders in ``order`` (after the body's own arguments)."""
        first_op = next(n for n in self.graph.nodes if n.op != "placeholder")  # the output at least
        for outer in order:
            first_op.prepend(self.lifted[outer])

    def module(self) -> torch.fx.GraphModule:
        """The GraphModule of this body, with the bodies nested in it as attributes."""
        root = torch.nn.Module()
        for name, gm in self.submodules.items():
            root.add_module(name, gm)
        return torch.fx.GraphModule(root, self.graph, class_name=self.name)


def lift(output, node: torch.fx.Node) -> torch.fx.Node:
    """``node`` as a node of the graph being recorded: itself, or the placeholder
    that stands for it in the innermost body (made on first use)."""
    return _lift(output.bodies, len(output.bodies) - 1, node, output.root_graph)


def _lift(bodies, level, node, root):
    if level < 0:
        if node.graph is not root:
            unsupported("side_effect", "a tensor computed inside a control-flow body was used outside it")
        return node
    body = bodies[level]
    if node.graph is body.graph:
        return node
    outer = _lift(bodies, level - 1, node, root)
    inner = body.lifted.get(outer)
    if inner is None:
        inner = body.lifted[outer] = body.placeholder(outer.name, outer.meta.get("example_value"))
    return inner


def lift_arguments(output, args):
    """``args`` (FX arguments: nodes inside tuples, lists, dicts, slices) with every
    node of an enclosing graph replaced by the body's placeholder for it."""
    if not output.bodies:
        return args
    return torch.fx.node.map_arg(args, lambda n: lift(output, n))


class BodyScope:
    """``with BodyScope(output, body):`` records into ``body`` instead of the current graph."""

    def __init__(self, output, body: Body):
        self.output = output
        self.body = body

    def __enter__(self):
        self.saved = self.output.graph
        self.output.bodies.append(self.body)
        self.output.graph = self.body.graph
        return self.body

    def __exit__(self, *exc):
        self.output.bodies.pop()
        self.output.graph = self.saved


def attach(output, body: Body):
    """Register ``body``'s GraphModule on the graph being recorded, under a fresh
    name from the body's (``cond_true_0``): (its get_attr node, the module)."""
    owner = output.bodies[-1].submodules if output.bodies else output.submodules
    i = 0
    while f"{body.name}_{i}" in owner:
        i += 1
    name = f"{body.name}_{i}"
    module = owner[name] = body.module()
    return output.graph.get_attr(name), module
