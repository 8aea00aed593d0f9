"""Exception classes that framegraph raises to its users, and the graph-break catalogue.

`Unsupported` means the tracer met something it cannot capture (the frame then
runs unmodified, or, under `fullgraph=True` / `config.strict`, the error
reaches the user). `InternalError` is a bug in framegraph. `BackendError`
wraps an exception raised by a backend compiler.

The catalogue is every reason the tracer can stop, as data. Each entry has a
stable id, a short title, an explanation of why the tracer cannot continue,
and a hint for the user, like torch.compile's graph-break messages. Tracing
code never raises a bare `Unsupported`; it calls `unsupported(id, context)`,
which attaches the entry and the developer debug context (what the tracer
saw, e.g. `attempted to jump with TensorVariable()`). It lives here, with the
exception it fills, because every step of the pipeline raises it.

An entry raised while the root translator steps an instruction becomes a graph
break there (`breaks/split.py`): the graph so far runs, the instruction runs
in CPython and a resume function continues the frame. Under
`fullgraph=True` the first one reaches the user instead.
"""
import dataclasses
from typing import Dict


class FramegraphError(Exception):
    """Base class of every framegraph error."""


class Unsupported(FramegraphError):
    """The tracer cannot capture this code.

    `reason` is a short human-readable reason; graph-break catalogue entries
    (`CATALOGUE` below) fill `entry` with their structured data.
    """

    def __init__(self, reason, *, entry=None, context=""):
        super().__init__(reason)
        self.reason = reason
        self.entry = entry
        self.context = context


class InternalError(FramegraphError):
    """A bug in framegraph: something that should never happen did."""


class BackendError(FramegraphError):
    """The backend compiler raised while compiling a captured graph."""


# ---- the graph-break catalogue
@dataclasses.dataclass(frozen=True)
class Entry:
    id: str
    title: str
    explanation: str
    hint: str

    def render(self, context: str = "") -> str:
        text = f"{self.title}\n  Explanation: {self.explanation}\n  Hint: {self.hint}"
        if context:
            text += f"\n  Developer debug context: {context}"
        return text


CATALOGUE: Dict[str, Entry] = {}


def _entry(id, title, explanation, hint):
    assert id not in CATALOGUE, f"duplicate graph-break entry {id}"
    CATALOGUE[id] = Entry(id, title, explanation, hint)


_entry("data_dependent_branch", "Data-dependent branching",
       "Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). framegraph does not "
       "support tracing dynamic control flow.",
       "Use `torch.cond` to express dynamic control flow.")
_entry("data_dependent_value", "Data-dependent Python value",
       "The code turns a tensor's value into a Python value (`.item()`, `.tolist()`, `int(t)`, "
       "`bool(t)`, an output whose shape depends on the data).",
       "Keep the computation in tensors, or move this step outside the compiled function.")
_entry("unsupported_opcode", "Unsupported bytecode instruction",
       "The tracer has no model of this instruction yet.",
       "Move this code out of the compiled function, or report it.")
_entry("unsupported_call", "Call to an unsupported callable",
       "The tracer cannot see inside this callable and has no model of what it does.",
       "Move the call outside the compiled function, or use a torch operation instead.")
_entry("unsupported_value", "Unsupported Python value",
       "The tracer has no model of a value of this type.",
       "Pass tensors, numbers, containers, functions or nn.Modules into compiled code.")
_entry("unsupported_attribute", "Unsupported attribute access",
       "The tracer cannot read or write this attribute symbolically.",
       "Read the attribute outside the compiled function and pass the value in.")
_entry("autograd_runtime_state", "Autograd state set at run time",
       "`Tensor.retain_grad()` asks autograd to keep the gradient that reaches this very "
       "tensor in backward. Inside a graph the tensor is an intermediate of the compiled "
       "function, whose backward is its own: the gradient would never reach it, and `.grad` "
       "would stay None. The call runs in CPython between two graphs.",
       "Nothing to do; or call `retain_grad()` on an output of the compiled function.")
_entry("side_effect", "Side effect on a value from outside the frame",
       "The code mutates an object, global or closure cell that exists outside the traced frame "
       "in a way the side-effect ledger cannot replay after the graph (lists, dicts, sets, "
       "attributes of plain objects, globals and closure cells can be replayed).",
       "Return the new value instead of mutating the outer object.")
_entry("exception", "Exception raised while tracing",
       "The traced code raises a Python exception that leaves the compiled frame, or uses "
       "exception state the tracer does not model (a `with` block's exit on an exception, "
       "`except*`, `__context__` set by the caller). Exceptions raised and caught inside the "
       "frame are traced; from the instruction that raised, this one runs in CPython.",
       "Nothing to do if the exception is the expected outcome; otherwise catch it inside "
       "the compiled function, or move the check outside.")
_entry("generator", "Generator or coroutine",
       "Generators, coroutines and async code are not traced.",
       "Materialise the values into a list first, or move the generator outside.")
_entry("rng_state", "Random number generator state",
       "A `random.Random` generator (the `random` module's functions use one) keeps its state in C, "
       "outside the trace. Drawn at trace time, the numbers would be constants of the compiled code, "
       "the same on every call, and the generator would advance once instead of on every call; so "
       "the call runs in CPython, and values and state stay exactly as without compiling.",
       "Draw the numbers outside the compiled function and pass them in, or use torch's random "
       "functions, which are captured in the graph.")
_entry("unsupported_ctx_manager", "Unsupported context manager",
       "Only grad-mode context managers (`torch.no_grad()`, `torch.enable_grad()`, "
       "`torch.set_grad_enabled(b)`) are modelled.",
       "Enter the context manager outside the compiled function.")
