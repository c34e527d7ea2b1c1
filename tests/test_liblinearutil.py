"""linsvm.liblinearutil against liblinear-official's liblinearutil itself: the examples
of its python/README run with only the import line changed, every -s code's model
(labels, decision values, primal objective), -v and -C, the model methods, the input
forms, LIBLINEAR's model files both ways, and the options LIBLINEAR refuses."""
import contextlib
import ctypes
import io
import math

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm.liblinearutil as ours
from conftest import shared_file
from linsvm.errors import DataError, ModelError, ParameterError

L = pytest.importorskip("liblinear.liblinearutil")


@pytest.fixture(autouse=True)
def _liblinear_rand_as_in_a_fresh_process():
    """LIBLINEAR's dual solvers draw from C's rand(), whose state earlier calls change:
    seeding it as a new process starts (glibc's srand(1)) makes each test's reference
    the same whatever ran before it."""
    try:
        ctypes.CDLL(None).srand(1)
    except (OSError, AttributeError):    # no C library to reach: the reference may vary
        pass


def _write_svm(path, y, X):
    with open(path, "w") as fh:
        for yi, xi in zip(y, X):
            feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(xi) if v != 0)
            fh.write(f"{yi:+g} {feats}\n")


def _heart_like(n=270, d=13, seed=1, n_classes=2, shift=0.0):
    """A data set shaped like LIBSVM's heart_scale: n rows, d features in [-1, 1] (a
    third of them zero), labels +-1 (or 1..k) from a noisy linear rule."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d)) + shift
    X[rng.random((n, d)) < 0.3] = 0
    X = np.round(X, 6)
    scores = X @ rng.standard_normal((d, n_classes)) + 0.5 * rng.standard_normal((n, n_classes))
    if n_classes == 2:
        y = np.where(scores[:, 0] > 0, 1.0, -1.0)
    else:
        y = np.argmax(scores, axis=1) + 1.0
    return y, X


@pytest.fixture(scope="module")
def heart(tmp_path_factory):
    path = tmp_path_factory.mktemp("lu") / "heart_scale"
    _write_svm(path, *_heart_like())
    return str(path)


@pytest.fixture(scope="module")
def data(heart):
    return ours.svm_read_problem(heart, return_scipy=True)


@pytest.fixture(scope="module")
def regression(data):
    y, x = data
    rng = np.random.default_rng(3)
    return 2 + x @ np.linspace(-1, 1, x.shape[1]) + 0.1 * rng.standard_normal(x.shape[0]), x


@contextlib.contextmanager
def _silent():
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def _run_example(script, module, **names):
    """Run a README example with `from MODULE import *` as its import line; its names."""
    ns = dict(names)
    with _silent():
        exec(f"from {module} import *\n" + script, ns)
    return ns


def _close(a, b, rtol, atol=0.0):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(float(np.max(np.abs(b))), 1e-300) if b.size else 1.0
    return a.shape == b.shape and float(np.max(np.abs(a - b), initial=0.0)) <= rtol * scale + atol


# ------------------------------------------------------------------ the README examples
QUICK_START = """
y, x = svm_read_problem(HEART)
m = train(y[:200], x[:200], '-c 4')
pred_labels, pred_metrics, pred_values = predict(y[200:], x[200:], m)
quick = (pred_labels, pred_metrics, pred_values)
y, x = [1,-1], [[1,0,1], [-1,0,-1]]
dense = train(problem(y, x), parameter('-s 0 -c 4 -B 1')).get_decfun()
y, x = [1,-1], [{1:1, 3:1}, {1:-1,3:-1}]
prob  = problem(y, x)
param = parameter('-s 0 -c 4 -B 1')
m = train(prob, param)
save_model(MODEL, m)
m = load_model(MODEL)
pred_labels, pred_metrics, pred_values = predict(y, x, m, '-b 1')
ACC, MSE, SCC = evaluations(y, pred_labels)
"""

QUICK_START_SCIPY = """
import numpy as np
import scipy
y, x = svm_read_problem(HEART, return_scipy = True)
m = train(y[:200], x[:200, :], '-c 4')
pred_labels, pred_metrics, pred_values = predict(y[200:], x[200:, :], m)
quick = (pred_labels, pred_metrics, pred_values)
y, x = np.asarray([1,-1]), np.asarray([[1,0,1], [-1,0,-1]])
dense = train(problem(y, x), parameter('-s 0 -c 4 -B 1')).get_decfun()
y, x = np.asarray([1,-1]), scipy.sparse.csr_matrix(([1, 1, -1, -1], ([0, 0, 1, 1], [0, 2, 0, 2])))
prob  = problem(y, x)
param = parameter('-s 0 -c 4 -B 1')
m = train(prob, param)
save_model(MODEL, m)
m = load_model(MODEL)
pred_labels, pred_metrics, pred_values = predict(y, x, m, '-b 1')
ACC, MSE, SCC = evaluations(y, pred_labels)
y, x = svm_read_problem(HEART, return_scipy=True)
scale_param = csr_find_scale_param(x, lower=0)
scaled_x = csr_scale(x, scale_param)
"""

TRAIN_EXAMPLES = """
y, x = svm_read_problem(HEART)
prob = problem(y, x)
param = parameter('-s 3 -c 5 -q')
m1 = train(y, x, '-c 5')
m2 = train(prob, '-w1 5 -c 5')
m3 = train(prob, param)
models = [m.get_decfun() for m in (m1, m2, m3)]
CV_ACC = train(y, x, '-v 270')
best_C, best_p, best_rate = train(y[:60], x[:60], '-C -s 0 -v 60')
m = train(y, x, '-c {0} -s 0'.format(best_C))
pred_labels, pred_metrics, pred_values = predict(y, x, m)
"""


@pytest.mark.parametrize("script", [QUICK_START, QUICK_START_SCIPY], ids=["lists", "scipy"])
def test_readme_quick_start_gives_liblinears_results(script, heart, tmp_path):
    """The Quick Start examples: the same predicted labels and accuracy, decision
    values and probabilities close, one model file format read by both."""
    got = _run_example(script, "linsvm.liblinearutil", HEART=heart, MODEL=str(tmp_path / "a"))
    ref = _run_example(script, "liblinear.liblinearutil", HEART=heart, MODEL=str(tmp_path / "b"))
    assert got["quick"][0] == ref["quick"][0]
    assert got["quick"][1][0] == ref["quick"][1][0]
    assert _close(got["quick"][2], ref["quick"][2], 2e-2)
    assert _close(got["dense"][0], ref["dense"][0], 1e-3) and abs(got["dense"][1] - ref["dense"][1]) < 1e-3
    assert got["pred_labels"] == ref["pred_labels"]
    assert _close(got["pred_values"], ref["pred_values"], 1e-3)
    assert (got["ACC"], got["MSE"]) == (ref["ACC"], ref["MSE"])
    if "scaled_x" in ref:
        assert abs(got["scaled_x"] - ref["scaled_x"]).max() <= 1e-15
    assert (tmp_path / "a").read_text().splitlines()[:5] == (tmp_path / "b").read_text().splitlines()[:5]


@pytest.mark.data
def test_readme_quick_start_on_the_real_heart_scale(tmp_path):
    """LIBSVM's own heart_scale (from $LINSVM_DATA): the Quick Start as written, and every
    classifier code, predict the 70 test rows exactly as LIBLINEAR does."""
    heart = str(shared_file("binary/heart_scale"))
    got = _run_example(QUICK_START, "linsvm.liblinearutil", HEART=heart, MODEL=str(tmp_path / "a"))
    ref = _run_example(QUICK_START, "liblinear.liblinearutil", HEART=heart, MODEL=str(tmp_path / "b"))
    assert got["quick"][:2] == ref["quick"][:2] and _close(got["quick"][2], ref["quick"][2], 5e-2)
    y, x = ours.svm_read_problem(heart, return_scipy=True)
    for code in range(8):
        m, r = ours.train(y[:200], x[:200], f"-s {code} -q"), L.train(y[:200], x[:200], f"-s {code} -q")
        got, ref = ours.predict(y[200:], x[200:], m, "-q"), L.predict(y[200:], x[200:], r, "-q")
        assert _same_labels_but_on_the_boundary(got, ref, 0.05), code
        assert _close(got[2], ref[2], 1e-1 if code == 4 else 5e-2), code    # -s 4: rand()


@pytest.mark.slow
def test_readme_train_examples_give_liblinears_results(heart):
    """train's examples: -c, -w1 5, a parameter, -v (leave-one-out, where the folds are
    LIBLINEAR's too) and -C (leave-one-out on 60 rows): the same numbers.  The models are
    LIBLINEAR's within its own stop's distance from the optimum (LIBLINEAR at -e 1e-4), and
    no further from that optimum than LIBLINEAR's own default."""
    got = _run_example(TRAIN_EXAMPLES, "linsvm.liblinearutil", HEART=heart)
    ref = _run_example(TRAIN_EXAMPLES, "liblinear.liblinearutil", HEART=heart)
    y, x = L.svm_read_problem(heart)
    for options, (w, b), (wr, br) in zip(("-c 5", "-w1 5 -c 5", "-s 3 -c 5"), got["models"],
                                         ref["models"]):
        w_star = L.train(y, x, options + " -e 1e-4 -q").get_decfun()[0]
        ref_err = float(np.max(np.abs(np.subtract(wr, w_star))))
        assert _close(w, w_star, 0.0, ref_err + 1e-3 * np.max(np.abs(w_star))), options
        assert _close(w, wr, 1e-3, 2 * ref_err) and b == br == 0.0
    assert not _close(got["models"][0][0], got["models"][1][0], 1e-3)    # -w1 5 changed it
    assert got["CV_ACC"] == pytest.approx(ref["CV_ACC"], abs=100 / 270 + 1e-9)
    assert (got["best_C"], got["best_p"]) == (ref["best_C"], ref["best_p"]) == (ref["best_C"], -1)
    assert got["best_rate"] == pytest.approx(ref["best_rate"], abs=1 / 60 + 1e-9)   # one row
    assert got["pred_labels"] == ref["pred_labels"]
    assert got["pred_metrics"][0] == ref["pred_metrics"][0]


