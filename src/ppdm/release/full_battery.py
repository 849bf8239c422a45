"""The sweep's full battery: everything the first pass left out, for the candidates that can still be chosen.

On top of a candidate's first pass (:mod:`ppdm.release.first_pass`), whose measurements it keeps:

* every other attack of the threat model that can work on the mechanism on the release of every row, and
  the linkage's other spaces (raw, standardised and projected spaces, k-NN distance profiles, one-to-one
  matching; the first pass's spaces are merged in, so the linkage is the worst over all of them);
* the train-on-release models on the further held-out folds, pooled with the first fold's (not for a
  synthesiser of whole records, whose every release fits a model: its utility, membership and attacks are the
  first fold's release's, the fit the first pass made, and the record says so in ``attacks_on``);
* first, singling out and linkability on every fold's release, pooled, where the first fold's reading was
  within its interval of the limit (:func:`ppdm.release.criteria.every_fold_tests`): a candidate whose mean
  breaks the policy stops there, its record the first pass's with the pooled tests (``stage`` stays
  ``"first pass"``);
* the values read off the row an attacker finds for a person (the first fold's release, against its
  held-out real records), the sensitive columns' inference, membership and the inference of every column;
* the cross-validated accuracies on the release itself and the neighbour preservation.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ppdm.release.trial import SweepTable, Trial, synthesises_records

__all__ = ["full_battery", "battery", "sweep_attacks"]


def battery(table: SweepTable, method: str | None = None) -> list[str]:
    """The attacks of the threat model a sweep runs on a candidate of ``method``: the seed search only for a
    user's seed, and ICA only where the mechanism may mix columns (:func:`sweep_attacks`)."""
    return sweep_attacks(table.threat, method, seed_search=table.seed_known)


def sweep_attacks(threat: str, method: str | None, *, seed_search: bool = True,
                  same_columns: bool = True) -> list[str]:
    """The attacks of ``threat`` for a candidate of ``method`` (None: every one) whose release has the
    original's columns (``same_columns``) or not; the seed search only with ``seed_search``.

    The attacker knows the mechanism (Kerckhoffs) and attacks it with what can work on it. ICA unmixes linear
    mixtures of the columns (a rotation, a projection, a low-rank reconstruction); a mechanism that makes every
    released column from its own original column alone (noise added to it, a group's mean of it, its values
    swapped, synthetic records drawn from a model) leaves it nothing to unmix, and its reconstruction is then
    no better than the face value and the linear estimate the battery runs anyway (a test keeps this so). It
    was also the battery's costliest attack on tables with many categories (FastICA on every one-hot column:
    about half of a full battery's attacks on a 2,000 x 22 categorical table).
    """
    from ppdm.attacks import ThreatModel, applicable_attacks
    from ppdm.release.trial import mixes_columns

    unmixing = method is None or mixes_columns(method)
    return [a for a in applicable_attacks(ThreatModel.parse(threat), same_columns)
            if (seed_search or a != "seed_search") and (unmixing or a != "ica")]


