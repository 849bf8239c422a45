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


def test_columns_of_few_values_are_scipys_statistic_too() -> None:
    rng = np.random.default_rng(8)
    A = np.column_stack([rng.integers(0, 2, 500), rng.normal(size=500), rng.integers(0, 5, 500) * 0.5])
    B = np.column_stack([rng.integers(0, 2, 300), rng.integers(0, 3, 300) * 0.5, rng.normal(size=300),
                         np.full(300, 0.5)])
    K = ks_matrix(A, np.sort(B, axis=0))
    expected = np.array([[ks_2samp(A[:, i], B[:, j]).statistic for j in range(B.shape[1])]
                         for i in range(A.shape[1])])
    np.testing.assert_allclose(K, expected, atol=1e-12)
