"""Run the attacks that apply to a threat model and score them against the original."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks._result import (
    ORIGINAL_SCORES,
    AttackResult,
    no_release_scores,
    reconstruction_scores_rows,
    t_interval,
)
from ppdm.attacks._threat import ThreatModel
from ppdm.exceptions import InputError, ParameterError
from ppdm.utils.linalg import column_mean_std, column_quantiles
from ppdm.utils.memory import give_back
from ppdm.utils.rows import rows_among, rows_except

__all__ = ["ATTACKS", "AttackSpec", "run_attacks", "run_attacks_named", "targeted_attacks", "applicable_attacks",
           "attack_tables"]


@dataclass(frozen=True)
class AttackSpec:
    """How an attack is chosen: what it needs, and whether the threat names its knowledge explicitly."""

    name: str
    description: str
    needs: Callable[[ThreatModel, bool], bool]   # (threat, release has the original's columns) -> applies
    targeted: Callable[[ThreatModel], bool]      # the threat names the knowledge this attack exploits
    seeded: bool


def _pairs(t: ThreatModel, same: bool) -> bool:
    return t.has_pairs


def _sample(t: ThreatModel, same: bool) -> bool:
    return t.known_sample > 0 or t.population


def _records(t: ThreatModel, same: bool) -> bool:
    # a release with its own columns is still linked by its distances (isometry profiles)
    return (same or t.population) and (t.population or t.known_sample > 0 or bool(t.known_columns))


def _release_only(t: ThreatModel, same: bool) -> bool:
    return same


def _population(t: ThreatModel, same: bool) -> bool:
    return same and (t.population or t.known_sample > 0)


_SPECS: tuple[AttackSpec, ...] = (
    AttackSpec("known_io", "known input-output pairs: least squares / Procrustes (+ marginals) inverts linear "
               "releases", _pairs, lambda t: t.has_pairs, True),
    AttackSpec("distance", "known points + distances: Gauss-Newton location of every record (rho)",
               _pairs, lambda t: t.has_pairs, True),
    AttackSpec("pca", "known sample: covariance eigenvectors aligned by KS sign search", _sample,
               lambda t: t.known_sample > 0, True),
    AttackSpec("mmse", "linear minimum-mean-square-error (Wiener) estimate from the population's covariance "
               "and the release's (additive noise; no pairs needed)", _population,
               lambda t: t.population or t.known_sample > 0, False),
    AttackSpec("linkage", "record linkage: nearest original record in raw, standardised, projected and population "
               "z-score spaces, isometry invariants (norms, k-NN distance profiles), one-to-one matching, and "
               "exact match on the passed-through columns", _records,
               lambda t: t.population or bool(t.known_columns), False),
    AttackSpec("seed_search", "replay of the known mechanism from guessable seeds (0..999 and common ones): "
               "finds releases keyed with a small or default seed", lambda t, same: t.population,
               lambda t: t.population, False),
    AttackSpec("interval_disclosure", "share of true values inside rank/deviation intervals around released ones",
               _release_only, lambda t: t.population, False),
    AttackSpec("spectral_filter", "spectral filtering of additive noise (eigenvalues above the noise bound)",
               _release_only, lambda t: False, False),
    AttackSpec("low_rank_denoise", "low-rank denoising of the release (optimal hard threshold)",
               _release_only, lambda t: False, False),
    AttackSpec("ica", "ICA unmixing of column mixtures, matched to columns by their distributions",
               lambda t, same: t.marginals, lambda t: False, True),
    AttackSpec("face_value", "the release read as the original", _release_only, lambda t: False, False),
)
_BY_NAME = {s.name: s for s in _SPECS}
#: attack name -> short description
ATTACKS: dict[str, str] = {s.name: s.description for s in _SPECS}


def applicable_attacks(threat: ThreatModel | str | None, same_columns: bool = True) -> list[str]:
    """Every attack the threat's knowledge allows, in report order."""
    t = ThreatModel.parse(threat)
    return [s.name for s in _SPECS if s.needs(t, same_columns)]


