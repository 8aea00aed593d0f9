"""The `framegraph` command: version and registered backends."""
import argparse
import sys


def main(argv=None):
    """Entry point of the `framegraph` console script."""
    parser = argparse.ArgumentParser(prog="framegraph", description=__doc__)
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    args = parser.parse_args(argv)
    import torch

    import framegraph

    print(f"framegraph {framegraph.__version__} (torch {torch.__version__}, Python {sys.version.split()[0]})")
    if not args.version:
        print("backends: " + ", ".join(framegraph.list_backends()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
