"""OutputGraph: the FX graph of one frame, its inputs, guards and backend call.

One OutputGraph is shared by a root translator and every function it inlines.
It owns:

* ``graph``: a ``torch.fx.Graph``. Tensor inputs are placeholders bound to
  the Source they are re-read from on every call (arguments, globals, module
  parameters and buffers, closure cells), so parameters updated in place
  between calls are seen by the graph: they are inputs, never constants.
* ``fake_mode``: a FakeTensorMode, static shapes unless dynamic.py makes
  some input dimensions symbolic (``shapes``, a ShapeContext). Every op is run once on
  FakeTensors while tracing, which gives each node its ``example_value``
  (shape, dtype, device) and rejects ops that would fail or need data.
* ``guards``: the Guard records collected during the trace (guards/).
* ``example_inputs``: the real input tensors, handed to
  ``backend(gm, example_inputs)`` and dropped after compilation.

``compile(outputs)`` finishes the graph: output node, dead code elimination,
pruning of unused inputs (and their guards), GraphModule, backend call.
"""
import logging
import operator
import re
import threading
from typing import Any, Dict, List, Optional

import torch
import torch._guards
import torch.fx
from torch.fx.experimental.symbolic_shapes import compute_unbacked_bindings
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
)

from . import bodies, meta_ops
from .node_effects import GRAD_TOGGLE, STATE_TARGETS, draws_random, is_impure, mutates_by_schema, \
    writes_in_place
from .dynamic import ShapeContext
from .final_guards import add_final_guards
from ..backends.distributed import backend_for
from ..config import config
from ..errors import BackendError, unsupported
from ..guards.kinds import Guard, TensorSpec, global_state
from ..guards.reader import plan_inputs
from ..variables.core.aliases import Aliases
from ..variables.core.base import VariableTracker
from ..variables.core.constant import ConstantVariable, is_constant_value, wrap_constant
from ..variables.containers.dicts import ConstDictVariable
from ..variables.containers.lists import (BaseListVariable, ListVariable, NamedTupleVariable, SizeVariable,
                                          TupleVariable)
from ..variables.tensors.symint import SYM_TYPES, SymNodeVariable, has_symbols, wrap_sym
from ..variables.tensors.tensor import TensorVariable

class _QuietMetaFailures(logging.Filter):
    """FakeTensorMode logs a traceback for every op that fails on fake inputs.
    While tracing that failure is expected (the op would fail eagerly too: the
    frame breaks with an `operator_error` reason), so it must not print."""

    def __init__(self):
        super().__init__()
        self.depth = threading.local()

    def filter(self, record):
        return not getattr(self.depth, "n", 0)

    def __call__(self):
        return _QuietScope(self.depth)


class _QuietScope:
    def __init__(self, depth):
        self.depth = depth

    def __enter__(self):
        self.depth.n = getattr(self.depth, "n", 0) + 1

    def __exit__(self, *exc):
        self.depth.n -= 1


_quiet_meta_failures = _QuietMetaFailures()
logging.getLogger("torch._subclasses.fake_tensor").addFilter(_quiet_meta_failures)


def _placeholder_name(source) -> str:
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", source.name()).strip("_").lower()
    return name or "input"


def call_backend(options, gm, examples, fake_mode):
    """The backend's compiled callable for ``gm`` (DDP: split at buckets); BackendError if it fails."""
    grad_mode = torch.is_grad_enabled()
    try:
        # the TracingContext gives backends (Inductor) the ShapeEnv of symbolic inputs
        with torch._guards.tracing(torch._guards.TracingContext(fake_mode)):
            return backend_for(options)(gm, examples)
    except Exception as e:
        raise BackendError(f"backend {options.backend_name!r} failed: {type(e).__name__}: {e}") from e
    finally:
        # a backend that runs the graph (AOTAutograd) and fails between its
        # set_grad_enabled nodes would leave the user's grad mode changed
        torch._C._set_grad_enabled(grad_mode)


