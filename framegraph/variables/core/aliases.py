"""One tracker per real object, however many ways the trace reaches it.

The builder makes one tracker per source. A list reached through two sources
(``f(a, a)``, ``self.items`` and ``items``) must still be one tracker, or a
mutation through one would be invisible through the other, and the
side-effect replays would overwrite each other; one cell reached two ways (a
resume function receives a cell, and a closure it also receives holds it)
likewise. Each alias found is guarded (IS_SAME), so the next call that
passes two different objects traces anew. The registry of one trace is
``tx.output.aliases``.
"""
from typing import Any, Dict

from ...guards.sources import TypeSource


class Aliases:
    """The objects and cells from outside the frame met so far in one trace."""

    def __init__(self):
        self.objects: Dict[int, Any] = {}  # id(mutable object) -> (object, its tracker)
        self.cells: Dict[int, Any] = {}    # id(cell from outside) -> (cell, its CellVariable)
        self.classes: Dict[int, Any] = {}  # id(class) -> (class, the first ``type(obj)`` read of it)

    def tracker_of(self, value):
        """The tracker already made for ``value``, or None."""
        found = self.objects.get(id(value))
        return found[1] if found is not None and found[0] is value else None


def same_object(tx, value, source):
    """The tracker already made for mutable object ``value``, guarded as the same, or None."""
    var = tx.output.aliases.tracker_of(value) if source is not None else None
    if var is None:
        return None
    tx.output.add_guard("IS_SAME", source, var.source)
    tx.output.by_source[source] = var
    return var


def remember_object(tx, value, var):
    """``var`` stands for ``value`` from now on, if its identity matters (it can be mutated)."""
    if var.replay_kind is not None or getattr(var, "one_per_object", False):
        tx.output.aliases.objects[id(value)] = (value, var)


def known_cell(tx, cell, cell_source):
    """The CellVariable already made for the real cell ``cell``, or None."""
    found = tx.output.aliases.cells.get(id(cell))
    if found is None or found[0] is not cell:
        return None
    var = found[1]
    if cell_source is not None and var.cell_source is not None and cell_source != var.cell_source:
        tx.output.add_guard("IS_SAME", cell_source, var.cell_source)
    return var


def remember_cell(tx, cell, var):
    """``var`` stands for the real cell ``cell`` from now on."""
    tx.output.aliases.cells[id(cell)] = (cell, var)


def class_source(tx, obj_source, cls):
    """Where ``type(obj)`` is re-read from, for an object read from ``obj_source``: the
    first such read of ``cls`` in this trace, guarded as the same class. The twelve
    layers of a model are twelve instances of one class: their class attributes
    (``forward``, its decorators' closure cells) are read and guarded once, through
    the first layer's ``type()``, not once per layer."""
    source = TypeSource(obj_source)
    first = tx.output.aliases.classes.setdefault(id(cls), (cls, source))
    if first[0] is not cls or first[1] == source:
        return source
    tx.output.add_guard("IS_SAME", source, first[1])
    return first[1]
