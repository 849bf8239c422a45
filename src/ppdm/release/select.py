"""Pareto front of risk vs utility, and the policy that picks the release."""

from __future__ import annotations

from typing import Any

from ppdm.exceptions import ParameterError

__all__ = ["risk_score", "pareto_front", "utility_floor", "LABEL_ACCURACIES", "choose", "meets_policy",
           "policy_violations", "binding_test", "passthrough_uniqueness", "shortfall", "policy_load", "most_useful",
           "fully_measured", "candidate_label"]


def risk_score(c: dict[str, Any]) -> float:
    """One risk number per candidate: the worst of re-identification, value disclosure beyond the control and the
    tests of singling out and linkability (where measured)."""
    if "failed" in c:
        return float("inf")
    tests = [v for k in ("singling_out", "linkability") if (v := _test_value(c, k)) is not None]
    return max(c["risk"]["reidentification"], c["risk"]["within_5pct"], *tests)


def _reid(c: dict[str, Any]) -> float:
    """Re-identification beyond its control (chance), which the policy limits.

    Measured on a sample of targets (a large table), the upper end of its 95 % interval counts.
    """
    r = c["risk"]
    return float(r.get("reidentification_excess_upper", r.get("reidentification_excess", r["reidentification"])))


def _inference(c: dict[str, Any]) -> tuple[float, str | None]:
    """The worst attribute inference beyond its control over the sensitive columns, and that column."""
    worst, column = 0.0, None
    for name, v in (c["risk"].get("sensitive") or {}).items():
        excess = float(v.get("attribute_inference", {}).get("excess", 0.0))
        if excess > worst:
            worst, column = excess, name
    return worst, column


def policy_violations(c: dict[str, Any], policy: Any) -> list[str]:
    """Why a scored candidate breaks the policy: one phrase per limit it exceeds (empty: it holds every one).

    Re-identification beyond chance (the upper end of its interval when measured on a sample of targets),
    values within 5 % beyond the control, attribute inference of the sensitive columns, and the three tests of
    anonymisation where they were measured: singling out and linkability beyond the control, and the
    membership advantage on the most outlying records. A test that was not measured limits nothing: a
    candidate stopped before it is never chosen (see :func:`choose`).
    """
    r = c["risk"]
    why = []
    if _reid(c) > policy.max_reidentification:
        upper = " (upper 95 % end" if "reidentification_excess_upper" in r else " (beyond chance"
        why.append(f"re-identification {r['reidentification']:.1%}{upper} {_reid(c):.1%}) > "
                   f"{policy.max_reidentification:.1%}")
    if r["within_5pct"] > policy.max_within_5pct:
        why.append(f"{r['within_5pct']:.1%} of values disclosed within 5 % beyond the control > "
                   f"{policy.max_within_5pct:.1%}")
    inferred, column = _inference(c)
    if inferred > policy.max_attribute_inference:
        why.append(f"'{column}' inferred for {inferred:.1%} more people in the release than outside it > "
                   f"{policy.max_attribute_inference:.1%}")
    for key, limit, what in _TESTS:
        value = _test_value(c, key, policy)
        if value is not None and value > getattr(policy, limit):
            why.append(f"{what} {value:.1%} > {getattr(policy, limit):.1%}")
    return why


#: the tests of anonymisation the policy limits: the risk's key, the policy's limit, the words for it
_TESTS = (("singling_out", "max_singling_out", "singling out beyond the control"),
          ("linkability", "max_linkability", "linkability beyond the control"),
          ("membership_outliers", "max_membership_outliers", "membership advantage on the most outlying records"))


def _test_value(c: dict[str, Any], key: str, policy: Any = None) -> float | None:
    """A test's policy value (its ``risk``) in the candidate's record, None when it was not measured."""
    v = c["risk"].get(key)
    if isinstance(v, dict):  # singling out was read as the policy reads it (ppdm.release.criteria.policy_reading)
        v = v.get("risk")
    return None if v is None else float(v)


