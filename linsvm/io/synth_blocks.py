"""Synthetic text-like classification data generated block by block, for sets far larger
than memory (`linsvm synth --format binary`; docs/synth.md, "The block generator").

`make_text_classification` (linsvm.io.synth) draws the whole set at once: its tf-idf needs
every document's words before any value is known, and its label noise picks documents
across the whole set.  The block generator keeps its vocabulary and class topics (the
same for the same seed) and changes what needs the whole set, so that memory depends on
the vocabulary and one block of rows, never on the number of rows:

1. Vocabulary: steps 1 and 2 of make_text_classification, from default_rng(seed)
   (linsvm.io.synth.text_vocabulary): Zipf-Mandelbrot background probabilities p0 over
   the frequency ranks, a random permutation placing the ranks at feature indices, and
   each class's topic words and weights.
2. Rows come in chunks of CHUNK_ROWS (the last one shorter); chunk c draws from
   Generator(PCG64(SeedSequence(seed, spawn_key=(c,)))), in this order:
   a. key: one uint64 (integers(0, 2**64, dtype=uint64)), the chunk's token streams;
   b. the true class of each document, uniform (integers(n_classes, size=r));
   c. its number of distinct words
      n_d = clip(rint(LogNormal(log(mean_nnz) - sigma^2 / 2, sigma)), 1, n_features // 4),
      sigma = 0.6 (lognormal(..., size=r)), so that E[n_d] ~ mean_nnz;
   d. its topic share lam_d ~ Beta(2.5, 10) (beta(2.5, 10, size=r));
   e. label noise: each document whose uniform (random(size=r)) is < noise gets
      another class, (c_d + integers(1, n_classes)) % n_classes, in row order.
3. Tokens (compiled: linsvm._synth, csrc/_synth.pyx): row k of the chunk draws from
   SplitMix64 started at next(key + k) until it holds n_d distinct words, each token a
   topic word of its true class with probability lam_d, else a background word (two
   uniforms per token: the choice, then the word through an alias table of the topic's
   or the background's probabilities).  Its entries are its n_d words in increasing
   order: exactly n_d non-zeros.
4. Values ("pattern": none, every entry 1 -- term presence; "float64"; "float32": those
   rounded): x_dj = log(1 + count_dj) * idf_j, each row then scaled to unit Euclidean
   norm, with the idf the model expects instead of the set's (which needs every row):
   idf_j = 1 - log(1 - exp(-mean_nnz * p0_j)), p0_j the background probability of word
   j (1 for a word in most documents, about 1 + log(1 / (mean_nnz p0_j)) for a rare one).
5. Labels: +1 for class 0 and -1 for class 1 with two classes, 1..n_classes otherwise.

So the rows of a chunk depend only on the seed and the chunk's number: any block of rows
is the same whatever blocks came before, and `rows(0, n)` (the documented whole-set
equivalent) equals the blocks of `blocks()` concatenated.  The token streams are
independent per row, so the threads share a chunk's rows with the same result.
"""
from __future__ import annotations

import contextlib
import math
from typing import NamedTuple

import numpy as np

from .. import _synth
from ..errors import ParameterError
from ..runtime.memory import require
from .synth import text_vocabulary

__all__ = ["BlockSpec", "TextBlocks", "check_block_spec", "block_memory_needed", "write_blocks",
           "VALUES", "CHUNK_ROWS"]

CHUNK_ROWS = 4096               # rows per chunk of draws (part of the draw order)
VALUES = ("float64", "float32", "pattern")
_LENGTH_SIGMA = 0.6             # as the text generator's document lengths
_TOPIC_BETA = (2.5, 10.0)       # as the text generator's topic shares
_MAX_ROW_SHARE = 4              # a row holds at most n_features // 4 distinct words
_MAX_MEAN_SHARE = 10            # mean_nnz at most n_features / 10


class BlockSpec(NamedTuple):
    """The arguments of a block-generated set (checked by check_block_spec)."""
    n_samples: int
    n_features: int
    n_classes: int
    mean_nnz: float
    noise: float
    values: str
    seed: int


