"""Faults while writing: kill -9 mid-write, full disks, read-only places, /dev/full,
and output paths checked before the work.

The tmpfs tests mount a small filesystem and need root; they skip otherwise.
"""
import errno
import io
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import linsvm
from linsvm.io import atomic
from linsvm.cli import cv_cmd, predict_cmd, train_cmd
from linsvm.errors import DataError
from linsvm.model import Model, load_model

from conftest import child_env, default_sigint, invoke, random_problem

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def listing(d):
    return sorted(p.name for p in Path(d).iterdir())


def one_line_error(result, *needles):
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "error:" in lines[0], result.output
    for n in needles:
        assert n in lines[0], lines[0]
    assert ".tmp" not in lines[0] and ".linsvm-" not in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def files(tmp_path):
    X, y = random_problem(n_samples=80, n_features=10)
    path = tmp_path / "train.svm"
    linsvm.dump_svmlight(X, y, path)
    return tmp_path, path


def _mount_tmpfs(directory, options):
    directory.mkdir(exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(directory)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {r.stderr.strip()}")


@pytest.fixture
def small_fs(tmp_path):
    """A 64 KiB tmpfs (root only), unmounted afterwards."""
    if not IS_ROOT:
        pytest.skip("mounting a small tmpfs needs root")
    d = tmp_path / "small"
    _mount_tmpfs(d, "size=64k")
    yield d
    subprocess.run(["umount", "-l", str(d)], check=False)


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory nobody may write: a read-only tmpfs as root, chmod 555 otherwise."""
    d = tmp_path / "ro"
    if IS_ROOT:
        _mount_tmpfs(d, "size=64k")
        (d / "old.model").write_text("old\n")
        subprocess.run(["mount", "-o", "remount,ro", str(d)], check=True)
        yield d
        subprocess.run(["umount", "-l", str(d)], check=False)
    else:
        d.mkdir()
        (d / "old.model").write_text("old\n")
        d.chmod(0o555)
        yield d
        d.chmod(0o755)


def big_model(n_rows=200_000, seed=0):
    rng = np.random.default_rng(seed)
    return Model(solver="mfn", classes=[1, -1], weights=rng.standard_normal((n_rows, 1)), bias=1.0,
                 params={"C": 1.0})


# ------------------------------------------------------------------------ kill -9 mid-write

SAVER = r"""
import sys, numpy as np
from linsvm.model import Model
if sys.argv[3] == "named":
    from linsvm.io import atomic
    atomic._O_TMPFILE = 0
rng = np.random.default_rng(0)
models = [Model(solver="mfn", classes=[1, -1], weights=rng.standard_normal((200000, 1)) * (i + 1),
                bias=1.0, params={"C": 1.0}) for i in range(2)]
print("go", flush=True)
i = 0
while True:
    models[i % 2].save(sys.argv[1], format=sys.argv[2])
    i += 1
"""


def _writing_into(pid, directory):
    """True once process `pid` has a file in `directory` open for writing (named or O_TMPFILE)."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith(str(directory) + "/") and not target.endswith(".svm"):
                with open(f"/proc/{pid}/fdinfo/{fd}") as fh:
                    flags = int(next(line for line in fh if line.startswith("flags")).split()[1], 8)
                if flags & (os.O_WRONLY | os.O_RDWR):
                    return True
    except OSError:
        pass
    return False


def _kill_when_writing(proc, directory, rng, timeout=60.0):
    t0 = time.monotonic()
    while not _writing_into(proc.pid, directory):
        if time.monotonic() - t0 > timeout or proc.poll() is not None:
            break
        time.sleep(0.001)
    time.sleep(rng.uniform(0, 0.05))
    proc.send_signal(signal.SIGKILL)
    proc.wait()


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")


@pytest.mark.slow
@pytest.mark.subprocess
@needs_proc
@pytest.mark.parametrize("fmt", ["linsvm", "linsvm-binary"])
def test_kill_9_during_model_save_leaves_no_temporary_file(tmp_path, fmt):
    """A SIGKILL during a save over an existing model once left a stale `.NAME.*.tmp`
    behind.  Now the target stays intact and nothing else is left, however often we
    kill."""
    rng = random.Random(17)
    target = tmp_path / "m.model"
    big_model().save(target, format=fmt)
    named = 0
    for trial in range(4):
        proc = subprocess.Popen([sys.executable, "-c", SAVER, str(target), fmt, "auto"],
                                env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline() == b"go\n"
        _kill_when_writing(proc, tmp_path, rng)
        m = load_model(target)             # the old model or a new one, always complete
        assert m.weights.shape == (200_000, 1)
        leftovers = [n for n in listing(tmp_path) if n != "m.model"]
        # With O_TMPFILE the file is nameless until the last two system calls (link, rename);
        # a kill exactly there leaves a named file, which the next write removes.
        assert all(n.startswith(".m.model.linsvm-") and n.endswith(".tmp") for n in leftovers)
        named += bool(leftovers)
    print(f"kills that left a named temporary file before the next write: {named} of 4")
    big_model(10).save(target)
    assert listing(tmp_path) == ["m.model"]


@pytest.mark.slow
@pytest.mark.subprocess
@needs_proc
def test_kill_9_with_named_temporary_files_is_cleaned_up_by_the_next_write(tmp_path):
    """Where O_TMPFILE is missing, the temporary file has a name; a killed writer may
    leave it, and the next write to the same target removes it."""
    rng = random.Random(3)
    target = tmp_path / "m.model"
    big_model().save(target)
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", SAVER, str(target), "linsvm-text", "named"],
                                env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline() == b"go\n"
        _kill_when_writing(proc, tmp_path, rng)
        load_model(target)
    leftovers = [n for n in listing(tmp_path) if n != "m.model"]
    assert all(n.startswith(".m.model.linsvm-") and n.endswith(".tmp") for n in leftovers)
    saved = atomic._O_TMPFILE
    atomic._O_TMPFILE = 0
    try:
        big_model(10).save(target)
    finally:
        atomic._O_TMPFILE = saved
    assert listing(tmp_path) == ["m.model"]


@pytest.mark.subprocess
def test_leftovers_of_live_processes_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "_O_TMPFILE", 0)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    prefix = atomic._temp_prefix("m.model")
    stale = tmp_path / f"{prefix}{dead.pid}-0000abcd.tmp"
    live = tmp_path / f"{prefix}{os.getppid()}-0000abcd.tmp"
    other = tmp_path / ".m.model.linsvm-ffffffff-1-0000abcd.tmp"      # another host's
    for p in (stale, live, other):
        p.write_text("x")
    big_model(5).save(tmp_path / "m.model")
    assert not stale.exists() and live.exists() and other.exists()


@pytest.mark.slow
@pytest.mark.subprocess
@needs_proc
def test_kill_9_during_predict_leaves_no_temporary_file(tmp_path):
    """SIGKILL during `linsvm-predict` once left a temporary file behind; now nothing is
    left but the complete output or none."""
    rng = random.Random(5)
    X, y = random_problem(n_samples=40000, n_features=30, density=0.3)
    test = tmp_path / "t.svm"
    linsvm.dump_svmlight(X, y, test)
    model = tmp_path / "m.model"
    linsvm.train(X[:200], y[:200], solver="mfn").save(model)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for trial in range(3):
        proc = subprocess.Popen([sys.executable, "-m", "linsvm", "predict", "-q", "--chunk-rows", "50",
                                 "--decision-values", str(test), str(model), str(out_dir / "p.txt")],
                                env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _kill_when_writing(proc, out_dir, rng)
        assert [n for n in listing(out_dir) if n != "p.txt"] == [], trial


def test_no_named_temporary_file_exists_while_writing(tmp_path):
    if not atomic._O_TMPFILE:
        pytest.skip("no O_TMPFILE on this platform")
    with atomic.atomic_output(tmp_path / "x.txt") as fh:
        fh.write(b"hello\n")
        during = listing(tmp_path)
    assert during == [] and (tmp_path / "x.txt").read_bytes() == b"hello\n"
    with atomic.atomic_output(tmp_path / "x.txt") as fh:     # over an existing file
        fh.write(b"again\n")
        during = listing(tmp_path)
    assert during == ["x.txt"] and (tmp_path / "x.txt").read_bytes() == b"again\n"


def test_exception_while_writing_leaves_target_and_directory_alone(tmp_path):
    target = tmp_path / "x.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic.atomic_output(target) as fh:
            fh.write(b"partial")
            raise RuntimeError("boom")
    assert target.read_text() == "old\n" and listing(tmp_path) == ["x.txt"]


def test_caller_oserrors_are_not_renamed_to_the_target(tmp_path):
    """Only errors of writing the target are re-labelled with its name."""
    with pytest.raises(FileNotFoundError) as info:
        with atomic.atomic_output(tmp_path / "x.txt"):
            open(tmp_path / "missing-input")
    assert info.value.filename == str(tmp_path / "missing-input")


# ------------------------------------------------------------------------ full disks

@pytest.mark.subprocess
def test_enospc_in_model_save_names_the_target_and_leaves_nothing(small_fs):
    target = small_fs / "m.model"
    big_model(10).save(target)
    old = target.read_bytes()
    with pytest.raises(OSError) as info:
        big_model(50_000).save(target, format="linsvm-text")
    assert info.value.errno == errno.ENOSPC
    assert info.value.filename == str(target)
    assert listing(small_fs) == ["m.model"] and target.read_bytes() == old


@pytest.mark.subprocess
def test_enospc_in_dump_svmlight_names_the_target_and_leaves_nothing(small_fs):
    X, y = random_problem(n_samples=3000, n_features=50)
    with pytest.raises(DataError, match=r"d\.svm: cannot write: No space left on device"):
        linsvm.dump_svmlight(X, y, small_fs / "d.svm")
    assert listing(small_fs) == []


@pytest.mark.subprocess
def test_enospc_in_predict_leaves_no_temporary_file(small_fs, tmp_path):
    """ENOSPC in `linsvm-predict` once left its temporary file behind, and the message
    named that file; now nothing is left and the message names the output."""
    X, y = random_problem(n_samples=6000, n_features=20)
    test = tmp_path / "t.svm"
    linsvm.dump_svmlight(X, y, test)
    model = tmp_path / "m.model"
    linsvm.train(X[:100], y[:100]).save(model)
    out = small_fs / "p.txt"
    line = one_line_error(invoke(predict_cmd, "-q", "--decision-values", test, model, out),
                          str(out), "No space left on device")
    assert "p.txt" in line
    assert listing(small_fs) == []


# ------------------------------------------------------------------------ /dev/full

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")


@needs_dev_full
def test_predictions_to_dev_full_are_a_one_line_error(files):
    tmp, train = files
    invoke(train_cmd, "-q", train, tmp / "m.model")
    one_line_error(invoke(predict_cmd, "-q", train, tmp / "m.model", "/dev/full"), "/dev/full",
                   "No space left on device")
    assert os.path.exists("/dev/full") and not os.path.isfile("/dev/full")


@pytest.mark.subprocess
@needs_dev_full
@pytest.mark.parametrize("command", ["predict", "train"])
def test_stdout_on_dev_full_is_a_one_line_error(files, command):
    tmp, train = files
    invoke(train_cmd, "-q", train, tmp / "m.model")
    args = ([train, tmp / "m.model", "-"] if command == "predict" else [train, "-"])
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "linsvm", command, "-q", *map(str, args)],
                           env=child_env(), stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0], r.stderr


