"""`linsvm-cv` once its options are parsed: cross-validate over the grid, print the
table and the best point, and train at it with --output-model."""
from __future__ import annotations

import json
import time
from typing import NamedTuple

import click
import numpy as np

from ..fit.cv import parse_grid
from ..fit.reporting import collecting_warnings
from ..fit.search import check_C_search
from ..fit.training import train
from ..io.atomic import same_target
from ..io.streams import check_stdout, print_lines
from ..problem.catalog import SOLVERS
from ..problem.kinds import PERCENT_METRICS
from .console import Console, print_warnings
from .messages import UsageLineError
from .plot import check_plot_file, plot_cv
from .job import open_job
from .runs import (check_output, cross_validate_on_console, drop_absent_weights, labels_located,
                   load_training, note_imbalance, parsed_options, read_line)
from .solver_options import (drop_no_effect, no_effect_note, one_thread_m, one_thread_note,
                             parse_class_weights, resolve_solver)

__all__ = ["run"]


class CvArgs(NamedTuple):
    """The cv command's options as parsed (command_cv), one record."""

    training_file: str
    solver: object                  # a SolverChoice (linsvm.cli.solver_options)
    C: str | None                   # the grids as given
    log2c: str | None
    p_grid: str | None
    tol: float | None
    bias: float | None
    class_weights: tuple
    instance_weights: str | None
    seed: int
    quiet: bool
    n_folds: int
    n_jobs: int
    metric: str | None
    fmt: str
    output_model: str | None
    warm_start: bool
    allow_many_classes: bool
    shards: bool
    plot_file: str | None
    cache: bool | None              # --cache / --no-cache (None: LINSVM_CACHE decides)
    solver_options: dict            # the solver options given (parsed_options)


def run(**parsed):
    """The cv command: Click's parsed options, as one CvArgs."""
    _cv(parsed_options(CvArgs, parsed))


def _cv(a):
    """The cv command's body for its options `a` (a CvArgs)."""
    Cs, ps = _grids(a)
    solver_options = dict(a.solver_options)
    spare_threads = one_thread_m(a.solver, solver_options)
    # -n and -w with a LIBLINEAR code that ignores them (-c and -p are this command's grids)
    ignored = drop_no_effect(a.solver, solver_options, False, a.class_weights)
    solver = resolve_solver(a.solver, solver_options, a.bias)
    if len(Cs) > 1:
        check_C_search(solver, "-c" if a.C is not None else "--log2c")
    class_weight = parse_class_weights(() if "-w" in ignored else a.class_weights)
    job = open_job(solver)
    console = Console(a.quiet, silent=not job.root)
    if ignored:
        console.note(no_effect_note(a.solver, ignored))
    if spare_threads is not None:
        console.note(f"{one_thread_note(solver, spare_threads)}; -m is ignored (-j runs the "
                     "folds in parallel)")
    log = console.log
    if job.root:
        check_stdout("the cross-validation results")
    echo = print_lines if job.root else (lambda *args, **kw: None)    # results: rank 0's
    if a.output_model is not None:    # checked now, not after the whole grid
        job.run(check_output, a.output_model, "output model", a.training_file,
                a.instance_weights, a.shards, root_only=True)
    if a.plot_file is not None:
        _check_plot(job, a.plot_file, a.training_file, a.instance_weights, a.shards,
                    a.output_model)
    t0 = time.perf_counter()
    data = load_training(a.training_file, solver, a.instance_weights, console, job, a.shards,
                         a.cache)
    X, y, qid, sample_weight = data.X, data.y, data.qid, data.sample_weight
    if log:
        log(read_line(data, X.n_features, time.perf_counter() - t0, job))
    class_weight = drop_absent_weights(console, a.solver, class_weight, data)
    note_imbalance(console, y, solver, class_weight, job)
    options = dict(solver=solver, bias=a.bias, tol=a.tol, class_weight=class_weight,
                   seed=a.seed, sample_weight=sample_weight, qid=qid,
                   allow_many_classes=a.allow_many_classes, comm=job.comm, **solver_options)
    with labels_located(data, job):
        res = cross_validate_on_console(console, "models", X, y, Cs=Cs, ps=ps,
                                        n_folds=a.n_folds, n_jobs=a.n_jobs,
                                        warm_start=a.warm_start, metric=a.metric, log=log,
                                        **options)
    _print_result(echo, res, a.fmt, a.n_folds, ps)
    if a.plot_file is not None:
        job.run(plot_cv, res, a.plot_file, solver=solver, root_only=True)
    edge = _edge_warning(res, Cs)
    if edge:
        console.warn(edge)
    if a.output_model:
        best = res.best
        if best.p is not None:              # alm's p, or the tube width of svr (-p)
            options["p" if "p" in SOLVERS[solver].options else "epsilon"] = best.p
        with collecting_warnings() as records:
            model = train(X, y, C=best.C, **options)
        print_warnings(console, records)
        job.run(model.save, a.output_model, root_only=True)
        if log:
            log(f"trained at the best point on all data -> {a.output_model}")


