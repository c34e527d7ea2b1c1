"""Command line: `linsvm train|predict|cv|synth` and the `linsvm-train`, `linsvm-predict`,
`linsvm-cv` stand-alone commands (same options).

This module parses options and prints; reading data is linsvm.data's job,
training linsvm.train's, the file format linsvm.model's.  Every user error
ends as one line `PROG: error: ...` on stderr and a non-zero exit status
(1 for bad data/model/files, 2 for bad usage); no traceback reaches the user,
and a failed command leaves no output file behind.
"""
from __future__ import annotations

import os
import sys
import time

import click
import numpy as np

from . import __version__
from .atomic import atomic_output, check_output_path
from .errors import LinsvmError
from .model import MODEL_FORMATS
from .solvers import SOLVERS

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class CommandError(click.ClickException):
    """A failure reported as one line `PROG: error: message`, exit status 1."""

    exit_code = 1

    def show(self, file=None):
        ctx = click.get_current_context(silent=True)
        prog = ctx.find_root().info_name if ctx is not None else "linsvm"
        click.echo(f"{prog}: error: {self.format_message()}", err=True)


def _fail_on_errors(func):
    """Turn LinsvmError / OSError / Ctrl-C inside a command into one-line errors."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except LinsvmError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            if isinstance(exc, BrokenPipeError):       # `linsvm-predict ... - | head`
                try:
                    sys.stdout = open(os.devnull, "w")
                finally:
                    raise SystemExit(0)
            where = f" '{exc.filename}'" if getattr(exc, "filename", None) else ""
            raise CommandError(f"cannot access{where}: {exc.strerror or exc}") from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            raise SystemExit(130) from None

    return wrapper


def _fmt_number(v):
    """Shortest text that reads back as the same double; integers without '.0'."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e16 else repr(v)


# ---------------------------------------------------------------------------- train

def _solver_help():
    lines = ["\b", "Solvers (-s), the objective each minimizes, and the meaning/default of -e:"]
    for info in SOLVERS.values():
        lines.append(f"  {info.name:10s} {info.objective}")
        lines.append(f"  {'':10s} -e: {info.tol_meaning}; default {info.default_tol:g}  [{info.paper}]")
    return "\n".join(lines)


def _solver_option_decorators(exclude=()):
    """One Click option per solver option name across the registry (defaults None:
    only options the user gives are passed, and train() checks they apply)."""
    seen = {}
    for info in SOLVERS.values():
        for name, opt in info.options.items():
            seen.setdefault(name, (opt, []))[1].append((info.name, opt.default))
    decorators = []
    for name, (opt, owners) in sorted(seen.items()):
        if name in exclude:
            continue
        flag = name.replace("_", "-")
        defaults = {d for _, d in owners}
        if len(defaults) == 1:
            where = f"{', '.join(n for n, _ in owners)}; default {opt.default}"
        else:
            where = "default " + ", ".join(f"{n} {d}" for n, d in owners)
        help_text = f"{opt.help} [{where}]"
        if opt.type is bool:
            decorators.append(click.option(f"--{flag}/--no-{flag}", name, default=None, help=help_text))
        else:
            flags = ("-p", "--p") if name == "p" else (f"--{flag}",)
            decorators.append(click.option(*flags, name, type=opt.type, default=None, help=help_text))
    return decorators


def _parse_class_weights(values):
    weights = {}
    for text in values:
        label, sep, weight = text.partition(":")
        try:
            if not sep:
                raise ValueError
            weights[float(label)] = float(weight)
        except ValueError:
            raise click.BadParameter(f"{text!r} is not LABEL:WEIGHT", param_hint="-w") from None
    return weights


def _read_instance_weights(path, n):
    try:
        with open(path, "rb") as fh:
            lines = fh.read().split()
    except OSError as exc:
        raise CommandError(f"cannot read instance weights '{path}': {exc.strerror}") from None
    values = np.empty(len(lines))
    for i, tok in enumerate(lines):
        try:
            values[i] = float(tok)
        except ValueError:
            raise CommandError(f"{path}: value {i + 1} {tok.decode(errors='replace')!r} is not a number") from None
    if values.shape[0] != n:
        raise CommandError(f"{path}: {values.shape[0]} instance weights for {n} training examples")
    return values