def check_block_spec(n_samples, n_features, n_classes=2, mean_nnz=100.0, noise=0.05,
                     values="float64", seed=0):
    """A BlockSpec of checked arguments, or ParameterError naming the first bad one:
    n_samples >= 1, n_features in [10, 2**31 - 1], n_classes >= 2, mean_nnz in
    [1, n_features / 10], noise in [0, 1), values one of VALUES, seed an integer >= 0."""
    for name, v, lo, hi in (("n_samples", n_samples, 1, None), ("n_features", n_features, 10,
                            2**31 - 1), ("n_classes", n_classes, 2, None), ("seed", seed, 0, None)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) \
                or v < lo or (hi is not None and v > hi):
            raise ParameterError(f"{name} must be an integer in [{lo}, {hi if hi else 'inf'}], "
                                 f"got {v!r}")
    top = n_features / _MAX_MEAN_SHARE
    if not (isinstance(mean_nnz, (int, float, np.number)) and 1.0 <= mean_nnz <= top):
        raise ParameterError(f"mean_nnz must be in [1, n_features / {_MAX_MEAN_SHARE} = {top:g}], "
                             f"got {mean_nnz!r}")
    if not (isinstance(noise, (int, float, np.number)) and 0.0 <= noise < 1.0):
        raise ParameterError(f"noise must be in [0, 1), got {noise!r}")
    if values not in VALUES:
        raise ParameterError(f"values must be one of {', '.join(VALUES)}, got {values!r}")
    return BlockSpec(int(n_samples), int(n_features), int(n_classes), float(mean_nnz),
                     float(noise), values, int(seed))


# Bytes of the generator's state: per feature, the vocabulary's arrays while they are
# built (p0, its permutation, the topic candidates, the alias table's prob, alias and
# work arrays, the idf); per topic word, its rank, weight and table; per entry of a chunk,
# its index and value (and the float32 copy); per row of a chunk, its draws and pointers.
_BYTES_PER_FEATURE = 72
_BYTES_PER_TOPIC_WORD = 40
_BYTES_PER_ENTRY = 16
_BYTES_PER_ROW = 72


def block_memory_needed(spec, chunk_rows=CHUNK_ROWS):
    """About the most memory (bytes) TextBlocks takes for spec: the vocabulary and one
    chunk, independent of spec.n_samples beyond the first chunk (an upper estimate, the
    chunk's entries taken at three times mean_nnz per row)."""
    m = max(5, round(0.02 * spec.n_features))
    r = min(chunk_rows, spec.n_samples)
    return int(_BYTES_PER_FEATURE * spec.n_features + _BYTES_PER_TOPIC_WORD * spec.n_classes * m
               + r * (_BYTES_PER_ROW + 3 * spec.mean_nnz * _BYTES_PER_ENTRY))


