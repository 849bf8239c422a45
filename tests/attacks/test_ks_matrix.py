"""The ICA attack's matching statistic: every pair's two-sample Kolmogorov-Smirnov statistic, as scipy has it."""

from __future__ import annotations

import numpy as np
from scipy.stats import ks_2samp

from ppdm.attacks._filtering import ks_matrix


def test_every_pair_is_scipys_two_sample_statistic() -> None:
    rng = np.random.default_rng(5)
    A = rng.normal(size=(400, 4))
    B = rng.standard_t(3, size=(300, 3))
    A[:50, 0] = 0.0  # ties inside a sample and across the two
    B[:80, 1] = 0.0
    K = ks_matrix(A, np.sort(B, axis=0))
    expected = np.array([[ks_2samp(A[:, i], B[:, j]).statistic for j in range(3)] for i in range(4)])
    np.testing.assert_allclose(K, expected, atol=1e-12)
