"""VariableTrackers: the symbolic values on the tracer's stack.

``base.py`` defines the slot-shaped protocol; ``builder.wrap_value`` turns a
real value and its Source into a tracker (with guards); the other modules
model one family of values each (constants, tensors, sequences, dicts and
sets, iterators, functions, builtins, torch callables, nn.Modules, user
classes, context managers). ``ops.py`` holds Python's operator protocol.
"""
