"""Builds the one C extension, framegraph._C (the PEP 523 frame hook)."""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "framegraph._C",
            sources=["framegraph/_C/eval_frame.c"],
            extra_compile_args=["-O2", "-Wall", "-Wno-unused-function"],
        )
    ]
)
