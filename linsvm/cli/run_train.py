"""`linsvm-train` once its options are parsed: read, train (or cross-validate with -v),
calibrate probabilities (-b 1), write the model, print the summary."""
from __future__ import annotations

import os
import time
from typing import NamedTuple

import click
import numpy as np

from .._lazy import LazyFunction
from ..fit.reporting import collecting_warnings, group_warnings
from ..fit.training import train
from ..io.streams import check_stdout, print_lines
from ..model.model import check_model_format, load_model
from ..problem.catalog import SOLVERS
from ..problem.kinds import KINDS
from ..problem.labels import distinct
from .console import Console, fmt_stat, print_warnings
from .job import open_job
from .messages import UsageLineError
from .runs import (check_output, cross_validate_on_console, drop_absent_weights, labels_located,
                   load_training, note_imbalance, parsed_options, read_line)
from .solver_options import (drop_no_effect, liblinear_problem_note, m_as_jobs, no_effect_note,
                             one_thread_m, parse_class_weights, resolve_solver)

__all__ = ["run"]

# what only -b 1 and -C run, imported when they run (start-up: linsvm._lazy)
calibrate = LazyFunction("linsvm.fit.calibration", "calibrate")
search_C = LazyFunction("linsvm.fit.search", "search_C")
best_line = LazyFunction("linsvm.fit.search", "best_line")
max_C_reached = LazyFunction("linsvm.fit.search", "max_C_reached")
MAX_C_WARNING = "WARNING: maximum C reached."       # LIBLINEAR's (linsvm.fit.search's)
check_C_search = LazyFunction("linsvm.fit.search", "check_C_search")


class TrainArgs(NamedTuple):
    """The train command's options as parsed (command_train), one record."""

    training_file: str
    model_file: str | None
    solver: object                  # a SolverChoice (linsvm.cli.solver_options)
    C: float
    tol: float | None
    bias: float | None
    class_weights: tuple
    instance_weights: str | None
    init_model: str | None
    seed: int
    model_format: str
    quiet: bool
    n_folds: int | None
    allow_many_classes: bool
    n_jobs: int
    probability: int
    shards: bool
    find_C: bool
    cache: bool | None              # --cache / --no-cache (None: LINSVM_CACHE decides)
    solver_options: dict            # the solver options given (parsed_options)


def run(**parsed):
    """The train command (module notes): Click's parsed options, as one TrainArgs."""
    _train(parsed_options(TrainArgs, parsed))


def _train(a):
    """The train command's body for its options `a` (a TrainArgs)."""
    probability, n_jobs = a.probability, a.n_jobs
    if a.find_C and probability:
        raise UsageLineError("-b 1 with -C: the parameter search writes no model")
    model_file = _model_file(a)
    solver_options = dict(a.solver_options)
    spare_threads = one_thread_m(a.solver, solver_options)
    ignored = drop_no_effect(a.solver, solver_options, _given("C"), a.class_weights)
    if ignored:     # LIBLINEAR's options the code ignores: the model trained without them
        a = a._replace(C=1.0 if "-c" in ignored else a.C,
                       class_weights=() if "-w" in ignored else a.class_weights)
    problem_note = liblinear_problem_note(a.solver, solver_options, a.bias)
    solver = resolve_solver(a.solver, solver_options, a.bias)
    if a.find_C:
        check_C_search(solver)
    class_weight = parse_class_weights(a.class_weights)
    logistic = SOLVERS[solver].probabilities      # probabilities of its own
    if probability and not logistic:
        check_probability_request(solver, a.n_folds)
    job = open_job(solver, probability and not logistic)
    console = Console(a.quiet, silent=not job.root)
    if ignored:
        console.note(no_effect_note(a.solver, ignored))
    if probability and logistic:
        console.note(f"-b 1: a {solver} model gives probabilities from its decision values "
                     "(linsvm-predict -b 1); no sigmoids are fitted")
        probability = 0
    log = console.log
    if (a.n_folds is not None or a.find_C) and job.root:    # the results go to stdout
        check_stdout("the cross-validation results" if a.n_folds is not None and not a.find_C
                     else "the parameter search's results")
    if spare_threads is not None:
        n_jobs = m_as_jobs(console.note, solver, spare_threads, n_jobs)
    writes_model = a.n_folds is None and not a.find_C
    if writes_model:    # what can fail at saving fails now, not after training
        check_model_format(a.model_format, solver=solver, probability=bool(probability))
        job.run(check_output, model_file, "model file", a.training_file, a.instance_weights,
                a.shards, stdout_ok=True, init_model=a.init_model, root_only=True)
    init = job.run(load_model, a.init_model) if a.init_model else None
    t0 = time.perf_counter()
    data = load_training(a.training_file, solver, a.instance_weights, console, job, a.shards,
                         a.cache)
    X, y, qid, sample_weight = data.X, data.y, data.qid, data.sample_weight
    if writes_model:
        check_model_format(a.model_format, solver=solver,
                           classes=distinct(y) if data.labels is None else data.labels)
    if log:
        log(read_line(data, X.n_features, time.perf_counter() - t0, job))
    class_weight = drop_absent_weights(console, a.solver, class_weight, data)
    note_imbalance(console, y, solver, class_weight, job)
    options = dict(solver=solver, bias=a.bias, tol=a.tol, class_weight=class_weight,
                   seed=a.seed, allow_many_classes=a.allow_many_classes, **solver_options)
    if a.find_C:
        with labels_located(data, job):
            _search(console, job, X, y, a.C, a.n_folds or 5, qid, sample_weight, a.quiet,
                    options)
        return
    if a.n_folds is not None:
        with labels_located(data, job):
            res = cross_validate_on_console(console, "folds", X, y, Cs=[a.C], n_folds=a.n_folds,
                                            qid=qid, sample_weight=sample_weight, comm=job.comm,
                                            keep_predictions=True, **options)
        parts = job.gather((y, res.points[0].predictions))       # rank order: the serial rows
        y_all = np.concatenate([part_y for part_y, _ in parts])
        pred_all = np.concatenate([part_pred for _, part_pred in parts])
        if job.root:
            print_lines(*KINDS[SOLVERS[solver].kind].cv_lines(np.unique(y_all), y_all, pred_all))
        return
    with collecting_warnings() as records, labels_located(data, job):    # warnings printed here
        model = train(X, y, C=a.C, sample_weight=sample_weight, init=init, log=log, qid=qid,
                      n_jobs=n_jobs, comm=job.comm, **options)
    print_warnings(console, records)
    if probability:
        model = _calibrate(console, model, X, y, sample_weight, C=a.C, n_jobs=n_jobs, **options)
    job.run(model.save, model_file, format=a.model_format, root_only=True)
    if log:
        _summary(log, solver, model, model_file, problem_note)


