#!/usr/bin/env bash
# Create the venv with the pinned dev requirements and build framegraph (with its C extension) into
# it. PYTHON picks the interpreter (default python3, i.e. 3.11): PYTHON=python3.12 bash scripts/setup.sh
# makes .venv312 (scripts/venv.sh names them). The extensions of each version sit side by side in
# framegraph/ (their file names carry the ABI tag).
set -euo pipefail
cd "$(dirname "$0")/.."
read -r VENV PY <<<"$(bash scripts/venv.sh)"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements-dev.txt
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation -e .