# ------------------------------------------------------------------ every -s code
def _columns(m, k):
    """(W (n x k), b (k,)) through get_decfun, the same calls for both modules."""
    cols = [m.get_decfun(j) for j in range(k)]
    return np.array([c[0] for c in cols]).T, np.array([c[1] for c in cols])


def _primal(code, W, b, X, y, C, bias, labels, p=0.1, free_bias=False):
    """LIBLINEAR's primal objective of code `code` at (W, b), written from its README's
    formulas: the regularizer over W and the bias weight b / bias (unless -R)."""
    F = X @ W + b
    reg_b = 0.0 if (free_bias or bias <= 0) else float(np.sum((b / bias) ** 2))
    if code in (5, 6):
        reg = np.abs(W).sum() + (0.0 if reg_b == 0 else np.abs(b / bias).sum())
    else:
        reg = 0.5 * (float(np.sum(W * W)) + reg_b)
    if code in (11, 12, 13):
        r = np.maximum(0.0, np.abs(y - F[:, 0]) - p)
        return reg + C * float(np.sum(r if code == 13 else r * r))
    if code == 4:
        Y = (y[:, None] == np.asarray(labels)[None, :])
        own = F[Y]
        return reg + C * float(np.sum(np.max(F + (~Y) - own[:, None], axis=1)))
    t = np.where(y == labels[0], 1.0, -1.0)
    z = t * F[:, 0]
    if code in (0, 6, 7):
        return reg + C * float(np.sum(np.logaddexp(0.0, -z)))
    h = np.maximum(0.0, 1.0 - z)
    return reg + C * float(np.sum(h if code == 3 else h * h))