def _data_options(single_cost):
    """Options shared by `train` and `cv`: solver, objective, weights, seed, quiet."""
    if single_cost:
        cost = click.option("-c", "--cost", "C", default=1.0, show_default=True, type=float,
                            help="C: cost of the loss (LIBLINEAR's -c, the same for every solver).")
    else:
        cost = click.option("-c", "--cost", "C", default=None, metavar="GRID",
                            help="C values: a list 0.25,0.5,1 or a range lo:hi:step (default 1).")
    return [
        click.argument("training_file", type=click.Path(dir_okay=False, allow_dash=True)),
        click.option("-s", "--solver", default="mfn", show_default=True,
                     type=click.Choice(list(SOLVERS)), help="Solver (see the list below)."),
        cost,
        click.option("-e", "--tol", type=float, default=None,
                     help="Stopping tolerance (solver-specific meaning; see the list below)."),
        click.option("-B", "--bias", default=1.0, show_default=True, type=float,
                     help="Append a constant feature of this value to every example, its weight "
                          "regularized like the others (LIBLINEAR's -B); <= 0: no bias."),
        click.option("-w", "--class-weight", "class_weights", multiple=True, metavar="LABEL:WEIGHT",
                     help="Multiply C by WEIGHT for class LABEL (repeatable)."),
        click.option("-W", "--instance-weights", type=click.Path(dir_okay=False),
                     help="File with one weight >= 0 per training example, scaling its loss."),
        click.option("--seed", default=0, show_default=True, type=int,
                     help="Seed for random choices (and cross-validation folds)."),
        click.option("-q", "--quiet", is_flag=True, help="No progress or summary (warnings still show)."),
    ]


def _decorate(func, options):
    for deco in reversed(options):
        func = deco(func)
    return func


def _train_command(func):
    func = _decorate(_fail_on_errors(func), _solver_option_decorators())
    options = _data_options(single_cost=True)
    options[1:1] = [click.argument("model_file", required=False, type=click.Path(dir_okay=False))]
    options += [
        click.option("-i", "--init", "init_model", type=click.Path(dir_okay=False),
                     help="Warm start from this model (beta-/alpha-seeding)."),
        click.option("--model-format", type=click.Choice(list(MODEL_FORMATS)), default="linsvm",
                     show_default=True,
                     help="linsvm: linsvm's format, weights as text up to 2^20 weights and as binary "
                          "float64 (LIBLINEAR's file size or less, loads without parsing) above; "
                          "linsvm-text / linsvm-binary: always text / binary weights; liblinear: "
                          "LIBLINEAR's format (not for ordinal models)."),
        click.option("-v", "--cross-validation", "n_folds", type=click.IntRange(2), default=None,
                     help="N-fold cross-validation at -c instead of training (as LIBLINEAR's -v); "
                          "see `linsvm cv` for grids."),
    ]
    return click.command("train", context_settings=_CONTEXT, epilog=_solver_help(),
                         help="Train a linear SVM on TRAINING_FILE (SVM-light format; '-' is "
                              "stdin; gzip/bzip2/xz accepted) and write MODEL_FILE (default: "
                              "the training file's name + '.model'; '-' is stdout).  The model "
                              "path is checked before training.")(_decorate(func, options))


def _load_training(training_file, solver, instance_weights):
    """X, y, qid (None unless a ranking solver and several qids), sample weights."""
    from .data import load_svmlight

    if SOLVERS[solver].kind == "ordinal":
        X, y, qid = load_svmlight(training_file, with_qid=True)
        qid = qid if np.unique(qid).size > 1 else None
    else:
        (X, y), qid = load_svmlight(training_file), None
    sample_weight = _read_instance_weights(instance_weights, X.shape[0]) if instance_weights else None
    return X, y, qid, sample_weight


