"""VariableTrackers: the symbolic values on the tracer's stack.

The trackers stand in floors, each a package that imports only the floors
below it (``tests/test_layout.py`` holds the rule, ``scripts/import_cycles.py``
draws it):

    builder.py    real value + Source -> tracker of its family (with guards)
    subclasses/   instances of user subclasses of builtin types
    objects/      user classes and instances, class statements, super(), copying
    callables/    user functions, builtins and their models, partials, library calls
    tensors/      tensors, symbolic sizes, torch callables, nn.Modules, grad modes
    iteration/    the builtin iterators, itertools, generators
    containers/   tuples, lists, dicts, sets, deques, module namespaces
    core/         the tracker protocol, constants, exceptions, argument binding, the
                  generic protocols (operators, iteration, numbers, repr) and the space

Where a lower floor must make or recognise a value of a higher one, it goes
through ``core.space``, where the higher family registers what it offers. The
builder loads every floor (the tracer imports it before any trace), so the
space is complete when a trace runs; importing ``variables`` alone loads
nothing, so that ``import framegraph`` stays light.
"""
