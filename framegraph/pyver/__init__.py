"""The one place that knows which Python is running.

framegraph rewrites CPython bytecode, and bytecode changes with every minor
version: opcode names, inline caches, the call protocol, the exception and
line tables. Every such fact lives in a per-version module (``py311.py``
today; ``py312.py`` and ``py313.py`` later) and is re-exported from here, so
the rest of the package reads ``pyver.X`` and never checks the version itself.

The module is picked once, at import. An unsupported Python fails here with a
clear ImportError instead of producing subtly wrong bytecode later.
"""

import sys

_SUPPORTED = {(3, 11): "py311"}

VERSION = sys.version_info[:2]

if VERSION not in _SUPPORTED:
    raise ImportError(
        f"framegraph supports Python "
        f"{', '.join('%d.%d' % v for v in _SUPPORTED)} only; "
        f"this is Python {VERSION[0]}.{VERSION[1]}"
    )

from .py311 import *  # noqa: E402,F401,F403  (the version facts, see py311.py)
from .py311 import __all__  # noqa: E402,F401