def binding_test(c: dict[str, Any], policy: Any) -> str:
    """The limit a candidate breaks by most (relative to the limit), in words."""
    excess = {"re-identification": _reid(c) - policy.max_reidentification,
              "values within 5 %": c["risk"]["within_5pct"] - policy.max_within_5pct,
              "attribute inference": _inference(c)[0] - policy.max_attribute_inference}
    for key, limit, what in _TESTS:
        v = _test_value(c, key, policy)
        if v is not None:
            excess[what.split(" beyond")[0].split(" on the")[0]] = v - getattr(policy, limit)
    return max(excess, key=lambda k: excess[k])


def meets_policy(c: dict[str, Any], policy: Any) -> bool:
    """Every risk limit holds (see :func:`policy_violations`)."""
    return "failed" not in c and not policy_violations(c, policy)


def _screened_only(c: dict[str, Any]) -> bool:
    return (c.get("measured_on") or {}).get("stage") == "screening"


def fully_measured(c: dict[str, Any]) -> bool:
    """Measured by every attack and every utility (not stopped after a sweep's first pass, not screened on a
    sample only): only such a candidate can be chosen."""
    return not _screened_only(c) and c.get("stage", "full battery") != "first pass"


def shortfall(c: dict[str, Any], policy: Any) -> float:
    """How far a candidate is from holding the policy: the sum of its excesses over the limits."""
    total = max(_reid(c) - policy.max_reidentification, 0) + max(c["risk"]["within_5pct"] - policy.max_within_5pct, 0)
    total += max(_inference(c)[0] - policy.max_attribute_inference, 0)
    for key, limit, _ in _TESTS:
        v = _test_value(c, key, policy)
        total += 0.0 if v is None else max(v - getattr(policy, limit), 0)
    return total


def policy_load(c: dict[str, Any], policy: Any) -> float:
    """How much of the policy a candidate uses: the largest of its measured risks as a share of that risk's
    limit (1: at a limit; a limit of 0 counts as used whole by any risk). The candidate furthest inside the
    policy has the lowest load, whichever test binds it."""
    pairs = [(_reid(c), policy.max_reidentification), (c["risk"]["within_5pct"], policy.max_within_5pct),
             (_inference(c)[0], policy.max_attribute_inference)]
    pairs += [(v, getattr(policy, limit)) for key, limit, _ in _TESTS if (v := _test_value(c, key, policy)) is not None]
    return max((v / limit if limit > 0 else float(v > 0)) for v, limit in pairs)


def most_useful(cands: list[dict[str, Any]], policy: Any) -> int | None:
    """Index of the most useful candidate that holds the policy and was measured fully (ties: lower risk, then
    lower RE), None when there is none: the candidate the others' utility is compared with."""
    feasible = [i for i, c in enumerate(cands)
                if "failed" not in c and "not_measured" not in c and fully_measured(c) and meets_policy(c, policy)]
    return _most_useful_of(cands, feasible, policy.objective)


def _most_useful_of(cands: list[dict[str, Any]], feasible: list[int], objective: str) -> int | None:
    return max(feasible, key=lambda i: (_utility(cands[i], objective), -risk_score(cands[i]),
                                        -cands[i]["value"]["re"]), default=None)


def _as_useful(c: dict[str, Any], policy: Any) -> bool:
    """Whether ``c``'s utility is within ``policy.equal_utility_se`` standard errors of the most useful
    candidate's (its ``utility_vs_best``, a paired comparison on the same held-out records)."""
    d = c.get("utility_vs_best")
    if not d or d.get("objective") != policy.objective:
        return False
    return float(d["difference"]) + policy.equal_utility_se * float(d["se"]) >= 0.0


def _utility(c: dict[str, Any], objective: str) -> float:
    return float("-inf") if "failed" in c else float(c["utility"].get(objective, float("-inf")))