def targeted_attacks(threat: ThreatModel | str | None, same_columns: bool = True) -> list[str]:
    """The attacks that exploit what the threat names explicitly (release-only attacks for an outsider)."""
    t = ThreatModel.parse(threat)
    names = [s.name for s in _SPECS if s.needs(t, same_columns) and s.targeted(t)]
    return names or applicable_attacks(t, same_columns)


def run_attacks(
    original: np.ndarray,
    release: np.ndarray,
    threat: ThreatModel | str | None = None,
    *,
    attacks: Sequence[str] | None = None,
    random_state: int = 0,
) -> list[AttackResult]:
    """Run attacks on a release and score them against the original.

    Parameters
    ----------
    original : ndarray of shape (n, m)
        The confidential table (used by the attacker only as the threat allows, and for scoring).
    release : ndarray of shape (n, p)
        The released table, rows aligned with ``original``.
    threat : ThreatModel, str or None
        What the attacker knows (:meth:`ThreatModel.parse` syntax); None is the ``default`` preset.
    attacks : sequence of str or None
        Attack names (:data:`ATTACKS`); None runs every attack that applies to the threat.
    random_state : int
        Seeds every random choice (known records, samples, ICA); the same seed gives the same results.

    Returns
    -------
    list of AttackResult
    """
    return run_attacks_named(original, release, threat, attacks=attacks, random_state=random_state)


def run_attacks_named(
    original: np.ndarray,
    release: np.ndarray,
    threat: ThreatModel | str | None = None,
    *,
    attacks: Sequence[str] | None = None,
    random_state: int = 0,
    columns: Sequence[str] | None = None,
    ids: Sequence[object] | None = None,
    n_seeds: int = 3,
    progress: Callable[[str], None] | None = None,
    categories: tuple[np.ndarray, np.ndarray] | None = None,
    mechanism: dict[str, Any] | None = None,
    seed_scan: int = 1000,
    seed_scan_seconds: float | None = None,
    targets: np.ndarray | None = None,
    spaces: frozenset[str] | None = None,
) -> list[AttackResult]:
    """:func:`run_attacks` with column names (for known-columns) and record ids (for known-records).

    ``targets`` (row indices) are the released rows whose risk is measured, a seeded sample on a large
    table; every attack still searches the whole population for them (a smaller pool would make linkage
    easier, not harder). None attacks every row.

    ``mechanism`` (``method``, ``params``, ``preprocess``: what the release's publisher states) lets the
    seed search replay it; without it that attack is left out. ``seed_scan`` bounds its scan (in seeds, and in
    seconds with ``seed_scan_seconds``).

    ``categories`` holds the passed-through columns of the original and the release (as arrays of the
    same rows): every column that reaches the release is part of what the attacker sees.

    ``spaces``: the linkage attack measures these spaces only (None: every one): a sweep's first pass
    measures :data:`~ppdm.attacks._population.FIRST_SPACES`, its full battery the rest.
    """
    from ppdm.utils.validation import check_array

    X = check_array(original, name="original", min_rows=4)
    Y = check_array(release, name="release", min_rows=4)
    if X.shape[0] != Y.shape[0]:
        raise InputError(f"original has {X.shape[0]} rows and release {Y.shape[0]}; align the rows (ids) first")
    t = ThreatModel.parse(threat)
    same = X.shape[1] == Y.shape[1]
    names = list(attacks) if attacks is not None else applicable_attacks(t, same)
    if (mechanism is None or seed_scan <= 0) and attacks is None:
        names = [a for a in names if a != "seed_search"]
    elif mechanism is None and "seed_search" in names:
        raise ParameterError("the seed search replays the mechanism: give the release's state (--state)")
    for a in names:
        if a not in _BY_NAME:
            raise ParameterError(f"unknown attack '{a}'; choose from {', '.join(ATTACKS)}")
        if not _BY_NAME[a].needs(t, same):
            raise ParameterError(
                f"attack '{a}' does not apply to threat '{t}'"
                + ("" if same else " with a release whose columns differ from the original's")
                + "; give the knowledge it needs in --threat or leave it out"
            )
    cols = list(columns) if columns is not None else [f"c{j}" for j in range(X.shape[1])]
    known_fixed = _known_positions(t, ids, X.shape[0])
    # the no-release guess, shared by every attack (a column at a time: no sorted copy of the table)
    median = column_quantiles(X)
    results = []
    for a in sorted(names, key=list(ATTACKS).index):
        i = list(ATTACKS).index(a)  # seeds depend on the attack, not on which others run
        if progress is not None:
            progress(a)
        spec = _BY_NAME[a]
        reps = 1 if not spec.seeded or (a in ("known_io", "distance") and known_fixed is not None) else n_seeds
        if a == "seed_search":
            results.append(_seed_result(X, Y, t, mechanism or {}, seed_scan, seed_scan_seconds))
            continue
        runs = [_one(a, X, Y, t, np.random.default_rng([random_state, i, r]), cols, known_fixed, categories,
                     mechanism, targets, median, spaces) for r in range(reps)]
        results.append(_combine(a, t, runs))
        if X.size >= _LARGE_CELLS:
            # an attack's block temporaries stay in the C heap once freed, and the next attack's come on top:
            # on a large table they are handed back between attacks (milliseconds against seconds)
            give_back()
    return results


