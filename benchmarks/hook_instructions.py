"""Instructions per call of the C hook, counted by valgrind: the same cases as
`hook_overhead.py`, without the machine's noise.

    python benchmarks/hook_instructions.py [--number 20000]

The script runs itself under `valgrind --tool=callgrind`; each case's loop sits
between two libc calls (`getppid` zeroes the counters, `getpgrp` dumps them), so
a count covers that loop and nothing else. Counts are deterministic: two trees
compare by running this script with each on PYTHONPATH. Importing torch under
valgrind takes a few minutes.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import hook_overhead as ho

CASES = ("plain call, no hook", "hook + callback, code marked SKIP",
         "cache hit, trivial guard (re-call)", "compile() wrapper, code marked SKIP")


def _callables():
    from framegraph import _C
    return {
        CASES[0]: (ho.f, None),
        CASES[1]: (ho.g, ho._skip_callback),
        CASES[2]: (ho.h, ho._hit_callback),
        CASES[3]: (_C.Wrapper(ho.k, ho._skip_callback), None),
    }


def child(number):
    """Run each case's loop between the two marker calls (inside valgrind)."""
    from framegraph import _C
    for name, (fn, callback) in list(_callables().items()) * 2:
        prior = _C.set_callback(callback)
        try:
            fn(1, 2)  # the first call marks or caches
            os.getppid()
            for _ in range(number):
                fn(1, 2)
            os.getpgrp()
        finally:
            _C.set_callback(prior)


def _totals(path):
    with open(path) as fh:
        for line in fh:
            m = re.match(r"(?:summary|totals):\s*(\d+)", line)
            if m:
                return int(m.group(1))
    raise ValueError(f"no totals in {path}")


def callgrind_counts(argv, env=None):
    """Run ``argv`` under callgrind, the counters zeroed at each ``getppid`` and dumped at
    each ``getpgrp``: the main thread's instruction count of each dump, in order (the
    last is the exit's)."""
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        # torch's worker threads would add their own work to the counts
        env = dict(os.environ if env is None else env, OMP_NUM_THREADS="1")
        subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--zero-before=getppid",
                        "--dump-before=getpgrp", f"--callgrind-out-file={out}", *argv],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        # the main thread's dumps (out.N-01), one per marker in order
        parts = sorted(glob.glob(out + ".*-01"), key=lambda p: int(re.search(r"\.(\d+)-01$", p)[1]))
        return [_totals(p) for p in parts]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.number)
        return
    dumps = callgrind_counts([sys.executable, os.path.abspath(__file__), "--child", "--number", str(args.number)])
    counts = [n / args.number for n in dumps[:2 * len(CASES)]]
    first, second = counts[:len(CASES)], counts[len(CASES):]
    print(f"{'case':40s} {'instr/call (two loops)':>24s} {'vs plain':>9s}")
    for name, a, b in zip(CASES, first, second):
        print(f"{name:40s} {a:11.1f} {b:11.1f} {b - second[0]:+9.1f}")


if __name__ == "__main__":
    main()
