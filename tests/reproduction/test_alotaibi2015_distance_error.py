"""Building blocks of Alotaibi (2015) Fig. 4.11 (the distance attack against p on synthetic data): the
runs, the iteration trace and the sweep on exact distances (the full reproduction runs with
``ppdm reproduce alotaibi2015-fig-4-11``).
"""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.experiments import REPRODUCTIONS
from ppdm.experiments.alotaibi2015_distance_error import draw_runs, error_sweep, locate_trace


def test_registered() -> None:
    r = REPRODUCTIONS["alotaibi2015-fig-4-11"]
    assert r.slow and r.options == ("trials",)


def test_runs_draw_n_plus_one_known_records_and_another_target() -> None:
    runs = draw_runs(50, 6, 20, seed=2)
    again = draw_runs(50, 6, 20, seed=2)
    assert len(runs) == 20 and all(np.array_equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(runs, again,
                                                                                              strict=True))
    for known, target in runs:
        assert len(set(known.tolist())) == 7 and target not in set(known.tolist()) and 0 <= target < 50


def test_trace_starts_at_the_start_and_reaches_the_point_from_exact_distances() -> None:
    R = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 3.0]])
    x = np.array([1.0, 1.0])
    d = np.linalg.norm(R - x, axis=1)
    err = locate_trace(R, d, np.array([3.0, 3.0]), x, iterations=30)
    assert len(err) == 31 and err[0] == pytest.approx(np.sqrt(8.0))
    assert err[-1] < 1e-9


def test_sweep_on_the_records_themselves_locates_the_targets() -> None:
    # Y = X: the distances are exact, so Gauss-Newton from the origin finds the target unless it stops in a
    # local minimum of the distance misfit (one run of eight here); the traced path ends where the
    # single call ends
    X = np.random.default_rng(4).standard_normal((60, 5))
    runs = draw_runs(60, 5, 8, seed=0)
    final, traces = error_sweep(X, {5: X}, runs, trace_p=5)
    assert len(final) == 8 and (final["rho_star"] < 1e-6).sum() >= 6
    last = traces[traces["iteration"] == traces["iteration"].max()].sort_values("run")
    assert np.allclose(last["error"].to_numpy(), final.sort_values("run")["error"].to_numpy(), atol=1e-6)
    # a distorted release leaves an error: the same attack on Y = 1.3 X
    final, _ = error_sweep(X, {5: 1.3 * X}, runs)
    assert (final["rho_star"] > 1e-3).all()