# ------------------------------------------------------------------------ paths checked first

@pytest.fixture
def no_training(monkeypatch):
    """Make any training or cross-validation fail the test: the path checks must come first."""
    def forbidden(*args, **kwargs):
        raise AssertionError("training ran although the output path was bad")

    import linsvm.cli.run_cv
    import linsvm.cli.run_train      # the train and cross_validate the commands call

    monkeypatch.setattr(sys.modules["linsvm.cli.run_train"], "train", forbidden)
    monkeypatch.setattr(sys.modules["linsvm.cli.runs"], "cross_validate", forbidden)


def test_model_path_in_missing_directory_fails_before_training(files, no_training):
    tmp, train = files
    one_line_error(invoke(train_cmd, "-q", train, tmp / "nodir" / "m.model"),
                   str(tmp / "nodir" / "m.model"), "does not exist")


@pytest.mark.subprocess
def test_model_path_in_read_only_directory_fails_before_training(files, read_only_dir, no_training):
    tmp, train = files
    target = read_only_dir / "old.model"
    one_line_error(invoke(train_cmd, "-q", train, target), str(target))
    one_line_error(invoke(train_cmd, "-q", train, read_only_dir / "new.model"), str(read_only_dir / "new.model"))
    assert target.read_text() == "old\n"


