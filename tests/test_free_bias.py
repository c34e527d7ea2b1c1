"""The free intercept of the finite Newton core (regularize_bias=False, LIBLINEAR's -R):
lam on every weight but the bias's (csrc/cgls.pxd nreg), for mfn and ls; against
scipy's L-BFGS on the same objective, serial and over row blocks."""
import numpy as np
import pytest
import scipy.optimize as so

import linsvm
from conftest import random_problem
from fakempi import run_ranks


def _objective(X, y, w, C, bias, loss):
    m = y * (X @ w[:-1] + bias * w[-1])
    r = np.maximum(0.0, 1.0 - m) if loss == "mfn" else 1.0 - m
    return 0.5 * w[:-1] @ w[:-1] + C * np.sum(r * r)


@pytest.mark.parametrize("solver", ["mfn", "ls"])
@pytest.mark.parametrize("bias", [1.0, 3.0])
def test_free_bias_matches_lbfgs(solver, bias):
    X, y = random_problem(n_samples=120, n_features=10, seed=3)
    y = np.where(X @ np.ones(10) + 2.0 > 0.5, 1.0, -1.0)   # an off-center class boundary
    Xd = X.toarray()
    C = 0.3
    ref = so.minimize(lambda w: _objective(Xd, y, w, C, bias, solver), np.zeros(11),
                      method="L-BFGS-B", options=dict(ftol=1e-15, gtol=1e-12, maxiter=20000))
    m = linsvm.train(X, y, solver=solver, C=C, bias=bias, tol=1e-10, regularize_bias=False)
    w = m.weights.ravel()
    # the model's first class may be -1 (then its weights are -w): take the matching sign
    f = min(_objective(Xd, y, w, C, bias, solver), _objective(Xd, y, -w, C, bias, solver))
    assert f <= ref.fun * (1 + 1e-9)
    assert m.stats["objective"] == pytest.approx(ref.fun, rel=1e-8)
    reg = linsvm.train(X, y, solver=solver, C=C, bias=bias, tol=1e-10)
    assert reg.stats["objective"] > m.stats["objective"]


def test_free_bias_over_row_blocks():
    from linsvm.runtime.collective import Collective
    X, y = random_problem(n_samples=300, n_features=20, seed=5)
    serial = linsvm.train(X, y, solver="mfn", tol=1e-8, regularize_bias=False)
    cuts = [0, 40, 40, 300]

    def work(comm):
        r = comm.Get_rank()
        return linsvm.train(X[cuts[r]:cuts[r + 1]], y[cuts[r]:cuts[r + 1]], solver="mfn",
                            tol=1e-8, regularize_bias=False, comm=comm)
    out = run_ranks(work, 3)
    for m in out:
        assert not isinstance(m, BaseException), m
        assert np.array_equal(m.weights, out[0].weights)
        assert m.stats["objective"] == pytest.approx(serial.stats["objective"], rel=1e-9)


def test_losses_with_a_linear_zone_do_not_take_it():
    X, y = random_problem(n_samples=50, n_features=5, seed=1)
    for solver in ("mfn-huber", "mfn-l1", "dcd"):
        with pytest.raises(Exception, match="regularize_bias|does not apply"):
            linsvm.train(X, y, solver=solver, regularize_bias=False)
