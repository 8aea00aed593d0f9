"""Functions, builtins and library calls."""
