#!/usr/bin/env bash
# Set everything up, then run the whole test suite. PYTHON picks the interpreter (default python3):
#   PYTHON=python3.12 bash scripts/test.sh -x
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
read -r VENV PY <<<"$(bash scripts/venv.sh)"
HF_HUB_OFFLINE=1 "$VENV/bin/python" -m pytest tests "$@"
