"""The Pareto front of risk against utility that the report draws and the sweep measures fully."""

from __future__ import annotations

from typing import Any

from ppdm.release.select import RISK_RESOLUTION, pareto_front, utility_floor


def _cand(utility: float, risk: float) -> dict[str, Any]:
    return {"utility": {"tstr_knn_pct": utility}, "risk": {"reidentification": risk, "within_5pct": 0.0}}


def test_a_candidate_beaten_on_both_axes_is_off_the_front() -> None:
    cands = [_cand(90.0, 0.04), _cand(80.0, 0.05), _cand(70.0, 0.01)]
    assert pareto_front(cands, "tstr_knn_pct") == [0, 2]


def test_a_less_useful_candidate_whose_risk_the_tests_cannot_tell_apart_is_no_trade_off() -> None:
    cands = [
        _cand(90.0, 0.040),
        _cand(85.0, 0.038),  # 0.2 points below the more useful one: dropped
        _cand(80.0, 0.020),  # kept
        _cand(50.0, 0.017),  # 0.3 points below the last kept (not the one dropped): dropped
        _cand(30.0, 0.001),  # kept
    ]
    assert pareto_front(cands, "tstr_knn_pct") == [0, 2, 4]
    # a chain of steps each within the resolution keeps a point once the steps add up past it
    step = RISK_RESOLUTION * 0.6
    chain = [_cand(90.0 - i, 0.03 - i * step) for i in range(4)]
    assert pareto_front(chain, "tstr_knn_pct") == [0, 2]


def test_failed_candidates_and_those_without_the_objective_are_never_on_it() -> None:
    cands = [_cand(90.0, 0.04), {"failed": "no", "utility": {}, "risk": {}}, {"utility": {}, "risk": {
        "reidentification": 0.0, "within_5pct": 0.0}}]
    assert pareto_front(cands, "tstr_knn_pct") == [0]


def test_a_release_no_more_useful_than_guessing_the_commonest_class_is_no_trade_off() -> None:
    # satimage's sweep: a sparsified SVD at 23.5 % against a commonest class of 24.2 % was on the front
    cands = [_cand(88.2, 0.042), _cand(32.3, 0.007), _cand(23.5, 0.001)]
    assert pareto_front(cands, "tstr_knn_pct") == [0, 1, 2]
    floor = utility_floor("tstr_knn_pct", 24.2)
    assert floor == 24.2
    assert pareto_front(cands, "tstr_knn_pct", floor=floor) == [0, 1]
    assert pareto_front([_cand(88.2, 0.042), _cand(24.2, 0.0)], "tstr_knn_pct", floor=floor) == [0]  # at it: no better
    # a clustering's agreement, or no label, has no such floor
    assert utility_floor("kmeans_pct", 24.2) is None and utility_floor("tstr_knn_pct", None) is None
