"""The policy's limit on attribute inference of the sensitive columns beyond their control."""

from __future__ import annotations

import pytest

from ppdm.exceptions import ParameterError
from ppdm.release.config import Policy
from ppdm.release.select import choose, meets_policy


def _cand(utility: float, excess: float | None, *, reid: float = 0.01) -> dict:
    risk: dict = {"reidentification": reid, "within_5pct": 0.0}
    if excess is not None:
        risk["sensitive"] = {"diagnosis": {"attribute_inference": {"measure": "accuracy", "members": 0.5 + excess,
                                                                   "control": 0.5, "excess": excess}}}
    return {"method": "mdav", "params": {"k": 10}, "value": {"re": 0.3}, "utility": {"tstr_knn_pct": utility},
            "risk": risk}


def test_a_candidate_that_discloses_a_sensitive_column_loses_with_its_reason() -> None:
    leaky, safe = _cand(95.0, 0.30), _cand(90.0, 0.02)
    best, reasons = choose([leaky, safe], Policy(objective="tstr_knn_pct"))
    assert best == 1
    assert "'diagnosis' inferred for 30.0% more people in the release than outside it > 10.0%" in reasons[0]
    assert not meets_policy(leaky, Policy()) and meets_policy(safe, Policy())


def test_the_limit_is_configurable_and_absent_sensitive_columns_do_not_count() -> None:
    leaky = _cand(95.0, 0.30)
    assert meets_policy(leaky, Policy(max_attribute_inference=0.35))
    assert meets_policy(_cand(95.0, None), Policy(max_attribute_inference=0.0))


def test_nobody_feasible_names_attribute_inference_as_binding() -> None:
    with pytest.raises(ParameterError, match=r"binding: attribute inference.*'diagnosis' inferred for 25\.0%"):
        choose([_cand(95.0, 0.25), _cand(90.0, 0.40)], Policy(objective="tstr_knn_pct"))


def test_nobody_feasible_also_names_the_candidates_that_failed() -> None:
    failed = {"method": "cart", "params": {"min_leaf": 20}, "failed": "ParameterError: something broke"}
    with pytest.raises(ParameterError, match=r"closest is mdav\(k=10\).*1 candidate\(s\) failed, the first: "
                                             r"cart\(min_leaf=20\): ParameterError: something broke"):
        choose([_cand(95.0, 0.25), failed], Policy(objective="tstr_knn_pct"))
    with pytest.raises(ParameterError) as e:
        choose([_cand(95.0, 0.25)], Policy(objective="tstr_knn_pct"))
    assert "failed" not in str(e.value)


def test_shown_columns_that_single_out_records_are_named_from_their_uniqueness_alone() -> None:
    import numpy as np

    from ppdm.release.select import passthrough_uniqueness

    # every record alone in its group of the shown columns: no numeric mechanism can hide them
    shown = np.array([[f"z{i}", "a"] for i in range(40)], dtype=object)
    u = passthrough_uniqueness(shown)
    assert u is not None and u["unique_share"] == 1.0
    assert passthrough_uniqueness(np.zeros((40, 0), dtype=object)) is None
    nobody = [_cand(95.0, 0.25), _cand(90.0, 0.40)]
    # measured where the table is (a cluster's worker) or here from the columns: the same refusal
    for kw in ({"categories": shown}, {"uniqueness": u}):
        with pytest.raises(ParameterError, match=r"columns that pass through unchanged \('zip', 'town'\) single out "
                                                 r"100\.0% of the records"):
            choose(nobody, Policy(objective="tstr_knn_pct"), shown=["zip", "town"], **kw)
