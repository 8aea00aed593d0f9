"""Seeing what the compiler did; nothing here traces or compiles.

``records.py`` is the stream of ``CompileRecord``s runtime emits, one per trace
attempt; ``explain.py`` summarises them (``framegraph.explain``), ``trace_log.py``
writes them as JSON lines and ``report.py`` turns those into HTML; ``logs.py``
holds the named log channels, ``pretty.py`` and ``decompile.py`` print bytecode,
graphs and guards for them.
"""