def _grids(a):
    """The C values (-c or --log2c; default 1) and the p values (-p, or None) of the grid."""
    if a.C is not None and a.log2c is not None:
        raise click.UsageError("give either -c or --log2c, not both")
    Cs = parse_grid(a.C, "C") if a.C is not None else [1.0]
    if a.log2c is not None:
        Cs = [2.0 ** e for e in parse_grid(a.log2c, "log2c")]
    if any(c <= 0 for c in Cs):
        raise click.BadParameter("C values must be > 0", param_hint="-c")
    ps = parse_grid(a.p_grid, "p") if a.p_grid is not None else None
    return Cs, ps


def _print_result(echo, res, fmt, n_folds, ps):
    """The grid's results on stdout: a table for people (accuracy, prbep, f1 and pairwise
    as percentages) and the best point, or tsv / json (fractions, full precision)."""
    best = res.best
    rows = [{"C": pt.C, "p": pt.p, "mean": pt.mean, "std": pt.std, "seconds": pt.seconds,
             "iterations": pt.n_iter} for pt in res.points]

    def machine(v):                     # undefined (nan) is null in json, empty in tsv
        return None if np.isnan(v) else v
    if fmt == "json":
        for r in rows:
            r["mean"], r["std"] = machine(r["mean"]), machine(r["std"])
        echo(json.dumps({"metric": res.metric, "folds": n_folds, "points": rows,
                               "best": {"C": best.C, "p": best.p, "mean": machine(best.mean)}},
                              indent=1))
    elif fmt == "tsv":
        echo("\t".join(["C", "p", res.metric, "std", "seconds", "iterations"]))
        for r in rows:
            echo("\t".join([repr(r["C"]), "" if r["p"] is None else repr(r["p"]),
                                  *("" if np.isnan(r[k]) else repr(r[k]) for k in ("mean", "std")),
                                  f"{r['seconds']:.6f}",
                                  str(r["iterations"])]))
    else:
        pct = res.metric in PERCENT_METRICS

        def show(v, width, digits):
            if np.isnan(v):
                return f"{'n/a':>{width}s}"
            return f"{100 * v:{width - 1}.{digits}g}%" if pct else f"{v:{width}.{digits}g}"
        head = f"{'C':>12s} " + (f"{'p':>6s} " if ps else "") + \
            f"{res.metric:>10s} {'std':>9s} {'train s':>9s} {'iter':>7s}"
        echo(head)
        for r in rows:
            echo(f"{r['C']:12.6g} " + (f"{r['p']:6.3g} " if ps else "") +
                       f"{show(r['mean'], 10, 6)} {show(r['std'], 9, 3)} {r['seconds']:9.3f} "
                       f"{r['iterations']:7d}")
        echo(f"best: C = {best.C:g}" + (f", p = {best.p:g}" if ps else "") +
                   f", {res.metric} = {show(best.mean, 0, 6).strip()}")



def _edge_warning(res, Cs):
    """A warning when the best C is the smallest or largest of a grid of several Cs
    (and the metric is not flat along it): the best may lie beyond the grid."""
    best = res.best
    line = [pt.mean for pt in res.points if pt.p == best.p and not np.isnan(pt.mean)]
    if len(set(Cs)) < 2 or np.isnan(best.mean) or max(line) == min(line):
        return None
    if best.C == min(Cs):
        end, way = "smallest", "smaller"
    elif best.C == max(Cs):
        end, way = "largest", "larger"
    else:
        return None
    return (f"the best C = {best.C:g} is the {end} C of the grid: the best may lie beyond it; "
            f"try {way} C values")


def _check_plot(job, plot_file, training_file, instance_weights, shards, output_model):
    """--plot, before the grid runs: a .png or .svg name, matplotlib importable, a path
    that can be written and is none of the inputs or the output model."""
    check_plot_file(plot_file)
    if output_model is not None and same_target(plot_file, output_model):
        raise UsageLineError(f"--plot {plot_file} is also the --output-model file")
    job.run(check_output, plot_file, "plot file", training_file, instance_weights, shards,
            root_only=True)
