#!/usr/bin/env bash
# Set everything up, then run the demo of the brief's examples.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python examples/demo.py "$@"
