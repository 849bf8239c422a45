from __future__ import annotations

import numpy as np
import pytest

from ppdm import datasets
from ppdm.exceptions import InputError, ParameterError
from ppdm.hiding import MemberRequest, PairRequest, hide_patterns, nmf_labels, reference_protocol


def _lloyd(X: np.ndarray, K: int) -> np.ndarray:
    """An independent Lloyd K-means from the first K rows (the papers' protocol)."""
    C = X[:K].copy()
    for _ in range(500):
        lab = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(-1), 1)
        new = np.array([X[lab == j].mean(0) if (lab == j).any() else C[j] for j in range(K)])
        if np.allclose(new, C):
            break
        C = new
    return lab


@pytest.fixture(scope="module")
def iris() -> np.ndarray:
    return datasets.load("iris_uci").drop(columns="class").to_numpy(float)


@pytest.mark.parametrize("search", ["targeted", "paper"])
def test_member_to_target_checked_independently(iris: np.ndarray, search: str) -> None:
    truth = _lloyd(iris, 3)
    res = hide_patterns(iris, 3, [MemberRequest(49, 1)], search=search, max_trials=300, random_state=0)
    assert res.achieved
    lab = _lloyd(res.release, 3)
    assert lab[49] == 1 and truth[49] == 2
    others = np.delete(np.arange(150), 49)
    assert (lab[others] == truth[others]).all()
    assert res.side_effect_rate == 0.0 and res.trials >= 1
    assert np.linalg.norm(iris - res.release) / np.linalg.norm(iris) > 1e-3  # values are distorted too
    assert res.changes() == [{"record": 50, "from": 3, "to": 2}]


def test_pairs_negated_together(iris: np.ndarray) -> None:
    truth = _lloyd(iris, 3)
    pairs = [PairRequest(49, 29), PairRequest(79, 129)]
    res = hide_patterns(iris, 3, pairs=pairs, random_state=0)
    lab = _lloyd(res.release, 3)
    assert res.achieved
    assert (lab[49] == lab[29]) != (truth[49] == truth[29])
    assert (lab[79] == lab[129]) != (truth[79] == truth[129])
    keep = np.setdiff1d(np.arange(150), [29, 49, 79, 129])
    assert (lab[keep] == truth[keep]).all()


def test_seeded_and_deterministic(iris: np.ndarray) -> None:
    a = hide_patterns(iris, 3, [MemberRequest(79)], random_state=3)
    b = hide_patterns(iris, 3, [MemberRequest(79)], random_state=3)
    np.testing.assert_array_equal(a.release, b.release)


def test_negative_data_is_shifted_and_published_in_its_units(iris: np.ndarray) -> None:
    Z = iris - iris.mean(axis=0)
    res = hide_patterns(Z, 3, [MemberRequest(79, 2)], random_state=0)
    assert res.achieved and res.release.min() < 0
    lab = _lloyd(res.release, 3)
    assert lab[79] == 2
    with pytest.raises(InputError, match="negative"):
        hide_patterns(Z, 3, [MemberRequest(79, 2)], shift=False)


def test_bad_requests(iris: np.ndarray) -> None:
    with pytest.raises(ParameterError, match="already in cluster"):
        hide_patterns(iris, 3, [MemberRequest(49, 2)])
    with pytest.raises(InputError, match="not in the table"):
        hide_patterns(iris, 3, [MemberRequest(150)])
    with pytest.raises(ParameterError, match="twice"):
        hide_patterns(iris, 3, pairs=[PairRequest(3, 3)])
    with pytest.raises(ParameterError, match="already in the same cluster"):
        hide_patterns(iris, 3, pairs=[PairRequest(49, 29, together=True)])
    with pytest.raises(ParameterError, match="records"):
        hide_patterns(iris[:2], 3, [MemberRequest(0)])
    with pytest.raises(ParameterError, match="nothing to hide"):
        hide_patterns(iris, 3)
    with pytest.raises(ParameterError, match="components"):
        hide_patterns(iris, 3, [MemberRequest(0)], components=9)
    Z = iris.copy()
    Z[5] = 0
    with pytest.raises(InputError, match="all zeros"):
        hide_patterns(Z, 3, [MemberRequest(0)])


def test_reference_protocols(iris: np.ndarray) -> None:
    p = reference_protocol(iris, 3)
    assert p.seeds == (0, 1, 2)
    lab, C = p.fit(iris)
    assert np.bincount(lab).tolist() == [39, 61, 50]
    q = reference_protocol(iris, 3, "kmeans++", random_state=1)
    assert q.seeds == reference_protocol(iris, 3, "kmeans++", random_state=1).seeds
    assert len(set(q.seeds)) == 3
    np.testing.assert_array_equal(nmf_labels(np.array([[0.1, 2.0, 0.3], [3.0, 0.0, 0.1]])), [1, 0])