@pytest.mark.skipif(IS_ROOT, reason="root may write a read-only file")
def test_read_only_model_file_is_not_replaced(files, no_training):
    tmp, train = files
    target = tmp / "m.model"
    target.write_text("old\n")
    target.chmod(0o444)
    one_line_error(invoke(train_cmd, "-q", train, target), str(target), "read-only")
    assert target.read_text() == "old\n"


def test_ordinal_model_with_liblinear_format_fails_before_training(files, no_training):
    tmp, train = files
    one_line_error(invoke(train_cmd, "-q", "-s", "mfn-ord", "--model-format", "liblinear", train, tmp / "m"),
                   "ordinal models cannot be written in LIBLINEAR format")
    assert not (tmp / "m").exists()


def test_liblinear_format_with_fractional_labels_fails_before_training(tmp_path, no_training):
    X, y = random_problem()
    path = tmp_path / "t.svm"
    linsvm.dump_svmlight(X, np.where(y > 0, 0.5, -1), path)
    one_line_error(invoke(train_cmd, "-q", "--model-format", "liblinear", path, tmp_path / "m"),
                   "class label 0.5 is not a 32-bit integer")


def test_cv_output_model_path_checked_before_cv(files, no_training):
    tmp, train = files
    one_line_error(invoke(cv_cmd, "-q", "-v", "2", "--output-model", tmp / "nodir" / "m", train),
                   str(tmp / "nodir" / "m"), "does not exist")
    one_line_error(invoke(cv_cmd, "-q", "-v", "2", "--output-model", "-", train), "standard output")


