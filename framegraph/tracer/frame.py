"""Step 1: the frame's arguments and closure cells, as the root translator starts.

Nothing is wrapped up front. Each argument, and the contents of each closure
cell, is a ``LazyVariable`` until the code first reads it: only what the code
uses is wrapped (``variables.builder.wrap_value``) and guarded, so an unused
argument adds no guard. Cells stay cells (``CellVariable``), so a closure the
frame makes shares them as CPython's would.
"""
from ..guards.sources import AttrSource, ClosureCellSource, ClosureSource, LocalSource
from ..variables.core.base import VariableTracker
from ..variables.builder import wrap_value
from ..variables.callables.functions import CellVariable

_ARG_FLAGS = (0x04, 0x08)  # CO_VARARGS, CO_VARKEYWORDS: one more argument slot each


class LazyVariable(VariableTracker):
    """An argument not wrapped yet: wrapping (and guarding) happens on first load."""

    def __init__(self, value, source):
        super().__init__(source=source)
        self.value = value

    def realize(self, tx) -> VariableTracker:
        return wrap_value(tx, self.value, self.source)


def frame_locals(code, f_locals):
    """(name -> tracker for the argument slots and free variables, number of argument slots)."""
    symbolic_locals = {}
    nargs = code.co_argcount + code.co_kwonlyargcount + sum(bool(code.co_flags & f) for f in _ARG_FLAGS)
    for name in code.co_varnames[:nargs]:
        symbolic_locals[name] = LazyVariable(f_locals[name], LocalSource(name))
    for i, name in enumerate(code.co_freevars):
        contents = LazyVariable(f_locals[name], ClosureSource(name, i)) if name in f_locals else None
        symbolic_locals[name] = CellVariable(contents, pre_existing=True,
                                             cell_source=ClosureCellSource(name, i))
    return symbolic_locals, nargs


def frame_cells(func, code, instructions, nargs, f_locals, symbolic_locals):
    """name -> cell object for every cell the frame starts with: its closure's, and
    (resume functions) cells that arrive as arguments, whose trackers are set here."""
    cells = {name: cell for name, cell in zip(code.co_freevars, func.__closure__ or ())}
    for name in _cells_received(code, instructions, nargs):
        cells[name] = f_locals[name]
        symbolic_locals[name] = _received_cell(f_locals[name], LocalSource(name))
    return cells


def _cells_received(code, instructions, nargs):
    """Cell variables that arrive as cells: arguments with no MAKE_CELL to wrap them.

    Only resume functions have these (``resume.resume_code(cell_args=...)``):
    a cell that a function rebuilt at the graph break also holds is handed
    over as the cell itself, so both keep sharing it.
    """
    made = {inst.argval for inst in instructions if inst.opname == "MAKE_CELL"}
    return [name for name in code.co_varnames[:nargs] if name in code.co_cellvars and name not in made]


def _received_cell(cell, source):
    try:
        contents = LazyVariable(cell.cell_contents, AttrSource(source, "cell_contents"))
    except ValueError:  # an empty cell: reading it is a NameError, writing it fills it
        contents = None
    return CellVariable(contents, pre_existing=True, cell_source=source)