_entry("inline_limit", "Inlining too deep",
       "User functions are inlined into the caller's graph; this call chain is too deep.",
       "Reduce the recursion depth, or compile the inner function separately.")
_entry("trace_too_deep", "Trace too deep",
       "Tracing the frame needed more Python recursion than the recursion limit leaves (a "
       "value nested thousands deep, a recursion the tracer follows call by call); the frame "
       "runs unmodified from then on.",
       "Raise the limit with `sys.setrecursionlimit`, or keep the deep recursion out of the "
       "compiled function.")
_entry("trace_too_long", "Trace too long",
       "The trace stepped more instructions than `framegraph.config.max_trace_steps` (a long "
       "loop is unrolled into the graph); the frame runs unmodified from then on, which is "
       "cheaper than tracing it.",
       "Raise `framegraph.config.max_trace_steps`, or move the long Python loop out of the "
       "compiled function.")
_entry("finalizer", "Object with a finalizer",
       "The frame creates an instance of a class with a Python `__del__`. CPython runs it when "
       "the last reference goes (`del x`, a rebinding, the end of the frame), at points a trace "
       "cannot reproduce, and a graph break would keep references alive across it; the frame "
       "runs unmodified.",
       "Create the object outside the compiled function, or replace `__del__` with "
       "`weakref.finalize` or a context manager.")
_entry("graph_output", "Unsupported graph output",
       "The frame returns a value that cannot be rebuilt after the graph runs.",
       "Return tensors, constants, or containers of them.")
_entry("operator_error", "Operation failed while tracing",
       "Running the operation on fake tensors or trace-time constants raised an error, so it "
       "would most likely raise at run time too.",
       "Run the function eagerly to see the error.")
_entry("dynamic_import", "Import inside compiled code",
       "`import` statements run module code with side effects and are not traced.",
       "Import at module level.")


_entry("missing_dict_key", "Missing key of a defaultdict or of a dict keyed by objects",
       "The code reads a key that is not in a defaultdict, or in a dict keyed by tensors or "
       "modules (for instance `optimizer.state[p]` on the first step, which creates the state). "
       "Creating the entry is not traced: the call runs in CPython, and the next call is "
       "traced against the filled dict.",
       "Nothing to do for optimizers: the first step runs eagerly, later steps are captured.")
_entry("control_flow_body", "A body of a control-flow operator cannot be captured",
       "`torch.cond`, `while_loop`, `scan`, `map`, torch.func's transforms and flex_attention's "
       "score_mod and mask_mod take each branch, body or function as a graph of its own, and "
       "it must be a pure function of its operands: tensors in "
       "(closed-over tensors are handed in as extra operands), tensors in tuples or lists out, "
       "the same structure and metadata from both branches, no graph break inside, no change "
       "to anything outside it (a global, a list, an attribute, an operand written in place).",
       "Keep the body to tensor operations on its operands; move prints, appends and attribute "
       "writes outside the operator, and compute `.item()` values before it.")
_entry("explicit_graph_break", "Explicit graph break",
       "The code calls `framegraph.graph_break()`, which asks for the graph to end here.",
       "Remove the call to capture the code before and after it in one graph.")
_entry("disallowed_in_graph", "Call to a callable marked by disallow_in_graph",
       "The called function was passed to `framegraph.disallow_in_graph()` (or "
       "`torch.compiler.disallow_in_graph()` while framegraph is installed), which asks for a "
       "graph break at each call: the call runs in CPython.",
       "Remove the function from `disallow_in_graph` to capture it.")
_entry("disabled_function", "Call to a framegraph.disable()d function",
       "The called function was wrapped with `framegraph.disable()`, so it always runs in "
       "CPython, outside any graph.",
       "Remove `framegraph.disable()` from the function if it should be captured.")
_entry("side_effect_builtin", "Call to a builtin with side effects",
       "`print`, `input`, `open` and similar builtins do I/O or change interpreter state; they "
       "run in CPython, between two graphs.",
       "Move the call outside the compiled function, or keep it: the graph breaks around it.")
_entry("builtins_replaced", "A builtin is replaced",
       "The program replaced a builtin (`builtins.len = my_len`). framegraph's own Python "
       "calls builtins too, so while the replacement is there it traces nothing: each frame "
       "runs unmodified until the builtin is put back.",
       "Replace the builtin outside the compiled function, or restore it before calling it.")
_entry("cannot_resume", "Graph break that cannot resume",
       "The tracer stopped at an instruction it cannot model, and the state at that point (a "
       "value on the stack or in a local, or the kind of instruction) cannot be handed to a "
       "resume function, so the whole frame runs unmodified.",
       "Simplify the code around the break (see the reason), or move it out of the compiled "
       "function.")


# Breaks caused by state that running the frame once in CPython creates (an
# optimizer's first step fills ``optimizer.state``): a frame that fails with one
# is traced again on a later call, up to ``config.recompile_limit`` times per
# code (optimizers of every class share the code of their step wrapper),
# instead of being marked to run unmodified for good.
RETRY = frozenset({"missing_dict_key"})
# Entries that end the whole trace instead of breaking the graph there: a resume
# function would only meet the same problem again.
NO_BREAK = frozenset({"trace_too_long", "finalizer"})


def unsupported(entry_id: str, context: str = "") -> "Unsupported":
    """Raise the catalogue entry ``entry_id``, with developer debug context."""
    entry = CATALOGUE[entry_id]
    reason = entry.title + (f": {context}" if context else "")
    raise Unsupported(reason, entry=entry, context=context)
