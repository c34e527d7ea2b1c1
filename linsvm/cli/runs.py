"""What the train and cv commands share once they run: reading the training data
(whole, or each MPI rank its share), checking output paths, the note on imbalanced
classes, cross-validation with its progress on the console, and the file and line
of a label that the solver's kind refuses (`labels_located`)."""
from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np

from .._lazy import LazyFunction
from ..fit.finite import NonFiniteSolutionError
from ..fit.reporting import collecting_warnings
from ..errors import DataError, NoExamplesError
from ..io.atomic import check_output_path
from ..io.cache import open_data
from ..io.places import RowPlaces
from ..io.svmlight import load_svmlight_buffers
from ..io.weights import read_instance_weights
from ..problem.catalog import SOLVERS
from ..problem.checks import OverflowingRowError
from ..problem.kinds import KINDS
from ..problem.labels import LabelError, distinct, distinct_counts, format_label
from .console import print_warnings
from .job import Job

__all__ = ["parsed_options", "TrainingData", "load_training", "binary_input", "read_line",
           "check_output", "note_imbalance", "cross_validate_on_console", "labels_located",
           "IMBALANCE_NOTE", "drop_absent_weights"]

# what only -v, --shards and MPI runs read or run, imported when they do (start-up:
# linsvm._lazy)
cross_validate = LazyFunction("linsvm.fit.cv", "cross_validate")
read_training_share = LazyFunction("linsvm.io.shards", "read_training_share")
shard_paths = LazyFunction("linsvm.io.shards", "shard_paths")


def parsed_options(record, parsed):
    """A command's parsed options (Click's keyword arguments, by name) as one record of
    type `record`: its fields from `parsed`, and its last field, solver_options, the
    others that were given (not None: the solver options, -p, -R, -m)."""
    own = {name: parsed.pop(name) for name in record._fields[:-1] if name in parsed}
    return record(**own, solver_options={k: v for k, v in parsed.items() if v is not None})


class TrainingData(NamedTuple):
    """The training data a command holds: X, y, qid (None unless a ranking solver and
    several qids over all the data), sample_weight -- on MPI this rank's rows -- and
    over all ranks: n_rows, nnz, and the distinct labels in order of first appearance
    (None when not known); source: the input's name for messages, places: FILE:LINE
    of this rank's rows (a RowPlaces), row_offset: the global number of its first."""

    X: object
    y: np.ndarray
    qid: object
    sample_weight: object
    n_rows: int
    nnz: int
    labels: object
    source: str = ""
    places: object = None
    row_offset: int = 0


def load_training(training_file, solver, instance_weights, console=None, job=None,
                  shards=False, cache=None):
    """The training data (TrainingData): the parser's CSRBuffers, as train() takes it, labels,
    qids and sample weights; the rows read so far show on the console's progress line.
    A binary data file is mapped (linsvm.io.binfile; its qids and instance weights are
    used, -W replacing the weights); with `cache` (``--cache``; None: LINSVM_CACHE
    decides) a text file is read through its binary copy in the cache (linsvm.io.cache).
    On several ranks (job) or with --shards: linsvm.io.shards.read_training_share
    (each rank its share; rank 0 notes when the input had to be scattered; no cache)."""
    name = "stdin" if training_file == "-" else training_file
    progress = None if console is None or not console.live else (
        lambda rows: console.progress(f"reading {name}: {rows:,} rows"))
    ordinal = KINDS[SOLVERS[solver].kind].uses_qid      # ranking data: keep the qids
    distributed = job is not None and job.comm is not None
    source = "<stdin>" if training_file == "-" else str(training_file)
    if not distributed and not shards:
        binary = binary_input(training_file, cache, console)
        if binary is not None:
            return _binary_training(binary, source, ordinal, instance_weights, console)
        places = RowPlaces()
        if ordinal:
            X, y, qid = load_svmlight_buffers(training_file, with_qid=True, progress=progress,
                                              places=places)
            qid = _varied(qid)
        else:
            (X, y), qid = load_svmlight_buffers(training_file, progress=progress,
                                                places=places), None
        if console is not None:
            console.done()
        sample_weight = read_instance_weights(instance_weights, X.n_rows) \
            if instance_weights else None
        return TrainingData(X, y, qid, sample_weight, X.n_rows, X.nnz, None, source, places)
    if cache and console is not None:
        console.note("--cache is not used with --shards or on several MPI ranks")
    return _training_share(training_file, ordinal, instance_weights, console, job, shards,
                           progress, source)


