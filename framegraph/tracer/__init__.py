"""The tracer (step 2): a symbolic interpreter of one frame's bytecode.

``translator.InstructionTranslator`` runs the frame's instructions on
trackers (``variables/``) instead of values: each opcode has one handler
(``handlers/``, registered and self-checked by ``registry.py``), calls to
user functions are inlined by a nested translator over the same graph, and
exceptions raised while tracing follow the code's exception table
(``exceptions.py``). Where the frame goes next (the graph, the code after it,
a graph break) is the business of the packages after this one; runtime's
``pipeline.trace_frame`` drives them.
"""
