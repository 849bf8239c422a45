"""The choice's one-standard-error rule: of the candidates as useful as the most useful one (their paired
difference on the same held-out records within ``equal_utility_se`` standard errors), the one furthest inside
the policy is chosen."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ppdm.release.config import Policy
from ppdm.release.first_pass import pack_hits
from ppdm.release.halving import _public, compare_with_most_useful
from ppdm.release.select import choose, policy_load

N = 1000


def _cand(k: int, hits: np.ndarray, *, reid: float, singling_out: float = 0.0) -> dict[str, Any]:
    return {"method": "mdav", "params": {"k": k}, "value": {"re": 0.3}, "stage": "full battery",
            "utility": {"tstr_logreg_pct": 100.0 * float(hits.mean())},
            "risk": {"reidentification": reid, "within_5pct": 0.0, "singling_out": {"risk": singling_out}},
            "hits_pooled": pack_hits(hits), "hits_pooled_rows": len(hits)}


def _hits(right: int) -> np.ndarray:
    """``right`` of N held-out records classified right."""
    h = np.zeros(N, dtype=bool)
    h[:right] = True
    return h


def _paired(top: np.ndarray, worse: int, better: int) -> np.ndarray:
    """``top``'s hits with ``worse`` of its right records wrong and ``better`` of its wrong ones right: a paired
    difference of ``better - worse`` records whose error comes from the ``worse + better`` discordant ones."""
    h = top.copy()
    h[np.flatnonzero(top)[:worse]] = False
    h[np.flatnonzero(~top)[:better]] = True
    return h


POLICY = Policy(objective="tstr_logreg_pct")


def test_a_candidate_as_useful_and_further_inside_the_policy_is_chosen() -> None:
    top = _hits(830)
    # 2 records fewer right over 18 discordant ones: -0.2 points, 0.47 standard errors; 25 fewer over 35: 4.2
    close = _cand(20, _paired(top, 10, 8), reid=0.01)
    far = _cand(30, _paired(top, 30, 5), reid=0.0)
    best = _cand(50, top, reid=0.045, singling_out=0.03)
    cands = [close, far, best]
    compare_with_most_useful(cands, POLICY)
    d, e = close["utility_vs_best"], far["utility_vs_best"]
    assert d["against"] == "mdav(k=50)" and d["records"] == N
    assert d["difference"] == pytest.approx(-0.2) and e["difference"] == pytest.approx(-2.5)
    # the paired standard error by hand: 18 discordant records of +-1 around a mean of -2/N
    sd = np.sqrt((8 * (1 + 0.002) ** 2 + 10 * (-1 + 0.002) ** 2 + (N - 18) * 0.002 ** 2) / (N - 1))
    assert d["se"] == pytest.approx(100 * sd / np.sqrt(N), abs=1e-4)
    assert -e["difference"] / e["se"] == pytest.approx(4.2, abs=0.1)
    best_i, reasons = choose(cands, POLICY)
    assert best_i == 0
    assert reasons[0].startswith("chosen: furthest inside the policy (its closest risk at 20% of its limit) of the "
                                 "2 of 3 that meet it")
    assert "mdav(k=50)" in reasons[0] and "-0.20 points" in reasons[0]
    assert reasons[2].startswith("meets the policy with the highest tstr_logreg_pct (83.00) but closer to a limit "
                                 "(its closest risk at 90% of its limit) than mdav(k=20)")
    assert reasons[1].startswith("meets the policy but lower tstr_logreg_pct (80.50 vs 83.00)")
    # at five standard errors the far one is as useful too, and furthest inside the policy (no risk at all)
    assert choose(cands, POLICY.model_copy(update={"equal_utility_se": 5.0}))[0] == 1
    # the rule switched off: the most useful
    assert choose(cands, POLICY.model_copy(update={"equal_utility_se": 0.0}))[0] == 2


def test_the_difference_is_paired_not_the_accuracies_apart() -> None:
    # two candidates right on different records: nearly the same accuracy, a paired difference whose error
    # counts every record on which they disagree
    a = np.zeros(N, dtype=bool)
    a[:800] = True
    b = np.zeros(N, dtype=bool)
    b[201:] = True  # 799 right, 200 of them where the most useful is wrong
    top, other = _cand(50, a, reid=0.04), _cand(20, b, reid=0.0)
    compare_with_most_useful([top, other], POLICY)
    d = other["utility_vs_best"]
    assert d["difference"] == pytest.approx(-0.1)
    diffs = b.astype(float) - a.astype(float)
    assert d["se"] == pytest.approx(100 * diffs.std(ddof=1) / np.sqrt(N), abs=1e-3)
    assert choose([top, other], POLICY)[0] == 1


def test_the_load_is_the_largest_share_of_a_limit() -> None:
    c = _cand(10, _hits(800), reid=0.025, singling_out=0.045)
    assert policy_load(c, Policy()) == pytest.approx(0.9)  # singling out 4.5 % of 5 %
    c["risk"]["within_5pct"] = 0.19
    assert policy_load(c, Policy()) == pytest.approx(0.95)


def test_without_paired_hits_the_most_useful_is_chosen_and_hits_never_reach_the_record() -> None:
    top, other = _cand(50, _hits(830), reid=0.045), _cand(20, _hits(829), reid=0.0)
    for c in (top, other):
        del c["hits_pooled"], c["hits_pooled_rows"]
    compare_with_most_useful([top, other], POLICY)
    assert "utility_vs_best" not in other
    assert choose([top, other], POLICY)[0] == 0
    with_hits = _cand(50, _hits(830), reid=0.045)
    assert not {"hits_pooled", "hits_pooled_rows"} & set(_public(with_hits))


def test_a_first_pass_record_is_not_compared() -> None:
    top = _cand(50, _hits(830), reid=0.045)
    stopped = _cand(20, _hits(830), reid=0.0) | {"stage": "first pass"}
    compare_with_most_useful([top, stopped], POLICY)
    assert "utility_vs_best" not in stopped and choose([top, stopped], POLICY)[0] == 0


def test_with_a_floor_as_useful_also_keeps_most_of_the_gain_over_it() -> None:
    # a label that carries little: the most useful is 2 points over always guessing the commonest class (80 %);
    # a candidate 1 point below it is within one standard error, but keeps half the gain: not as useful
    top = _hits(820)
    half = _cand(20, _paired(top, 65, 55), reid=0.0)  # 81.0 %, 120 discordant records: se 1.1 points
    near = _cand(30, _paired(top, 11, 10), reid=0.01)  # 81.9 %: 95 % of the gain
    best = _cand(50, top, reid=0.045)
    cands = [half, near, best]
    compare_with_most_useful(cands, POLICY)
    d = half["utility_vs_best"]
    assert d["difference"] == pytest.approx(-1.0) and d["difference"] + d["se"] >= 0
    assert choose(cands, POLICY)[0] == 0  # without a floor: within one standard error, no risk at all
    chosen, reasons = choose(cands, POLICY, floor=80.0)
    assert chosen == 1 and "lower tstr_logreg_pct (81.00 vs 82.00)" in reasons[0]
    # a most useful candidate at or below the floor is no reference: the most useful is chosen as it is
    assert choose(cands, POLICY, floor=82.0)[0] == 2