@pytest.mark.subprocess
def test_model_file_dash_writes_standard_output(files, monkeypatch):
    """`-` as the model name once created a file called `-`; it is stdout now."""
    tmp, train = files
    monkeypatch.chdir(tmp)
    r = subprocess.run([sys.executable, "-m", "linsvm", "train", "-q", str(train), "-"],
                       env=child_env(), capture_output=True, cwd=tmp)
    assert r.returncode == 0, r.stderr
    assert not (tmp / "-").exists()
    ref = tmp / "ref.model"
    invoke(train_cmd, "-q", train, ref)
    assert r.stdout == ref.read_bytes().replace(
        ref.read_bytes().split(b"stat seconds ")[1].split(b"\n")[0], r.stdout.split(b"stat seconds ")[1].split(b"\n")[0])


def test_model_path_that_is_a_directory_is_refused(files, no_training):
    tmp, train = files
    from linsvm.io.atomic import check_output_path
    from linsvm.errors import ParameterError
    with pytest.raises(ParameterError, match="is a directory"):
        check_output_path(tmp, what="model file")


def test_predict_chunks_of_many_class_models_are_bounded(tmp_path, monkeypatch):
    """Memory, on the prediction side: 65536 rows of 1000 class scores would be
    half a gigabyte per chunk; by default a chunk holds at most 2^22 scores."""
    import linsvm.model.predict as data_mod     # predict_file reads through its iter_svmlight_buffers
    seen = []
    real = data_mod.iter_svmlight_buffers

    def spy(path, chunk_rows=65536, with_qid=False):
        seen.append(chunk_rows)
        return real(path, chunk_rows=chunk_rows, with_qid=with_qid)

    monkeypatch.setattr(data_mod, "iter_svmlight_buffers", spy)
    test = tmp_path / "t.svm"
    test.write_text("1 1:1\n2 2:1\n")
    for n_classes, expect in ((2, 65536), (1000, 4194)):
        model = tmp_path / f"m{n_classes}.model"
        Model(solver="sdm-cs", classes=np.arange(n_classes) + 1.0, weights=np.zeros((3, n_classes)),
              bias=-1, params={}).save(model)
        assert invoke(predict_cmd, "-q", test, model, tmp_path / "p").exit_code == 0
        assert seen[-1] == expect
    assert invoke(predict_cmd, "-q", "--chunk-rows", "7", test, model, tmp_path / "p").exit_code == 0
    assert seen[-1] == 7


