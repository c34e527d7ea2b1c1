"""examples/bench_mpi.py's cost model: the formulas its module notes state, by hand."""
import math
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "examples"))
bench_mpi = pytest.importorskip("bench_mpi")


def test_traffic_per_rank_is_the_ring_share_of_one_weight_vector():
    assert bench_mpi.bytes_per_rank(1000, 1) == 0
    assert bench_mpi.bytes_per_rank(1000, 2) == 8 * 1003            # 2 (P-1)/P = 1
    assert bench_mpi.bytes_per_rank(1000, 4) == pytest.approx(1.5 * 8 * 1003)
    assert bench_mpi.bytes_per_rank(1000, 256) < 2 * 8 * 1003       # bounded by twice the vector


def test_allreduce_time_follows_mpich_algorithms():
    alpha, B, g = 1e-5, 1e9, 1e-10
    assert bench_mpi.allreduce_seconds(10**6, 1, alpha, B, g) == 0.0
    # short message: recursive doubling, ceil(log2 P) steps of alpha + m / B
    assert bench_mpi.allreduce_seconds(800, 5, alpha, B, g) == pytest.approx(3 * (alpha + 800 / B))
    # long message: reduce-scatter + allgather
    m, P = 8e6, 8
    want = 2 * 3 * alpha + 2 * (7 / 8) * m / B + (7 / 8) * m * g
    assert bench_mpi.allreduce_seconds(m, P, alpha, B, g) == pytest.approx(want)


def test_prediction_splits_rows_but_not_the_replicated_vector():
    a, c = 2e-9, 3e-9
    t1, comm1 = bench_mpi.predict(10**8, 10**5, 1, a, c, 1e-5, 1e9, 0.0)
    assert comm1 == 0 and t1 == pytest.approx(a * 1e8 + c * 1e5)
    t4, comm4 = bench_mpi.predict(10**8, 10**5, 4, a, c, 1e-5, 1e9, 0.0)
    assert t4 == pytest.approx(a * 1e8 / 4 + c * 1e5 + comm4)
    assert comm4 == pytest.approx(bench_mpi.allreduce_seconds(8 * (10**5 + 3), 4, 1e-5, 1e9, 0.0))


def test_latency_bandwidth_fit_recovers_a_line():
    alpha, B = 7e-6, 4e9
    points = [(m, alpha + m / B) for m in (8, 512, 32768, 2**21, 2**23)]
    got_alpha, got_B = bench_mpi.fit_latency_bandwidth(points)
    assert got_alpha == pytest.approx(alpha, rel=1e-6)
    assert got_B == pytest.approx(B, rel=1e-6)
    assert math.isfinite(got_alpha)


def test_split_traffic_by_hand():
    """A feature in c rows is touched by 1 - (1 - 1/P)^c of the ranks' rows on average; each
    of its k - 1 non-owners moves one double per exchange."""
    touched, shared = bench_mpi.split_traffic([0, 1, 3, 100], 2)
    assert touched == pytest.approx(0.5 + 0.875 + 1.0)
    assert shared == pytest.approx((0.0 + 0.75 + 1.0) / 2)
    assert bench_mpi.split_traffic([0, 2, 5], 1) == (2.0, 0.0)


def test_split_prediction_divides_the_vector_work():
    a, c, m, B = 2e-9, 3e-9, 1e-9, 1e9
    nnz, d, P, shared, touched = 10**8, 10**6, 8, 1000.0, 5000.0
    t, comm = bench_mpi.predict_split(nnz, d, P, a, c, m, 0.0, B, shared, touched, 1e300)
    small = bench_mpi.allreduce_seconds(32, P, 0.0, B, 0.0)
    assert comm == pytest.approx(2 * 8 * shared / B + 2 * small)
    assert t == pytest.approx(a * nnz / P + c * d / P + m * (touched + d / P) + comm)
    # a Newton step's three exchanges, two clears of d and six passes over own + touched
    t2, comm2 = bench_mpi.predict_split(nnz, d, P, a, c, m, 0.0, B, shared, touched, 4.0)
    assert comm2 - comm == pytest.approx((3 * 8 * shared / B + 2 * small) / 4)
    assert t2 - t == pytest.approx(comm2 - comm + (2 * m * d + 6 * m * (touched + d / P)) / 4)
    assert bench_mpi.alltoallv_seconds(8e6, 4, 1e-5, B) == pytest.approx(3e-5 + 8e-3)