class OutputGraph:
    def __init__(self, options):
        self.options = options
        self.steps = 0  # instructions stepped by the root and inlined translators (config.max_trace_steps)
        self.graph = torch.fx.Graph()  # where ops are recorded: the root graph, or a body's (bodies.py)
        self.root_graph = self.graph
        self.bodies: List[bodies.Body] = []  # the control-flow bodies being traced, innermost last
        self.submodules: Dict[str, torch.fx.GraphModule] = {}  # bodies of the root graph's operators
        self.shapes = ShapeContext(options)  # ShapeEnv + FakeTensorMode; static unless dynamic.py says
        self.fake_mode = self.shapes.fake_mode
        self.guards: Dict[Guard, None] = {}
        # (id(module), name) -> the tensor a torch.func.functional_call passes for that
        # parameter or buffer, while the call is traced (variables/tensors/functional_call.py)
        self.tensor_overrides: Dict[tuple, VariableTracker] = {}
        self.hook_dicts: Dict[int, dict] = {}  # hook dicts of the modules called: must stay as they are
        self.traced_files: set = set()  # the files of the code the trace stepped through
        self.constant_results: list = []  # (callable, args, kwargs, answer) of calls run as constants
        self.attribute_reads: dict = {}  # reads through a Python __getattribute__ (tracer/memo.py)
        self.inputs: List[TensorVariable] = []
        self.example_inputs: List[torch.Tensor] = []
        self.input_guards: Dict[int, Guard] = {}
        self.by_source: Dict[Any, VariableTracker] = {}
        self.aliases = Aliases()  # one tracker per outside object (variables/aliases.py)
        self._by_id: Dict[int, TensorVariable] = {}
        self._last_placeholder: Optional[torch.fx.Node] = None
        self.root_globals: dict = {}
        self.initial_grad_mode = self.grad_mode = torch.is_grad_enabled()
        self.open_states: list = []  # (StateSwitch, enter node, live mode) of open autocast/inference blocks
        self.add_guard("GRAD_MODE", None, self.initial_grad_mode)
        self.add_guard("GLOBAL_STATE", None, global_state())  # default dtype, determinism, autocast

    # ---- guards and inputs
    # whether a node must stay although nothing uses its result (trackers ask through the instance)
    is_impure = staticmethod(is_impure)
    writes_in_place = staticmethod(writes_in_place)
    mutates_by_schema = staticmethod(mutates_by_schema)
    draws_random = staticmethod(draws_random)

    def add_guard(self, kind: str, source, value=None) -> None:
        self.guards[Guard(kind, source, value)] = None

    def add_input(self, tensor: torch.Tensor, source) -> TensorVariable:
        """A tensor from outside the frame: a placeholder bound to ``source``."""
        alias = self._by_id.get(id(tensor))
        if alias is not None:
            self.add_guard("IS_SAME", source, alias.source)
            return alias
        root = self.root_graph  # read first inside a body, it is still an input of the frame
        if self._last_placeholder is None:
            ctx = root.inserting_before(next(iter(root.nodes), None))
        else:
            ctx = root.inserting_after(self._last_placeholder)
        with ctx:
            node = root.placeholder(_placeholder_name(source))
        self._last_placeholder = node
        fake = self.shapes.fakeify(tensor, source)
        var = TensorVariable(node, fake, cls=type(tensor), source=source)
        guard = Guard("TENSOR_MATCH", source, TensorSpec.of(tensor, fake))
        self.guards[guard] = None
        self.input_guards[id(node)] = guard
        self.inputs.append(var)
        self.example_inputs.append(tensor)
        self._by_id[id(tensor)] = var
        return var

    def add_int_input(self, value: int, source) -> VariableTracker:
        """An int from outside the frame made symbolic (graph/dynamic.py): a placeholder, guarded by type."""
        root = self.root_graph
        with root.inserting_after(self._last_placeholder) if self._last_placeholder else \
                root.inserting_before(next(iter(root.nodes), None)):
            node = root.placeholder(_placeholder_name(source))
        self._last_placeholder = node
        var = SymNodeVariable(node, self.shapes.symint(value, source), source=source)
        var.used = True  # never pruned: its shape guards name it
        node.meta["example_value"] = var.value
        self.add_guard("TYPE_MATCH", source, int)
        self.inputs.append(var)
        self.example_inputs.append(value)
        return var

    # ---- recording operations
    def call_function(self, tx, fn, args, kwargs) -> VariableTracker:
        return self._record("call_function", fn, args, kwargs, tx)

    def call_method(self, tx, name, args, kwargs) -> VariableTracker:
        return self._record("call_method", name, args, kwargs, tx)

    def _record(self, kind, target, args, kwargs, tx=None):
        node_args, fake_args = _lower(list(args))
        node_kwargs, fake_kwargs = _lower(dict(kwargs))
        if self.bodies:  # outside tensors become the body's inputs
            node_args, node_kwargs = bodies.lift_arguments(self, (node_args, node_kwargs))
        arguments = {}
        _tensor_arguments(args, arguments)
        _tensor_arguments(kwargs, arguments)
        versions = _versions(kind, target, arguments)  # before the fake run: did the op write them?
        fake = self._run_fake(kind, target, fake_args, fake_kwargs)
        node = self.graph.create_node(kind, target, tuple(node_args), node_kwargs)
        self._bind_unbacked(node, fake)
        if is_impure(node) and getattr(self, "side_effects", None) is not None:
            self.side_effects.impure_op(draws_random(node))
        if tx is not None:  # for the `graph` log: which user line made this node
            node.meta["location"] = (tx.code.co_filename, tx.current_line())
        return self._wrap_result(node, fake, arguments, versions)

    def call_known(self, tx, kind, target, args, result) -> VariableTracker:
        """Record ``target(*args)`` whose fake result the caller made (an unbacked
        SymFloat for ``t.item()``: running the op on fakes could not give one)."""
        node_args, _ = _lower(list(args))
        if self.bodies:
            node_args = bodies.lift_arguments(self, node_args)
        node = self.graph.create_node(kind, target, tuple(node_args), {})
        self._bind_unbacked(node, result)
        if tx is not None:
            node.meta["location"] = (tx.code.co_filename, tx.current_line())
        return self._wrap_result(node, result, {})

    def _bind_unbacked(self, node, result) -> None:
        """Where a result brings new unbacked symbols (``t.item()``, the size of
        ``nonzero``), say which node binds them: AOTAutograd and Inductor read that
        (``unbacked_bindings``), and a symbol left pending fails the next op."""
        env = self.shapes.shape_env
        if env.pending_fresh_unbacked_symbols:
            bindings = compute_unbacked_bindings(env, result)
            if bindings:
                node.meta["unbacked_bindings"] = bindings

    # ---- control-flow operators (bodies.py)
    def new_body(self, name: str) -> bodies.Body:
        """An empty graph for a body of a control-flow operator."""
        return bodies.Body(name)

    def recording_into(self, body: bodies.Body) -> bodies.BodyScope:
        """``with output.recording_into(body):`` ops go to ``body``, outside tensors are lifted."""
        return bodies.BodyScope(self, body)

    def finish_body(self, body: bodies.Body, leaves: List[TensorVariable], shape=tuple) -> None:
        """Write ``body``'s output: the nodes of ``leaves``, lifted when they come from
        outside, as ``shape`` builds them (a tuple, a list; ``None``: the one node alone)."""
        with self.recording_into(body):
            nodes = [bodies.lift(self, t.node) for t in leaves]
            body.graph.output(nodes[0] if shape is None else shape(nodes))

    def call_operator(self, tx, op, args: tuple, fakes: tuple, options: dict = None) -> VariableTracker:
        """Record ``op(*args, **options)``, a higher-order operator. ``args`` are FX arguments
        with a ``Body`` where the operator takes a graph (attached here, as a ``get_attr``
        node), also inside tuples; ``fakes`` the same arguments as FakeTensors, with the
        same ``Body`` objects; ``options`` constant keyword arguments. What the call
        returns is learnt by running ``op`` on the bodies' GraphModules."""
        options = options or {}
        attached = {}

        def as_nodes(arg):
            if isinstance(arg, bodies.Body):
                if id(arg) not in attached:
                    attached[id(arg)] = bodies.attach(self, arg)
                return attached[id(arg)][0]
            return type(arg)(as_nodes(a) for a in arg) if type(arg) in (tuple, list) else arg

        def as_fakes(arg):
            if isinstance(arg, bodies.Body):
                return attached[id(arg)][1]
            return type(arg)(as_fakes(a) for a in arg) if type(arg) in (tuple, list) else arg

        node_args = bodies.lift_arguments(self, as_nodes(tuple(args)))
        fake_args = as_fakes(tuple(fakes))
        try:
            with self.fake_mode, _quiet_meta_failures():
                result = op(*fake_args, **options)
        except Exception as e:
            if type(e).__name__ in ("Unsupported", "GuardOnDataDependentSymNode"):
                raise
            name = op.name() if isinstance(op, torch._ops.HigherOrderOperator) else op.__name__
            unsupported("control_flow_body", f"{name}: {type(e).__name__}: {e}")
        node = self.graph.call_function(op, node_args, options)
        if tx is not None:
            node.meta["location"] = (tx.code.co_filename, tx.current_line())
        return self._wrap_result(node, result, {})

    def _run_fake(self, kind, target, args, kwargs):
        fast = meta_ops.run_meta(self.fake_mode, kind, target, args, kwargs)
        if fast is not meta_ops.NOT_ENGAGED:
            if config.check_meta_ops:
                slow = self._run_fake_mode(kind, target, args, kwargs)
                if not meta_ops.same_meta(fast, slow):
                    raise AssertionError(f"meta_ops: {_target_name(target)} gave {_meta_of(fast)}, "
                                         f"FakeTensorMode {_meta_of(slow)}; arguments {_meta_of(list(args))} "
                                         f"{kwargs}")
            return fast
        return self._run_fake_mode(kind, target, args, kwargs)

    def _run_fake_mode(self, kind, target, args, kwargs):
        try:
            with self.fake_mode, _quiet_meta_failures():
                if kind == "call_method":
                    return getattr(args[0], target)(*args[1:], **kwargs)
                return target(*args, **kwargs)
        except (DataDependentOutputException, DynamicOutputShapeException) as e:
            unsupported("data_dependent_value", f"{_target_name(target)}: {type(e).__name__}")
        except Exception as e:
            if type(e).__name__ in ("Unsupported", "GuardOnDataDependentSymNode"):
                raise
            unsupported("operator_error", f"{_target_name(target)}: {type(e).__name__}: {e}")

    def _wrap_result(self, node, fake, arguments, versions=None) -> VariableTracker:
        """The tracker of an op's result. A result that is one of the op's tensor
        arguments itself (``x.add_(1)``, ``out=x``, ``x += 1``, ``x.contiguous()`` of a
        contiguous ``x``: the fake op returns the same FakeTensor, as eager returns
        the same tensor) is that argument's tracker, so ``y is x`` holds and the
        caller gets its own object back. No user reads the node then; it stays in
        the graph (impure) unless ``versions`` shows the op left that argument's
        version counter alone: then it wrote nothing (``contiguous()``, ``to()`` of
        the same dtype, ``dropout`` in eval mode) and dead code elimination drops
        it, as it drops any unread pure op."""
        if isinstance(fake, torch.Tensor):
            same = arguments.get(id(fake))
            if same is not None and same._fake is fake:
                if versions is not None and versions.get(id(fake)) == _version(fake):
                    node.meta["no_op"] = True
                else:
                    node.meta["returns_argument"] = True
                return same
            return TensorVariable(node, fake)
        if isinstance(fake, (tuple, list)) and not isinstance(fake, torch.Size):
            items = [self._wrap_result(self.graph.call_function(operator.getitem, (node, i)), v, arguments)
                     for i, v in enumerate(fake)]
            if type(fake) is list:
                return ListVariable(items)
            if type(fake) is tuple:
                return TupleVariable(items)
            return NamedTupleVariable(items, type(fake))
        if isinstance(fake, SYM_TYPES):
            return wrap_sym(node, fake)
        if isinstance(fake, torch.Size) or is_constant_value(fake):
            if not node.users and not is_impure(node):
                self.graph.erase_node(node)
            return wrap_constant(fake)
        unsupported("unsupported_value", f"{_target_name(node.target)} returned {type(fake).__name__}")

    # ---- finishing
    def compile(self, outputs: List[TensorVariable], name: str):
        """Finish the graph with ``outputs``; return (compiled callable, GraphModule) or (None, None)."""
        self.graph.output(tuple(t.node for t in outputs))
        self.graph.eliminate_dead_code(is_impure_node=is_impure)
        self._prune_inputs()
        add_final_guards(self, lambda node: writes_in_place(node) or mutates_by_schema(node))
        self._add_shape_guard()
        if not self._has_work(outputs):
            return None, None
        self._order_inputs()
        root = torch.nn.Module()
        for attr, body in self.submodules.items():
            root.add_module(attr, body)
        gm = torch.fx.GraphModule(root, self.graph, class_name=name)
        # in the placeholders' order; a symbolic int as its SymInt (AOTAutograd specialised a plain 1)
        examples = [v.value if isinstance(v, SymNodeVariable) else x for v, x in zip(self.inputs, self.example_inputs)]
        try:
            self.shapes.hand_to_backend()
            compiled = call_backend(self.options, gm, examples, self.fake_mode)
            self._add_shape_guard()  # a backend may have added shape guards
        finally:
            self.example_inputs.clear()
        return compiled, gm

    def _order_inputs(self):
        """Placeholders in the order the replacement code passes them: inputs read
        directly first, then those read under one root by a SourceReader."""
        order, self.direct_input_sources, self.input_readers = plan_inputs([v.source for v in self.inputs])
        if not self.input_readers:
            return
        self.inputs = [self.inputs[i] for i in order]
        self.example_inputs = [self.example_inputs[i] for i in order]
        first_op = next(n for n in self.graph.nodes if n.op != "placeholder")
        for var in self.inputs:
            first_op.prepend(var.node)

    def _add_shape_guard(self):
        shape_guard = self.shapes.guard({v.source for v in self.inputs})
        self.guards = {g: None for g in self.guards if g.kind != "SHAPE_ENV"}
        if shape_guard is not None:
            self.add_guard("SHAPE_ENV", None, shape_guard)

    def _prune_inputs(self):
        """Drop placeholders nothing used (for instance items of an input list). The
        trace may still have seen that the value is a tensor (``t is None``,
        ``isinstance(t, Tensor)``, a jump on ``t is not None``): its tensor guard gives
        way to a type guard, which all of these rely on."""
        kept, examples = [], []
        for var, real in zip(self.inputs, self.example_inputs):
            if var.node.users or var.used:
                kept.append(var)
                examples.append(real)
                continue
            self.graph.erase_node(var.node)
            self.guards.pop(self.input_guards[id(var.node)], None)
            self.add_guard("TYPE_MATCH", var.source, type(real))
        self.inputs, self.example_inputs = kept, examples

    # ---- global grad mode (see variables/ctx_managers.py)
    def set_grad_mode(self, mode: bool) -> None:
        """Switch grad mode in the graph, and for the rest of the trace."""
        if mode != self.grad_mode:
            self.graph.call_function(GRAD_TOGGLE, (mode,))
            GRAD_TOGGLE(mode)
            self.grad_mode = mode

    def enter_state(self, switch, values) -> torch.fx.Node:
        """Record ``switch.enter(*values)`` and enter that state for the rest of the
        trace; the node stands for the mode object ``exit_state`` hands back."""
        node = self.graph.call_function(switch.enter, tuple(values))
        self.open_states.append((switch, node, switch.enter(*values)))
        return node

    def exit_state(self, switch, node) -> None:
        """Record ``switch.exit(<mode of node>)`` and leave that state in the trace."""
        if not self.open_states or self.open_states[-1][1] is not node:
            unsupported("unsupported_ctx_manager", "context managers exited out of order")
        self.graph.call_function(switch.exit, (node,))
        switch.exit(self.open_states.pop()[2])

    def close_states(self) -> None:
        """Leave every state the trace entered and did not exit (a trace that
        stopped inside the block): the real state is the caller's again."""
        while self.open_states:
            switch, _, mode = self.open_states.pop()
            switch.exit(mode)

    def _has_work(self, outputs) -> bool:
        ops = [n for n in self.graph.nodes if n.op not in ("placeholder", "output")]
        if any(n.target is not GRAD_TOGGLE and n.target not in STATE_TARGETS for n in ops):
            return True
        toggles = [n.args[0] for n in ops]
        return bool(toggles) and toggles[-1] != self.initial_grad_mode

    def op_count(self) -> int:
        return sum(1 for n in self.graph.nodes if n.op not in ("placeholder", "output"))


