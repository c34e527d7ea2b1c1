"""`linsvm.train`: a model from data, by one of the catalog's solvers.

Every solver minimizes its objective in linsvm's one scaling (docs/solvers.md): -c is
LIBLINEAR's C and -B LIBLINEAR's bias feature.  train() checks its inputs once
(linsvm.fit.inputs), forms the classes by the solver's kind (linsvm.problem.kinds:
LIBLINEAR's class order for classifiers, sorted ranks for ordinal solvers), each
example's cost factor (sample weight x class weight), the warm start
(linsvm.fit.warm), runs the solver -- one-vs-rest over a binary solver beyond two
classes (linsvm.fit.ovr) -- and returns the Model with the solve's statistics and
warnings (linsvm.fit.reporting).  On several MPI ranks every rank calls it with its
own block of the examples and gets the same model.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..errors import LinsvmError, ParameterError
from ..model.model import Model
from ..problem.catalog import get_solver, make_params, streaming_solvers
from ..problem.checks import max_row_norm, n_weights
from ..problem.kinds import KINDS
from ..problem.problem import Problem
from ..runtime.collective import agreed, collective_of
from ..runtime.memory import check_solve
from ..runtime.threads import check_jobs
from .finite import check_finite_scores, check_finite_solution
from .inputs import agree_inputs, class_weights, cost_factors, local_inputs, unit_costs
from .ovr import fit_binary
from .reporting import merge_column_warnings, merge_stats, report_warnings, warning_records
from .warm import check_start, start_of

__all__ = ["train", "abort_job_on_error"]


def train(X, y, solver="mfn", C=1.0, bias=None, tol=None, class_weight=None, sample_weight=None,
          init=None, seed=0, log=None, qid=None, rows=None, allow_many_classes=False,
          n_jobs=None, comm=None, **solver_options):
    """Train a linear model and return a `Model`.

    X: scipy sparse matrix or 2-D array (n_samples x n_features), or a
    linsvm.problem.CSRBuffers of one (validated once, for repeated calls); y: labels
    (for ordinal solvers: integer ranks, ordered by value).
    solver: a name of the catalog (linsvm.problem.catalog.SOLVERS); C > 0: cost
    (LIBLINEAR's -c); bias: value of the constant feature appended to every example
    (> 0), or <= 0 for none (LIBLINEAR's -B; its weight is regularized like the
    others unless the solver's regularize_bias is off); None: the solver's default
    (1, or none for the one-class solver); tol: the solver's stopping tolerance (-e; None: the solver's default);
    class_weight: {label: weight} scaling C for that class (-w), or "balanced":
    n_samples / (n_classes * n_j) for class j (scikit-learn's rule, -w balanced);
    sample_weight: one weight >= 0 per example scaling its loss (-W);
    init: a Model or a weight array (n_weights x n_columns) to warm-start from
    (a Model trained by the same solver in this process also hands over its
    solver state, e.g. dual variables, for alpha-seeding);
    seed: for solvers with random choices; log: a function taking progress
    lines (None: silent); qid: query ids for ranking solvers (pairs only
    within a query); rows: train on these rows of X only (y, sample_weight
    and qid stay full-length; cross-validation folds use this to avoid copying
    X); allow_many_classes: skip the check that a classifier's labels look like
    classes (integers, and not more than 100 classes with under 10 rows each on
    average; linsvm.problem.labels.check_class_like); n_jobs: threads for the
    columns of a one-vs-rest run (None or 0: the free cores,
    linsvm.runtime.threads.resolve_jobs; the weights are the same for every value);
    comm: an MPI communicator (mpi4py's MPI.COMM_WORLD, or a
    linsvm.runtime.collective.Collective) to train on several ranks at once: every
    rank calls train with the same arguments except X, y (and sample_weight, qid,
    rows), which are its own block of the examples (possibly none), and every rank
    gets the same model -- that of the union of the blocks, in rank order; a
    communicator of one rank, or None, is the serial program; solver_options: see
    `linsvm-train --help`.

    A solve that stops without certifying its stated accuracy (iteration cap,
    stall) emits a linsvm.ConvergenceWarning naming the solver, the measure
    reached and the tolerance; other notes (a warm start ignored) a
    linsvm.LinsvmWarning.  The messages are also in model.warnings.
    """
    info = get_solver(solver)
    kind = KINDS[info.kind]
    coll = collective_of(comm)
    fit = info.fit
    if coll is not None:
        info.refuse_distributed()
        fit = abort_job_on_error(fit, coll, info.name)
    params = make_params(info, C=C, tol=tol, seed=seed, options=solver_options)
    bias = _checked_bias(info, bias)
    check_jobs(n_jobs)
    Xb, y, labels, qid, rows, sample_weight = agreed(
        coll, local_inputs, X, y, qid, rows, sample_weight, coll is not None)
    n_total = Xb.n_rows                 # the rows of X (all ranks': class_like's measure)
    if coll is not None:
        labels, n_total = agree_inputs(coll, Xb, y, labels, kind)
    # on all rows of X: a CV fold decides as the whole set
    classes = kind.classes_from(y, labels, n_total, allow_many_classes)
    _refuse_weights(info, kind, class_weight, sample_weight)
    class_weight, balanced = class_weights(class_weight, y, classes, coll)
    if sample_weight is None and not class_weight and info.kind == "binary":
        base, cw = unit_costs(y.shape[0]), None     # no class-weight table to build
    else:
        base, cw = cost_factors(y, classes, sample_weight, class_weight)
    state = getattr(init, "solver_state_", None) if getattr(init, "solver", None) == info.name else None
    if init is not None:
        agreed(coll, check_start, init, Xb, rows, bias)
    nw = n_weights(Xb.n_features, bias)
    norm = agreed(coll, max_row_norm, Xb, rows, bias)       # refuses an overflowing row
    agreed(coll, check_solve, info, Xb, rows.shape[0], nw, classes.shape[0], params.options,
           log, streaming_solvers(info.kind), kind.noun)     # before allocating
    t0 = time.perf_counter()
    if info.kind == "binary":
        base_problem = Problem(Xb, rows, base, bias, comm=coll)    # rows, costs checked above
        W, results = fit_binary(fit, info, params, base_problem, y, classes, cw, init, state,
                                n_jobs, log)
    else:
        # rows and costs checked above, targets in range by construction: no second scan
        targets = kind.targets(y, classes)
        weighed = "codes" in targets and np.any(cw != 1.0)     # else base itself (x 1 is x)
        cost = base * cw[targets["codes"]] if weighed else base
        problem = Problem(Xb, rows, cost, bias, qid=qid if info.kind == "ordinal" else None,
                          comm=coll, **targets)
        res = fit(problem, params, start_of(info.kind, init, classes, Xb.n_features, bias),
                  state, log)
        W = weight_matrix(res.weights, nw, classes.shape[0] if info.kind == "multiclass" else 1)
        results = [res]
    check_finite_solution(info.name, params.C, Xb, rows, base, cw, bias, W, results)
    agreed(coll, check_finite_scores, info.name, Xb, rows, bias, W, norm)
    model, records = _model(info, params, bias, classes, W, results, class_weight, balanced,
                            time.perf_counter() - t0, coll)
    report_warnings(records)
    return model


def weight_matrix(weights, n_weights, n_columns):
    """A solver's weights as the (n_weights, n_columns) matrix of a model: its columns
    counted from the weights, or n_columns when there are no weights at all (data
    without features and no bias: a model of its offset or thresholds alone)."""
    W = np.asarray(weights, dtype=np.float64)
    return W.reshape(n_weights, -1) if n_weights > 0 else W.reshape(0, n_columns)


def _model(info, params, bias, classes, W, results, class_weight, balanced, seconds, coll):
    """The Model of a fit and its warnings as (message, is_convergence) records: one per
    kind of message over the columns of a one-vs-rest run (the model keeps every
    column's own message)."""
    kind = info.kind
    if info.kind == "binary":           # one column, or one-vs-rest
        kind = "binary" if W.shape[1] == 1 else "multiclass"
    col_stats = [dict(r.stats, warning=r.warning) if r.warning is not None else r.stats
                 for r in results]
    stats = merge_stats(col_stats, seconds)
    if coll is not None:
        stats.update(coll.stats())
    per_column = warning_records(results)
    if kind == "multiclass" and info.kind == "binary":       # one-vs-rest
        model_warnings = [f"class {classes[j]:g} vs rest: {msg}"
                          for j, recs in enumerate(per_column) for msg, _ in recs]
        records = merge_column_warnings(per_column, classes)
    else:
        records = [rec for recs in per_column for rec in recs]
        model_warnings = [msg for msg, _ in records]
    model_params = {"C": params.C, "bias": bias, "tol": params.tol, "seed": params.seed,
                    "loss": info.loss}
    if info.penalty != "l2":            # the L1-regularized solvers (cdn, glmnet)
        model_params["penalty"] = info.penalty
    elif info.probabilities:            # the file says what the scores are: log-odds, L2
        model_params["penalty"] = "l2"
    model_params.update((k, v) for k, v in params.options.items()
                        if coll is not None or k not in info.distributed_options)
    if class_weight:
        model_params["class_weight"] = ("balanced " if balanced else "") + \
            " ".join(f"{float(k):g}:{float(v):g}" for k, v in class_weight.items())
    model = Model._from_training(solver=info.name, classes=classes, weights=W, bias=bias,
                                 params=model_params, stats=stats, kind=kind,
                                 thresholds=results[0].thresholds if kind == "ordinal" else None,
                                 offset=results[0].offset if len(results) == 1 else 0.0)
    model.warnings = model_warnings     # every column's own message
    model.column_stats = col_stats
    states = [r.state for r in results]
    model.solver_state_ = states if info.kind == "binary" else states[0]
    return model, records


def _checked_bias(info, bias):
    """The bias feature's value (None: the solver's default_bias), -1 for none."""
    bias = info.default_bias if bias is None else bias
    try:
        bias = float(bias)
    except (TypeError, ValueError):
        raise ParameterError(f"bias must be a number, got {bias!r}") from None
    if not math.isfinite(bias):
        raise ParameterError(f"bias must be finite, got {bias!r}")
    return bias if bias > 0 else -1.0


def _refuse_weights(info, kind, class_weight, sample_weight):
    """Class weights for a kind without classes to weigh, and sample weights for a
    solver that would ignore them, are refused (ParameterError), not dropped."""
    if class_weight and not kind.weighs_classes:
        raise ParameterError(f"class weights (-w) are for classifiers; {info.name} trains "
                             f"{kind.noun} (its labels are not weighed by class)")
    if sample_weight is not None and info.kind == "oneclass":
        raise ParameterError(f"{info.name} ignores instance weights (as LIBLINEAR -s 21): "
                             "drop -W / sample_weight")


def abort_job_on_error(fit, coll, name):
    """`fit` for a distributed solve: an exception on this rank (other than Ctrl-C, which
    the launcher brings to every rank) ends the whole MPI job (Collective.abort), since
    the other ranks may be waiting for this one in a collective it will never reach."""
    def fit_or_abort(problem, params, start, state, log):
        try:
            return fit(problem, params, start, state, log)
        except KeyboardInterrupt:
            raise
        except Exception as exc:       # noqa: BLE001 - any fault on one rank ends the job
            what = str(exc) if isinstance(exc, LinsvmError) else f"{type(exc).__name__}: {exc}"
            coll.abort(f"{name} failed: {what}")
    return fit_or_abort