# code -> relative distance of the weights to LIBLINEAR's at its default -e (measured:
# at most about half of this on these data)
CLASSIFIERS = {0: 2e-2, 1: 2e-2, 2: 4e-2, 3: 3e-2, 4: 5e-2, 5: 2e-2, 6: 2e-2, 7: 1e-2}


def _same_labels_but_on_the_boundary(got, ref, share):
    """Predictions equal but for a few rows (at most 3, or 3% of them) that LIBLINEAR's
    own decision values put within `share` of the largest |value| of the boundary (the
    gap between the top two classes' values; |value| for one value): where each
    solver's tolerance decides."""
    v = np.asarray(ref[2], dtype=float)
    top = np.sort(v, axis=1)
    margin = np.abs(v[:, 0]) if v.shape[1] == 1 else top[:, -1] - top[:, -2]
    differ = np.flatnonzero(np.asarray(got[0]) != np.asarray(ref[0]))
    few = max(3, int(0.03 * v.shape[0]))
    return differ.size <= few and bool(np.all(margin[differ] <= share * np.abs(v).max()))


@pytest.mark.parametrize("extra", ["", "-B 1", "-c 4 -B 1"])
@pytest.mark.parametrize("code", sorted(CLASSIFIERS))
def test_each_classifier_code_matches_liblinear(code, extra, data):
    """Train on 200 rows at LIBLINEAR's default -e, predict 70: the same labels (but on
    the boundary), weights close, the primal objective no worse than LIBLINEAR's beyond
    1%; at -e 1e-6 identical labels and weights equal to 1e-4."""
    y, x = data
    C, bias = (4.0 if "-c 4" in extra else 1.0), (1.0 if "-B" in extra else -1.0)
    k = 2 if code == 4 else 1
    for tight in (False, True):
        opts = f"-s {code} {extra} -q" + (" -e 1e-6" if tight else "")
        m, r = ours.train(y[:200], x[:200], opts), L.train(y[:200], x[:200], opts)
        got, ref = ours.predict(y[200:], x[200:], m, "-q"), L.predict(y[200:], x[200:], r, "-q")
        assert m.get_labels() == r.get_labels() and m.get_nr_feature() == r.get_nr_feature()
        (W, b), (Wr, br) = _columns(m, k), _columns(r, k)
        f = _primal(code, W, b, x[:200], y[:200], C, bias, m.get_labels())
        fr = _primal(code, Wr, br, x[:200], y[:200], C, bias, r.get_labels())
        assert f <= fr * (1 + (1e-6 if tight else 1e-2))
        if tight and code != 3:         # LIBLINEAR -s 3 stops short of 1e-6 (its f is higher)
            assert got[0] == ref[0] and _close(np.vstack([W, b]), np.vstack([Wr, br]), 1e-4)
        elif not tight:
            assert _same_labels_but_on_the_boundary(got, ref, 0.05)
            assert _close(np.vstack([W, b]), np.vstack([Wr, br]), CLASSIFIERS[code])