def _given(name):
    """Whether the command's option `name` was given (not left at its default)."""
    source = click.get_current_context().get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


def _model_file(a):
    """The model file to write: MODEL_FILE, else the training file's name + '.model'
    (None for -v and -C, which write none)."""
    if a.model_file is not None or a.n_folds is not None or a.find_C:
        return a.model_file
    if a.training_file == "-":
        raise click.UsageError("MODEL_FILE is required when training from stdin")
    if a.shards:
        raise click.UsageError("MODEL_FILE is required with --shards")
    return os.path.basename(a.training_file) + ".model"


def _summary(log, solver, model, model_file, problem_note=""):
    """The summary lines of a training: objective, iterations, what else the solver
    reports, the time and the model file, and problem_note (the options of linsvm's
    own default for a LIBLINEAR code's problem: liblinear_problem_note); the
    communication of a distributed one."""
    st = model.stats
    extra = "".join(f", {k} = {fmt_stat(st[k])}" for k in ("n_active", "cg_iter", "kkt_violation")
                    if k in st)
    if SOLVERS[solver].penalty == "l1":     # sparse models: how many weights are used
        extra += f", nnz = {np.count_nonzero(model.weights)} of {model.weights.size}"
    log(f"{solver}: objective = {st['objective']:.10g}, iterations = {st['n_iter']}{extra}, "
        f"time = {st['seconds']:.3f}s -> {model_file}{problem_note}")
    if "ranks" in st:
        log(_comm_summary(st))


def _comm_summary(st):
    """The summary line of a distributed training: ranks and communication (rank 0's
    time inside collectives, waiting for slower ranks included)."""
    how = {"split": ", the weight vector split over the ranks",
           "allreduce": ", the weight vector allreduced"}.get(st.get("weight_exchange"), "")
    return (f"{st['ranks']} MPI ranks: {st['comm_seconds']:.3f}s communicating in "
            f"{st['comm_calls']} collectives, {st['comm_bytes'] / 1e6:.4g} MB sent per rank{how}")


def check_probability_request(solver, n_folds):
    """-b 1 is refused, before any reading or training, where it has no meaning."""
    kind = KINDS[SOLVERS[solver].kind]
    if not kind.classifier:
        raise UsageLineError(f"-b 1: {solver} trains {kind.noun}, which has no class "
                             "probabilities")
    if n_folds is not None:
        raise UsageLineError("-b 1 with -v: cross-validation writes no model to store "
                             "probability sigmoids in")


def _calibrate(console, model, X, y, sample_weight, **options):
    """linsvm.fit.calibration.calibrate (5 folds), its progress and warnings on the console."""
    console.progress("probability: fitting sigmoids on 5-fold out-of-fold decision values")
    t0 = time.perf_counter()
    with collecting_warnings() as records:
        model = calibrate(model, X, y, n_folds=5, sample_weight=sample_weight, **options)
    console.done()
    print_warnings(console, [("probability folds: " + m, c) for m, c in records])
    if console.log:
        console.log(f"probability sigmoids fitted in {time.perf_counter() - t0:.3f}s")
    return model


def _search(console, job, X, y, C, n_folds, qid, sample_weight, quiet, options):
    """-C: LIBLINEAR's parameter search (linsvm.fit.search) and its lines on stdout, each
    point's as it is computed, LIBLINEAR's warning when the best C is the largest (not
    with -q, which silences it in LIBLINEAR too), the best point last."""
    echo = print_lines if job.root else (lambda *a, **k: None)
    C0 = C if _given("C") else None
    p0 = options.pop("epsilon", None)
    echo(f"Doing parameter search with {n_folds}-fold cross validation.")
    with collecting_warnings() as records:
        res = search_C(X, y, n_folds=n_folds, C0=C0, p0=p0, qid=qid, sample_weight=sample_weight,
                       comm=job.comm, log=None if quiet else echo,
                       progress=lambda done, total: console.progress(
                           f"parameter search: {done}/{total} models trained"), **options)
    console.done()
    print_warnings(console, [(f"{message} (and at {len(points) - 1} more grid points)"
                              if len(points) > 1 else message, convergence)
                             for (message, convergence), points in group_warnings([[r] for r in records])])
    if not quiet and max_C_reached(res):
        echo(MAX_C_WARNING)                         # LIBLINEAR's line, before its last
    echo(best_line(res))
