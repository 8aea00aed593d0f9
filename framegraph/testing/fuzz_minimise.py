"""Shrink a fuzzer program that mismatches to a few lines that still mismatch the same way.

    python -m framegraph.testing.fuzz_minimise SEED [--backends eager]

Lines of the program (helpers and body) are removed in chunks, halving the
chunk size down to one line, as long as the program still compiles and
`check_program` still reports a mismatch with the same signature: the same
exception types, and a first difference at the same kind of place with
values of the same shape (numbers, tensor contents and indices are blurred,
so removing a line that only changes a value is still progress).
"""
import argparse
import logging
import re
import signal
import sys

import torch

import framegraph
from framegraph.testing.fuzz import PRELUDE, check_program, generate


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that the eager run does not report it as the program's."""


def _alarm(signum, frame):
    raise _Timeout


def signature(problem):
    """What a mismatch is, without its numbers: 'eager=... compiled=...; root: kind != kind'."""
    text = problem.split(": ", 1)[1]
    text = re.sub(r"tensor\(\[.*?\]\)", "tensor", text)
    text = re.sub(r"File \".*", "", text)  # an escaped traceback: keep only its type
    return re.sub(r"#?\d+(\.\d+)?(e-?\d+)?", "N", text)


def minimise(source, backends=("eager",), checks=400):
    """The shortest program found whose mismatches include the first one of `source`."""
    cases = [((4, 3), torch.float32, 2)]  # one call is quicker, if it shows the mismatch
    problems = check_program(source, backends, cases)
    if not problems:
        cases = None
        problems = check_program(source, backends)
    if not problems:
        return source
    want = signature(problems[0])
    signal.signal(signal.SIGALRM, _alarm)
    head, lines = PRELUDE, source[len(PRELUDE):].split("\n") if source.startswith(PRELUDE) else source.split("\n")
    if not source.startswith(PRELUDE):
        head = ""

    def still(candidate):
        text = head + "\n".join(candidate)
        if "def prog(" not in text:
            return False
        signal.setitimer(signal.ITIMER_REAL, 10, 1)  # a cut can make a loop endless: stop it, again if needed
        try:
            compile(text, "<fuzz>", "exec")
            return any(signature(p) == want for p in check_program(text, backends, cases))
        except Exception:  # noqa: BLE001 -- a cut that breaks the module (a helper gone) is no progress
            return False
        except _Timeout:
            framegraph.reset()  # the alarm may have stopped the compiler half-way
            return False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and checks > 0:
        i, changed = 0, False
        while i < len(lines) and checks > 0:
            candidate = lines[:i] + lines[i + chunk:]
            checks -= 1
            if candidate and still(candidate):
                lines, changed = candidate, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return head + "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", type=int, nargs="+")
    parser.add_argument("--backends", default="eager")
    args = parser.parse_args(argv)
    logging.getLogger("framegraph").setLevel(logging.ERROR)
    backends = tuple(args.backends.split(","))
    for seed in args.seeds:
        small = minimise(generate(seed), backends)
        problems = check_program(small, backends)
        print(f"--- seed {seed}: {signature(problems[0]) if problems else 'no mismatch'}")
        print(small[len(PRELUDE):] if small.startswith(PRELUDE) else small, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