#: a candidate as useful as the most useful one keeps at least this share of its gain over the utility floor
TIE_GAIN_SHARE = 0.9

#: risks closer than this are one risk on the Pareto front: a difference below half a point is within the 95 %
#: interval of the tests of singling out and linkability the sweep runs (a 1 % linkability beyond a control
#: that links no one, on 1,000 targets a side: 0.3 % to 1.7 %)
RISK_RESOLUTION = 0.005


#: objectives that are accuracies of predicting the label: always guessing the commonest class scores its share
LABEL_ACCURACIES = ("tstr", "tstr_knn_pct", "tstr_logreg_pct", "knn_pct", "svm_pct")


def utility_floor(objective: str, majority_pct: float | None) -> float | None:
    """The utility of a release that tells nothing of the label (always guessing the commonest class scores
    ``majority_pct``) when ``objective`` is a label's accuracy; None otherwise."""
    return None if majority_pct is None or objective not in LABEL_ACCURACIES else float(majority_pct)


def pareto_front(cands: list[dict[str, Any]], objective: str, *, floor: float | None = None) -> list[int]:
    """Indices of the candidates no other candidate beats on both lower risk and higher utility, each a risk
    apart from the next more useful one.

    Of the candidates on the front, the most useful is kept, and then, down the front, each whose risk is at
    least :data:`RISK_RESOLUTION` below the last one kept: a less useful candidate whose risk the tests cannot
    tell from a more useful one's is no trade-off (the sweep measures every candidate of the front fully).
    Neither is a candidate whose utility is at or below ``floor`` (:func:`utility_floor`): publishing nothing
    does as well.
    """
    measured = [i for i, a in enumerate(cands)  # failed, or rejected before utility was measured: not on it
                if "failed" not in a and objective in a["utility"]
                and (floor is None or _utility(a, objective) > floor)]
    risk = {i: risk_score(cands[i]) for i in measured}
    use = {i: _utility(cands[i], objective) for i in measured}
    # a failed candidate or one without the objective beats no one (its risk is infinite, its utility -inf)
    exact = [i for i in measured
             if not any(risk[j] <= risk[i] and use[j] >= use[i] and (risk[j] < risk[i] or use[j] > use[i])
                        for j in measured if j != i)]
    kept: list[int] = []
    for i in sorted(exact, key=lambda i: (-use[i], risk[i])):
        if not kept or risk[i] <= risk[kept[-1]] - RISK_RESOLUTION:
            kept.append(i)
    return sorted(kept)


def candidate_label(c: dict[str, Any]) -> str:
    from ppdm.release.candidates import describe

    return describe(c["method"], c["params"]).removesuffix("()")


