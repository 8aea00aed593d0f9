"""Installs framegraph as `torch.compile` when torch is imported with FRAMEGRAPH_INSTALL=1.

torch calls the `torch.backends` entry points at the end of its import
(`torch._import_device_backends`); this is framegraph's. It is a module of its
own, outside the package, so that an import of torch without the variable
costs one small import, not framegraph's.
"""
import os


def autoload():
    """torch's entry point: `framegraph.install()` when FRAMEGRAPH_INSTALL is 1."""
    value = os.environ.get("FRAMEGRAPH_INSTALL", "")
    if value in ("", "0"):
        return
    if value != "1":
        raise ValueError(f"FRAMEGRAPH_INSTALL must be 0 or 1, got {value!r}")
    import framegraph  # imported only when asked: framegraph imports torch's tracing stack

    framegraph.install()
