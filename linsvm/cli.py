"""Command line: `linsvm train|predict|synth` and the `linsvm-train`, `linsvm-predict`
stand-alone commands (same options).

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
from .errors import LinsvmError
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


def _solver_option_decorators():
    """One Click option per solver option name across the registry (defaults None:
    only options the user gives are passed, and train() checks they apply)."""
    seen = {}
    for info in SOLVERS.values():
        for name, opt in info.options.items():
            seen.setdefault(name, (opt, []))[1].append(info.name)
    decorators = []
    for name, (opt, owners) in sorted(seen.items()):
        flag = name.replace("_", "-")
        help_text = f"{opt.help} [{', '.join(owners)}; default {opt.default}]"
        if opt.type is bool:
            decorators.append(click.option(f"--{flag}/--no-{flag}", name, default=None, help=help_text))
        else:
            decorators.append(click.option(f"--{flag}", name, type=opt.type, default=None, help=help_text))
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


def _train_command(func):
    func = _fail_on_errors(func)
    for deco in reversed(_solver_option_decorators()):
        func = deco(func)
    options = [
        click.argument("training_file", type=click.Path(dir_okay=False, allow_dash=True)),
        click.argument("model_file", required=False, type=click.Path(dir_okay=False)),
        click.option("-s", "--solver", default="mfn", show_default=True,
                     type=click.Choice(list(SOLVERS)), help="Solver (see the list above)."),
        click.option("-c", "--cost", "C", default=1.0, show_default=True, type=float,
                     help="C: cost of the loss (LIBLINEAR's -c, the same for every solver)."),
        click.option("-e", "--tol", type=float, default=None,
                     help="Stopping tolerance (solver-specific meaning; see the list above)."),
        click.option("-B", "--bias", default=1.0, show_default=True, type=float,
                     help="Append a constant feature of this value to every example, its weight "
                          "regularized like the others (LIBLINEAR's -B); <= 0: no bias."),
        click.option("-w", "--class-weight", "class_weights", multiple=True, metavar="LABEL:WEIGHT",
                     help="Multiply C by WEIGHT for class LABEL (repeatable)."),
        click.option("-W", "--instance-weights", type=click.Path(dir_okay=False),
                     help="File with one weight >= 0 per training example, scaling its loss."),
        click.option("-i", "--init", "init_model", type=click.Path(dir_okay=False),
                     help="Warm start from this model (beta-/alpha-seeding)."),
        click.option("--seed", default=0, show_default=True, type=int, help="Seed for random choices."),
        click.option("--model-format", type=click.Choice(["linsvm", "liblinear"]), default="linsvm",
                     show_default=True, help="Write the model in linsvm's format or LIBLINEAR's."),
        click.option("-q", "--quiet", is_flag=True, help="No progress or summary (warnings still show)."),
    ]
    for deco in reversed(options):
        func = deco(func)
    return click.command("train", context_settings=_CONTEXT, epilog=_solver_help(),
                         help="Train a linear SVM on TRAINING_FILE (SVM-light format; '-' is "
                              "stdin; gzip/bzip2/xz accepted) and write MODEL_FILE (default: "
                              "the training file's name + '.model').")(func)


def _train(training_file, model_file, solver, C, tol, bias, class_weights, instance_weights,
           init_model, seed, model_format, quiet, **solver_options):
    from .data import load_svmlight
    from .model import load_model
    from .train import train

    if model_file is None:
        if training_file == "-":
            raise click.UsageError("MODEL_FILE is required when training from stdin")
        model_file = os.path.basename(training_file) + ".model"
    solver_options = {k: v for k, v in solver_options.items() if v is not None}
    log = None if quiet else (lambda line: click.echo(line, err=True))
    class_weight = _parse_class_weights(class_weights)
    init = load_model(init_model) if init_model else None
    ranking = SOLVERS[solver].kind == "ordinal"
    t0 = time.perf_counter()
    if ranking:
        X, y, qid = load_svmlight(training_file, with_qid=True)
        qid = qid if np.unique(qid).size > 1 else None
    else:
        (X, y), qid = load_svmlight(training_file), None
    t_read = time.perf_counter() - t0
    sample_weight = _read_instance_weights(instance_weights, X.shape[0]) if instance_weights else None
    if log:
        log(f"read {X.shape[0]} examples, {X.shape[1]} features, {X.nnz} non-zeros in {t_read:.3f}s")
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
@click.option("--chunk-rows", default=65536, show_default=True, type=click.IntRange(1),
              help="Rows read and predicted at a time.")
@click.option("-q", "--quiet", is_flag=True, help="Do not print the accuracy.")
@_fail_on_errors
def predict_cmd(test_file, model_file, output_file, decision_values, chunk_rows, quiet):
    from .data import iter_svmlight
    from .metrics import report
    from .model import load_model

    model = load_model(model_file)
    label_text = {float(c): _fmt_number(c) for c in model.classes_}
    keep = not quiet and model.kind in ("binary", "ordinal")   # measures that need every score
    ys, preds, all_scores, qids = [], [], [], []
    n_total = n_correct = 0
    with _Output(output_file) as out:
        for X, y, qid in iter_svmlight(test_file, chunk_rows=chunk_rows, with_qid=True):
            scores = model.decision_function(X)
            pred = model.predict_from_scores(scores)
            if decision_values:
                S = scores.reshape(scores.shape[0], -1)
                out.write("".join(" ".join(map(repr, row.tolist())) + "\n" for row in S))
            else:
                text = [label_text[v] for v in pred.tolist()]
                out.write("\n".join(text) + ("\n" if text else ""))
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
            click.echo(f"Mean absolute error = {m['mae']:.6g}, Exact-rank accuracy = "
                       f"{100 * m['accuracy']:.4g}%, Pairwise accuracy = "
                       f"{100 * m['pairwise_accuracy']:.4g}%, Kendall tau = {m['kendall_tau']:.6g}"
                       + (" (per query)" if np.unique(qid).size > 1 else ""), err=True)


class _Output:
    """Text output to stdout ('-') or to a file written atomically (temp + rename)."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        if self.path == "-":
            self.fh = sys.stdout
            return self.fh
        directory = os.path.dirname(os.path.abspath(self.path))
        self.tmp = os.path.join(directory, f".{os.path.basename(self.path)}.tmp{os.getpid()}")
        self.fh = open(self.tmp, "w", encoding="ascii", newline="\n")
        return self.fh

    def __exit__(self, exc_type, exc, tb):
        if self.path == "-":
            self.fh.flush()
            return False
        self.fh.close()
        if exc_type is None:
            os.replace(self.tmp, self.path)
        else:
            os.unlink(self.tmp)
        return False


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


# ---------------------------------------------------------------------------- entry points

@click.group(context_settings=_CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="linsvm")
def cli():
    """linsvm: linear SVMs on large sparse data (finite Newton, sequential dual, ALM,
    cutting-plane solvers).  `linsvm COMMAND --help` for each command."""


cli.add_command(train_cmd)
cli.add_command(predict_cmd)
cli.add_command(synth_cmd)


def main():
    """Entry point of `linsvm` and `python -m linsvm`."""
    cli.main(prog_name="linsvm")


def train_main():
    """Entry point of `linsvm-train`."""
    train_cmd.main(prog_name="linsvm-train")


def predict_main():
    """Entry point of `linsvm-predict`."""
    predict_cmd.main(prog_name="linsvm-predict")