def choose(cands: list[dict[str, Any]], policy: Any, *, shown: Any = (), categories: Any = None,
           uniqueness: dict[str, Any] | None = None, floor: float | None = None) -> tuple[int, list[str]]:
    """Index of the chosen candidate and, for each candidate, why it was chosen or lost.

    Feasible candidates hold every limit and were measured fully. The most useful of them (ties: lower risk,
    then lower RE) is the reference; of the feasible candidates whose utility is within
    ``policy.equal_utility_se`` standard errors of its own (``utility_vs_best``: their difference compared record by
    record on the same held-out records, set by the sweep), the one with the lowest :func:`policy_load` is chosen
    (the one-standard-error rule: a difference the held-out records cannot tell apart does not outweigh room
    under the limits). With a ``floor`` (:func:`utility_floor`: what always guessing the commonest class
    scores), a candidate is as useful only if it also keeps :data:`TIE_GAIN_SHARE` of the most useful one's
    gain over the floor: where a table's label carries little, every difference is within the error, and the
    rule would otherwise trade most of that little for room. Without ``utility_vs_best`` the most useful is
    chosen. Failed candidates keep their one-line reason. Raises :class:`ParameterError` naming the
    binding constraint and the closest candidate when nobody is feasible, and the passed-through columns
    when they alone single out more records than the policy allows (``uniqueness``: that of the shown
    columns, measured where the table is, when ``categories`` is not here).
    """
    obj, r_max = policy.objective, policy.max_reidentification
    reasons: list[str] = []
    feasible = []
    for i, c in enumerate(cands):
        if "failed" in c:
            reasons.append(f"failed: {c['failed']}")
            continue
        why = policy_violations(c, policy)
        reasons.append("; ".join(why))
        if not why and fully_measured(c):
            feasible.append(i)
    if not feasible:
        ok = [i for i, c in enumerate(cands) if "failed" not in c]
        if not ok:
            first = cands[0]
            raise ParameterError(f"every candidate failed; the first: {candidate_label(first)}: {first['failed']}")
        _check_passthrough(shown, categories, r_max, uniqueness)
        closest = min(ok, key=lambda i: shortfall(cands[i], policy))
        c = cands[closest]
        held = [i for i in ok if not reasons[i]]
        if held:  # every candidate that holds the policy was measured on a sample only
            raise ParameterError(f"no candidate was confirmed to hold the policy; {candidate_label(cands[held[0]])} "
                                 "held it on the sample; give --methods with fewer candidates or relax the policy")
        failed = [x for x in cands if "failed" in x]
        # candidates that failed may be the ones that would have held the policy: the message names them
        also = (f"; {len(failed)} candidate(s) failed, the first: {candidate_label(failed[0])}: {failed[0]['failed']}"
                if failed else "")
        raise ParameterError(
            f"no candidate satisfies the policy (binding: {binding_test(c, policy)}); closest is {candidate_label(c)}: "
            f"{reasons[closest]}{also}; relax the policy's limits (policy.max_* in --config, or --max-singling-out "
            "/ --max-linkability) or add stronger mechanisms"
        )
    top = _most_useful_of(cands, feasible, obj)
    assert top is not None  # feasible is not empty
    best, alike = _least_loaded(cands, feasible, top, policy, floor)
    for i in range(len(cands)):
        if "failed" in cands[i]:
            continue
        if i == best and best == top:
            reasons[i] = (f"chosen: highest {obj} ({_utility(cands[i], obj):.2f}) among {len(feasible)} "
                          "that meet the policy" + (f", furthest inside the policy of the {len(alike)} as useful "
                                                   f"({_load_words(cands[i], policy)})" if len(alike) > 1 else ""))
        elif i == best:
            reasons[i] = (f"chosen: furthest inside the policy ({_load_words(cands[i], policy)}) of the "
                          f"{len(alike)} of {len(feasible)} that meet it and are as useful as the most useful, "
                          + _as_useful_words(cands[i], cands[top], policy))
        elif i == top:
            reasons[i] = (f"meets the policy with the highest {obj} ({_utility(cands[i], obj):.2f}) but closer to a "
                          f"limit ({_load_words(cands[i], policy)}) than {candidate_label(cands[best])}, as useful "
                          f"within {policy.equal_utility_se:g} standard error(s)")
        elif i in alike:
            reasons[i] = (f"meets the policy and is as useful as the most useful, "
                          f"{_as_useful_words(cands[i], cands[top], policy)}, but closer to a limit "
                          f"({_load_words(cands[i], policy)})")
        elif cands[i].get("stage") == "first pass":
            reasons[i] = _first_pass_words(cands[i], reasons[i])
        elif _screened_only(cands[i]):
            rows = cands[i]["measured_on"].get("rows")
            reasons[i] = (f"screened on a sample of {rows:,} rows: " + (
                f"violates the policy there: {reasons[i]}"
                + (" (linkage alone settled it: the other attacks and the utility were not measured)"
                   if not cands[i]["utility"] else "") if reasons[i] else
                f"meets the policy there ({obj} {_utility(cands[i], obj):.2f} on the sample); not confirmed, "
                "a candidate ahead of it held the policy on every row"))
        elif not reasons[i]:
            reasons[i] = (f"meets the policy but lower {obj} ({_utility(cands[i], obj):.2f} vs "
                          f"{_utility(cands[top], obj):.2f})")
        else:
            reasons[i] = "violates the policy: " + reasons[i]
    return best, reasons


