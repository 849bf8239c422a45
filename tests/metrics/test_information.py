from __future__ import annotations

import numpy as np
import pytest

from ppdm.metrics.information import (
    entropy,
    entropy_distortion,
    membership_changes,
    mutual_information,
    mutual_information_vector,
    round_half_away,
    side_effect_rate,
)


def test_matlab_rounding() -> None:
    np.testing.assert_array_equal(round_half_away(np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.49])),
                                  [1, 2, 3, -1, -3, 2])


def test_entropy_and_mutual_information_hand_values() -> None:
    x = np.array([0.1, 0.2, 1.0, 1.4])  # rounds to 0, 0, 1, 1: one bit
    assert entropy(x) == pytest.approx(1.0)
    assert mutual_information(x, x) == pytest.approx(1.0)
    y = np.array([0.0, 1.0, 0.0, 1.0])  # independent of x's rounded values
    assert mutual_information(x, y) == pytest.approx(0.0, abs=1e-12)
    assert entropy(np.array([2.5, 2.5, 3.4])) == 0.0  # all round to 3
    # H = -(1/2 log 1/2 + 2 * 1/4 log 1/4) = 1.5 bits
    assert entropy(np.array([0, 0, 1, 2.0])) == pytest.approx(1.5)


def test_iris_entropies_table_5_2() -> None:
    from ppdm import datasets

    A = datasets.load("iris_uci").drop(columns="class").to_numpy(float)
    np.testing.assert_allclose(mutual_information_vector(A, A), [1.8352, 0.9933, 2.4904, 1.6686], atol=5.1e-5)
    assert entropy_distortion(A, A) == 0.0
    assert entropy_distortion(A, np.zeros_like(A)) == pytest.approx(1.0)


def test_side_effect_rate_and_changes() -> None:
    before = np.zeros(150, dtype=int)
    after = before.copy()
    after[[3, 10, 20, 30, 40, 49]] = 1
    # record 49 is confidential: 5 of the other 149 moved (the dissertation's example: 3.36 %)
    assert side_effect_rate(before, after, [49]) == pytest.approx(5 / 149)
    ch = membership_changes(before, after)
    assert ch[0] == {"record": 4, "from": 1, "to": 2} and len(ch) == 6
    named = membership_changes(before[:4], after[:4], ["a", "b", "c", "d"])
    assert named == [{"record": "d", "from": 1, "to": 2}]