def _train(training_file, model_file, solver, C, tol, bias, class_weights, instance_weights,
           init_model, seed, model_format, quiet, n_folds, **solver_options):
    from .model import check_model_format, load_model
    from .train import train

    if model_file is None and n_folds is None:
        if training_file == "-":
            raise click.UsageError("MODEL_FILE is required when training from stdin")
        model_file = os.path.basename(training_file) + ".model"
    solver_options = {k: v for k, v in solver_options.items() if v is not None}
    log = None if quiet else (lambda line: click.echo(line, err=True))
    class_weight = _parse_class_weights(class_weights)
    if n_folds is None:             # what can fail at saving fails now, not after training
        check_model_format(model_format, solver=solver)
        check_output_path(model_file, what="model file", inputs=(training_file, instance_weights),
                          stdout_ok=True)
    init = load_model(init_model) if init_model else None
    t0 = time.perf_counter()
    X, y, qid, sample_weight = _load_training(training_file, solver, instance_weights)
    if n_folds is None:
        check_model_format(model_format, classes=np.unique(y))
    if log:
        log(f"read {X.shape[0]} examples, {X.shape[1]} features, {X.nnz} non-zeros "
            f"in {time.perf_counter() - t0:.3f}s")
    if n_folds is not None:
        from .cv import cross_validate

        res = cross_validate(X, y, solver=solver, Cs=[C], n_folds=n_folds, seed=seed, qid=qid,
                             bias=bias, tol=tol, class_weight=class_weight,
                             sample_weight=sample_weight, **solver_options)
        pt = res.points[0]
        name = {"accuracy": "Accuracy", "mae": "Mean absolute error"}[res.metric]
        value = f"{100 * pt.mean:g}%" if res.metric == "accuracy" else f"{pt.mean:g}"
        click.echo(f"Cross Validation {name} = {value}")
        return
    model = train(X, y, solver=solver, C=C, bias=bias, tol=tol, class_weight=class_weight,
                  sample_weight=sample_weight, init=init, seed=seed, log=log, qid=qid,
                  **solver_options)
    for warning in getattr(model, "warnings", []):
        click.echo(f"warning: {warning}", err=True)
    model.save(model_file, format=model_format)
    if log:
        st = model.stats
        extra = "".join(f", {k} = {st[k]:g}" for k in ("n_active", "cg_iter", "kkt_violation") if k in st)
        log(f"{solver}: objective = {st['objective']:.10g}, iterations = {st['n_iter']}{extra}, "
            f"time = {st['seconds']:.3f}s -> {model_file}")


train_cmd = _train_command(_train)


# ---------------------------------------------------------------------------- predict

@click.command("predict", context_settings=_CONTEXT,
               help="Predict TEST_FILE (SVM-light; '-' is stdin) with MODEL_FILE (linsvm or "
                    "LIBLINEAR format) and write one label per line (or the decision values) to "
                    "OUTPUT_FILE ('-' is stdout).  Streams: memory does not grow with the test "
                    "file.  Features beyond the model's width are ignored.  Prints "
                    "'Accuracy = x% (a/b)' to stderr, then for binary models precision, recall, "
                    "F1, PRBEP and ROC area, and for ordinal/ranking models the mean absolute "
                    "error, exact-rank and pairwise accuracy and Kendall tau (per qid when the "
                    "data has qids).")
