"""A stand-in distributed solver for testing what surrounds the solvers on MPI.

The command line and cross-validation on several ranks (reading shares, folds,
scores, who prints and writes) are tested against the serial program, which needs
a solver that runs distributed.  Until a binary solver declares `distributed` "rows" itself
(a later branch of each solver), `install()` registers one for mfn: every rank
gathers all ranks' examples in rank order (their rows of X, targets and costs)
and runs the serial mfn on that union -- so its model is by construction the
serial model of the union, and any difference a test sees comes from the
plumbing around the solver, not from the solver.  Once some binary solver
declares it, install() changes nothing and returns that solver's
name: the same tests then check the real thing.
"""
import functools

import numpy as np

from linsvm.problem import CSRBuffers, Problem
from linsvm.solvers import SOLVERS


def distributed_binary_solver():
    """The name of a registered binary solver that runs exactly over row blocks
    (distributed "rows": the serial model to rounding), mfn first, or None.  CoCoA+
    solvers do not count: their model is the serial one only to their tolerance."""
    infos = [SOLVERS["mfn"]] + [i for i in SOLVERS.values() if i.name != "mfn"]
    for info in infos:
        if info.distributed == "rows" and info.kind == "binary":
            return info.name
    return None


def _gathering(fit):
    @functools.wraps(fit)
    def gathered_fit(problem, params, start, state, log):
        if problem.comm is None:
            return fit(problem, params, start, state, log)
        X, rows = problem.X, problem.rows
        counts = np.diff(X.indptr)[rows]
        pick = np.concatenate([np.arange(X.indptr[r], X.indptr[r + 1]) for r in rows]) \
            if rows.size else np.zeros(0, np.int64)
        mine = (counts, X.indices[pick], X.data[pick], problem.t, problem.cost)
        parts = problem.comm.comm.allgather(mine)
        indptr = np.concatenate([[0], np.cumsum(np.concatenate([p[0] for p in parts]))])
        union = CSRBuffers.trusted(indptr.astype(np.int64),
                                   np.ascontiguousarray(np.concatenate([p[1] for p in parts]),
                                                        dtype=np.int32),
                                   np.concatenate([p[2] for p in parts]).astype(np.float64),
                                   X.n_features, X.n_features)
        t = np.concatenate([p[3] for p in parts])
        cost = np.concatenate([p[4] for p in parts])
        whole = Problem(union, np.arange(t.shape[0], dtype=np.int64), cost, problem.bias, t=t)
        return fit(whole, params, start, state, log)
    return gathered_fit


def install(monkeypatch=None):
    """Make mfn run on several ranks by gathering (module notes) unless a binary
    solver already does; returns the name of the solver to use.  With a pytest
    monkeypatch the registry is restored after the test."""
    name = distributed_binary_solver()
    if name is not None:
        return name
    info = SOLVERS["mfn"]
    stand_in = info._replace(fit=_gathering(info.fit), distributed="rows")
    if monkeypatch is not None:
        monkeypatch.setitem(SOLVERS, "mfn", stand_in)
    else:
        SOLVERS["mfn"] = stand_in
    return "mfn"
