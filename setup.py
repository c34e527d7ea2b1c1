"""Build the Cython kernels in csrc/ as extensions of the linsvm package.

OpenMP is used when the C compiler accepts it (-fopenmp, /openmp for MSVC; checked
by compiling and linking a tiny program); otherwise the kernels build serial, since
`prange` degrades to a plain loop without OpenMP (so a macOS clang without libomp
builds serial kernels).  Set LINSVM_DEBUG=1 to build with bounds checks and
wraparound on and with debug symbols (for debugging a kernel under pytest);
otherwise -g is dropped from the compiler's flags: the wheels carry no debug
information, and compiling without it takes about a fifth less time.

Both steps run on every core the process may use: Cython translates the .pyx files
in a pool of processes and build_ext compiles the extensions in a pool of threads
(largest first), so `pip install .` takes about half the time on two cores.
LINSVM_BUILD_JOBS=N sets the number of jobs (1: serial); `build_ext -j N` does too.
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


def _build_jobs():
    """Parallel jobs for the build: LINSVM_BUILD_JOBS, else the cores this process may use."""
    text = os.environ.get("LINSVM_BUILD_JOBS", "").strip()
    if text:
        try:
            return max(1, int(text))
        except ValueError:
            sys.exit(f"linsvm: LINSVM_BUILD_JOBS must be a whole number, not {text!r}")
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


JOBS = _build_jobs()

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "nonecheck": False,
    "embedsignature": True,
}


def _openmp_flags(compiler):
    """(compile flags, link flags) that turn OpenMP on for `compiler`."""
    if compiler.compiler_type == "msvc":
        return ["/openmp"], []
    return ["-fopenmp"], ["-fopenmp"]


def _compiler_has_openmp(compiler):
    """Return True if `compiler` can build and link a program with OpenMP."""
    cflags, lflags = _openmp_flags(compiler)
    tmp = tempfile.mkdtemp()
    try:
        src = os.path.join(tmp, "omp.c")
        with open(src, "w") as fh:
            fh.write("#include <omp.h>\nint main(void){return omp_get_max_threads() > 0 ? 0 : 1;}\n")
        objs = compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
        compiler.link_executable(objs, os.path.join(tmp, "omp"), extra_postargs=lflags)
        return True
    except Exception:
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class BuildExt(build_ext):
    """build_ext that adds OpenMP flags when the compiler supports them, drops -g
    (unless LINSVM_DEBUG) and compiles the extensions in parallel (JOBS threads,
    each running the compiler as a separate process)."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel and JOBS > 1:
            self.parallel = JOBS

    def build_extensions(self):
        msvc = self.compiler.compiler_type == "msvc"
        use_openmp = os.environ.get("LINSVM_NO_OPENMP", "") in ("", "0") and \
            _compiler_has_openmp(self.compiler)
        if not DEBUG and not msvc:
            for attr in ("compiler_so", "compiler", "compiler_cxx"):
                args = getattr(self.compiler, attr, None)
                if isinstance(args, list):
                    setattr(self.compiler, attr, [a for a in args if a != "-g"])
        cflags, lflags = _openmp_flags(self.compiler)
        for ext in self.extensions:
            ext.extra_compile_args += ["/O2"] if msvc else ["-O3"]
            if use_openmp:
                ext.extra_compile_args += cflags
                ext.extra_link_args += lflags
        # Longest first (the generated C's size predicts the compile time), so that no
        # big module starts last while the other cores idle.
        self.extensions.sort(key=lambda ext: -sum(os.path.getsize(f) for f in ext.sources
                                                  if os.path.exists(f)))
        print(f"linsvm: building with OpenMP {'on' if use_openmp else 'off'}, "
              f"{self.parallel or 1} parallel job(s)", file=sys.stderr)
        super().build_extensions()


extensions = [
    Extension(
        f"linsvm.{name}",
        [f"csrc/{name}.pyx"],
        include_dirs=[np.get_include(), "csrc"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in MODULES
] + [Extension("linsvm._cyutility", ["csrc/_cyutility.c"])]
# Cython's utility code (memoryviews, buffers, the runtime helpers) once, in
# linsvm._cyutility, which every other module imports, instead of a copy in each: it was
# half of every module's C, so the build compiles about half as much (docs/wheels.md).

setup(
    ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES, include_path=["csrc", "."],
                          nthreads=JOBS if JOBS > 1 else 0,
                          shared_utility_qualified_name="linsvm._cyutility"),
    cmdclass={"build_ext": BuildExt},
)
