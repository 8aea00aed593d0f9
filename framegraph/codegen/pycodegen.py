"""PyCodegen: the replacement code object of a captured frame.

For the brief's ``f(x) = torch.sin(x) + 1`` it emits::

    RESUME 0
    LOAD_GLOBAL (NULL + __compiled_fn_1)
    LOAD_FAST x
    PRECALL 1 ; CALL 1          (3.12 and 3.13: CALL 1)
    STORE_FAST graph_out_0
    LOAD_FAST graph_out_0
    LOAD_CONST 0
    BINARY_SUBSCR
    RETURN_VALUE

i.e. load the compiled graph (installed as a unique global), push its inputs
re-read from their Sources, call it, then rebuild the return value: graph
outputs by index, inputs from their sources, constants as constants,
containers around them. The new code keeps the signature, file name, name
and first line of the original (tracebacks point at the user's code); its
only cells are none, its free variables the original's (COPY_FREE_VARS makes
the closure readable through LOAD_DEREF).
"""
from typing import Dict, List

from .. import bytecode, pyver
from ..bytecode import create_instruction
from ..errors import unsupported
from ..variables.core.base import VariableTracker
from ..variables.objects.classes import is_prototype
from ..variables.tensors.tensor import TensorVariable

GRAPH_OUT = "graph_out_0"


class PyCodegen:
    """Collects instructions; ``cg(tracker)`` emits the code that rebuilds a value."""

    def __init__(self, graph_outputs: Dict[int, int] = None):
        self.instructions: List[bytecode.Instruction] = []
        self.graph_outputs = graph_outputs or {}  # id(fx node) -> index in the graph's output tuple

    def emit(self, *instructions):
        for inst in instructions:
            if isinstance(inst, list):
                self.instructions.extend(inst)
            else:
                self.instructions.append(inst)

    # ---- primitives used by Sources and trackers
    def load_fast(self, name):
        self.emit(bytecode.create_load_fast(name))

    def store_fast(self, name):
        self.emit(bytecode.create_store_fast(name))

    def load_global(self, name, push_null=False):
        if push_null and pyver.NULL_ABOVE_CALLABLE:  # keep the NULL first: call() reorders (3.13)
            self.emit(create_instruction("PUSH_NULL"), bytecode.create_load_global(name, False))
            return
        self.emit(bytecode.create_load_global(name, push_null))

    def load_deref(self, name):
        self.emit(create_instruction("LOAD_DEREF", argval=name))

    def load_attr(self, name):
        self.emit(bytecode.create_load_attr(name))

    def load_const(self, value):
        if is_prototype(value):  # each call of the code makes its own class
            unsupported("graph_output", f"a class made by a class statement in the trace ({value!r})")
        self.emit(bytecode.create_load_const(value))

    def binary_subscr(self):
        self.emit(create_instruction("BINARY_SUBSCR"))

    def call(self, nargs):
        """Call ``[NULL, fn, *args]`` (the NULL first, on every Python)."""
        self.emit(bytecode.create_null_first_fix(nargs), bytecode.create_call(nargs))

    def call_kw(self, nargs, kw_names):
        """``call`` with the last ``len(kw_names)`` arguments by keyword."""
        self.emit(bytecode.create_null_first_fix(nargs), bytecode.create_call_kw(nargs, kw_names))

    def build(self, kind, n):
        opname = {tuple: "BUILD_TUPLE", list: "BUILD_LIST", set: "BUILD_SET", dict: "BUILD_MAP"}[kind]
        self.emit(create_instruction(opname, arg=n))

    def call_builtin(self, name, sources):
        """``name(*sources)`` for a builtin such as ``type``."""
        self.load_global(name, push_null=True)
        for source in sources:
            source.reconstruct(self)
        self.call(len(sources))

    def call_const(self, fn, args: List[VariableTracker]):
        """``fn(*args)`` where ``fn`` is an object put in co_consts (a class)."""
        self.emit(create_instruction("PUSH_NULL"))
        self.load_const(fn)
        for arg in args:
            self(arg)
        self.call(len(args))

    def load_source(self, source):
        source.reconstruct(self)

    # ---- values
    def __call__(self, value: VariableTracker):
        if isinstance(value, TensorVariable) and id(value.node) in self.graph_outputs:
            self.load_fast(GRAPH_OUT)
            self.load_const(self.graph_outputs[id(value.node)])
            self.binary_subscr()
            return
        value.reconstruct(self)