# ------------------------------------------------------------------------ short writes, closed streams

class _ShortRaw(io.RawIOBase):
    """An unbuffered stream (what sys.stdout.buffer is under PYTHONUNBUFFERED=1) whose
    write takes at most `step` bytes, and raises ENOSPC once `room` bytes are taken."""

    def __init__(self, step, room=None):
        self.step, self.room, self.data = step, room, bytearray()

    def writable(self):
        return True

    def write(self, b):
        if self.room is not None and len(self.data) >= self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = min(len(b), self.step)
        if self.room is not None:
            n = min(n, self.room - len(self.data))
        self.data += bytes(b[:n])
        return n


def _unbuffered_stdout(monkeypatch, raw):
    """sys.stdout as Python makes it under PYTHONUNBUFFERED=1: a write-through text layer
    over the raw stream."""
    stream = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    monkeypatch.setattr(sys, "stdout", stream)
    return stream


def test_short_writes_to_unbuffered_stdout_are_completed(monkeypatch, tmp_path):
    """Every byte reaches a raw stream that takes 7 bytes per write: the model written to
    '-' is the file written to a path, byte for byte."""
    model = big_model(3000)
    model.save(tmp_path / "m.model")
    raw = _ShortRaw(step=7)
    _unbuffered_stdout(monkeypatch, raw)
    model.save("-")
    assert bytes(raw.data) == (tmp_path / "m.model").read_bytes()


def test_short_write_then_full_disk_on_stdout_is_an_error_not_silence(monkeypatch, tmp_path):
    """A short write followed by ENOSPC (a full disk under unbuffered stdout) raises,
    naming <stdout>, from the model writer, the data writer and the result lines."""
    raw = _ShortRaw(step=1000, room=2500)
    _unbuffered_stdout(monkeypatch, raw)
    monkeypatch.setattr(atomic, "silence_stdout", lambda: None)      # keep the test's fd 1
    monkeypatch.setattr("linsvm.io.streams.silence_stdout", lambda: None)
    with pytest.raises(OSError) as info:
        big_model(3000).save("-")
    assert info.value.errno == errno.ENOSPC and info.value.filename == "<stdout>"
    X, y = random_problem(n_samples=300, n_features=10)
    raw.data.clear()
    with pytest.raises(DataError, match=r"^<stdout>: cannot write: No space left on device"):
        linsvm.dump_svmlight(X, y, "-")
    from linsvm.io.streams import print_lines
    raw.data.clear()
    with pytest.raises(OSError) as info:
        print_lines("x" * 4000)
    assert info.value.errno == errno.ENOSPC and info.value.filename == "<stdout>"


def test_dump_to_a_raw_file_object_writes_every_byte(tmp_path):
    X, y = random_problem(n_samples=200, n_features=10)
    linsvm.dump_svmlight(X, y, tmp_path / "ref.svm")
    raw = _ShortRaw(step=13)
    linsvm.dump_svmlight(X, y, raw)
    assert bytes(raw.data) == (tmp_path / "ref.svm").read_bytes()


def test_closed_standard_streams_are_one_line_errors_in_process(monkeypatch, tmp_path):
    """sys.stdout / sys.stdin are None when the process starts with fd 1 / fd 0 closed:
    writing '-' and reading '-' are DataErrors, and '-' as an output path is refused
    before the work."""
    from linsvm.errors import ParameterError
    from linsvm.io.scale import scale_file
    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(ParameterError, match="standard output is closed"):
        atomic.check_output_path("-", what="model file", stdout_ok=True)
    with pytest.raises(DataError, match=r"^<stdout>: cannot write: standard output is closed$"):
        with atomic.atomic_output("-", stdout_ok=True):
            pass
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(DataError, match=r"^<stdin>: cannot read: standard input is closed$"):
        linsvm.load_svmlight("-")
    with pytest.raises(DataError, match=r"^<stdin>: cannot read: standard input is closed$"):
        scale_file("-", tmp_path / "out")


