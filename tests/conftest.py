"""Suite-wide settings; the strict mode comes from framegraph's pytest plugin.

Every test runs with fresh caches, with the tracer's stack-effect check on
(``config.debug_stack_effect``: each opcode handler's stack change is checked
against ``dis.stack_effect``) and under the strict mode (``framegraph_strict
= true`` in pyproject.toml): a test fails on any internal error of
framegraph and on any fallback to eager it does not declare with
``@pytest.mark.expect_fallback(...)`` /
``@pytest.mark.expect_internal_error(...)`` (``allow_fallback(...)`` for the
fuzzer's generated programs). What counts as a fallback, the
``framegraph_trace`` fixture that counts a test's graphs and its
``assert_compiles``, and the ``framegraph_graphs`` marker are written down in
framegraph_pytest.py (installed as the ``framegraph`` pytest11
entry point).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402

import framegraph  # noqa: E402
from framegraph.runtime import skip  # noqa: E402

pytest_plugins = ["pytester"]

# Every op propagated on the meta kernels directly is also run through
# FakeTensorMode, and the two results must agree (framegraph/meta_ops.py).
framegraph.config.check_meta_ops = True


@pytest.fixture(autouse=True)
def _fresh_caches_and_stack_checks():
    """No test sees what an earlier one cached (a skip mark would hide its fallback)
    or compiled: a code compiled as a root (``opt.step``'s wrapper in torch) is
    traced wherever it runs later, so the roots a test adds go with it."""
    framegraph.reset()
    framegraph.config.debug_stack_effect = True
    roots = set(skip._user_roots)
    yield
    skip._user_roots.clear()
    skip._user_roots.update(roots)
    framegraph.reset()
