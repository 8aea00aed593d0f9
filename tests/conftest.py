import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import framegraph  # noqa: E402

# Every op propagated on the meta kernels directly is also run through
# FakeTensorMode, and the two results must agree (framegraph/meta_ops.py).
framegraph.config.check_meta_ops = True