#: tables of at least this many cells hand their freed memory back between attacks
_LARGE_CELLS = 1 << 22


def _seed_result(X: np.ndarray, Y: np.ndarray, t: ThreatModel, mechanism: dict[str, Any], scan: int,
                 seconds: float | None = None) -> AttackResult:
    from ppdm.attacks._result import beyond_baseline, rmse, within_pct
    from ppdm.attacks._seed import candidate_seeds, seed_search

    res = seed_search(X, Y, mechanism["method"], dict(mechanism.get("params", {})),
                      mechanism.get("preprocess", "zscore"), candidate_seeds(scan), y=mechanism.get("y"),
                      max_seconds=seconds)
    n = X.shape[0]
    base = no_release_scores(X, np.arange(n))
    if res["found"]:
        X_hat = res["X_hat"]
        reid = float(np.mean(res["order"] == np.arange(n)))
        scores = {"within_5pct": within_pct(X_hat, X), "reidentification_rate": reid,
                  "rmse": rmse(X_hat, X),
                  "within_5pct_beyond_baseline": beyond_baseline(X_hat, X)}
    else:
        scores = {"within_5pct": base["within_5pct"], "reidentification_rate": 1.0 / n, "rmse": base["rmse"],
                  "within_5pct_beyond_baseline": 0.0}
    return AttackResult(
        attack="seed_search", threat=str(t), success=scores["within_5pct"], success_measure="within_5pct",
        rmse=scores["rmse"], within_5pct=scores["within_5pct"], reidentification_rate=scores["reidentification_rate"],
        baseline_no_release={"success": base["within_5pct"], **base},
        baseline_original={"success": 1.0, **ORIGINAL_SCORES}, ci=None, n_seeds=1,
        details={"seeds_tried": res["seeds_tried"], "key_found": bool(res["found"]),
                 **({"scan_stopped": res["why"]} if "why" in res else {})},
        control_rate=base["within_5pct"], excess=max(0.0, scores["within_5pct"] - base["within_5pct"]),
        within_5pct_beyond_baseline=scores["within_5pct_beyond_baseline"])


def _known_positions(t: ThreatModel, ids: Sequence[object] | None, n: int) -> np.ndarray | None:
    if not t.known_records:
        return None
    labels = [str(v) for v in ids] if ids is not None else [str(i + 1) for i in range(n)]
    index = {v: i for i, v in enumerate(labels)}
    missing = [r for r in t.known_records if r not in index]
    if missing:
        raise ParameterError(f"{len(missing)} known record id(s) are not in the table; check --id and the ids")
    return np.array(sorted({index[r] for r in t.known_records}), dtype=np.int64)


