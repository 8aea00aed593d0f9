"""Step 6: the replacement bytecode.

``pycodegen.PyCodegen`` emits loads, calls and stores and assembles the
replacement code object; ``rebuild.FrameCodegen`` rebuilds the trace's values
from the graph's outputs (each through its tracker's ``reconstruct``, once,
keeping identity); ``finish.finish_frame`` compiles the graph, emits the call
to it and what follows (``return_code``, or a graph break's code from
``breaks/``), and compiles the guards into a ``CompiledFrame``.
"""