def full_battery(table: SweepTable, method: str, params: dict[str, Any], first: dict[str, Any]) -> dict[str, Any]:
    """The candidate's record after its full battery, from its first pass ``first`` (plain data, no keys)."""
    from ppdm.attacks import FIRST_SPACES, LINKAGE_SPACES, run_attacks_named
    from ppdm.release.criteria import every_fold_tests, repeated_tests
    from ppdm.release.first_pass import Clock, pack_hits, unpack_hits
    from ppdm.release.risk import risk_of, scalar_items, with_linked_risk
    from ppdm.release.select import policy_violations
    from ppdm.release.utility import (
        hit_rates,
        neighbour_preservation,
        objective_hits,
        pooled,
        tstr_hits,
        utility_scores,
    )

    t0 = time.perf_counter()
    clock = Clock()
    trial = Trial(table, method, params)
    adopted = first.get("fold0") is not None and bool(table.folds)
    if adopted:
        trial.adopt("fold 0", table.folds[0][0], *first["fold0"])  # the first pass's fit, not a second one
    # a synthesiser of whole records fits a model per release: its utility and membership are measured on the
    # first fold's release alone (the further folds would cost a model each), and so are its attacks when the
    # first pass handed that release over. The release of every row would be one more fit of the same formally
    # private model to a fifth more records, with fresh noise: a sibling of the published release, as the first
    # fold's is (OpenDP's noise is drawn anew for the published release either way)
    costly = synthesises_records(method)
    held = first.get("held_out") or {}
    if repeated_tests(table, method, held.get("tests", {})):
        # a test the first fold could not tell from its limit: the mean over every fold's release decides, and
        # one that breaks the policy there ends the candidate before the rest of the battery
        parts = [trial.release(train, name=f"fold {i}") for i, (train, _) in enumerate(table.folds)]
        held = {**held, "tests": every_fold_tests(trial, parts, held["tests"])}
        clock.lap("tests on every fold")
        every_fold = {**first, "risk": {**first["risk"], **held["tests"]}}
        if policy_violations(every_fold, table.policy):
            out = {k: v for k, v in every_fold.items() if k != "fold0"}
            out.update({"held_out": held, "seconds": first.get("seconds", 0.0) + time.perf_counter() - t0,
                        "timings": {**first.get("timings", {}), "full battery": clock.laps}})
            return out
    on_fold = costly and adopted
    whole = trial.release(table.folds[0][0], name="fold 0") if on_fold else trial.release()
    clock.lap("release")
    X_att, B_att, cats, columns = trial.attack_view(whole)
    # the first pass's linkage spaces are merged in where it linked this same release (not a synthesiser's fold
    # when the release of every row is attacked here)
    merged = on_fold or not first.get("linkage_on")
    # one seed per attack keeps the sweep affordable; `ppdm attack` reports intervals over seeds
    rest = [scalar_items(r.to_dict()) for r in run_attacks_named(
        X_att, B_att, table.threat, attacks=battery(table, method), random_state=table.seed, n_seeds=1,
        columns=columns, categories=cats, mechanism=trial.mechanism(), seed_scan=1000 if table.seed_known else 0,
        spaces=LINKAGE_SPACES - FIRST_SPACES if merged else LINKAGE_SPACES)]
    attacks = _merge_linkage(first["attacks"], rest) if merged else rest
    clock.lap("attacks")
    util = dict(first["utility"])
    if table.y is not None:
        util.update(utility_scores(whole.design, whole.label, seed=table.seed))
    util["neighbour_pct"] = neighbour_preservation(table.X if whole.rows is None else table.X[whole.rows],
                                                   whole.design, seed=table.seed)
    clock.lap("utility")
    # whether the objective's model classifies each held-out record right, the first fold's records first, then
    # each further fold's: the choice compares candidates record by record on them (ppdm.release.select.choose)
    hits = [unpack_hits(first["hits"], int(first["hits_rows"]))] if "hits" in first else None
    if table.folds and len(table.folds) > 1 and not costly and table.y is not None:
        numeric = None if table.codec is None else table.codec.numeric_index_
        tstr = {k: v for k, v in first["utility"].items() if k.startswith("tstr_")}
        scores = [(len(table.folds[0][1]), tstr)]
        # the further folds, then a small table's repeated splits (each a release of its training rows)
        for i, (train, test) in enumerate(table.utility_folds[1:], start=1):
            part = trial.release(train, name=f"fold {i}")
            fold_hits = tstr_hits(part.design, part.label, table.X[test], table.y[test], seed=table.seed,
                                  numeric=numeric)
            scores.append((len(test), hit_rates(fold_hits)))
            if hits is not None:
                hits.append(objective_hits(fold_hits, table.objective))
        util.update(pooled(scores))
        clock.lap("further folds")
    linked = sensitive = None
    if table.folds:
        train, test = table.folds[0]
        linked, sensitive = _held_out_risk(trial, trial.release(train, name="fold 0"), test, whole)
        clock.lap("held-out risk")
    risk = with_linked_risk(risk_of(attacks), linked, sensitive) | held.get("tests", {})
    if table.folds:
        risk.update(_tests_of_the_folds(trial, method, params, folds=table.folds[:1] if costly else None))
        clock.lap("membership and inference")
    out = dict(first)
    out.pop("linkage_on", None)
    out.pop("fold0", None)
    if hits is not None:
        pooled_hits = np.concatenate(hits)
        out["hits_pooled"], out["hits_pooled_rows"] = pack_hits(pooled_hits), int(len(pooled_hits))
    if on_fold:
        out["attacks_on"] = ("the first fold's release (a fit to four fifths of the records, attacked against "
                             "them); the published release is another fit of the same model to every record")
    out.update({"utility": util, "attacks": attacks, "risk": risk, "stage": "full battery",
                "seconds": first.get("seconds", 0.0) + time.perf_counter() - t0,
                "timings": {**first.get("timings", {}), "full battery": clock.laps}})
    return out


