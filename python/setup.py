"""Build of the mfmt package: the extension module mfmt._mfmt, linked with
the static libmfmt.a of the tree this folder sits in (built by `make` when
missing or stale), or with an installed libmfmt found through pkg-config
(MFMT_USE_PKGCONFIG=1). MFMT_BUILD=DIR takes libmfmt.a from DIR (the top
Makefile's BUILD); MFMT_NO_MAKE=1 uses it as it is. No network: only
setuptools and NumPy's headers."""

import os
import shlex
import subprocess
import sys

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IN_TREE = os.path.exists(os.path.join(ROOT, "include", "mfmt.h")) and \
    os.path.exists(os.path.join(ROOT, "Makefile"))
USE_PKGCONFIG = os.environ.get("MFMT_USE_PKGCONFIG") == "1" or not IN_TREE
# The build folder of the C library (the top Makefile's BUILD).
LIB_BUILD = os.environ.get("MFMT_BUILD", os.path.join(ROOT, "build"))


def library_version():
    """The one version number: MF_VERSION_MAJOR/MINOR/PATCH of mfmt.h (the
    tree's, or the installed one's through pkg-config)."""
    if IN_TREE and not USE_PKGCONFIG:
        parts = {}
        with open(os.path.join(ROOT, "include", "mfmt.h"), encoding="utf-8") as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[0] == "#define" and w[1].startswith("MF_VERSION_") and w[2].isdigit():
                    parts[w[1][len("MF_VERSION_"):]] = w[2]
        return "%s.%s.%s" % (parts["MAJOR"], parts["MINOR"], parts["PATCH"])
    return subprocess.run(["pkg-config", "--modversion", "mfmt"], check=True,
                          capture_output=True, text=True).stdout.strip()


def tree_libs():
    """The libraries libmfmt.a needs, from the top Makefile (one list)."""
    out = subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, "print-ldlibs"],
                         check=True, capture_output=True, text=True).stdout
    return [a[2:] for a in shlex.split(out) if a.startswith("-l")]


def pkgconfig(*args):
    out = subprocess.run(["pkg-config", *args, "mfmt"], check=True,
                         capture_output=True, text=True).stdout
    return shlex.split(out)


class BuildExt(build_ext):
    """Builds libmfmt.a first (make is incremental), then the extension."""

    def run(self):
        if not USE_PKGCONFIG and os.environ.get("MFMT_NO_MAKE") != "1":
            rel = os.path.relpath(os.path.join(LIB_BUILD, "libmfmt.a"), ROOT)
            subprocess.run(["make", "-C", ROOT, "-s",
                            "BUILD=" + os.path.relpath(LIB_BUILD, ROOT), rel],
                           check=True)
        super().run()


def extension():
    sources = sorted(os.path.join("src", f) for f in os.listdir(os.path.join(HERE, "src"))
                     if f.endswith(".c"))
    kw = dict(sources=sources, depends=[os.path.join("src", "pymfmt.h")],
              include_dirs=[numpy.get_include()],
              extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror",
                                  "-Wno-unused-parameter",
                                  "-Wno-missing-field-initializers",
                                  "-Wno-cast-function-type",
                                  "-fvisibility=hidden"])  # only PyInit__mfmt exported
    if USE_PKGCONFIG:
        cflags, libs = pkgconfig("--cflags"), pkgconfig("--static", "--libs")
        kw["extra_compile_args"] += cflags
        kw["extra_link_args"] = libs
    else:
        kw["include_dirs"].append(os.path.join(ROOT, "include"))
        kw["depends"].append(os.path.join(ROOT, "include", "mfmt.h"))
        # libmfmt.a's symbols stay inside _mfmt.so (not re-exported).
        kw["extra_objects"] = [os.path.join(LIB_BUILD, "libmfmt.a")]
        kw["depends"].append(os.path.join(LIB_BUILD, "libmfmt.a"))  # relink when it changes
        kw["extra_link_args"] = ["-Wl,--exclude-libs,ALL"]
        kw["libraries"] = tree_libs()
    return Extension("mfmt._mfmt", **kw)


setup(
    name="mfmt",
    version=library_version(),
    description="Read, check and convert ML model-weight files (safetensors, GGUF, "
                "PyTorch, NumPy, ONNX, HDF5, ...) into NumPy arrays, zero-copy and "
                "without running code",
    packages=["mfmt"],
    package_data={"mfmt": ["*.pyi", "py.typed"]},
    ext_modules=[extension()],
    cmdclass={"build_ext": BuildExt},
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
)
