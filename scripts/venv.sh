#!/usr/bin/env bash
# Prints the virtual environment of the Python named by $PYTHON (default python3): .venv for
# 3.11 (as before), .venv312 / .venv313 for the others, so each version keeps its own.
# An interpreter that does not run (off PATH, or a pyenv shim of a version that is not selected)
# is looked up in pyenv's versions.
set -euo pipefail
PY=${PYTHON:-python3}
if ! "$PY" -c pass >/dev/null 2>&1; then
    found=$(ls -d "$(pyenv root 2>/dev/null)"/versions/"${PY#python}"*/bin/"$PY" 2>/dev/null | tail -1 || true)
    [ -n "$found" ] || { echo "no interpreter $PY" >&2; exit 1; }
    PY=$found
fi
VER=$("$PY" -c 'import sys; print("%d%d" % sys.version_info[:2])')
if [ "$VER" = 311 ]; then echo ".venv $PY"; else echo ".venv$VER $PY"; fi