def _draw(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    return np.sort(rng.choice(n, size=min(max(k, 1), n), replace=False))


def _one(name: str, X: np.ndarray, Y: np.ndarray, t: ThreatModel, rng: np.random.Generator,
         cols: list[str], known_fixed: np.ndarray | None,
         categories: tuple[np.ndarray, np.ndarray] | None = None,
         mechanism: dict[str, Any] | None = None, targets: np.ndarray | None = None,
         median: np.ndarray | None = None, spaces: frozenset[str] | None = None) -> dict[str, Any]:
    """One repetition: scores, baselines and details (measured on ``targets`` when given)."""
    n, m = X.shape

    def everyone() -> np.ndarray:
        # made where an attack needs every row, not held through each attack (a million rows: 8 MB)
        return np.arange(n)

    # the rows whose risk is measured: all, or the seeded sample of targets of a large table
    scored = everyone() if targets is None else np.sort(np.asarray(targets, dtype=np.int64))

    def scored_among(rows: np.ndarray) -> np.ndarray:
        """The attacked ``rows`` whose risk is measured (all of them when none is a target)."""
        kept = rows if targets is None else rows_among(scored, rows, n)
        return kept if len(kept) else rows

    if name in ("known_io", "distance"):
        known = known_fixed if known_fixed is not None else _draw(rng, n, t.n_pairs(n, Y.shape[1]))
        attacked = rows_except(n, known)
        if name == "known_io":
            from ppdm.attacks._known_io import known_io_attack

            kept = scored_among(attacked)
            X_hat, det = known_io_attack(X, Y, known, marginals=t.marginals, rng=rng, out_rows=kept)
            return _recon_rows(_clip(X_hat, X, t), X, kept, rng, det, median)
        from ppdm.attacks._distance import distance_attack

        est, attacked, det = distance_attack(X, Y, known, rng, rows_only=True)
        kept = scored_among(attacked)
        return _recon_rows(_clip(est[np.searchsorted(attacked, kept)], X, t), X, kept, rng, det, median)
    if name == "pca":
        from ppdm.attacks._pca import pca_attack

        sample = everyone() if t.population else _draw(rng, n, int(round(t.known_sample * n)))
        attacked = rows_except(n, sample) if not t.population else sample
        kept = scored_among(attacked if len(attacked) else everyone())
        loc = scale = None
        if Y.shape[1] == m:
            # in the attacker's z-scores: ppdm's rotations and projections act on standardised data
            loc, scale = column_mean_std(X, None if t.population else sample)
            scale = np.where((scale == 0) | ~np.isfinite(scale), 1.0, scale)
        # only the scored rows are reconstructed: a large table's estimate is never table-sized
        X_hat, det = pca_attack(X, Y, sample, out_rows=kept, loc=loc, scale=scale)
        return _recon_rows(_clip(X_hat, X, t), X, kept, rng, det, median)
    if name == "linkage":
        from ppdm.attacks._linkage import linkage_rates

        known_rows = None if t.population or (t.known_columns and not t.known_sample) else _draw(
            rng, n, int(round(t.known_sample * n)))
        col_idx = [cols.index(c) for c in t.known_columns if c in cols] if t.known_columns else None
        if t.known_columns and not col_idx:
            raise ParameterError("none of the known columns is a compared column; check known-columns names")
        # the attacker's candidates are all the records they hold; the targets are the sampled released rows
        tgt = None if targets is None else (scored if known_rows is None else rows_among(scored, known_rows, n))
        det = linkage_rates(X, Y, known_rows=known_rows, column_idx=col_idx, targets=tgt, spaces=spaces)
        if not t.population and not t.known_sample:
            det["rates"] = {k: v for k, v in det["rates"].items() if k == "known_columns"}
            det["best_space"] = "known_columns"
        else:
            from ppdm.attacks._population import population_linkage

            pop = population_linkage(X, Y, rng, rows=known_rows, targets=tgt, categories=categories,
                                     mechanism=mechanism, spaces=spaces)
            det["rates"].update(pop.pop("rates"))
            det.update({k: v for k, v in pop.items() if k not in det})
            det["best_space"] = max(det["rates"], key=lambda k: det["rates"][k])
        rate = max(det["rates"].values(), default=det["chance"])
        return {"success": rate, "reidentification_rate": rate,
                "baseline_no_release": {"success": det["chance"], "reidentification_rate": det["chance"]},
                "baseline_original": {"success": 1.0, "reidentification_rate": 1.0}, "details": det}
    # the estimate-only attacks reconstruct the scored rows only (a large table's estimate is never whole)
    out = None if targets is None else scored
    if name == "mmse":
        from ppdm.attacks._filtering import wiener_reconstruction

        known = None if t.population else _draw(rng, n, int(round(t.known_sample * n)))
        X_hat, det = wiener_reconstruction(X if known is None else X[known], Y, out_rows=out)
        return _recon_rows(_clip(X_hat, X, t), X, everyone() if out is None else out, rng, det, median)
    if name == "interval_disclosure":
        from ppdm.attacks._linkage import interval_disclosure

        det = interval_disclosure(X, Y, rows=None if targets is None else scored)
        med = np.broadcast_to(np.median(X, axis=0) if median is None else median, X.shape)
        base = interval_disclosure(X, med, rows=None if targets is None else scored)  # a view: no copy
        share = (det["rank_interval_share"] + det["sd_interval_share"]) / 2
        return {"success": share, "details": det,
                "baseline_no_release": {"success": (base["rank_interval_share"] + base["sd_interval_share"]) / 2},
                "baseline_original": {"success": 1.0}}
    from ppdm.attacks import _filtering as f

    if name == "spectral_filter":
        X_hat, det = f.spectral_filter(Y, out_rows=out)
    elif name == "low_rank_denoise":
        X_hat, det = f.low_rank_denoise(Y, out_rows=out)
    elif name == "ica":
        X_hat, det = f.ica_attack(X, Y, rng, out_rows=out)
    else:
        X_hat, det = (Y if out is None else Y[out]), {}
    return _recon_rows(X_hat if name == "face_value" else _clip(X_hat, X, t), X, everyone() if out is None else out,
                       rng, det, median)


def _clip(X_hat: np.ndarray, X: np.ndarray, t: ThreatModel) -> np.ndarray:
    """An attacker who knows each column's distribution keeps estimates inside the column's range."""
    return np.clip(X_hat, X.min(axis=0), X.max(axis=0)) if t.marginals else X_hat


def _recon_rows(X_hat_rows: np.ndarray, X: np.ndarray, rows: np.ndarray, rng: np.random.Generator,
                det: dict[str, Any], median: np.ndarray | None = None) -> dict[str, Any]:
    """Scores of a reconstruction given for ``rows`` only (``X_hat_rows[i]`` estimates ``X[rows[i]]``)."""
    sc = reconstruction_scores_rows(X_hat_rows, X, rows, rng, median)
    base = no_release_scores(X, rows, median)
    return {**sc, "success": sc["within_5pct"], "details": {**det, "n_attacked_records": int(len(rows))},
            "baseline_no_release": {"success": base["within_5pct"], **base},
            "baseline_original": {"success": 1.0, **ORIGINAL_SCORES}}


#: dense n x m working arrays of one attack run: both tables, an estimate, standardised and projected copies
_ATTACK_COPIES = 8

_MEASURE = {"linkage": "reidentification_rate", "interval_disclosure": "interval_disclosure_share"}


def _combine(name: str, t: ThreatModel, runs: list[dict[str, Any]]) -> AttackResult:
    def mean(key: str, src: list[dict[str, Any]]) -> float | None:
        vals = [r.get(key) for r in src]
        vals = [v for v in vals if v is not None]
        return float(np.mean(vals)) if vals else None

    def mean_dict(key: str) -> dict[str, float | None]:
        ds = [r[key] for r in runs]
        return {k: mean(k, ds) for k in ds[0]}

    details = dict(runs[0]["details"])
    if len(runs) > 1:
        details = {k: (mean(k, [r["details"] for r in runs]) if isinstance(v, float) else v)
                   for k, v in details.items()}
    success = mean("success", runs)
    # the control: the same attack where the release tells nothing of the target's own row
    control = mean("success", [r["baseline_no_release"] for r in runs])
    return AttackResult(
        attack=name,
        threat=str(t),
        success=success,
        success_measure=_MEASURE.get(name, "within_5pct"),
        rmse=mean("rmse", runs),
        within_5pct=mean("within_5pct", runs),
        reidentification_rate=mean("reidentification_rate", runs),
        baseline_no_release=mean_dict("baseline_no_release"),
        baseline_original=mean_dict("baseline_original"),
        ci=t_interval([r["success"] for r in runs]) if len(runs) > 1 else None,
        n_seeds=len(runs),
        details=details,
        control_rate=control,
        excess=None if success is None or control is None else max(0.0, success - control),
        within_5pct_beyond_baseline=mean("within_5pct_beyond_baseline", runs),
    )


# ------------------------------------------------------------------------------------ tables


def _public_mechanism(state: str | os.PathLike[str], width: int,
                      asked: Sequence[str] | None = None) -> dict[str, Any] | None:
    """What a publisher states about a release: method, parameters and preprocessing, never the key.

    None when the mechanism did not act on the ``width`` columns attacked: a whole table's release perturbed
    its design (numbers and one-hot categories together), which the seed search cannot replay on the numbers
    alone; the seed search is then left out, or refused by name when ``asked`` for.
    """
    from ppdm.exceptions import ParameterError
    from ppdm.state import read_header

    h = read_header(state)
    if h.get("kind") != "release" or "mechanism" not in h:
        return None
    acted_on = (h.get("arrays", {}).get("preprocess.offset") or {}).get("shape", [width])[0]
    if acted_on != width:
        if asked is not None and "seed_search" in asked:
            raise ParameterError(f"the seed search replays the mechanism on the columns it perturbed, and this "
                                 f"release's mechanism acted on {acted_on} columns (a whole table's numbers and "
                                 f"one-hot categories, or other columns), not on the {width} attacked here; leave "
                                 "seed_search out (ppdm release runs it on the design for a release made with --seed)")
        return None
    params = {k: v for k, v in h["mechanism"].get("params", {}).items() if k != "random_state"}
    return {"method": h["method"], "params": params, "preprocess": h.get("preprocess", {}).get("method", "zscore")}


def _passthrough(o: pd.DataFrame, r: pd.DataFrame, id: str | None, cols: Sequence[str],
                 rcols: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]] | None:
    """The columns that reach the release unperturbed (label included, id excluded), aligned by rows.

    A column counts when it is in both tables and its released values equal the original's on at least
    half of the rows (a recoded or perturbed column is attacked as numbers, not matched exactly).
    """
    if id is not None and id in o.columns and id in r.columns:
        pos = pd.Index(o[id]).get_indexer(r[id])
        if (pos < 0).any():
            return None
        o = o.iloc[pos].reset_index(drop=True)
    if len(o) != len(r):
        return None
    names = []
    for c in r.columns:
        if c == id or c in cols or c in rcols or c not in o.columns:
            continue
        same = (o[c].astype(str).to_numpy() == r[c].astype(str).to_numpy()).mean()
        if same >= 0.5:
            names.append(str(c))
    if not names:
        return None
    return (o[names].astype(str).to_numpy(), r[names].astype(str).to_numpy(), names)


