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
