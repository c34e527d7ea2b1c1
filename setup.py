"""Build the Cython kernels in csrc/ as extensions of the linsvm package.

OpenMP is used when the C compiler accepts -fopenmp (checked by compiling and
linking a tiny program); otherwise the kernels build serial, since `prange`
degrades to a plain loop without OpenMP.  Set LINSVM_DEBUG=1 to build with
bounds checks and wraparound on (for debugging a kernel under pytest).
"""
import glob
import os
import shutil
import sys
import tempfile

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Every csrc/_NAME.pyx is the extension linsvm._NAME (shared .pxd files are included);
# linsvm._testing (csrc/_testing.pyx) holds the entries only the tests call.
MODULES = sorted(os.path.basename(f)[:-4] for f in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc", "_*.pyx")))
# LINSVM_MODULES=_svmlight,_mfn builds only those (handy while editing one kernel).
if os.environ.get("LINSVM_MODULES"):
    MODULES = [m for m in os.environ["LINSVM_MODULES"].split(",") if m]

DEBUG = os.environ.get("LINSVM_DEBUG", "") not in ("", "0")

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "nonecheck": False,
    "embedsignature": True,
}


def _compiler_has_openmp(compiler):
    """Return True if `compiler` can build and link a program with -fopenmp."""
    tmp = tempfile.mkdtemp()
    try:
        src = os.path.join(tmp, "omp.c")
        with open(src, "w") as fh:
            fh.write("#include <omp.h>\nint main(void){return omp_get_max_threads() > 0 ? 0 : 1;}\n")
        objs = compiler.compile([src], output_dir=tmp, extra_postargs=["-fopenmp"])
        compiler.link_executable(objs, os.path.join(tmp, "omp"), extra_postargs=["-fopenmp"])
        return True
    except Exception:
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class BuildExt(build_ext):
    """build_ext that adds OpenMP flags when the compiler supports them."""

    def build_extensions(self):
        use_openmp = os.environ.get("LINSVM_NO_OPENMP", "") in ("", "0") and (
            self.compiler.compiler_type != "msvc" and _compiler_has_openmp(self.compiler)
        )
        for ext in self.extensions:
            ext.extra_compile_args += ["-O3"] if self.compiler.compiler_type != "msvc" else ["/O2"]
            if use_openmp:
                ext.extra_compile_args.append("-fopenmp")
                ext.extra_link_args.append("-fopenmp")
        print(f"linsvm: building with OpenMP {'on' if use_openmp else 'off'}", file=sys.stderr)
        super().build_extensions()


extensions = [
    Extension(
        f"linsvm.{name}",
        [f"csrc/{name}.pyx"],
        include_dirs=[np.get_include(), "csrc"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in MODULES
]

setup(
    ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES, include_path=["csrc", "."]),
    cmdclass={"build_ext": BuildExt},
)
