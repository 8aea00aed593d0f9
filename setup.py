"""Builds framegraph's two extensions.

framegraph._C (C): the PEP 523 frame hook, the per-code cache and guard loop,
and SourceReader. Builds against CPython 3.11, 3.12 and 3.13 (one binary per
version; the version blocks are in eval_frame.c).

framegraph._tensor_check (C++): tensor guards read off torch's TensorImpl.
Built against the torch installed in the build environment (install with
``pip install --no-build-isolation``, as scripts/setup.sh does); skipped when
torch is not importable, in which case guards use torch's TensorGuards.
"""
from setuptools import Extension, setup


def tensor_check_extension():
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError:
        return []
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", 1))
    lib_dirs = cpp_extension.library_paths()
    return [
        Extension(
            "framegraph._tensor_check",
            sources=["framegraph/_C/tensor_check.cpp"],
            include_dirs=cpp_extension.include_paths(),
            library_dirs=lib_dirs,
            runtime_library_dirs=lib_dirs,
            libraries=["c10", "torch", "torch_cpu", "torch_python"],
            extra_compile_args=["-O2", "-std=c++20", f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-Wno-unused-parameter"],
            language="c++",
        )
    ]


setup(
    ext_modules=[
        Extension(
            "framegraph._C",
            sources=["framegraph/_C/eval_frame.c", "framegraph/_C/source_reader.c"],
            depends=["framegraph/_C/source_reader.h"],
            extra_compile_args=["-O2", "-Wall", "-Wno-unused-function"],
        )
    ]
    + tensor_check_extension()
)