def _meta_of(value):
    """Shape, strides, offset and dtype of a fake result, for the meta_ops check's message."""
    if isinstance(value, torch.Tensor):
        return (f"{type(value).__name__}(size={tuple(value.shape)}, stride={value.stride()}, "
                f"offset={value.storage_offset()}, {value.dtype}, requires_grad={value.requires_grad})")
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_meta_of(v) for v in value) + "]"
    return repr(value)


def _target_name(target) -> str:
    return target if isinstance(target, str) else getattr(target, "__qualname__", repr(target))


def _version(fake):
    """A FakeTensor's version counter, None where it has none (an inference tensor)."""
    try:
        return fake._version
    except RuntimeError:
        return None


def _versions(kind, target, arguments: dict) -> Optional[dict]:
    """{id(fake): version} of an op's tensor arguments, or None where a version that
    stayed the same would not prove the op wrote nothing: under inference mode
    in-place ops bump no counter, and a function of the user's (allowed in the
    graph) may change what a counter does not see. Every op of torch's that writes
    a tensor's data bumps its counter, on FakeTensors too (``F.relu(x, True)``)."""
    if torch.is_inference_mode_enabled():
        return None
    if kind == "call_function" and not _is_torch_callable(target):
        return None
    found = {key: _version(var._fake) for key, var in arguments.items()}
    return None if None in found.values() else found