@pytest.mark.parametrize("code", [0, 2, 5, 6])
def test_free_bias_matches_liblinear(code, data):
    """-R -B 1: the bias weight left out of the regularizer, as LIBLINEAR's."""
    y, x = data
    m, r = ours.train(y, x, f"-s {code} -R -B 1 -q"), L.train(y, x, f"-s {code} -R -B 1 -q")
    (W, b), (Wr, br) = _columns(m, 1), _columns(r, 1)
    f = _primal(code, W, b, x, y, 1.0, 1.0, m.get_labels(), free_bias=True)
    fr = _primal(code, Wr, br, x, y, 1.0, 1.0, r.get_labels(), free_bias=True)
    assert f <= fr * 1.01 and abs(b[0] - br[0]) <= 2e-2 * max(1.0, abs(br[0]))


@pytest.mark.parametrize("code", [0, 1, 2, 3, 4, 5, 6, 7])
def test_multiclass_codes_match_liblinear(code):
    """Three classes (one-vs-rest, or Crammer-Singer for -s 4): at the default -e nearly
    the same labels and close decision values; at -e 1e-6 the same labels, decision
    values and probabilities to 1e-4."""
    y, X = _heart_like(n=240, n_classes=3, seed=4)
    x = sp.csr_matrix(X)
    for tight in (False, True):
        opts = f"-s {code} -q" + (" -e 1e-6" if tight else "")
        m, r = ours.train(y, x, opts), L.train(y, x, opts)
        assert m.get_labels() == r.get_labels() and m.get_nr_class() == r.get_nr_class() == 3
        got, ref = ours.predict(y, x, m, "-q"), L.predict(y, x, r, "-q")
        if not tight:
            assert _same_labels_but_on_the_boundary(got, ref, 0.05)
            assert _close(got[2], ref[2], 5e-2)
        elif code != 3:                 # LIBLINEAR -s 3 stops short of 1e-6
            assert _same_labels_but_on_the_boundary(got, ref, 1e-4)      # -s 4's exact ties
            assert _close(got[2], ref[2], 1e-4)
        if code in (0, 6, 7):
            tol = 1e-4 if tight else 2e-2
            assert _close(ours.predict(y, x, m, "-b 1 -q")[2], L.predict(y, x, r, "-b 1 -q")[2], tol)


@pytest.mark.parametrize("opts", ["-s 11", "-s 11 -B 1", "-s 11 -B 1 -R", "-s 12", "-s 13",
                                  "-s 12 -B 1 -p 0.2 -c 2", "-s 13 -e 0.0001"])
def test_regression_codes_match_liblinear(opts, regression):
    y, x = regression
    m, r = ours.train(y[:200], x[:200], opts + " -q"), L.train(y[:200], x[:200], opts + " -q")
    assert m.is_regression_model() and r.is_regression_model()
    got, ref = ours.predict(y[200:], x[200:], m, "-q"), L.predict(y[200:], x[200:], r, "-q")
    assert got[1][1] == pytest.approx(ref[1][1], rel=0.2)
    assert got[0] == [v[0] for v in got[2]]         # a regression's label is its value
    code = int(opts.split()[1])
    C = 2.0 if "-c 2" in opts else 1.0
    p = 0.2 if "-p 0.2" in opts else 0.1
    bias = 1.0 if "-B" in opts else -1.0
    (W, b), (Wr, br) = _columns(m, 1), _columns(r, 1)
    f = _primal(code, W, b, x[:200], y[:200], C, bias, [], p, free_bias="-R" in opts)
    fr = _primal(code, Wr, br, x[:200], y[:200], C, bias, [], p, free_bias="-R" in opts)
    assert f <= fr * 1.01
    if code == 11:          # the primal solvers of both reach -e 1e-4's gradient test
        assert _close(np.vstack([W, b]), np.vstack([Wr, br]), 2e-3)


