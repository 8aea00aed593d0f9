#!/usr/bin/env bash
# Build framegraph's C and C++ with AddressSanitizer and UndefinedBehaviorSanitizer and run the
# C-core tests plus real programs and models under them (scripts/sanitize_run.py).
#
#   bash scripts/sanitize.sh           # C tests, programs, eleven models, CPython's partial tests
#   bash scripts/sanitize.sh --quick   # C tests, programs, two models: the slice .ci/run runs
#
# Python objects are allocated with malloc (PYTHONMALLOC=malloc), so a use of a freed object
# by framegraph's C is a heap-use-after-free report, not a quiet corruption. Any report ends
# the run with a non-zero exit and the stack of the bad access, of the free and of the
# allocation. Leak checking is off: the interpreter leaks by design at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
# PYTHON picks the interpreter as for scripts/test.sh (PYTHON=python3.12: .venv312).
read -r VENV _ <<<"$(bash scripts/venv.sh)"
[ -x "$VENV/bin/python" ] || bash scripts/setup.sh
PY=$VENV/bin/python
QUICK=""
[ "${1:-}" = "--quick" ] && QUICK="--quick"

OUT=build/sanitize
rm -rf "$OUT"
mkdir -p "$OUT"
# A copy of the package, with the sanitized extensions in place of the normal ones.
tar --exclude='*.so' --exclude='__pycache__' -cf - framegraph | tar -xf - -C "$OUT"
FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g -O1"
INC=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
EXT=$($PY -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
gcc -shared -fPIC $FLAGS -Wall -Wno-unused-function -I"$INC" \
    framegraph/_C/eval_frame.c framegraph/_C/source_reader.c -o "$OUT/framegraph/_C$EXT"
if [ -z "$QUICK" ]; then
    # The C++ tensor check too (about a minute: torch's headers).
    CFLAGS="$FLAGS" CXXFLAGS="$FLAGS" LDFLAGS="-fsanitize=address,undefined" \
        $PY setup.py -q build_ext --build-lib "$OUT/ext" --build-temp "$OUT/tmp" >/dev/null
    cp "$OUT"/ext/framegraph/_tensor_check*.so "$OUT/framegraph/"
else
    cp framegraph/_tensor_check*.so "$OUT/framegraph/" 2>/dev/null || true
fi

export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:alloc_dealloc_mismatch=0:new_delete_type_mismatch=0:detect_odr_violation=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# PYTHONSAFEPATH: the checkout itself must not come before the sanitized copy on sys.path.
export PYTHONMALLOC=malloc PYTHONPATH="$PWD/$OUT" PYTHONSAFEPATH=1 HF_HUB_OFFLINE=1
where=$($PY -c "import framegraph._C as c; print(c.__file__)")
case "$where" in "$PWD/$OUT"/*) ;; *) echo "sanitize: imported $where, not the sanitized build" >&2; exit 1;; esac

echo "== C-core tests under ASan+UBSan"
$PY -m pytest tests/c -p no:cacheprovider -q
echo "== programs and models under ASan+UBSan"
$PY scripts/sanitize_run.py $QUICK
echo "sanitize: no errors"