def _varied(qid):
    """qid when it holds several values, else None (one query: no ranking groups)."""
    return qid if qid is not None and qid.size and np.any(qid != qid[0]) else None


def binary_input(data_file, cache, console=None):
    """linsvm.io.cache.open_data for a command: the BinaryData to read `data_file` from
    (its cached copy, or itself when binary), or None; the notes and progress of a
    conversion into the cache on the console."""
    if console is None:
        return open_data(data_file, cache)
    data = open_data(data_file, cache, console.note,
                     lambda rows: console.progress(f"caching {data_file}: {rows:,} rows"))
    console.done()
    return data


def _binary_training(data, source, ordinal, instance_weights, console):
    """TrainingData of a BinaryData (binary_input): its rows named FILE: example N."""
    qid = _varied(data.qid) if ordinal else None
    sample_weight = data.weights
    if instance_weights:
        sample_weight = read_instance_weights(instance_weights, data.n_rows)
        if data.weights is not None and console is not None:
            console.note(f"-W {instance_weights} replaces the instance weights stored in "
                         f"{data.path}")
    places = RowPlaces().add_examples(source, data.n_rows)
    return TrainingData(data.X, data.y, qid, sample_weight, data.n_rows, data.nnz, None,
                        source, places)


def _training_share(training_file, ordinal, instance_weights, console, job, shards, progress,
                    source):
    """load_training on several ranks or shards (linsvm.io.shards.read_training_share)."""
    distributed = job is not None and job.comm is not None
    name = "stdin" if training_file == "-" else training_file
    share, how = read_training_share(training_file, job.comm if distributed else None,
                                     shards=shards, with_qid=ordinal, progress=progress)
    if console is not None:
        console.done()
        if how == "scatter":
            console.note(f"{name} was read by rank 0 and its rows sent to the {job.size} "
                         "ranks; a plain file (every rank reads its own share) or --shards "
                         "is faster")
    X, y, qid = share.X, share.y, share.qid
    sums = (job or Job(None)).gather((X.nnz, int(qid.min()) if qid is not None and qid.size
                                       else None, int(qid.max()) if qid is not None
                                       and qid.size else None))
    nnz = sum(r[0] for r in sums)
    if qid is not None:
        ends = [v for r in sums for v in r[1:] if v is not None]
        qid = qid if ends and min(ends) != max(ends) else None
    sample_weight = share.weights
    if instance_weights:
        weights = (job or Job(None)).run(read_instance_weights, instance_weights,
                                          share.n_rows_total)
        sample_weight = weights[share.row_offset:share.row_offset + X.n_rows]
    return TrainingData(X, y, qid, sample_weight, share.n_rows_total, nnz, share.labels, source,
                        share.places, share.row_offset)


def read_line(data, n_features, seconds, job=None):
    """The line train and cv print once the training data is read: `read N examples, D
    features, Z non-zeros in Ts`, N and Z over all MPI ranks, D this rank's widest
    index (the solvers agree on the width over ranks), and the number of ranks when
    several read it."""
    ranks = f" on {job.size} MPI ranks" if job is not None and job.comm is not None else ""
    return (f"read {data.n_rows} examples, {n_features} features, {data.nnz} non-zeros "
            f"in {seconds:.3f}s{ranks}")


IMBALANCE_NOTE = 0.95   # note when one class holds more than this fraction of the training rows


