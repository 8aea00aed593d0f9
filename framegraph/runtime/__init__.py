"""The entry and the last step: ``compile()``, the frame callback, the quick filter, the cache.

``hook.py`` (``compile``, ``disable``, ``reset``) installs ``convert_frame.ConvertFrame``
as the C hook's callback; for each frame the C cache cannot answer it applies the
quick filter (``skip.py``), drives one frame through the pipeline
(``pipeline.trace_frame``: tracer, graph, codegen, breaks) and hands (guard, code)
to the C cache on the code object (step 7; ``cache.py`` reads it back). A frame
that cannot be captured runs unmodified. ``explain.py`` compiles a function
once and reports what happened.
"""