@click.argument("test_file", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("model_file", type=click.Path(dir_okay=False))
@click.argument("output_file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--decision-values", is_flag=True,
              help="Write decision values (one per class column, space separated) instead of labels.")
@click.option("--chunk-rows", default=None, type=click.IntRange(1),
              help="Rows read and predicted at a time [default: 65536, fewer for models with "
                   "many classes, so that a chunk's scores stay within 2^22 numbers (32 MB)].")
@click.option("-q", "--quiet", is_flag=True, help="Do not print the accuracy.")
@_fail_on_errors
def predict_cmd(test_file, model_file, output_file, decision_values, chunk_rows, quiet):
    from .data import iter_svmlight
    from .metrics import report
    from .model import ScoreOverflowError, load_model

    check_output_path(output_file, what="output file", inputs=(test_file, model_file), stdout_ok=True)
    model = load_model(model_file)
    if chunk_rows is None:          # a chunk's scores: rows x columns doubles
        chunk_rows = max(256, min(65536, (1 << 22) // model.weights.shape[1]))
    label_text = {float(c): _fmt_number(c) for c in model.classes_}
    keep = not quiet and model.kind in ("binary", "ordinal")   # measures that need every score
    ys, preds, all_scores, qids = [], [], [], []
    n_total = n_correct = 0
    with atomic_output(output_file, stdout_ok=True) as out:
        for X, y, qid in iter_svmlight(test_file, chunk_rows=chunk_rows, with_qid=True):
            try:
                scores = model.decision_function(X)
            except ScoreOverflowError as exc:
                where = "standard input" if test_file == "-" else test_file
                raise CommandError(f"{where}: example {n_total + exc.row + 1}: {exc.detail}") from None
            pred = model.predict_from_scores(scores)
            if decision_values:
                S = scores.reshape(scores.shape[0], -1)
                out.write("".join(" ".join(map(repr, row.tolist())) + "\n" for row in S).encode("ascii"))
            else:
                text = [label_text[v] for v in pred.tolist()]
                out.write(("\n".join(text) + ("\n" if text else "")).encode("ascii"))
            n_total += y.shape[0]
            n_correct += int(np.count_nonzero(pred == y))
            if keep:
                ys.append(y)
                preds.append(pred)
                all_scores.append(scores)
                qids.append(qid)
    if quiet or not n_total:
        return
    click.echo(f"Accuracy = {100.0 * n_correct / n_total:g}% ({n_correct}/{n_total})", err=True)
    if keep:
        qid = np.concatenate(qids)
        m = report(model.kind, model.classes_, np.concatenate(ys), np.concatenate(preds),
                   np.concatenate(all_scores), qid=qid if np.unique(qid).size > 1 else None)
        if model.kind == "binary":
            click.echo(f"Precision = {100 * m['precision']:.4g}%, Recall = {100 * m['recall']:.4g}%, "
                       f"F1 = {100 * m['f1']:.4g}%, PRBEP = {100 * m['prbep']:.4g}%, "
                       f"ROC area = {m['roc_area']:.6g}", err=True)
        else:
            two = model.classes_.shape[0] == 2
            click.echo(f"Mean absolute error = {m['mae']:.6g}, Exact-rank accuracy = "
                       f"{100 * m['accuracy']:.4g}%, Pairwise accuracy = "
                       f"{100 * m['pairwise_accuracy']:.4g}%" + (" (= ROC area)" if two else "") +
                       f", Kendall tau = {m['kendall_tau']:.6g}"
                       + (" (per query)" if np.unique(qid).size > 1 else ""), err=True)


# ---------------------------------------------------------------------------- synth

@click.command("synth", context_settings=_CONTEXT,
               help="Write a realistic sparse text-like classification data set (Zipf vocabulary, "
                    "class topics, tf-idf rows of unit length) in SVM-light format: TRAIN_FILE and, "
                    "if given, TEST_FILE holding --test-fraction of the examples.")
@click.argument("train_file", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("test_file", required=False, type=click.Path(dir_okay=False))
@click.option("--n-samples", default=20000, show_default=True, type=click.IntRange(2))
@click.option("--n-features", default=20000, show_default=True, type=click.IntRange(1))
@click.option("--n-classes", default=2, show_default=True, type=click.IntRange(2))
@click.option("--noise", default=0.05, show_default=True, type=click.FloatRange(0, 0.5),
              help="Fraction of labels flipped.")
@click.option("--test-fraction", default=0.25, show_default=True, type=click.FloatRange(0, 1, max_open=True))
@click.option("--seed", default=0, show_default=True, type=int)
@_fail_on_errors
def synth_cmd(train_file, test_file, n_samples, n_features, n_classes, noise, test_fraction, seed):
    from .data import dump_svmlight
    from .synth import make_text_classification

    X, y = make_text_classification(n_samples=n_samples, n_features=n_features,
                                    n_classes=n_classes, noise=noise, seed=seed)
    n_test = int(round(test_fraction * n_samples)) if test_file else 0
    if n_test:
        dump_svmlight(X[n_samples - n_test:], y[n_samples - n_test:], test_file)
    dump_svmlight(X[:n_samples - n_test], y[:n_samples - n_test],
                  sys.stdout.buffer if train_file == "-" else train_file)


# ---------------------------------------------------------------------------- cv

def _cv(training_file, solver, C, log2c, p_grid, tol, bias, class_weights, instance_weights, seed,
        quiet, n_folds, n_jobs, metric, fmt, output_model, warm_start, **solver_options):
    import json

    from .cv import cross_validate, parse_grid
    from .train import train

    if C is not None and log2c is not None:
        raise click.UsageError("give either -c or --log2c, not both")
    Cs = parse_grid(C, "C") if C is not None else [1.0]
    if log2c is not None:
        Cs = [2.0 ** e for e in parse_grid(log2c, "log2c")]
    if any(c <= 0 for c in Cs):
        raise click.BadParameter("C values must be > 0", param_hint="-c")
    ps = parse_grid(p_grid, "p") if p_grid is not None else None
    solver_options = {k: v for k, v in solver_options.items() if v is not None}
    class_weight = _parse_class_weights(class_weights)
    log = None if quiet else (lambda line: click.echo(line, err=True))
    if output_model is not None:    # checked now, not after the whole grid
        check_output_path(output_model, what="output model", inputs=(training_file, instance_weights))
    X, y, qid, sample_weight = _load_training(training_file, solver, instance_weights)
    res = cross_validate(X, y, solver=solver, Cs=Cs, ps=ps, n_folds=n_folds, seed=seed,
                         n_jobs=n_jobs, warm_start=warm_start, metric=metric, qid=qid, log=log,
                         bias=bias, tol=tol, class_weight=class_weight,
                         sample_weight=sample_weight, **solver_options)
    best = res.best
    rows = [{"C": pt.C, "p": pt.p, "mean": pt.mean, "std": pt.std, "seconds": pt.seconds,
             "iterations": pt.n_iter} for pt in res.points]
    if fmt == "json":
        click.echo(json.dumps({"metric": res.metric, "folds": n_folds, "points": rows,
                               "best": {"C": best.C, "p": best.p, "mean": best.mean}}, indent=1))
    elif fmt == "tsv":
        click.echo("\t".join(["C", "p", res.metric, "std", "seconds", "iterations"]))
        for r in rows:
            click.echo("\t".join([repr(r["C"]), "" if r["p"] is None else repr(r["p"]),
                                  repr(r["mean"]), repr(r["std"]), f"{r['seconds']:.6f}",
                                  str(r["iterations"])]))
    else:
        head = f"{'C':>12s} " + (f"{'p':>6s} " if ps else "") + \
            f"{res.metric:>10s} {'std':>9s} {'train s':>9s} {'iter':>7s}"
        click.echo(head)
        for r in rows:
            click.echo(f"{r['C']:12.6g} " + (f"{r['p']:6.3g} " if ps else "") +
                       f"{r['mean']:10.6g} {r['std']:9.3g} {r['seconds']:9.3f} {r['iterations']:7d}")
        click.echo(f"best: C = {best.C:g}" + (f", p = {best.p:g}" if ps else "") +
                   f", {res.metric} = {best.mean:.6g}")
    if output_model:
        opts = dict(solver_options)
        if best.p is not None:
            opts["p"] = best.p
        model = train(X, y, solver=solver, C=best.C, bias=bias, tol=tol, class_weight=class_weight,
                      sample_weight=sample_weight, seed=seed, qid=qid, **opts)
        model.save(output_model)
        if log:
            log(f"trained at the best point on all data -> {output_model}")


def _cv_command(func):
    func = _decorate(_fail_on_errors(func), _solver_option_decorators(exclude=("p",)))
    options = _data_options(single_cost=False)
    options[3:3] = [
        click.option("--log2c", default=None, metavar="LO:HI:STEP",
                     help="C = 2^e for e in the range (e.g. -5:5:0.5)."),
        click.option("-p", "--p", "p_grid", default=None, metavar="GRID",
                     help="Grid of loss exponents p for solvers with -p (e.g. 1:2:0.1)."),
    ]
    options += [
        click.option("-v", "--folds", "n_folds", type=click.IntRange(2), default=5, show_default=True,
                     help="Number of folds (stratified; whole queries with qid data)."),
        click.option("-j", "--jobs", "n_jobs", type=click.IntRange(1), default=1, show_default=True,
                     help="Folds run in parallel threads; results do not depend on it."),
        click.option("--metric", type=click.Choice(["accuracy", "prbep", "roc", "mae", "pairwise"]),
                     default=None, help="Default: accuracy, or mae for ordinal solvers."),
        click.option("--format", "fmt", type=click.Choice(["table", "tsv", "json"]), default="table",
                     show_default=True),
        click.option("--output-model", type=click.Path(dir_okay=False), default=None,
                     help="Train at the best point on all data and save the model here."),
        click.option("--warm-start/--no-warm-start", default=True, show_default=True,
                     help="Seed each C from the previous one along the ascending grid."),
    ]
    return click.command("cv", context_settings=_CONTEXT, epilog=_solver_help(),
                         help="k-fold cross-validation of a solver over a grid of C (and p) on "
                              "TRAINING_FILE: a table of the metric's mean and std per grid "
                              "point, training time and iterations, and the best point.")(
        _decorate(func, options))


cv_cmd = _cv_command(_cv)


# ---------------------------------------------------------------------------- entry points

@click.group(context_settings=_CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="linsvm")
def cli():
    """linsvm: linear SVMs on large sparse data (finite Newton, sequential dual, ALM,
    cutting-plane solvers).  `linsvm COMMAND --help` for each command."""


cli.add_command(train_cmd)
cli.add_command(predict_cmd)
cli.add_command(synth_cmd)
cli.add_command(cv_cmd)


def main():
    """Entry point of `linsvm` and `python -m linsvm`."""
    cli.main(prog_name="linsvm")


def train_main():
    """Entry point of `linsvm-train`."""
    train_cmd.main(prog_name="linsvm-train")


def predict_main():
    """Entry point of `linsvm-predict`."""
    predict_cmd.main(prog_name="linsvm-predict")


def cv_main():
    """Entry point of `linsvm-cv`."""
    cv_cmd.main(prog_name="linsvm-cv")
