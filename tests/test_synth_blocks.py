"""The block generator of synthetic text (linsvm.io.synth_blocks, `linsvm synth --format
binary`): its rows against a plain-Python reading of the documented draw order, blocks
that concatenate to the whole set whatever the split, the shape of the data (row lengths,
index ranges, labels, values), memory independent of the number of rows, and the command
through a stand-in for the binary data file's writer."""
import math
import tracemalloc

import numpy as np
import pytest

from linsvm import _synth
from linsvm.cli import run_tools
from linsvm.errors import ParameterError
from linsvm.io.synth import text_vocabulary
from linsvm.io.synth_blocks import (CHUNK_ROWS, TextBlocks, block_memory_needed,
                                    check_block_spec, write_blocks)

from conftest import run_here

M64 = (1 << 64) - 1


def _splitmix(state):
    """(new state, output) of SplitMix64 (csrc/rng.pxd), in Python integers."""
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def _reference(spec, chunk_rows):
    """The whole set as the module notes describe it, in plain Python: (indptr, indices,
    data or None, labels)."""
    V, K = spec.n_features, spec.n_classes
    p0, word_of_rank, topic_ranks, topic_cdf = text_vocabulary(np.random.default_rng(spec.seed), V, K)
    bg = _synth.alias_table(p0)
    tables = [_synth.alias_table(np.diff(cdf, prepend=0.0)) for cdf in topic_cdf]
    idf = np.empty(V)
    idf[word_of_rank] = 1.0 - np.log(-np.expm1(-spec.mean_nnz * p0))

    def draw(prob, alias, outcome, u):
        n = len(prob)
        x = u * n
        i = min(int(x), n - 1)
        return outcome(i) if x - i < prob[i] else outcome(int(alias[i]))

    indptr, indices, data, labels = [0], [], [], []
    for c in range(-(-spec.n_samples // chunk_rows)):
        r = min(chunk_rows, spec.n_samples - c * chunk_rows)
        g = np.random.Generator(np.random.PCG64(np.random.SeedSequence(spec.seed, spawn_key=(c,))))
        key = int(g.integers(0, 2**64, dtype=np.uint64))
        cls = g.integers(K, size=r)
        n_d = np.clip(np.rint(g.lognormal(math.log(spec.mean_nnz) - 0.6 ** 2 / 2, 0.6, size=r)), 1, V // 4)
        lam = g.beta(2.5, 10.0, size=r)
        flip = g.random(r) < spec.noise
        label = [(cls[k] + int(g.integers(1, K))) % K if flip[k] else cls[k] for k in range(r)]
        labels += [(1.0 if v == 0 else -1.0) if K == 2 else v + 1.0 for v in label]
        for k in range(r):
            _, state = _splitmix((key + k) & M64)
            counts = {}
            while len(counts) < n_d[k]:
                state, z1 = _splitmix(state)
                state, z2 = _splitmix(state)
                u1, u2 = (z1 >> 11) * 2.0**-53, (z2 >> 11) * 2.0**-53
                if u1 < lam[k]:
                    prob, alias = tables[cls[k]]
                    j = draw(prob, alias, lambda e: word_of_rank[topic_ranks[cls[k], e]], u2)
                else:
                    j = draw(bg[0], bg[1], lambda i: word_of_rank[i], u2)
                counts[int(j)] = counts.get(int(j), 0) + 1
            words = sorted(counts)
            v = [math.log1p(counts[j]) * idf[j] for j in words]
            norm = math.sqrt(sum(x * x for x in v))      # Python's sum: left to right
            indices += words
            data += [x / norm for x in v]
            indptr.append(len(indices))
    out = np.array(data)
    if spec.values == "float32":
        out = out.astype(np.float32)
    return (np.array(indptr), np.array(indices), None if spec.values == "pattern" else out,
            np.array(labels))


def _same(a, b):
    assert (a[2] is None) == (b[2] is None)
    for x, y in zip(a, b):
        if x is not None:
            assert np.asarray(x).tobytes() == np.asarray(y, dtype=np.asarray(x).dtype).tobytes()


@pytest.mark.parametrize("values,n_classes,noise", [("float64", 2, 0.1), ("float32", 3, 0.3),
                                                     ("pattern", 2, 0.0)])
def test_rows_are_the_documented_draws(values, n_classes, noise):
    spec = check_block_spec(45, 200, n_classes, mean_nnz=12, noise=noise, values=values, seed=4)
    _same(TextBlocks(spec, chunk_rows=16).rows(), _reference(spec, 16))


@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_alias_tables_give_the_probabilities(n):
    rng = np.random.default_rng(n)
    for q in (rng.random(n) ** 3, np.ones(n), np.eye(1, n, n // 2).ravel()):
        q = q / q.sum()
        prob, alias = _synth.alias_table(q)
        assert ((alias >= 0) & (alias < n)).all() and ((prob >= 0) & (prob <= 1)).all()
        implied = prob.copy()
        np.add.at(implied, alias, 1.0 - prob)
        np.testing.assert_allclose(implied / n, q, rtol=0, atol=1e-12)


def test_blocks_concatenate_to_the_whole_set_whatever_the_split_and_threads():
    spec = check_block_spec(100, 300, 2, mean_nnz=15, values="float64", seed=2)
    whole = TextBlocks(spec, chunk_rows=9).rows()
    for cuts in ([0, 100], [0, 1, 50, 51, 100], [0, 9, 18, 77, 100]):
        gen = TextBlocks(spec, chunk_rows=9, n_threads=1 + len(cuts) % 2)
        parts = [gen.rows(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
        ends = np.cumsum([0] + [p[0][-1] for p in parts])
        joined = (np.concatenate([[0]] + [p[0][1:] + e for p, e in zip(parts, ends)]),
                  *(np.concatenate([p[i] for p in parts]) for i in (1, 2, 3)))
        _same(joined, whole)
    blocks = list(TextBlocks(spec, chunk_rows=9).blocks())
    assert [b[0].shape[0] - 1 for b in blocks] == [9] * 11 + [1]
    assert all(b[0][0] == 0 for b in blocks)
    with pytest.raises(ParameterError, match="outside"):
        list(TextBlocks(spec).blocks(5, 101))


def test_rows_have_their_lengths_sorted_indices_in_range_and_unit_norm():
    spec = check_block_spec(3000, 5000, 2, mean_nnz=60, values="float64", seed=1)
    indptr, indices, data, labels = TextBlocks(spec).rows()
    lengths = np.diff(indptr)
    assert lengths.min() >= 1 and lengths.max() <= 5000 // 4
    assert abs(lengths.mean() / 60 - 1) < 0.05 and lengths.std() > 0.3 * 60
    assert indices.dtype == np.int32 and indices.min() >= 0 and indices.max() < 5000
    row = np.repeat(np.arange(3000), lengths)
    assert (np.diff(indices)[np.diff(row) == 0] > 0).all()        # increasing within a row
    assert np.isfinite(data).all() and (data > 0).all()
    np.testing.assert_allclose(np.add.reduceat(data * data, indptr[:-1]), 1.0, rtol=1e-12)
    # the vocabulary is the text generator's: its most frequent rank is the most frequent word
    _, word_of_rank, _, _ = text_vocabulary(np.random.default_rng(1), 5000, 2)
    assert np.bincount(indices, minlength=5000).argmax() == word_of_rank[0]
    values, counts = np.unique(labels, return_counts=True)
    assert values.tolist() == [-1.0, 1.0] and abs(counts[0] / 3000 - 0.5) < 0.03


def test_labels_are_balanced_over_classes_and_noise_changes_labels_only():
    spec = check_block_spec(6000, 1000, 5, mean_nnz=10, noise=0.0, values="pattern", seed=3)
    clean = TextBlocks(spec).rows()
    values, counts = np.unique(clean[3], return_counts=True)
    assert values.tolist() == [1, 2, 3, 4, 5] and (np.abs(counts / 6000 - 0.2) < 0.03).all()
    noisy = TextBlocks(spec._replace(noise=0.2)).rows()
    assert noisy[0].tobytes() == clean[0].tobytes() and noisy[1].tobytes() == clean[1].tobytes()
    assert abs((noisy[3] != clean[3]).mean() - 0.2) < 0.02


def test_layouts_share_the_entries_and_float32_rounds_float64():
    spec = check_block_spec(500, 2000, 2, mean_nnz=20, values="float64", seed=5)
    f64 = TextBlocks(spec).rows()
    f32 = TextBlocks(spec._replace(values="float32")).rows()
    pat = TextBlocks(spec._replace(values="pattern")).rows()
    assert pat[2] is None and f32[2].dtype == np.float32
    for other in (f32, pat):
        assert other[1].tobytes() == f64[1].tobytes() and other[3].tobytes() == f64[3].tobytes()
    assert f32[2].tobytes() == f64[2].astype(np.float32).tobytes()


def test_memory_is_independent_of_the_number_of_rows():
    small = check_block_spec(CHUNK_ROWS, 20000, 2, mean_nnz=50, values="float64", seed=0)
    huge = small._replace(n_samples=10**10)
    assert block_memory_needed(small) == block_memory_needed(huge) < 64 << 20
    gen = TextBlocks(small._replace(n_samples=40 * 512), chunk_rows=512)
    peaks = []
    tracemalloc.start()
    try:
        for k, (indptr, indices, data, labels) in enumerate(gen.blocks()):
            if k in (3, 39):
                peaks.append(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()
    assert peaks[1] < 1.2 * peaks[0]                  # 40 blocks cost what 4 did


@pytest.mark.parametrize("kwargs,match", [
    (dict(n_samples=0), "n_samples"), (dict(n_features=9), "n_features"),
    (dict(n_features=2**31), "n_features"), (dict(n_classes=1), "n_classes"),
    (dict(seed=-1), "seed"), (dict(mean_nnz=0.5), "mean_nnz"), (dict(mean_nnz=101), "mean_nnz"),
    (dict(noise=1.0), "noise"), (dict(values="int8"), "values"),
])
def test_bad_arguments_raise_parameter_error(kwargs, match):
    args = dict(n_samples=10, n_features=1000, n_classes=2, mean_nnz=10, noise=0.0,
                values="pattern", seed=0)
    with pytest.raises(ParameterError, match=match):
        check_block_spec(**dict(args, **kwargs))


class _Writer:
    """A stand-in for BinaryWriter (the brief's contract): keeps what it is given."""
    files = {}

    def __init__(self, path, values, n_features):
        self.path, self.values, self.n_features, self.blocks = path, values, n_features, []

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is None:                      # atomic: the file exists only on a clean exit
            _Writer.files[str(self.path)] = self
        return False

    def append(self, indptr, indices, data, labels):
        assert indptr[0] == 0 and indptr.dtype == np.int64 and indices.dtype == np.int32
        self.blocks.append((indptr.copy(), indices.copy(), None if data is None else data.copy(),
                            labels.copy()))

    def rows(self):
        ends = np.cumsum([0] + [b[0][-1] for b in self.blocks])
        return (np.concatenate([[0]] + [b[0][1:] + e for b, e in zip(self.blocks, ends)]),
                np.concatenate([b[1] for b in self.blocks]),
                None if self.blocks[0][2] is None else np.concatenate([b[2] for b in self.blocks]),
                np.concatenate([b[3] for b in self.blocks]))


def test_write_blocks_splits_rows_between_files_and_leaves_none_on_error():
    _Writer.files.clear()
    spec = check_block_spec(50, 400, 2, mean_nnz=10, values="pattern", seed=1)
    gen = TextBlocks(spec, chunk_rows=8)
    nnz = write_blocks(gen, [("a", 0, 38), ("b", 38, 50)], _Writer)
    a, b = _Writer.files["a"], _Writer.files["b"]
    assert (a.values, a.n_features) == ("pattern", 400)
    _same(a.rows(), gen.rows(0, 38))
    _same(b.rows(), gen.rows(38, 50))
    assert nnz == [a.rows()[0][-1], b.rows()[0][-1]]
    _Writer.files.clear()

    class Failing(_Writer):
        def append(self, *args):
            raise OSError("disk full")
    with pytest.raises(OSError):
        write_blocks(gen, [("a", 0, 38), ("b", 38, 50)], Failing)
    assert _Writer.files == {}


def test_synth_binary_command_writes_through_the_writer(tmp_path, monkeypatch):
    _Writer.files.clear()
    monkeypatch.setattr(run_tools, "binary_writer", _Writer)
    run_tools.synth(str(tmp_path / "t.bin"), str(tmp_path / "v.bin"), fmt="binary",
                    values="float32", mean_nnz=25, n_samples=300, n_features=2000, n_classes=3,
                    noise=0.05, test_fraction=0.2, seed=7, regression=False, target_noise=0.3,
                    target_offset=0.0)
    spec = check_block_spec(300, 2000, 3, mean_nnz=25, noise=0.05, values="float32", seed=7)
    gen = TextBlocks(spec)
    _same(_Writer.files[str(tmp_path / "t.bin")].rows(), gen.rows(0, 240))
    _same(_Writer.files[str(tmp_path / "v.bin")].rows(), gen.rows(240, 300))


@pytest.mark.parametrize("args,code,needle", [
    (["--values", "pattern", "x.svm"], 2, "--values is an option of --format binary"),
    (["--mean-nnz", "50", "x.svm"], 2, "--mean-nnz is an option of --format binary"),
    (["--format", "binary", "-"], 2, "not standard output"),
    (["--format", "binary", "--regression", "x.bin"], 2, "--regression"),
    (["--format", "binary", "--mean-nnz", "5000", "x.bin"], 1, "mean_nnz must be in"),
    (["--format", "binary", "--seed", "-1", "x.bin"], 2, "--seed"),
    (["--seed", "-1", "x.svm"], 2, "--seed"),
])
def test_synth_binary_usage_and_errors_in_one_line(tmp_path, args, code, needle):
    status, _, err = run_here("synth", "--n-samples", "40", "--n-features", "2000", *args,
                              cwd=tmp_path)
    assert status == code and needle in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


def test_synth_binary_file_reads_back_as_the_blocks(tmp_path):
    """Once the binary data file is in the build (its BinaryWriter behind
    run_tools.binary_writer): the written file maps back to the generator's rows."""
    binfile = pytest.importorskip("linsvm.io.binfile")
    out = tmp_path / "p.bin"
    status, _, err = run_here("synth", "--format", "binary", "--values", "pattern", "--n-samples",
                              "5000", "--n-features", "3000", "--mean-nnz", "40", str(out),
                              cwd=tmp_path)
    assert status == 0, err
    indptr, indices, data, labels = TextBlocks(check_block_spec(
        5000, 3000, 2, mean_nnz=40, noise=0.05, values="pattern", seed=0)).rows()
    got = binfile.open_binary(out)
    try:
        assert got.X.n_features == 3000 and got.X.indptr.tobytes() == indptr.tobytes()
        assert got.X.indices.tobytes() == indices.tobytes() and got.y.tobytes() == labels.tobytes()
        assert got.X.data is None or (np.asarray(got.X.data) == 1.0).all()
    finally:
        got.close()