def graph_call(cg: PyCodegen, fn_name: str, input_sources, readers=()) -> None:
    """``graph_out_0 = __compiled_fn_N(*inputs)``; with readers (guards/reader.py)
    ``__compiled_fn_N(*((x, ...) + reader(self) + ...))``: the values under one
    root come from one C call instead of a chain of bytecodes each."""
    cg.load_global(fn_name, push_null=True)
    for source in input_sources:
        cg.load_source(source)
    if not readers:
        cg.call(len(input_sources))
    else:
        cg.build(tuple, len(input_sources))
        for reader in readers:
            cg.emit(create_instruction("PUSH_NULL"))
            cg.load_const(reader.c)
            cg.load_source(reader.root)
            cg.call(1)
            cg.emit(create_instruction("BINARY_OP", arg=0))  # tuple +
        cg.emit(bytecode.create_null_first_fix(1), create_instruction("CALL_FUNCTION_EX", arg=0))
    cg.store_fast(GRAPH_OUT)


def assemble_frame_code(code, body: List[bytecode.Instruction], arg_names, line: int):
    """The replacement code: original signature and free vars, no cells, ``body``."""
    prologue = []
    if code.co_freevars:
        prologue.append(create_instruction("COPY_FREE_VARS", arg=len(code.co_freevars)))
    prologue.append(create_instruction("RESUME", arg=0))
    instructions = prologue + _fold_null_swaps(body)
    for inst in instructions:
        inst.starts_line = line
    return bytecode.assemble(
        instructions, code,
        co_varnames=tuple(arg_names) + (GRAPH_OUT,),
        co_cellvars=(),
        co_names=(),
        co_consts=(None,),
    )


# Instructions that push one value and read nothing from the stack.
_SIMPLE_LOADS = frozenset({"LOAD_FAST", "LOAD_CONST", "LOAD_DEREF"})


def _fold_null_swaps(body):
    """3.13: ``PUSH_NULL; LOAD_GLOBAL g; <n simple loads>; <the NULL-first
    SWAPs>; CALL n`` becomes ``LOAD_GLOBAL (g + NULL); <loads>; CALL n``, the
    code 3.13's compiler writes (the brief's listing shape). Elsewhere, and
    where a jump lands inside the pattern, the code stays as it is."""
    if not pyver.NULL_ABOVE_CALLABLE:
        return body
    targets = {id(i.target) for i in body if i.target is not None}
    targets |= {id(i.exn_entry.target) for i in body if i.exn_entry is not None}
    out, i = [], 0
    while i < len(body):
        inst = body[i]
        folded = _fold_at(body, i, targets)
        if folded is None:
            out.append(inst)
            i += 1
            continue
        out.extend(folded[0])
        i = folded[1]
    return out


def _fold_at(body, i, targets):
    """(replacement, next index) for a foldable call starting at ``body[i]``, else None."""
    if body[i].opname != "PUSH_NULL" or i + 1 >= len(body):
        return None
    load = body[i + 1]
    if load.opname != "LOAD_GLOBAL" or (load.arg or 0) & 1:
        return None
    j = i + 2
    while j < len(body) and body[j].opname in _SIMPLE_LOADS:
        j += 1
    nargs = j - (i + 2)
    fix = bytecode.create_null_first_fix(nargs)
    end = j + len(fix)
    if end >= len(body) or body[end].opname != "CALL" or body[end].arg != nargs:
        return None
    if [(x.opname, x.arg) for x in body[j:end]] != [(x.opname, x.arg) for x in fix]:
        return None
    if any(id(x) in targets for x in [body[i]] + body[i + 2:end + 1]) or \
            any(x.exn_entry is not body[i].exn_entry for x in body[i:end + 1]):
        return None
    load.arg = 1  # the push-NULL bit: LOAD_GLOBAL pushes (g, NULL) on 3.13
    return [load] + body[i + 2:j] + [body[end]], end + 1
