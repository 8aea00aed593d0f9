"""Step 3: what must stay true for a captured graph to be reused, as data.

A ``kinds.Guard(kind, source, value)`` is one fact about a value read from a
``sources.Source``; ``kinds.KINDS`` holds one record per kind (cost, check,
readable line, explanation, whether a dict version tag can skip it).
``compile.CompiledGuard`` turns the guards of one entry into a plan of check
nodes (``expr.py``), groups the checks that can be skipped while nothing they
read changed (``skips.py``: dict versions, ``reader.py``'s C SourceReader),
and renders and compiles one check function, once. ``explain.py`` says in
words why a guard rejects a call. Built from sources alone: nothing here
imports the tracer.
"""
