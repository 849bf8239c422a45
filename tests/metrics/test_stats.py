from __future__ import annotations

import numpy as np
import pytest

from ppdm.metrics.stats import average_ranks, cd_diagram, friedman, nemenyi_cd, paired_ttest


def test_ranks_with_ties() -> None:
    R, avg = average_ranks(np.array([[90.0, 80.0, 80.0], [70.0, 75.0, 60.0]]))
    np.testing.assert_array_equal(R, [[1, 2.5, 2.5], [2, 1, 3]])
    np.testing.assert_allclose(avg, [1.5, 1.75, 2.75])


def test_friedman_hand_value() -> None:
    # 4 datasets, 3 methods, always ranked 1, 2, 3: chi2 = 12N/(k(k+1)) (sum R^2 - k(k+1)^2/4) = 8
    S = np.tile([3.0, 2.0, 1.0], (4, 1))
    fr = friedman(S)
    assert fr["chi2"] == pytest.approx(8.0)
    assert fr["average_ranks"] == [1.0, 2.0, 3.0]


def test_nemenyi_cd_hand_values() -> None:
    assert nemenyi_cd(5, 15) == pytest.approx(2.728 * np.sqrt(30 / 90))
    assert nemenyi_cd(6, 15) == pytest.approx(1.947, abs=5e-4)


def test_paired_ttest_hand_value() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [0.5, 1.0, 2.5, 3.0]
    d = np.subtract(a, b)
    t = d.mean() / (d.std(ddof=1) / 2)
    assert paired_ttest(a, b)["t"] == pytest.approx(t)


def test_cd_diagram_png(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "cd.png"
    cd_diagram([3.63, 1.77, 3.27, 1.33, 5.0], ["RP", "PCA", "SVD", "NMDS", "DCT"], 1.58, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
