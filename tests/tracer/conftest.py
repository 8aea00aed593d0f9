import pytest

import framegraph
from framegraph.config import config


@pytest.fixture(autouse=True)
def _fresh_caches_and_stack_checks():
    """Every tracer test starts with empty caches and checks handler stack effects."""
    framegraph.reset()
    config.debug_stack_effect = True
    yield
    config.debug_stack_effect = False
    framegraph.reset()