def note_imbalance(console, y, solver, class_weight, job=None):
    """One line when one class dominates the training data of a classifier and no
    class weights were given: accuracy then says little, and -w balanced helps.  On
    several ranks (job) the counts are those of all ranks (every rank takes part)."""
    if class_weight or not KINDS[SOLVERS[solver].kind].classifier:
        return
    labels, counts = distinct_counts(y)
    if job is not None and job.comm is not None:
        merged = {}
        for labs, cnts in job.gather((labels, counts)):
            for label, count in zip(labs.tolist(), cnts.tolist()):
                merged[label] = merged.get(label, 0) + count
        labels = np.array(sorted(merged), dtype=np.float64)
        counts = np.array([merged[v] for v in labels.tolist()], dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        return
    top = int(np.argmax(counts))
    share = counts[top] / n
    if labels.shape[0] >= 2 and share > IMBALANCE_NOTE:
        console.note(f"class {format_label(labels[top])} holds {100 * share:.4g}% of the "
                     f"{n} training examples (always predicting it scores that "
                     f"accuracy); consider -w balanced, and judge by F1 or PRBEP "
                     f"(linsvm-cv --metric f1)")


def drop_absent_weights(console, solver, class_weight, data):
    """The class weights (-w) without those of labels the training data lacks, each
    dropped with LIBLINEAR's warning, when -s gave a LIBLINEAR code (LIBLINEAR warns and
    trains on); for a solver named, not numbered, class_weight as it is (train()
    refuses such a label).  data: a TrainingData (its labels over all MPI ranks)."""
    if solver.code is None or not isinstance(class_weight, dict) or not class_weight:
        return class_weight
    present = set(np.asarray(distinct(data.y) if data.labels is None else data.labels).tolist())
    kept = {}
    for label, weight in class_weight.items():
        if float(label) in present:
            kept[label] = weight
        else:
            console.warn(f"class label {format_label(float(label))} specified in weight is not "
                         "found (-w ignores it, as LIBLINEAR does)")
    return kept


@contextlib.contextmanager
def labels_located(data, job=None):
    """A LabelError inside (the solver's kind refuses the labels of `data`, a
    TrainingData) as a DataError naming the file and line of the first row at fault,
    as the parser names its own: the first row holding the error's label (on MPI
    ranks, the first over all ranks, which every rank then raises alike), or the
    input's name when no row is at fault (one class); no examples at all
    (NoExamplesError) and a solve whose answer is not finite (linsvm.fit.finite) as a
    DataError naming the input."""
    try:
        yield
    except LabelError as exc:
        raise DataError(f"{_label_place(exc, data, job) or data.source}: {exc}") from None
    except (NoExamplesError, NonFiniteSolutionError) as exc:
        raise DataError(f"{data.source}: {exc}") from None
    except OverflowingRowError as exc:
        where = data.places.where(exc.row) if data.places is not None else None
        raise DataError(f"{where or data.source}: {exc}") from None


def _label_place(exc, data, job):
    """FILE:LINE of the first row of data holding exc.label, or None."""
    row = None
    if exc.label is not None:
        hit = np.flatnonzero(data.y == exc.label)
        row = int(hit[0]) if hit.size else None
    where = data.places.where(row) if row is not None and data.places is not None else None
    if job is not None and job.comm is not None:     # every rank raised it: all take part
        found = [(offset + r, w) for offset, r, w in job.gather((data.row_offset, row, where))
                 if r is not None]
        where = min(found)[1] if found else None
    return where


def check_output(path, what, training_file, instance_weights, shards, stdout_ok=False,
                 init_model=None):
    """check_output_path for a command's output against everything it reads: the
    training data (each shard file with --shards), the instance weights and the model
    it starts from (-i)."""
    data = shard_paths(training_file) if shards else [training_file]
    check_output_path(path, what=what, inputs=(*data, instance_weights, init_model),
                      stdout_ok=stdout_ok)


def cross_validate_on_console(console, unit, X, y, **kwargs):
    """linsvm.fit.cv.cross_validate with its progress on the console ("N/M `unit` trained")
    and its warnings, merged over folds, printed one line each."""
    with collecting_warnings() as records:
        res = cross_validate(X, y, progress=lambda done, total: console.progress(
            f"cross-validation: {done}/{total} {unit} trained"), **kwargs)
    console.done()
    print_warnings(console, records)
    return res
