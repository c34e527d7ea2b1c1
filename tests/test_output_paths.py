"""An output that is one of a command's inputs, or another of its outputs, is refused before
any work, in one line, with nothing changed: by name, relative or absolute path, symlink or
hard link (linsvm.io.atomic.check_outputs, which every command's writer goes through).
tests/test_fuzz_input.py draws the same rule's paths at random for renumber."""
import os

import pytest

from conftest import one_error_line, run_here

DATA = b"1 1:0.5 3:1\n-1 2:1 4:0.25\n1 1:1 4:2\n-1 3:0.5\n"

def _files(directory):
    """{name: bytes} of a directory, symlinks as their target."""
    return {p.name: (os.readlink(p) if p.is_symlink() else
                     "<dir>" if p.is_dir() else p.read_bytes())
            for p in sorted(directory.iterdir())}


def _refused(tmp_path, args, expect):
    """The command fails with one line saying `expect`, and no file changes."""
    before = _files(tmp_path)
    status, _, err = run_here(*args, cwd=tmp_path)
    line = one_error_line(err)
    assert status != 0 and expect in line, (args, err)
    assert _files(tmp_path) == before, args


@pytest.fixture
def paths(tmp_path):
    (tmp_path / "h.txt").write_bytes(DATA)
    os.symlink("h.txt", tmp_path / "h.link")
    os.link(tmp_path / "h.txt", tmp_path / "h.hard")
    return tmp_path


def test_renumber_never_writes_over_its_input_or_its_other_output(paths):
    """`linsvm renumber h.txt out.txt h.txt` exited 0 and replaced the data with the
    feature map; `renumber hs hs hs.map` overwrote its input; `renumber hs x.out x.out`
    left only the map.  Each is refused, before reading, and nothing changes."""
    d = paths
    absolute = str(d / "h.txt")
    for args in (["h.txt", "out.txt", "h.txt"], ["h.txt", "out.txt", "h.link"],
                 ["h.txt", "out.txt", "h.hard"], ["h.txt", "out.txt", absolute],
                 ["h.txt", "h.txt", "h.map"], ["h.link", "./h.txt", "h.map"],
                 ["h.txt", "h.hard", "h.map"]):
        _refused(d, ["renumber", *args], "it is the input file")
    (d / "sub").mkdir()
    for args in (["h.txt", "x.out", "x.out"], ["h.txt", "x.out", "./x.out"],
                 ["h.txt", "x.out", str(d / "x.out")], ["h.txt", "sub/../x.out", "x.out"]):
        _refused(d, ["renumber", *args], "it is the same file as the output file")
    os.symlink("x.out", d / "x.link")          # a dangling symlink to the other output
    _refused(d, ["renumber", "h.txt", "x.out", "x.link"], "same file as the output file")
    # --apply reads the map: the output may not be the map
    assert run_here("renumber", "h.txt", "r.txt", "r.map", cwd=d)[0] == 0
    _refused(d, ["renumber", "--apply", "h.txt", "r.map", "r.map"], "it is the input file 'r.map'")
    # checked before reading: a broken input still gets the path error
    (d / "bad.txt").write_bytes(b"not svmlight\n")
    _refused(d, ["renumber", "bad.txt", "bad.txt", "m"], "it is the input file")
    # what is allowed still works, '-' included
    status, out, _ = run_here("renumber", "h.txt", "-", "m2", cwd=d)
    assert status == 0 and out == DATA.decode() and (d / "m2").is_file()


def test_synth_two_outputs_must_differ(paths):
    d = paths
    for args in (["s.txt", "s.txt"], ["s.txt", "./s.txt"], ["h.txt", "h.link"],
                 ["h.txt", "h.hard"], ["s.txt", str(d / "s.txt")]):
        _refused(d, ["synth", "--n-samples", "40", "--n-features", "20", *args],
                 "it is the same file as the training file")
    status, _, _ = run_here("synth", "--n-samples", "40", "--n-features", "20", "a.txt", "b.txt",
                            cwd=d)
    assert status == 0 and (d / "a.txt").stat().st_size and (d / "b.txt").stat().st_size


def test_train_cv_predict_refuse_every_input_as_output(paths):
    """train: the training data, -W and -i; cv --output-model; predict: the test data and
    the model; by name, symlink, hard link, relative or absolute path."""
    d = paths
    assert run_here("train", "-q", "h.txt", "m.model", cwd=d)[0] == 0
    os.link(d / "m.model", d / "m.hard")
    (d / "w.txt").write_bytes(b"1\n1\n1\n1\n")
    for args in (["train", "h.txt", "h.hard"], ["train", "-b", "1", "h.txt", "h.link"],
                 ["train", "h.txt", str(d / "h.txt")], ["train", "-W", "w.txt", "h.txt", "w.txt"],
                 ["train", "-i", "m.model", "h.txt", "m.model"],
                 ["train", "-i", "m.model", "h.txt", "m.hard"],
                 ["cv", "h.txt", "--output-model", "h.hard"],
                 ["cv", "-W", "w.txt", "h.txt", "--output-model", "./w.txt"],
                 ["predict", "h.txt", "m.model", "m.hard"], ["predict", "h.txt", "m.model", "h.link"]):
        _refused(d, args, "it is the input file")


def test_scale_and_plot_outputs_are_neither_inputs_nor_each_other(paths):
    """linsvm scale's -o and -s, and linsvm-cv's --plot, are checked as every output is:
    not the data (-r's parameter file too), not each other, by any name."""
    d = paths
    assert run_here("scale", "-s", "p.txt", "h.txt", cwd=d)[0] == 0
    os.symlink("p.txt", d / "p.link")
    for args in (["scale", "-o", "h.link", "h.txt"], ["scale", "-s", "h.hard", "h.txt"],
                 ["scale", "-r", "p.txt", "-o", "p.link", "h.txt"]):
        _refused(d, args, "it is the input file")
    for args in (["scale", "-s", "q.txt", "-o", "./q.txt", "h.txt"],
                 ["scale", "-s", "p.txt", "-o", "p.link", "h.txt"]):
        _refused(d, args, "is also the output file (-o)")
    pytest.importorskip("matplotlib")
    _refused(d, ["cv", "h.txt", "--plot", "x.png", "--output-model", str(d / "x.png")],
             "is also the --output-model file")
    os.symlink("h.txt", d / "h.png")
    _refused(d, ["cv", "h.txt", "--plot", "h.png"], "it is the input file")


