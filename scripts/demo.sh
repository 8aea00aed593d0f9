#!/usr/bin/env bash
# Set everything up, then run the demo of the brief's examples. PYTHON picks the interpreter
# (default python3): PYTHON=python3.12 bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
read -r VENV PY <<<"$(bash scripts/venv.sh)"
"$VENV/bin/python" examples/demo.py "$@"
