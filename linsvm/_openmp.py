"""The OpenMP runtime's wait at the end of a parallel region, set before any compiled
module loads it.

GCC's runtime (libgomp, which the kernels link when built with -fopenmp) lets a thread
that reaches the end of a parallel region spin GOMP_SPINCOUNT times (300,000 by default)
before it sleeps.  A Newton solve opens a region per CG iteration.  When another
process keeps a core busy, the spinning threads take the time the working ones need,
and each region waits for a descheduled thread, so two threads beside one busy process
were far slower than one.  At SPIN_COUNT spins they lose much less, and an idle machine
sees no difference (docs/threads.md, "A busy machine: the OpenMP runtime's wait").
libgomp reads the variable once, when it is loaded, so it is set here, on the package's
first import, unless the user has set it; another OpenMP runtime (LLVM's libomp,
MSVC's) ignores it, and a libgomp already loaded by another module keeps its setting.
"""
import os

SPIN_COUNT = "10000"

os.environ.setdefault("GOMP_SPINCOUNT", SPIN_COUNT)