def test_oneclass_matches_liblinear():
    y, X = _heart_like(n=200, shift=0.7, seed=5)
    x = sp.csr_matrix(X)
    m, r = ours.train(y, x, "-s 21 -n 0.3 -q"), L.train(y, x, "-s 21 -n 0.3 -q")
    assert m.is_oneclass_model() and r.is_oneclass_model()
    assert m.get_labels() == r.get_labels() == [0, 0]
    assert m.get_decfun_rho() == pytest.approx(r.get_decfun_rho(), rel=2e-2)
    w, minus_rho = m.get_decfun()
    wr, minus_rho_r = r.get_decfun()
    assert _close(w, wr, 2e-2) and minus_rho == -m.get_decfun_rho()
    got, ref = ours.predict([], x, m, "-q"), L.predict([], x, r, "-q")
    assert np.mean(np.array(got[0]) == np.array(ref[0])) >= 0.98
    assert set(got[0]) <= {1.0, -1.0}


# ------------------------------------------------------------------ -v and -C
def test_cross_validation_returns_liblinears_numbers(data, regression):
    """Leave-one-out folds are the same in both: the same accuracy; MSE close."""
    y, x = data
    for opts in ("-s 1", "-s 2", "-s 0", "-s 0 -w1 3 -e 1e-6", "-s 5 -B 1"):
        with _silent():
            assert ours.train(y[:60], x[:60], opts + " -v 60 -q") == \
                pytest.approx(L.train(y[:60], x[:60], opts + " -v 60 -q"))
    yo, Xo = _heart_like(n=60, shift=0.7, seed=5)
    with _silent():
        assert ours.train(yo, Xo, "-s 21 -v 60 -q") == pytest.approx(L.train(yo, Xo, "-s 21 -v 60 -q"))
    yr, xr = regression
    with _silent():
        mse, ref = ours.train(yr[:60], xr[:60], "-s 11 -v 60 -q"), L.train(yr[:60], xr[:60], "-s 11 -v 60 -q")
    assert mse == pytest.approx(ref, rel=1e-3)
    with _silent():
        acc = ours.train(y, x, "-v 5 -q")
    assert isinstance(acc, float) and 80 <= acc <= 100


def test_more_folds_than_data_is_leave_one_out(data):
    y, x = data
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        acc = ours.train(y[:20], x[:20], "-s 2 -v 50")
    assert "leave-one-out" in out.getvalue()
    with _silent():
        assert acc == pytest.approx(L.train(y[:20], x[:20], "-s 2 -v 20 -q"))


@pytest.mark.slow
def test_parameter_search_returns_liblinears_tuple(data, regression):
    y, x = data
    with _silent():
        got = ours.train(y[:60], x[:60], "-C -s 0 -v 60 -q")
        ref = L.train(y[:60], x[:60], "-C -s 0 -v 60 -q")
        assert got[:2] == ref[:2] and got[2] == pytest.approx(ref[2], abs=1 / 60 + 1e-9)
        C, p, rate = ours.train(y, x, "-C -q")          # -C alone: -s 2, 5 folds
        assert p == -1 and 0.8 <= rate <= 1 and math.log2(C) == round(math.log2(C))
        yr, xr = regression
        C, p, mse = ours.train(yr, xr, "-C -s 11 -q")
        Cr, pr, mser = L.train(yr, xr, "-C -s 11 -q")
    assert p >= 0 and mse == pytest.approx(mser, rel=0.2)
    step = np.max(np.abs(yr)) / 20                  # LIBLINEAR's grid of p
    for value in (p, pr):
        assert value / step == pytest.approx(round(value / step), abs=1e-9)


