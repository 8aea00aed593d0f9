import pytest

from framegraph import _C


@pytest.fixture(autouse=True)
def no_callback_left():
    """Each C-hook test must leave no callback behind."""
    yield
    assert _C.get_callback() is None
    assert not _C.is_installed()