def _tests_of_the_folds(trial: Trial, method: str, params: dict[str, Any], *,
                        folds: list[Any] | None = None) -> dict[str, Any]:
    """Membership (every fold's release, or those of ``folds``; limited for candidates that keep no one's row)
    and the inference of every column (the first fold's release; reported)."""
    from ppdm.release.criteria import inference_test, keeps_no_row, membership_of

    folds = (trial.table.folds or []) if folds is None else folds
    parts = [trial.release(train, name=f"fold {i}") for i, (train, _) in enumerate(folds)]
    member = membership_of(trial, parts)
    out: dict[str, Any] = {"membership": member, "inference": inference_test(trial, parts[0], *folds[0])}
    if keeps_no_row(method, params):
        o = member["outliers"]
        out["membership_outliers"] = {"risk": o["advantage"], "interval": o.get("interval"),
                                      "n_outliers": o.get("n_outliers"), "paired": member["paired"]}
    return out


def _merge_linkage(first: list[dict[str, Any]], rest: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The full battery's attacks with the first pass's linkage spaces merged into its linkage (the worst over
    every space), in the battery's order."""
    linked = {a["attack"]: a for a in first}
    out = []
    for a in rest:
        if a["attack"] == "linkage" and "linkage" in linked:
            a = _union(linked["linkage"], a)
        out.append(a)
    return out


def _union(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """One linkage result from two measured over disjoint spaces of the same release and population."""
    details = {**a.get("details", {}), **b.get("details", {})}
    rates = {**(a.get("details", {}).get("rates") or {}), **(b.get("details", {}).get("rates") or {})}
    details["rates"] = rates
    chance = float(details.get("chance", a.get("control_rate") or 0.0))
    rate = max(rates.values(), default=chance)
    details["best_space"] = max(rates, key=lambda k: rates[k]) if rates else None
    return {**b, "success": rate, "reidentification_rate": rate, "details": details,
            "excess": max(0.0, rate - chance)}


def _held_out_risk(trial: Trial, part: Any, test: np.ndarray, whole: Any) -> tuple[dict[str, Any] | None, Any]:
    """Values read off the row an attacker finds, and the sensitive columns' inference, for the people of the
    first fold's release against its held-out real records; ``whole``: the release the battery attacks (whose
    l-diversity is reported), never made here."""
    from ppdm.release.risk import linked_value_disclosure, sensitive_risk

    t = trial.table
    train = part.rows
    codec = t.codec
    if codec is None:
        return linked_value_disclosure(t.X[train], part.design, t.X[test]), None
    original = trial.original()
    X_att = original.numbers if codec.numeric_names else t.X
    linked = linked_value_disclosure(X_att[train], part.numbers, X_att[test])
    sensitive = sensitive_risk(codec, t.X[train], t.X[test], part.design, original.take(train),
                               original.take(test), part.published, whole.published, rows=train)
    return linked, sensitive
