"""The `framegraph` command.

    framegraph --version
    framegraph backends
    framegraph explain script.py [--function NAME] [-- script args...]
    framegraph report TRACE_DIR [-o OUT_DIR]
"""
import argparse
import sys


def _version():
    import torch

    import framegraph

    return f"framegraph {framegraph.__version__} (torch {torch.__version__}, Python {sys.version.split()[0]})"


def _backends(args):
    import framegraph

    print("\n".join(framegraph.list_backends()))
    return 0


def _explain(args):
    from .runtime.explain import explain_script

    report = explain_script(args.script, function=args.function, argv=args.script_args)
    print(report)
    return 0


def _report(args):
    from .diagnostics.report import write_report

    index = write_report(args.trace_dir, args.out)
    print(index)
    return 0


def build_parser():
    """The argument parser (exposed for tests and --help)."""
    parser = argparse.ArgumentParser(prog="framegraph", description="framegraph: graph capture for PyTorch")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("backends", help="list the registered backends").set_defaults(run=_backends)
    explain = sub.add_parser("explain", help="run a script under the compiler and print the explain summary")
    explain.add_argument("script")
    explain.add_argument("--function", help="compile only the function with this name (default: every "
                                            "function defined in the script)")
    explain.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script, after --")
    explain.set_defaults(run=_explain)
    report = sub.add_parser("report", help="turn a FRAMEGRAPH_TRACE directory into an HTML report")
    report.add_argument("trace_dir")
    report.add_argument("-o", "--out", help="output directory (default: TRACE_DIR/report)")
    report.set_defaults(run=_report)
    return parser


def main(argv=None):
    """Entry point of the `framegraph` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is None:
        print(_version())
        print("backends: " + ", ".join(__import__("framegraph").list_backends()))
        return 0
    if getattr(args, "script_args", None) and args.script_args[0] == "--":
        args.script_args = args.script_args[1:]
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
