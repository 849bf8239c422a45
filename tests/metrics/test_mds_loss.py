from __future__ import annotations

import numpy as np
import pytest

from ppdm.metrics.mds_loss import distance_loss, shepard_plot


def test_losses_by_hand() -> None:
    A = np.array([[0.0], [1.0], [3.0]])  # delta = 1, 3, 2
    B = np.array([[0.0], [2.0], [4.0]])  # d = 2, 4, 2
    r = distance_loss(A, B)
    assert r["residual_ss"] == pytest.approx(1 + 1 + 0)
    assert r["stress"] == pytest.approx(np.sqrt(2 / 14))
    assert r["sammon"] == pytest.approx((1 / 1 + 1 / 3 + 0) / 6)
    assert r["average_distortion"] == pytest.approx((2 + 4 / 3 + 1) / 3)
    assert r["nonmetric_stress1"] == pytest.approx(0.0)


def test_identity_and_sampling(rng: np.random.Generator, tmp_path) -> None:
    A = rng.normal(size=(300, 3))
    r = distance_loss(A, A, max_pairs=1000)
    assert r["stress"] == 0 and r["sampled"] and r["pairs"] == 1000
    p = shepard_plot(A, A[:, :2], tmp_path / "s.png")
    assert p.read_bytes()[:4] == b"\x89PNG"