@pytest.mark.parametrize("lower, upper", [(-1, 1), (0, 1), (-2, 5)])
def test_scaling_matches_liblinears(lower, upper, data, capsys):
    y, x = data
    dense = x.toarray()
    dense[:, 4] = 0.5                                # a constant column: dropped
    x = sp.csr_matrix(dense)
    got = ours.csr_find_scale_param(x, lower=lower, upper=upper)
    ref = L.csr_find_scale_param(x, lower=lower, upper=upper)
    assert _close(got["coef"], ref["coef"], 1e-15) and _close(got["offset"], ref["offset"], 1e-15)
    assert abs(ours.csr_scale(x, got) - L.csr_scale(x, ref)).max() <= 1e-14
    scaled = ours.csr_scale(x, got).toarray()
    varying = np.ptp(x.toarray(), axis=0) > 0
    assert np.allclose(scaled.min(axis=0)[varying], lower) and np.allclose(scaled.max(axis=0)[varying], upper)
    assert not scaled[:, ~varying].any()
    wider = sp.hstack([x, sp.csr_matrix(np.ones((x.shape[0], 2)))]).tocsr()
    capsys.readouterr()
    assert ours.csr_scale(wider, got).shape == wider.shape
    assert "features but the scaling parameters" in capsys.readouterr().err
    with pytest.raises(ParameterError):
        ours.csr_find_scale_param(x, lower=1, upper=1)


