"""Synthetic sparse, text-like classification data for tests and benchmarks.

`make_text_classification` draws documents from a bag-of-words model built to
have the statistics of real text classification sets (RCV1, 20 Newsgroups,
SECTOR): a Zipf-distributed vocabulary, documents of log-normal length, a few
class-specific topic words hidden among frequent class-neutral ones, tf-idf
weighting and unit-length rows.  Everything is vectorized numpy (no loop per
document) and determined by `seed`.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import ParameterError
from ..runtime.memory import require

__all__ = ["make_text_classification", "make_text_regression", "memory_needed", "text_vocabulary"]

# Zipf-Mandelbrot exponent and offset of the background word frequencies
# (p(rank r) ~ 1 / (r + q)^s), close to what English corpora show.
_ZIPF_S = 1.07
_ZIPF_Q = 2.7
# Share of the vocabulary that forms each class's topic, and the spread of the
# log-normal document lengths (sigma of log length).
_TOPIC_FRACTION = 0.02
_LENGTH_SIGMA = 0.6
# Topic share of a document's tokens ~ Beta(a, b): mean a / (a + b) = 0.2.
_TOPIC_BETA = (2.5, 10.0)


def make_text_classification(n_samples=20000, n_features=20000, n_classes=2, avg_length=80,
                             noise=0.05, seed=0):
    """Generate a sparse tf-idf document-term matrix with class labels.

    The generative model, per document d (all draws from
    ``numpy.random.default_rng(seed)``, in a fixed order):

    1. Vocabulary: word of frequency rank r (0-based) has background
       probability ``p0(r) ~ 1 / (r + 2.7)^1.07`` (Zipf-Mandelbrot); ranks are
       assigned to feature indices by a random permutation.
    2. Topics: each class c owns ``m = max(5, 2% of n_features)`` topic words,
       drawn without replacement from all but the most frequent 1% ("stop
       words"), with probability ~ sqrt(p0) (mid-frequency words are favoured);
       within the topic, word weights ~ p0^0.3 times a Gamma(2) factor.
       Topics of different classes may share words.
    3. True class ``c_d`` uniform over the classes; length
       ``L_d = max(1, round(LogNormal(log(avg_length) - sigma^2/2, sigma)))``,
       sigma = 0.6, so that E[L_d] ~ avg_length; topic share
       ``lambda_d ~ Beta(2.5, 10)`` (mean 1/5).
    4. Each of the L_d tokens is a topic-c_d word with probability lambda_d,
       else a background word.
    5. Counts -> ``x_dj = log(1 + count_dj) * idf_j`` with the smoothed
       ``idf_j = log((1 + n_samples) / (1 + df_j)) + 1`` (df_j = number of
       documents containing word j); each row is scaled to unit L2 norm.
    6. Label noise: exactly ``round(noise * n_samples)`` documents, chosen at
       random, get a uniformly chosen *other* class.

    Parameters
    ----------
    n_samples : int >= 1
    n_features : int >= 10, the vocabulary size
    n_classes : int >= 2
    avg_length : float > 0, mean number of tokens per document (the number of
        distinct words, i.e. nonzeros per row, is smaller: frequent words repeat)
    noise : float in [0, 1), fraction of labels replaced by a wrong class
    seed : int or None, seed of numpy's default Generator

    Returns
    -------
    X : scipy.sparse.csr_matrix, float64, shape (n_samples, n_features),
        canonical (sorted indices, no duplicates, no explicit zeros), rows of
        unit Euclidean norm.
    y : float64 array of shape (n_samples,): +1 / -1 for two classes (class 0
        of the generator is +1), 1 .. n_classes otherwise.
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_features = _check_int(n_features, "n_features", 10)
    n_classes = _check_int(n_classes, "n_classes", 2)
    if not (np.isfinite(avg_length) and avg_length > 0):
        raise ParameterError(f"avg_length must be > 0, got {avg_length!r}")
    if not (0 <= noise < 1):
        raise ParameterError(f"noise must be in [0, 1), got {noise!r}")
    require(memory_needed(n_samples, n_features, n_classes, avg_length),
            f"generating {n_samples} documents over {n_features} features", ParameterError,
            "ask for fewer features or documents")
    rng = np.random.default_rng(seed)
    V = n_features
    p0, word_of_rank, topic_ranks, topic_cdf = text_vocabulary(rng, V, n_classes)
    # 3. Classes, lengths, topic shares.
    cls = rng.integers(n_classes, size=n_samples)
    mu = np.log(avg_length) - _LENGTH_SIGMA ** 2 / 2
    lengths = np.maximum(1, np.rint(rng.lognormal(mu, _LENGTH_SIGMA, size=n_samples))).astype(np.int64)
    lam = rng.beta(*_TOPIC_BETA, size=n_samples)
    doc, word = _tokens(rng, p0, word_of_rank, topic_ranks, topic_cdf, cls, lengths, lam)
    X = _tfidf_rows(doc, word, n_samples, V)
    # 6. Label noise, then the label values.
    n_flip = int(round(noise * n_samples))
    if n_flip:
        flip = rng.choice(n_samples, size=n_flip, replace=False)
        cls[flip] = (cls[flip] + rng.integers(1, n_classes, size=n_flip)) % n_classes
    if n_classes == 2:
        y = np.where(cls == 0, 1.0, -1.0)
    else:
        y = (cls + 1).astype(np.float64)
    return X, y


# Peak bytes of make_text_classification (tracemalloc's peak, rounded up): the
# vocabulary's arrays (Zipf weights, their CDF, the rank permutation, the topic
# candidates) per feature, the token arrays (document, rank, word, draws) and the
# COO -> CSR conversion per token, and each class's topic ranks and CDF.
_BYTES_PER_FEATURE = 56
_BYTES_PER_TOKEN = 48
_BYTES_PER_TOPIC_WORD = 16


def memory_needed(n_samples, n_features, n_classes=2, avg_length=80):
    """About the most memory (bytes) make_text_classification takes for these arguments
    (an upper estimate: checked against what the process can get before anything is
    allocated, so that a huge --n-features fails at once with one line)."""
    topic_words = n_classes * max(5, round(_TOPIC_FRACTION * n_features))
    tokens = n_samples * (avg_length * 1.1 + 1)      # lengths are log-normal, at least 1
    return int(_BYTES_PER_FEATURE * n_features + _BYTES_PER_TOKEN * tokens
               + _BYTES_PER_TOPIC_WORD * topic_words)


def text_vocabulary(rng, n_features, n_classes):
    """Steps 1 and 2 of make_text_classification, drawn from the Generator rng (the
    rank permutation, then each class's topic in turn): (p0, word_of_rank, topic_ranks,
    topic_cdf) -- the background probability of each frequency rank, the feature index
    of each rank (int32), each class's topic words as ranks (n_classes x m) and the
    cumulative distribution of their weights.  The block generator
    (linsvm.io.synth_blocks) takes the same vocabulary for the same seed."""
    # 1. Background Zipf distribution over ranks, ranks placed at random indices.
    p0 = (np.arange(n_features) + _ZIPF_Q) ** -_ZIPF_S
    p0 /= p0.sum()
    word_of_rank = rng.permutation(n_features).astype(np.int32)
    topic_ranks, topic_cdf = _topics(rng, p0, n_classes)
    return p0, word_of_rank, topic_ranks, topic_cdf


def _topics(rng, p0, n_classes):
    """Step 2: each class's topic words (ranks, n_classes x m) and the cumulative
    distribution of their weights, from all but the most frequent 1% of ranks."""
    V = p0.shape[0]
    n_stop = V // 100
    candidates = np.arange(n_stop, V)
    m = min(max(5, round(_TOPIC_FRACTION * V)), candidates.size)
    pick = np.sqrt(p0[candidates])
    pick /= pick.sum()
    topic_ranks = np.empty((n_classes, m), dtype=np.int64)
    topic_cdf = np.empty((n_classes, m))
    for c in range(n_classes):          # a loop over classes, not documents
        ranks = rng.choice(candidates, size=m, replace=False, p=pick)
        w = p0[ranks] ** 0.3 * rng.gamma(2.0, size=m)
        topic_ranks[c] = ranks
        topic_cdf[c] = _cdf(w)
    return topic_ranks, topic_cdf


def _tokens(rng, p0, word_of_rank, topic_ranks, topic_cdf, cls, lengths, lam):
    """Step 4: (document, word) of every token, a topic word of the document's class
    with probability lam[d], else a background word."""
    n_samples = cls.shape[0]
    doc = np.repeat(np.arange(n_samples), lengths)
    from_topic = rng.random(doc.size) < lam[doc]
    rank = np.empty(doc.size, dtype=np.int64)
    bg = ~from_topic
    rank[bg] = np.searchsorted(_cdf(p0), rng.random(int(bg.sum())), side="right")
    tok_cls = cls[doc]
    for c in range(topic_ranks.shape[0]):
        sel = np.flatnonzero(from_topic & (tok_cls == c))
        j = np.searchsorted(topic_cdf[c], rng.random(sel.size), side="right")
        rank[sel] = topic_ranks[c, j]
    return doc, word_of_rank[rank]


def _tfidf_rows(doc, word, n_samples, V):
    """Step 5: counts (duplicates summed by the COO -> CSR conversion), smoothed tf-idf,
    rows of unit length."""
    X = sp.csr_matrix((np.ones(doc.size), (doc, word)), shape=(n_samples, V))
    X.sum_duplicates()
    X.sort_indices()
    df = np.bincount(X.indices, minlength=V)
    idf = np.log((1.0 + n_samples) / (1.0 + df)) + 1.0
    X.data = np.log1p(X.data) * idf[X.indices]
    row_norm = np.sqrt(np.add.reduceat(X.data ** 2, X.indptr[:-1]))  # every row has >= 1 token
    X.data /= np.repeat(row_norm, np.diff(X.indptr))
    return X


def make_text_regression(n_samples=20000, n_features=20000, avg_length=80, informative=0.05,
                         noise=0.3, offset=0.0, seed=0):
    """Generate the documents of `make_text_classification` (two classes, the same
    draws for the same seed) with real-valued targets from a sparse linear model:

        y_d = offset + x_d . w* + noise * N(0, 1),

    w* nonzero on ``k = max(1, round(informative * n_features))`` features chosen at
    random, their values standard normal, then scaled so that x . w* has unit standard
    deviation over the documents (all draws from ``default_rng(seed + 1)``, after the
    documents).  The class labels are dropped.

    Returns X (scipy.sparse.csr_matrix, as make_text_classification's) and y (float64,
    shape (n_samples,)).
    """
    if not (np.isfinite(informative) and 0.0 < informative <= 1.0):
        raise ParameterError(f"informative must be in (0, 1], got {informative!r}")
    if not (np.isfinite(noise) and noise >= 0.0):
        raise ParameterError(f"noise must be >= 0, got {noise!r}")
    if not np.isfinite(offset):
        raise ParameterError(f"offset must be finite, got {offset!r}")
    X, _ = make_text_classification(n_samples=n_samples, n_features=n_features, n_classes=2,
                                    avg_length=avg_length, noise=0.0, seed=seed)
    rng = np.random.default_rng(None if seed is None else seed + 1)
    k = max(1, int(round(informative * X.shape[1])))
    w = np.zeros(X.shape[1])
    w[rng.choice(X.shape[1], size=k, replace=False)] = rng.standard_normal(k)
    s = X @ w
    sd = float(s.std())
    if sd > 0:
        s /= sd
    y = offset + s + noise * rng.standard_normal(X.shape[0])
    return X, y


def _cdf(weights):
    """Cumulative distribution of positive `weights`, with the last entry exactly 1."""
    cdf = np.cumsum(weights, dtype=np.float64)
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    return cdf


def _check_int(value, name, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)
