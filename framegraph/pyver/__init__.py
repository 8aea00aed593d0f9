"""The one place that knows which Python is running.

framegraph rewrites CPython bytecode, and bytecode changes with every minor
version: opcode names, inline caches, the call protocol, the exception and
line tables. Every such fact lives in a per-version module (``py311.py``,
``py312.py``; formats shared by all of them in ``tables.py``) and is
re-exported from here, so
the rest of the package reads ``pyver.X`` and never checks the version itself.

The module is picked once, at import. An unsupported Python fails here with a
clear ImportError instead of producing subtly wrong bytecode later.
"""

import importlib
import sys

_SUPPORTED = {(3, 11): "py311", (3, 12): "py312", (3, 13): "py313"}

VERSION = sys.version_info[:2]

if VERSION not in _SUPPORTED:
    raise ImportError(
        f"framegraph supports Python "
        f"{', '.join('%d.%d' % v for v in _SUPPORTED)} only; "
        f"this is Python {VERSION[0]}.{VERSION[1]}"
    )

_facts = importlib.import_module(f".{_SUPPORTED[VERSION]}", __name__)
__all__ = list(_facts.__all__) + ["VERSION", "AT_LEAST_312"]
globals().update({name: getattr(_facts, name) for name in _facts.__all__})

# Feature switch for the few places whose logic (not just data) differs.
AT_LEAST_312 = VERSION >= (3, 12)