# ------------------------------------------------------------------ model methods
def _same_methods(m, r):
    assert m.get_nr_feature() == r.get_nr_feature()
    assert m.get_nr_class() == r.get_nr_class()
    assert m.get_labels() == r.get_labels()
    assert m.is_probability_model() == r.is_probability_model()
    assert m.is_regression_model() == r.is_regression_model()
    assert m.is_oneclass_model() == r.is_oneclass_model()
    n, k = r.get_nr_feature(), r.get_nr_class()
    for label_idx in range(-1, k + 1):
        coef = [m.get_decfun_coef(j, label_idx) for j in range(-1, n + 3)]
        ref = [r.get_decfun_coef(j, label_idx) for j in range(-1, n + 3)]
        assert _close(coef, ref, 1e-6, 1e-12)
        if not r.is_oneclass_model():
            assert m.get_decfun_bias(label_idx) == pytest.approx(r.get_decfun_bias(label_idx),
                                                                 rel=1e-6, abs=1e-12)
        w, b = m.get_decfun(label_idx)
        wr, br = r.get_decfun(label_idx)
        assert _close(w, wr, 1e-6, 1e-12) and b == pytest.approx(br, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("opts", ["-s 1", "-s 0 -B 1", "-s 4 -B 2", "-s 4", "-s 1 -B 0",
                                  "-s 11 -B 1", "-s 21"])
def test_model_methods_answer_as_liblinears(opts, data, tmp_path, capfd):
    """The same model (ours, saved and read by both) answers every get_* and is_* as
    LIBLINEAR's model does, out-of-range indices included."""
    y, x = data
    if opts.startswith("-s 4"):
        y3, X3 = _heart_like(n=150, n_classes=3, seed=7)
        y, x = (y3, sp.csr_matrix(X3)) if opts == "-s 4" else (y, x)
    m = ours.train(y, x, opts + " -q")
    ours.save_model(str(tmp_path / "m"), m)
    r = L.load_model(str(tmp_path / "m"))
    _same_methods(ours.load_model(str(tmp_path / "m")), r)
    _same_methods(m, r)
    capfd.readouterr()
    if m.is_oneclass_model():
        assert m.get_decfun_bias() == 0.0
        assert "get_decfun_bias can not be called" in capfd.readouterr().err
    else:
        assert m.get_decfun_rho() == 0.0
        assert "get_decfun_rho can be called only for a one-class" in capfd.readouterr().err


# ------------------------------------------------------------------ model files both ways
@pytest.mark.parametrize("opts", ["-s 0 -B 1", "-s 1", "-s 3 -c 2", "-s 4", "-s 5 -B 1",
                                  "-s 6", "-s 7 -B 1", "-s 11 -B 1", "-s 12", "-s 13 -B 1", "-s 21"])
def test_model_files_read_by_both(opts, data, regression, tmp_path):
    """LIBLINEAR reads our files and we read LIBLINEAR's, predicting what the writer
    predicts."""
    y, x = regression if opts.split()[1] in ("11", "12", "13") else data
    m, r = ours.train(y, x, opts + " -q"), L.train(y, x, opts + " -q")
    ours.save_model(str(tmp_path / "ours"), m)
    L.save_model(str(tmp_path / "ref"), r)
    mine, theirs = ours.predict(y, x, m, "-q"), L.predict(y, x, r, "-q")
    by_ref = L.predict(y, x, L.load_model(str(tmp_path / "ours")), "-q")
    by_ours = ours.predict(y, x, ours.load_model(str(tmp_path / "ref")), "-q")
    assert by_ref[0] == pytest.approx(mine[0], rel=1e-12) and _close(by_ref[2], mine[2], 1e-12)
    assert by_ours[0] == pytest.approx(theirs[0], rel=1e-12) and _close(by_ours[2], theirs[2], 1e-12)


def test_probability_only_for_logistic_models(data):
    y, x = data
    m, r = ours.train(y, x, "-s 2 -q"), L.train(y, x, "-s 2 -q")
    with pytest.raises(TypeError):
        L.predict(y, x, r, "-b 1")
    with pytest.raises(ParameterError, match="only supported for logistic regression"):
        ours.predict(y, x, m, "-b 1")
    labels, _, probs = ours.predict(y, x, ours.train(y, x, "-s 0 -q"), "-b 1 -q")
    assert np.allclose(np.sum(probs, axis=1), 1.0) and len(probs[0]) == 2


# ------------------------------------------------------------------ inputs
def test_every_input_form_gives_the_same_model():
    """csr, dense array, list of dicts, list of lists: one model, and the feature count
    LIBLINEAR gives each (a dense array's trailing zero column does not count)."""
    y, X = _heart_like(n=80, d=6, seed=9)
    X = np.hstack([X, np.zeros((80, 1))])
    forms = {"csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X), "dense": X,
             "dicts": [{j + 1: v for j, v in enumerate(r) if v != 0} for r in X],
             "lists": [list(r) for r in X], "tuples": tuple(tuple(r) for r in X)}
    weights = []
    for name, x in forms.items():
        m, r = ours.train(list(y), x, "-s 2 -q"), L.train(list(y), x, "-s 2 -q")
        assert m.get_nr_feature() == r.get_nr_feature(), name
        prob, prob_ref = ours.problem(y, x, 1), L.problem(y, x, 1)
        assert (prob.l, prob.n, prob.bias) == (prob_ref.l, prob_ref.n, prob_ref.bias)
        prob.set_bias(-1)
        prob_ref.set_bias(-1)
        assert prob.n == prob_ref.n
        weights.append(m.get_decfun()[0][:6])
        assert ours.predict(y, x, m, "-q")[0] == L.predict(y, x, r, "-q")[0], name
    assert all(w == weights[0] for w in weights)


def test_svm_read_problem_forms_match_liblinears(heart):
    for return_scipy in (False, True):
        got, ref = ours.svm_read_problem(heart, return_scipy), L.svm_read_problem(heart, return_scipy)
        if return_scipy:
            assert np.array_equal(got[0], ref[0]) and got[1].shape == ref[1].shape
            assert (got[1] != ref[1]).nnz == 0
        else:
            assert got == ref and isinstance(got[0], list) and isinstance(got[1][0], dict)
    with open(heart) as fh:
        assert ours.svm_read_problem(fh) == L.svm_read_problem(heart)


def test_labels_are_cast_to_int_as_liblinear_does():
    x = [{1: 1, 3: 1}, {1: -1, 3: -1}, {2: 1}, {1: 0.5}, {2: -1, 3: 2}]
    y = [0.7, -1.2, 1, 1, 1]
    assert ours.train(y, x, "-q").get_labels() == L.train(y, x, "-q").get_labels() == [0, -1, 1]


def test_one_class_of_labels_is_refused():
    with pytest.raises(DataError, match="only one class"):
        ours.train([1, 1, 1], [{1: 1}, {2: 1}, {1: -1}], "-q")


def test_class_weight_of_an_absent_label_is_ignored_with_liblinears_warning(data):
    y, x = data
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        m = ours.train(y, x, "-w3 2")
    assert "class label 3 specified in weight is not found" in out.getvalue()
    assert m.get_decfun() == ours.train(y, x, "-q").get_decfun()


@pytest.mark.parametrize("x, needle", [
    ([{0: 1.0}], "feature index 0"), ([{"a": 1.0}], "feature index 'a'"),
    ([{1: "x"}], "not a number"), ([3.0], "each row must be"), (np.zeros(3), "2-D"),
    ("data", "not supported"), ([{1: math.inf}], "finite")])
def test_bad_inputs_are_refused(x, needle):
    with pytest.raises(DataError, match=needle):
        ours.train([1.0] * (len(x) if hasattr(x, "__len__") and not isinstance(x, str) else 1),
                   x, "-q")


def test_label_count_must_match():
    with pytest.raises(DataError, match="len"):
        ours.problem([1, -1, 1], [{1: 1}, {1: -1}])
    m = ours.train([1, -1], [{1: 1}, {1: -1}], "-q")
    with pytest.raises(DataError, match="len"):
        ours.predict([1], [{1: 1}, {1: -1}], m, "-q")


# ------------------------------------------------------------------ options
# Refused by LIBLINEAR (ValueError; IndexError for a missing value) and by us with
# LIBLINEAR's reason.
REFUSED = [("-s 8", "not a LIBLINEAR solver code"), ("-s x", "integer"), ("-c 0", "C <= 0"),
           ("-c -1", "C <= 0"), ("-e 0", "eps <= 0"), ("-s 11 -p -1", "p < 0"),
           ("-s 21 -B 1", "ONECLASS"), ("-R", "must specify -B 1"),
           ("-R -B 2", "must specify -B 1"), ("-s 1 -R -B 1", "-R option supported only"),
           ("-s 12 -R -B 1", "-R option supported only"), ("-v 1", "n must >= 2"),
           ("-v x", "integer"), ("-z", "Wrong options"), ("-m 2", "Wrong options"),
           ("-C -s 1", "only available for -s 0, -s 2 and -s 11"), ("-wx 2", "integer"),
           ("-c", "-c needs"), ("-w1", "-w1 needs")]


@pytest.mark.parametrize("opts, needle", REFUSED)
def test_options_liblinear_refuses_are_refused(opts, needle):
    y, x = [1, -1, 1, -1], [{1: 1}, {1: -1}, {2: 1}, {2: -1}]
    with pytest.raises((ValueError, IndexError)), _silent():
        L.train(y, x, opts + " -q")
    with pytest.raises(ParameterError, match=needle):
        ours.train(y, x, opts + " -q")


@pytest.mark.parametrize("opts, needle", [("-c nan", "not finite"), ("-c inf", "not finite"),
                                          ("-s 21 -n 0", "nu must"),
                                          ("-s 21 -n 1.5", "nu must")])
def test_values_liblinear_would_train_nan_or_crash_on_are_refused(opts, needle):
    """LIBLINEAR trains a model of NaNs (-c nan), a rho of -inf (-s 21 -n 0) or aborts
    the process (-s 21 -n 1.5) on these; they are refused instead (not run on LIBLINEAR)."""
    with pytest.raises(ParameterError, match=needle):
        ours.train([1, -1, 1, -1], [{1: 1}, {1: -1}, {2: 1}, {2: -1}], opts + " -q")


def test_parameter_parses_as_liblinears():
    for opts in ["", "-s 0 -c 4 -B 1", "-s 11 -p 0.3 -e 0.5", "-C", "-C -s 11 -v 3",
                 "-s 3 -w1 5 -w-1 0.5 -q", "-s 21 -n 0.2", "-s 7", "-s 12", "-s 0 -R -B 1"]:
        got, ref = ours.parameter(opts), L.parameter(opts)
        for field in ("solver_type", "eps", "C", "p", "nu", "bias", "nr_weight", "nr_fold",
                      "regularize_bias", "flag_find_parameters", "flag_C_specified",
                      "flag_p_specified", "flag_cross_validation"):
            assert getattr(got, field) == getattr(ref, field), (opts, field)
        assert list(got.weight_label) == list(ref.weight_label[:ref.nr_weight])
    with pytest.raises(TypeError):
        ours.parameter(3)
    assert ours.parameter(["-s", "0"]).solver_type == ours.solver_names.L2R_LR


def test_predict_options():
    m = ours.train([1, -1], [{1: 1}, {1: -1}], "-s 0 -q")
    for opts, needle in [("-b", "needs a value"), ("-b x", "integer"), ("-z", "Wrong options")]:
        with pytest.raises(ParameterError, match=needle):
            ours.predict([1, -1], [{1: 1}, {1: -1}], m, opts)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ours.predict([1, -1], [{1: 1}, {1: -1}], m)
        ours.predict([1, -1], [{1: 1}, {1: -1}], m, "-q")
    assert out.getvalue() == "Accuracy = 100% (2/2) (classification)\n"


def test_models_liblinear_cannot_hold_are_refused(tmp_path):
    import linsvm
    X = sp.csr_matrix(np.eye(6))
    m = linsvm.train(X, [1.0, 2, 3, 1, 2, 3], solver="mfn-ord")
    m.save(str(tmp_path / "ord"))
    with pytest.raises(ModelError, match="ordinal"):
        ours.load_model(str(tmp_path / "ord"))
    with pytest.raises(FileNotFoundError):
        ours.load_model(str(tmp_path / "missing"))


def test_evaluations_match_liblinears():
    ty, pv = [1, 2, 3, 4, 5.5], [1, 2.5, 3, 3, 5]
    assert ours.evaluations(ty, pv) == pytest.approx(L.evaluations(ty, pv))
    assert ours.evaluations(np.array(ty), np.array(pv), False) == pytest.approx(L.evaluations(ty, pv, False))
    assert math.isnan(ours.evaluations([1, 1], [1, 1])[2])
    with pytest.raises(DataError, match="len"):
        ours.evaluations([1, 2], [1])