def _first_pass_words(c: dict[str, Any], why: str) -> str:
    """The verdict of a candidate not measured past its first pass (``why``: the limits it breaks, if any)."""
    stopped = c.get("stopped", "stopped after the first pass")
    if not why:
        return stopped
    if any("folds" in (c["risk"].get(k) or {}) for k in ("singling_out", "linkability")):
        return ("violates the policy on the mean of every fold's release (the rest of the battery was not run): "
                + why)
    if "stopped" in c:  # a test within its interval of the limit on the first fold, and no more useful anyway
        return f"violates the policy on the first fold ({why}, within the test's interval of the limit); {stopped}"
    return "violates the policy at the first pass (the rest of the battery was not run): " + why


def _least_loaded(cands: list[dict[str, Any]], feasible: list[int], top: int, policy: Any,
                  floor: float | None) -> tuple[int, list[int]]:
    """The feasible candidate with the lowest :func:`policy_load` of those as useful as ``top`` (ties: higher
    utility), and those candidates (``top`` first)."""
    obj = policy.objective
    if policy.equal_utility_se <= 0 or (floor is not None and _utility(cands[top], obj) <= floor):
        return top, [top]
    against = candidate_label(cands[top])
    # with a floor, as useful keeps most of the top's gain over it too
    least = float("-inf") if floor is None else floor + TIE_GAIN_SHARE * (_utility(cands[top], obj) - floor)
    alike = [top] + [i for i in feasible if i != top and _as_useful(cands[i], policy)
                     and cands[i]["utility_vs_best"].get("against") == against and _utility(cands[i], obj) >= least]
    best = min(alike, key=lambda i: (round(policy_load(cands[i], policy), 6), -_utility(cands[i], obj)))
    return best, alike


def _load_words(c: dict[str, Any], policy: Any) -> str:
    return f"its closest risk at {policy_load(c, policy):.0%} of its limit"


def _as_useful_words(c: dict[str, Any], top: dict[str, Any], policy: Any) -> str:
    """``c``'s utility beside the most useful candidate's, with their paired difference and its error."""
    obj, d = policy.objective, c["utility_vs_best"]
    return (f"{candidate_label(top)} ({obj} {_utility(c, obj):.2f} vs {_utility(top, obj):.2f}; record by record "
            f"{float(d['difference']):+.2f} points, standard error {float(d['se']):.2f}, over {int(d['records']):,} "
            "held-out records)")


def passthrough_uniqueness(categories: Any) -> dict[str, Any] | None:
    """How far the columns shown unchanged single out records on their own (None: no such columns)."""
    if categories is None or categories.shape[1] == 0:
        return None
    from ppdm.attacks._population import combination_codes, uniqueness

    codes, _ = combination_codes(categories, categories[:1])
    return uniqueness(codes)


def _check_passthrough(shown: Any, categories: Any, r_max: float, u: dict[str, Any] | None = None) -> None:
    """Columns that reach the release unchanged and single out records defeat any numeric mechanism."""
    if len(shown) == 0:
        return
    u = u if u is not None else passthrough_uniqueness(categories)
    if u is None:
        return
    if u["unique_share"] > r_max:
        names = ", ".join(repr(c) for c in list(shown)[:8])
        raise ParameterError(
            f"the columns that pass through unchanged ({names}) single out {u['unique_share']:.1%} of the records "
            f"(k-anonymity {u['k_anonymity']}), above the policy's {r_max:.1%}; no numeric mechanism can fix that: "
            "leave them out with --drop or --columns (the label: leave out --label), or recode them first")