def attack_tables(
    original: str | os.PathLike[str] | pd.DataFrame,
    release: str | os.PathLike[str] | pd.DataFrame,
    *,
    threat: ThreatModel | str | None = None,
    attacks: Sequence[str] | None = None,
    targeted: bool = False,
    id: str | None = None,
    label: str | None = None,
    columns: Sequence[str] | None = None,
    seed: int = 0,
    sep: str | None = None,
    progress: Callable[[str], None] | None = None,
    sample: int | None = None,
    state: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Read and align an original and a release (from any tool), run the attacks, return a JSON-able dict.

    ``state`` (the release's state file) aligns a pseudonymous, shuffled ppdm release with its original.

    Rows are matched by ``id`` (else by position). The release is compared on the original's columns when
    it has them all; otherwise (a projection or embedding with its own columns) on all its numeric columns.
    ``attacks=None`` runs every attack that applies (``targeted=True``: those exploiting what the threat
    names explicitly). ``sample`` attacks a seeded sample of that many released rows (the attacker's
    population is then that sample; ``sample`` in the dict says so).
    The dict's schema (``schema`` = ``ppdm.attack/1``): ``results`` (one :class:`AttackResult` dict per
    attack, in a fixed order), ``threat`` and ``threat_description``, ``n_rows``, ``columns``,
    ``release_columns``, ``seed``, and ``skipped`` (attack name -> why an attack that applies to the threat
    was not run, e.g. the seed search without the release's ``state``).
    """
    from ppdm.data.io import read_table
    from ppdm.data.schema import numeric_matrix
    from ppdm.flow.artifacts import align_with_state
    from ppdm.flow.tables import align_tables, sample_rows
    from ppdm.utils.memory import check_dense, rows_that_fit

    o = read_table(original, sep=sep)
    r = align_with_state(o, read_table(release, sep=sep), state, id)
    n_all = len(r)
    o, r = sample_rows(o, r, sample, by_id=id is not None, seed=seed)
    width = max(o.shape[1], r.shape[1])
    check_dense(len(r), width, _ATTACK_COPIES, f"attacking {len(r)} x {width} in memory",
                f"attack a sample of the rows: --sample {rows_that_fit(width, _ATTACK_COPIES)}")
    t = ThreatModel.parse(threat)
    skip = {c for c in (id, label) if c is not None}
    ocols = list(columns) if columns is not None else [
        c for c in o.columns if c not in skip and pd.api.types.is_numeric_dtype(o[c])]
    if ocols and all(c in r.columns for c in ocols):
        X, Y, _, cols = align_tables(o, r, id=id, label=label, columns=ocols)
        rcols = cols
    else:
        # a release with its own columns: align rows, compare on every numeric column of each table
        X, _, _, cols = align_tables(o, o, id=id, label=label, columns=ocols or None)
        if id is not None:
            if id not in r.columns:
                raise InputError(f"--id column '{id}' is missing from the release table")
            pos = pd.Index(o[id]).get_indexer(r[id])
            if (pos < 0).any():
                raise InputError("some release rows have ids not in the original; check --id")
            X = X[pos]
        elif len(o) != len(r):
            raise InputError(f"original has {len(o)} rows and release {len(r)}; pass --id to match rows by id")
        rcols = [c for c in r.columns if c not in skip and pd.api.types.is_numeric_dtype(r[c])]
        if not rcols:
            raise InputError("the release has no numeric column to attack; check the file or --columns")
        Y = numeric_matrix(r, rcols)
    ids = (r[id].astype(str).tolist() if id is not None else None)
    categories = _passthrough(o, r, id, cols, rcols)
    asked = attacks
    same = X.shape[1] == Y.shape[1]
    if attacks is None:
        attacks = targeted_attacks(t, same) if targeted else applicable_attacks(t, same)
    mechanism = _public_mechanism(state, X.shape[1], asked=asked) if state is not None else None
    skipped: dict[str, str] = {}
    if mechanism is None and "seed_search" in attacks and (asked is None or state is not None):
        # the seed search replays the publisher's mechanism, which only a ppdm state file states: a release
        # from another tool (or a state that does not describe these columns) is attacked without it, and the
        # report says so; asked for by name without a state, it is refused below (run_attacks_named)
        attacks = [a for a in attacks if a != "seed_search"]
        skipped["seed_search"] = (
            "no --state given: the seed search replays the release's mechanism, which only a ppdm release's "
            "state file states; give --state to run it" if state is None else
            "the release's state does not state a mechanism acting on the attacked columns")
    res = run_attacks_named(X, Y, t, attacks=attacks, random_state=seed, columns=cols, ids=ids,
                            progress=progress, categories=categories, mechanism=mechanism)
    return {
        "results": [x.to_dict() for x in res],
        "schema": "ppdm.attack/1",
        "threat": str(t),
        "threat_description": t.describe(int(X.shape[0]), int(Y.shape[1])),
        "n_rows": int(X.shape[0]),
        "columns": list(cols),
        "release_columns": list(rcols),
        "passed_through": [] if categories is None else categories[2],
        "skipped": skipped,
        "seed": seed,
        **({"sample": f"seeded sample of {len(r)} of {n_all} rows"} if len(r) < n_all else {}),
    }
