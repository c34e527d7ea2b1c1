"""A binary solver on two classes, or one-vs-rest on more, on threads.

Column j of a one-vs-rest model is class j against the rest: the examples of
class j get t = +1 and class j's weight, all others t = -1 and weight 1, as in
LIBLINEAR.  On two classes one column is trained, classes[0] being t = +1 (and
each class its own weight).  The columns run on Python threads (their compiled
solves release the GIL), dealt in order from a shared counter; each column's
solve reads only shared inputs and its own start, state and seed, and its kernels
run with a fixed thread count, so the weights are the same bit for bit whatever
the number of threads and whichever thread runs a column.
"""
from __future__ import annotations

from types import MappingProxyType

import numpy as np

from .._kernels import binary_targets
from ..problem.checks import n_weights
from ..runtime.interrupt import run_in_threads
from ..runtime.threads import resolve_jobs
from .warm import warm_starts

__all__ = ["fit_binary", "one_vs_rest"]


def one_vs_rest(fit_column, classes, W, jobs, log):
    """Run fit_column(j, log_j) -> (beta, result) for every column j on `jobs`
    threads (linsvm.runtime.interrupt.run_in_threads); fills W[:, j] and returns the
    results in column order.  Progress lines of a column are prefixed `class L: `
    when jobs > 1 (one line each, interleaved between columns); with one job each
    column is announced by `class L vs rest`.  Ctrl-C stops dealing columns and
    stops the running solves."""
    def column_log(j):
        if log is None:
            return None
        if jobs <= 1:
            return log
        prefix = f"class {classes[j]:g}: "
        return lambda line: log(prefix + line)

    def run(j):
        if log is not None and jobs <= 1:
            log(f"class {classes[j]:g} vs rest")
        beta, result = fit_column(j, column_log(j))
        W[:, j] = beta
        return result

    return run_in_threads(run, len(classes), jobs)


def fit_binary(fit, info, params, base_problem, y, classes, cw, init, state, n_jobs, log):
    """The binary solver `fit` (of SolverInfo `info`) on two classes (one column:
    classes[0] is t = +1) or one-vs-rest on more (column j: class j against the rest,
    on one_vs_rest's threads).  base_problem: the examples (X, rows, bias, comm) with
    their per-example costs, rows and costs checked (train()); cw: per-class weights
    or None (all ones).  Returns (W, the FitResults in column order)."""
    Xb, bias, base = base_problem.X, base_problem.bias, base_problem.cost
    n_columns = 1 if classes.shape[0] == 2 else classes.shape[0]
    starts = warm_starts(init, classes, Xb.n_features, bias, n_columns)
    states = state if isinstance(state, list) and len(state) == n_columns else [None] * n_columns
    if n_columns > 1 and "n_threads" in info.options and not (params["n_threads"] and n_jobs):
        # one-vs-rest: columns are the parallel unit, one kernel thread each (-j 0: the
        # free cores); -m N > 1 without -j spends its N threads on the columns
        # (independent solves scale where one column's passes are too short to share);
        # -m N with -j J: J columns at a time of N kernel threads each
        if params["n_threads"] > 1:
            n_jobs = params["n_threads"]
        params = params._replace(options=MappingProxyType(dict(params.options, n_threads=1)))

    unweighed = cw is None or bool(np.all(cw == 1.0))

    def fit_column(j, log_j):
        t = binary_targets(y, classes[j])
        if unweighed:
            cost = base                     # the sample weights, or all ones (x 1 is x)
        elif n_columns == 1:
            cost = base * np.where(t > 0, cw[0], cw[1])
        else:
            cost = base * np.where(t > 0, cw[j], 1.0)
        res = fit(base_problem.binary_column(t, cost), params, starts[j], states[j], log_j)
        beta, res.weights = res.weights, None   # W keeps the column: no second copy of W
        return beta, res

    nw = n_weights(Xb.n_features, bias)
    if n_columns == 1:
        beta, res = fit_column(0, log)
        W = np.ascontiguousarray(beta, dtype=np.float64)   # handed over, not copied
        W = (W if W.base is None else W.copy()).reshape(nw, 1)
        res.weights = W[:, 0]
        return W, [res]
    W = np.empty((nw, n_columns))
    inner = params["n_threads"] if "n_threads" in info.options else 1
    jobs = resolve_jobs(n_jobs, n_columns, inner, nnz=Xb.nnz)
    if base_problem.comm is not None:
        jobs = 1            # every rank must run the columns' collectives in one order
    results = one_vs_rest(fit_column, classes, W, jobs, log)
    for j, res in enumerate(results):
        res.weights = W[:, j]
    return W, results
