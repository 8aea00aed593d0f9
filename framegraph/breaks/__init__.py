"""Graph breaks: stop before what cannot be traced, let CPython run it, resume after.

``split.py`` runs the root translator and, at an ``Unsupported`` (the
catalogue is in ``errors.py``), restarts and stops right before the failing
step, then generates the break site's code; ``resume.py`` builds the resume
functions that continue the frame; ``api.py`` is ``framegraph.graph_break()``.
"""