def _closed(fd):
    return lambda: (default_sigint(), os.close(fd))


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("closed,args", [
    (1, ["predict", "-q", "{t}", "{m}", "-"]),
    (1, ["train", "-q", "{t}", "-"]),
    (1, ["train", "-q", "-v", "3", "{t}"]),
    (1, ["cv", "-q", "-v", "3", "{t}"]),
    (1, ["scale", "{t}"]),
    (0, ["predict", "-q", "-", "{m}", "{o}"]),
    (0, ["scale", "-"]),
])
def test_closed_standard_stream_is_a_one_line_error(files, closed, args):
    """A command started with its stdout (`>&-`) or stdin (`<&-`) closed, where it must
    write its result or read its data: one line, status 1, no traceback."""
    tmp, train = files
    invoke(train_cmd, "-q", train, tmp / "m.model")
    argv = [a.format(t=train, m=tmp / "m.model", o=tmp / "o") for a in args]
    r = subprocess.run([sys.executable, "-m", "linsvm", *argv], env=child_env(), cwd=tmp,
                       stderr=subprocess.PIPE, text=True, preexec_fn=_closed(closed),
                       stdin=None if closed else subprocess.DEVNULL,
                       stdout=None if closed == 1 else subprocess.DEVNULL)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert ("standard output is closed" if closed == 1 else "standard input is closed") in lines[0]
    assert not (tmp / "o").exists()


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("unbuffered", ["", "1"])
@pytest.mark.parametrize("command", ["predict", "synth"])
def test_stdout_at_a_file_size_limit_is_a_one_line_error(files, unbuffered, command):
    """A regular-file stdout that stops taking data midway (a file-size limit here, a full
    disk in the field: the first write is short, the next one fails) is an error whatever
    the interpreter's buffering, never an exit 0 with the output cut."""
    import resource
    tmp, train = files
    invoke(train_cmd, "-q", train, tmp / "m.model")
    X, y = random_problem(n_samples=3000, n_features=10)
    linsvm.dump_svmlight(X, y, tmp / "big.svm")
    args = (["predict", "-q", "--decision-values", str(tmp / "big.svm"), str(tmp / "m.model"), "-"]
            if command == "predict" else ["synth", "--n-samples", "2000", "-"])

    def limited():
        default_sigint()
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, resource.RLIM_INFINITY))

    with open(tmp / "out", "wb") as out:
        r = subprocess.run([sys.executable, "-m", "linsvm", *args], stdout=out,
                           stderr=subprocess.PIPE, text=True, preexec_fn=limited,
                           env=dict(child_env(), PYTHONUNBUFFERED=unbuffered))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1 and "File too large" in lines[0], r.stderr
    assert (tmp / "out").stat().st_size == 8192


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_closed_pipe_on_stdout_ends_quietly_whatever_the_buffering(files, unbuffered):
    """`linsvm-predict ... - | head`: the reader has gone, the command ends quietly with
    status 0 (docs/predict.md), buffered or not."""
    tmp, train = files
    invoke(train_cmd, "-q", train, tmp / "m.model")
    X, y = random_problem(n_samples=3000, n_features=10)
    linsvm.dump_svmlight(X, y, tmp / "big.svm")
    rfd, wfd = os.pipe()
    os.close(rfd)                                   # EPIPE on the first write
    try:
        r = subprocess.run([sys.executable, "-m", "linsvm", "predict", "-q", "--decision-values",
                            str(tmp / "big.svm"), str(tmp / "m.model"), "-"], stdout=wfd,
                           stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
                           env=dict(child_env(), PYTHONUNBUFFERED=unbuffered))
    finally:
        os.close(wfd)
    assert r.returncode == 0 and r.stderr == "", r.stderr