class TextBlocks:
    """The block generator of the module notes for a BlockSpec.

    ``rows(lo, hi)`` gives rows [lo, hi) as (indptr int64 from 0, indices int32, data
    float64 / float32 / None for a pattern, labels float64); ``blocks(lo, hi)`` yields
    the same rows chunk by chunk (clipped to [lo, hi)), which is what a writer appends.
    n_threads: threads of the token loop (0: all; the rows do not depend on it).
    The vocabulary is built (and the memory checked: ParameterError) when it is made.
    """

    def __init__(self, spec, n_threads=0, chunk_rows=CHUNK_ROWS):
        self.spec, self.n_threads, self.chunk_rows = spec, int(n_threads), int(chunk_rows)
        require(block_memory_needed(spec, chunk_rows),
                f"generating blocks over {spec.n_features} features", ParameterError,
                "ask for fewer features or a smaller --mean-nnz")
        V = spec.n_features
        p0, word_of_rank, topic_ranks, topic_cdf = text_vocabulary(
            np.random.default_rng(spec.seed), V, spec.n_classes)
        bg_prob, bg_alias = _synth.alias_table(p0)
        tables = [_synth.alias_table(np.diff(cdf, prepend=0.0)) for cdf in topic_cdf]
        idf = None
        if spec.values != "pattern":
            idf = np.empty(V)
            idf[word_of_rank] = 1.0 - np.log(-np.expm1(-spec.mean_nnz * p0))
        self.model = _synth.TokenModel(bg_prob, bg_alias, np.stack([t[0] for t in tables]),
                                       np.stack([t[1] for t in tables]),
                                       np.ascontiguousarray(topic_ranks, dtype=np.int64),
                                       word_of_rank, idf)
        self.max_row = max(1, V // _MAX_ROW_SHARE)

    @property
    def n_chunks(self):
        return -(-self.spec.n_samples // self.chunk_rows)

    def chunk_draws(self, c):
        """Step 2 for chunk c: (key, true classes, row lengths, topic shares, labels)."""
        s = self.spec
        r = min(self.chunk_rows, s.n_samples - c * self.chunk_rows)
        g = np.random.Generator(np.random.PCG64(np.random.SeedSequence(s.seed, spawn_key=(c,))))
        key = int(g.integers(0, 2**64, dtype=np.uint64))
        cls = g.integers(s.n_classes, size=r)
        mu = math.log(s.mean_nnz) - _LENGTH_SIGMA ** 2 / 2
        lengths = np.clip(np.rint(g.lognormal(mu, _LENGTH_SIGMA, size=r)), 1,
                          self.max_row).astype(np.int64)
        lam = g.beta(*_TOPIC_BETA, size=r)
        labels = cls.copy()
        flip = np.flatnonzero(g.random(r) < s.noise)
        labels[flip] = (labels[flip] + g.integers(1, s.n_classes, size=flip.size)) % s.n_classes
        if s.n_classes == 2:
            labels = np.where(labels == 0, 1.0, -1.0)
        else:
            labels = (labels + 1).astype(np.float64)
        return key, np.ascontiguousarray(cls, dtype=np.int64), lengths, lam, labels

    def chunk(self, c):
        """All rows of chunk c: (indptr, indices, data, labels)."""
        key, cls, lengths, lam, labels = self.chunk_draws(c)
        indptr = np.zeros(cls.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        indices = np.empty(int(indptr[-1]), dtype=np.int32)
        data = None if self.spec.values == "pattern" else np.empty(indices.shape[0])
        self.model.fill(key, cls, lam, indptr, indices, data, self.n_threads)
        if self.spec.values == "float32":
            data = data.astype(np.float32)
        return indptr, indices, data, labels

    def blocks(self, lo=0, hi=None):
        """Rows [lo, hi) (hi None: every row), chunk by chunk, each as chunk() gives it
        (clipped to the range, its indptr again from 0)."""
        hi = self.spec.n_samples if hi is None else hi
        if not 0 <= lo <= hi <= self.spec.n_samples:
            raise ParameterError(f"rows [{lo}, {hi}) outside [0, {self.spec.n_samples})")
        for c in range(lo // self.chunk_rows, -(-hi // self.chunk_rows)):
            first = c * self.chunk_rows
            a, b = max(lo, first) - first, min(hi, first + self.chunk_rows) - first
            if a < b:
                yield _cut(self.chunk(c), a, b)

    def rows(self, lo=0, hi=None):
        """Rows [lo, hi) as one block (the blocks of blocks(lo, hi) concatenated)."""
        parts = list(self.blocks(lo, hi))
        if not parts:
            return (np.zeros(1, np.int64), np.zeros(0, np.int32),
                    None if self.spec.values == "pattern" else np.zeros(0, _DTYPE[self.spec.values]),
                    np.zeros(0))
        ends = np.cumsum([0] + [p[0][-1] for p in parts])
        indptr = np.concatenate([np.zeros(1, np.int64)] + [p[0][1:] + e for p, e in zip(parts, ends)])
        data = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
        return (indptr, np.concatenate([p[1] for p in parts]), data,
                np.concatenate([p[3] for p in parts]))


_DTYPE = {"float64": np.float64, "float32": np.float32}


def _cut(block, a, b):
    """Rows [a, b) of a block (indptr again from 0; views, no copy)."""
    indptr, indices, data, labels = block
    p, q = indptr[a], indptr[b]
    return (indptr[a:b + 1] - p, indices[p:q], None if data is None else data[p:q], labels[a:b])


def write_blocks(gen, outputs, open_writer):
    """Append the rows of the TextBlocks gen to writers: outputs is a list of (path, lo,
    hi), each file getting rows [lo, hi); open_writer(path, values, n_features) returns
    a context manager with append(indptr, indices, data, labels) -- the binary data
    file's BinaryWriter.  Every writer is open until all are written, so an error leaves
    none (each writer's own atomicity).  Returns the non-zeros written per file."""
    written = []
    with contextlib.ExitStack() as stack:
        writers = [stack.enter_context(open_writer(path, gen.spec.values, gen.spec.n_features))
                   for path, _, _ in outputs]
        for w, (_, lo, hi) in zip(writers, outputs):
            nnz = 0
            for indptr, indices, data, labels in gen.blocks(lo, hi):
                w.append(indptr, indices, data, labels)
                nnz += int(indptr[-1])
            written.append(nnz)
    return written
