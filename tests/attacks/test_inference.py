"""Attribute inference against its control, and l-diversity, on constructed releases."""

from __future__ import annotations

import numpy as np

from ppdm.attacks.inference import attribute_inference, l_diversity


def _people(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(n, 3))
    s = rng.choice(["a", "b", "c", "d"], n)  # unrelated to Q: the population tells nothing
    return Q, s


def test_publishing_the_members_exactly_discloses_beyond_the_control() -> None:
    Qm, sm = _people(400, 0)
    Qo, so = _people(400, 1)
    res = attribute_inference(Qm, sm, Qm, sm, Qo, so, numeric=False, k=1)
    assert res["members"] == 1.0 and res["control"] < 0.4 and res["excess"] > 0.6


def test_a_release_unrelated_to_the_members_discloses_nothing() -> None:
    Qm, sm = _people(400, 0)
    Qo, so = _people(400, 1)
    Qr, sr = _people(400, 2)
    res = attribute_inference(Qr, sr, Qm, sm, Qo, so, numeric=False)
    assert res["excess"] < 0.06


def test_numeric_sensitive_values_within_five_percent() -> None:
    rng = np.random.default_rng(3)
    Q = rng.normal(size=(300, 2))
    s = 100 + 10 * Q[:, 0]  # a function of the quasi-identifiers: everyone's value is inferable
    Qo = rng.normal(size=(300, 2))
    res = attribute_inference(Q, s, Q, s, Qo, 100 + 10 * Qo[:, 0], numeric=True)
    assert res["members"] > 0.9 and res["control"] > 0.8  # the population tells it: little excess
    assert res["excess"] < 0.15


def test_l_diversity_by_hand() -> None:
    qi = np.array([["x"], ["x"], ["y"], ["y"], ["y"]], dtype=object)
    s = np.array(["a", "b", "c", "c", "c"])
    assert l_diversity(qi, s) == {"l": 1, "groups": 2, "share_in_uniform_groups": 0.6}