def _is_torch_callable(target) -> bool:
    """Is ``target`` torch's own (an operator, ``torch.*``, ``F.*``) or a builtin (``operator.add``)?"""
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return True
    module = getattr(target, "__module__", None) or ""
    return module in ("_operator", "operator", "builtins") or module.split(".")[0] == "torch"


def _tensor_arguments(value, found: dict):
    """{id(fake): tracker} of the tensor trackers in an op's arguments, through containers."""
    if type(value) is ConstantVariable:  # most arguments that are not tensors
        return
    if isinstance(value, TensorVariable):
        found[id(value._fake)] = value
    elif isinstance(value, (list, tuple)) and not isinstance(value, VariableTracker):
        for v in value:
            _tensor_arguments(v, found)
    elif isinstance(value, dict):
        _tensor_arguments(list(value.values()), found)
    elif isinstance(value, BaseListVariable):
        _tensor_arguments(list(value.items), found)
    elif isinstance(value, ConstDictVariable):
        _tensor_arguments(list(value.as_plain_dict().values()), found)


def _lower(value):
    """(FX argument, fake argument) of a tracker, or of a list/tuple/dict of trackers."""
    if isinstance(value, (TensorVariable, SymNodeVariable)):
        return value.node, value.fake if isinstance(value, TensorVariable) else value.value
    if hasattr(value, "graph_tensor"):  # an ndarray of the trace: its tensor (numpy_arrays.py)
        return _lower(value.graph_tensor)
    if isinstance(value, (list, tuple)) and not isinstance(value, VariableTracker):
        pairs = [_lower(v) for v in value]
        return type(value)(p[0] for p in pairs), type(value)(p[1] for p in pairs)
    if isinstance(value, dict):
        pairs = {k: _lower(v) for k, v in value.items()}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()}
    if isinstance(value, SizeVariable) and not has_symbols(value) or isinstance(value, ConstantVariable):
        const = value.as_python_constant()
        return const, const
    if isinstance(value, BaseListVariable):
        node, fake = _lower(list(value.items))
        kind = value.python_type()
        if kind is slice:
            return slice(*node), slice(*fake)
        if kind not in (list, tuple):
            kind = tuple
        return kind(node), kind(fake)
    if isinstance(value, ConstDictVariable):
        return _lower(value.as_plain_dict())
    if isinstance(value, VariableTracker) and value.is_python_constant():
        const = value.as_python_constant()
        return const, const
    if getattr(value, "slots_on_value", False):  # an int or str subclass instance: torch reads its value
        return value.plain, value.plain
    unsupported("unsupported_value", f"{value} as an argument of a tensor operation")
