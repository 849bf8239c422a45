"""The sweep's first pass: what every candidate gets, cheap enough to run for all of them.

A candidate is released once from every row and once from the first fold's training rows (a synthesiser,
whose every release is a model's fit, only from the first fold's: a model fitted to those rows releases
those people, so its linkage takes that release for the release of every row). The first pass measures
what the policy limits and what ranks the candidates:

* the release of every row: its distortion, and the population attacker's cheapest linkages (population
  z-scores, norms, and the categories shown beside the numbers: :data:`~ppdm.attacks.FIRST_SPACES`), which
  settle most candidates that re-identify;
* the first fold's release: the train-on-release models tested on its held-out real records (the ranking
  utility, with each record's hit kept for paired comparisons) and the tests of singling out and
  linkability, which settle most candidates that get past the linkage.

Everything the first pass measures the full battery keeps: a limit broken here is broken for good, so a
candidate that breaks one is not measured further, with one exception. Singling out and linkability are read
on one fold's few hundred held-out records; one within its 95 % interval of its limit may be measured on every
fold's release by the full battery, whose mean decides (:func:`ppdm.release.halving.open_on_every_fold`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ppdm.release.trial import SweepTable, Trial, draws_from_model

__all__ = ["first_pass", "pack_hits", "unpack_hits", "Clock"]


class Clock:
    """Seconds spent in each named step of a candidate's measurement."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._at = time.perf_counter()

    def lap(self, what: str) -> None:
        now = time.perf_counter()
        self.laps[what] = round(self.laps.get(what, 0.0) + now - self._at, 4)
        self._at = now


def pack_hits(hits: np.ndarray) -> str:
    """Per-record hits (booleans) as compact text for the cache: hex of the packed bits."""
    return np.packbits(np.asarray(hits, dtype=bool)).tobytes().hex()


def unpack_hits(text: str, n: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(bytes.fromhex(text), dtype=np.uint8))[:n].astype(bool)


def first_pass(table: SweepTable, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Release ``table`` with one candidate and measure its first pass (plain data, no keys, no rows).

    The result has the record's fields (``method``, ``params``, ``value``, ``utility``, ``attacks``, ``risk``,
    ``seconds``, ``timings``) and ``stage: "first pass"``; ``hits`` (private to the sweep) holds which held-out
    records the objective's model classified right, for the paired comparisons of
    :mod:`ppdm.release.halving`, and ``held_out`` (private too) the held-out measurements as they were made;
    a synthesiser's ``fold0`` (private, never cached) is its release of the first fold, for the full battery.
    """
    from ppdm.attacks import FIRST_SPACES, run_attacks_named
    from ppdm.metrics import value_metrics
    from ppdm.release.risk import risk_of, scalar_items
    from ppdm.release.select import policy_violations

    t0 = time.perf_counter()
    clock = Clock()
    trial = Trial(table, method, params)
    # a synthesiser costs a model per release: its first pass makes one, the first fold's, and links it to that
    # fold's records (the full battery links the release of every row)
    on_fold = bool(table.folds) and draws_from_model(method)
    screened = trial.release(table.folds[0][0], name="fold 0") if on_fold else trial.release()
    clock.lap("release")
    X_att, B_att, cats, columns = trial.attack_view(screened)
    value = value_metrics(X_att, B_att)
    attacks = [scalar_items(r.to_dict()) for r in run_attacks_named(
        X_att, B_att, table.threat, attacks=["linkage"], random_state=table.seed, n_seeds=1, columns=columns,
        categories=cats, spaces=FIRST_SPACES)]
    clock.lap("linkage")
    out: dict[str, Any] = {"method": method, "params": params, "value": value, "utility": {}, "attacks": attacks,
                           "risk": risk_of(attacks), "stage": "first pass"}
    if on_fold:
        out["linkage_on"] = "the first fold's release"
    if not policy_violations(out, table.policy):  # re-identified already: nothing below could change that
        util, hits, tests = _first_fold(trial, clock)
        out["utility"] = util
        out["risk"] = out["risk"] | tests
        # kept for the full battery, which measures the linkage over more spaces and keeps these
        out["held_out"] = {"tests": tests}
        if hits is not None:
            out["hits"], out["hits_rows"] = pack_hits(hits), int(len(hits))
    if on_fold and screened.raw is not None and "hits" in out:
        # the full battery measures this same release of the first fold instead of fitting a model again
        out["fold0"] = (screened.raw, screened.label if screened.synthetic_label else None)
    out["seconds"] = time.perf_counter() - t0
    out["timings"] = {"first pass": clock.laps}
    return out


def _first_fold(trial: Trial, clock: Clock) -> tuple[dict[str, float], np.ndarray | None, dict[str, Any]]:
    """The utility, the objective model's hits and the tests of singling out and linkability of the first
    fold's release; an objective that is not a train-on-release accuracy is measured on the release of every
    row too (then there are no per-record hits to compare)."""
    from ppdm.release.criteria import first_fold_tests
    from ppdm.release.utility import neighbour_preservation, utility_scores

    t = trial.table
    util: dict[str, float] = {}
    hits = None
    tests: dict[str, Any] = {}
    if t.folds:
        train, test = t.folds[0]
        part = trial.release(train, name="fold 0")
        clock.lap("fold release")
        if t.y is not None:  # without a label the folds hold out the tests' control only
            util, hits = _tstr(trial, part, test)
            clock.lap("train on release")
        tests = first_fold_tests(trial, part, train, test)
        clock.lap("singling out and linkability")
    if t.objective not in util:  # an objective measured on the release itself
        if t.objective == "neighbour_pct":
            util["neighbour_pct"] = neighbour_preservation(t.X, trial.release().design, seed=t.seed)
        elif t.y is not None:
            util.update(utility_scores(trial.release().design, trial.release().label, seed=t.seed))
        clock.lap("utility")
        hits = None  # the ranking's measure is not per held-out record
    return util, hits, tests


def _tstr(trial: Trial, part: Any, test: np.ndarray) -> tuple[dict[str, float], np.ndarray]:
    """Train-on-release accuracies of the first fold, and the objective model's hit on each held-out record."""
    from ppdm.release.utility import hit_rates, objective_hits, tstr_hits

    t = trial.table
    numeric = None if t.codec is None else t.codec.numeric_index_
    hits = tstr_hits(part.design, part.label, t.X[test], t.y[test], seed=t.seed, numeric=numeric)
    return hit_rates(hits), objective_hits(hits, t.objective)
