"""A GraphModule as data the trace cache can store, and the same GraphModule back.

torch.fx's own pickling writes the generated Python and traces it again on
load: slower than building the nodes, and the graph it makes is not always
the one the backend was handed (a retrace folds some nodes). Here the graph
is kept node by node (operation, name, target, arguments with nodes as
names), targets through portable.py's names, and the bodies of control-flow
operators (the ``get_attr`` submodules) the same way, recursively.
"""
import dataclasses

import torch
import torch.fx
from torch.fx.node import map_aggregate, map_arg


@dataclasses.dataclass(frozen=True)
class NodeRef:
    """A node named in another node's arguments."""

    name: str


def graph_state(gm: torch.fx.GraphModule) -> tuple:
    """(class name, nodes, {get_attr target: the body's state}) of ``gm``."""
    nodes, bodies = [], {}
    for n in gm.graph.nodes:
        nodes.append((n.op, n.name, n.target, map_arg(n.args, _ref), map_arg(n.kwargs, _ref)))
        if n.op == "get_attr":
            body = gm.get_submodule(n.target) if isinstance(n.target, str) else None
            if not isinstance(body, torch.fx.GraphModule):
                raise TypeError(f"get_attr {n.target!r} is not a graph body")
            bodies[n.target] = graph_state(body)
    return type(gm).__name__, nodes, bodies


def _ref(node):
    return NodeRef(node.name)


def graph_module(state) -> torch.fx.GraphModule:
    """The GraphModule ``graph_state`` described."""
    class_name, nodes, bodies = state
    graph = torch.fx.Graph()
    made = {}

    def resolve(a):
        return made[a.name] if isinstance(a, NodeRef) else a

    for op, name, target, args, kwargs in nodes:
        args, kwargs = map_aggregate(args, resolve), map_aggregate(kwargs, resolve)
        made[name] = graph.create_node(op, target, args, kwargs, name=name)
    root = torch.nn.Module()
    for target, body in bodies.items():
        root.add_module(target, graph_module(body))
    return torch.fx.GraphModule(root, graph, class_name=class_name)
