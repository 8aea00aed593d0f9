"""Peak memory with a graph break in the middle: eager, framegraph and torch._dynamo.

Each program makes a large intermediate (100 MB by default), hands it across a
graph break and drops it there, then makes another one: eager's peak holds one
of them at a time. A compiled call whose frames keep the first alive through
the rest of the call (the caller's stack, the hook's frame slots, the compiled
frame's temporaries) peaks at two.

Each (program, compiler) runs in a fresh process: the call is made once (to
compile), the kernel's peak resident-set counter is reset (``/proc/self/clear_refs``,
Linux), and the peak over the second call is read from ``VmHWM``. Tensors this
large are allocated with mmap and given back on free, so the figure follows
the live tensors to within a few MB.

    .venv/bin/python benchmarks/peak_memory.py [--mb 100]
"""
import argparse
import json
import os
import subprocess
import sys

PROGRAMS = ("inference", "training")
COMPILERS = ("eager", "framegraph", "dynamo")


def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _programs(torch, brk):
    def inference(x):
        with torch.no_grad():
            big = x.repeat(1000, 1) * 2  # a graph output, live at the break
            brk()
            y = big.sum(0)
            del big  # dropped right after the break
            brk()
            big2 = y.repeat(1000, 1) + 1
            return big2.sum()

    def training(x, w):
        big = x.repeat(1000, 1) * 2  # no grad needed (x is data): live at the break
        brk()
        pooled = big.sum(0) * w
        del big  # dropped right after the break
        brk()
        loss = (pooled.repeat(1000, 1) + 1).relu().sum()  # the relu output is saved for backward
        loss.backward()
        return loss.detach()

    return {"inference": inference, "training": training}


def child(program, compiler, mb):
    """Run one (program, compiler) in this process; print its peak in bytes as JSON."""
    import torch

    if compiler == "framegraph":
        import framegraph

        brk, compile_fn = framegraph.graph_break, lambda f: framegraph.compile(f, backend="eager")
    elif compiler == "dynamo":
        import torch._dynamo

        brk, compile_fn = torch._dynamo.graph_break, lambda f: torch.compile(f, backend="eager")
    else:
        brk, compile_fn = (lambda: None), (lambda f: f)
    fn = compile_fn(_programs(torch, brk)[program])
    n = mb * 1024 * 1024 // 4 // 1000  # floats per row: each big tensor is `mb` MB
    x = torch.ones(n)
    args = (x,) if program == "inference" else (x, torch.ones(n, requires_grad=True))
    fn(*args)  # compiles
    if program == "training":
        args[1].grad = None
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current resident size
    base = _status("VmRSS")
    fn(*args)
    print(json.dumps({"peak": _status("VmHWM") - base}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="size of each large tensor, in MB")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child, args.mb)
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    print(f"peak memory over one call, MB (each large tensor {args.mb} MB)\n")
    print(f"{'program':<12}" + "".join(f"{c:>12}" for c in COMPILERS) + f"{'fg/eager':>10}{'dynamo/eager':>14}")
    for program in PROGRAMS:
        peaks = {}
        for compiler in COMPILERS:
            out = subprocess.run([sys.executable, __file__, "--mb", str(args.mb), "--child", program, compiler],
                                 capture_output=True, text=True, env=env, check=True).stdout
            peaks[compiler] = json.loads(out.strip().splitlines()[-1])["peak"] / 2**20
        print(f"{program:<12}" + "".join(f"{peaks[c]:>12.1f}" for c in COMPILERS)
              + f"{peaks['framegraph'] / peaks['eager']:>10.2f}{peaks['dynamo'] / peaks['eager']:>14.2f}")


if __name__ == "__main__":
    main()
