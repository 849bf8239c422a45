"""Reproduction of Alotaibi (2015), Figs 4.13, 4.14 and 4.15: the distance-based known-points attack
(Algorithm 4.2) on NMDS releases of synthetic data, against the number of known points, the share of
outlying known points, and the attacker's up-scaling of the release.

Protocol (spec Sec. 3.3, experiment protocols 3-5), on N(0, 1) data (the thesis leaves the distribution
open):

* Fig. 4.13: K known records (K around m + 1, the resolving-set size of R^m) at a few released p;
* Fig. 4.14: m + 1 known records of which ceil(share * (m + 1)) are outliers: every attribute of those
  records is set to mean +- U(3, 4) SD (random sign) before the release, so the release holds them;
* Fig. 4.15: the p-column release is padded to m columns with zeros, N(0, 1) values, or N(0, 1) values
  scaled so that the mean pair distance of the padded release equals the mean original dissimilarity.

Two readings of the attack are measured (spec Sec. 3.3 "[AMBIGUOUS]"):

* ``original``: as :func:`ppdm.attacks.distance_attack` and the Fig. 4.12 sweep: the attacker knows the
  references' original records, reads the target's distances off the (padded) release and locates it in
  the original space; error ``||x - x^||`` and rho (eq. 4.21, variant A);
* ``release`` (Fig. 4.15 only): the attacker knows the references' released (padded) images and the
  target's original distances and locates it in the padded release; rho against the target's own padded
  image (variant B) and the literal ``||x - x^||`` against the original record (frames differ: NMDS
  coordinates are arbitrary up to rotation, so this is near the distance between unrelated records).

The thesis states its results as shapes in the text; each is a report cell of kind ``info``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.spatial.distance import pdist

from ppdm.exceptions import ParameterError
from ppdm.experiments.base import ReproductionReport, figure_png

__all__ = ["PADDINGS", "synthetic", "pad_release", "upscaling_sweep", "known_points_sweep", "outlier_sweep",
           "figs_4_13_4_14_4_15"]

PADDINGS = ("zero", "random", "avgdist")
OUTLIER_SHARES = (0.0, 0.01, 0.05, 0.10, 0.15)
_REFERENCE = Path(__file__).parent / "reference" / "alotaibi2015_upscaling_attack_stress.csv"


def synthetic(n: int = 1000, m: int = 100, seed: int = 0) -> np.ndarray:
    """The synthetic data of the thesis's Sec. 4.4.4: ``n`` x ``m`` N(0, 1) values."""
    if n < m + 2 or m < 2:
        raise ParameterError(f"synthetic data needs m >= 2 and n >= m + 2 rows (got {n} x {m})")
    return np.random.default_rng([seed, 413]).standard_normal((n, m))


def _release(X: np.ndarray, p: int, seed: int) -> np.ndarray:
    from ppdm.experiments.alotaibi2015_attacks import release_at_p as release

    return release("nmds", X, p, seed)


def _stress(X: np.ndarray, Y: np.ndarray) -> float:
    """Stress (4.3) over all pairs (a seeded sample above 2e6 pairs)."""
    from ppdm.metrics.mds_loss import distance_stress

    return distance_stress(X, Y)


def pad_release(Y: np.ndarray, m: int, padding: str, mean_dissimilarity: float,
                rng: np.random.Generator) -> np.ndarray:
    """Up-scale a p-column release to ``m`` columns (the attacker knows m; Sec. 4.4.4).

    ``'avgdist'`` scales N(0, 1) padding by the c that makes the mean pair distance of ``[Y, c P]`` equal
    ``mean_dissimilarity`` (c = 0 if the release alone already reaches it).
    """
    from scipy.optimize import brentq

    if padding not in PADDINGS:
        raise ParameterError(f"padding must be one of {', '.join(PADDINGS)} (got {padding})")
    n, p = Y.shape
    if p >= m:
        return Y
    if padding == "zero":
        return np.hstack([Y, np.zeros((n, m - p))])
    P = rng.standard_normal((n, m - p))
    if padding == "avgdist":
        dy2, dp2 = pdist(Y, "sqeuclidean"), pdist(P, "sqeuclidean")

        def gap(c: float) -> float:
            return float(np.sqrt(dy2 + c * c * dp2).mean() - mean_dissimilarity)

        hi = 1.0
        while gap(hi) < 0:  # mean distance grows without bound in c
            hi *= 2
        P = P * (brentq(gap, 0.0, hi, xtol=1e-10) if gap(0.0) < 0 else 0.0)
    return np.hstack([Y, P])


def _attack(X: np.ndarray, Y: np.ndarray, known: np.ndarray, targets: np.ndarray, *, space: str,
            seed: int) -> tuple[float, float]:
    """Mean rho and median ``||x - x^||`` over ``targets`` (see the module docstring for ``space``)."""
    from ppdm.attacks import distance_attack

    sub = np.sort(np.concatenate([known, targets]))
    pos = np.searchsorted(sub, known)
    rng = np.random.default_rng(seed)
    if space == "original":
        X_hat, rows, det = distance_attack(X[sub], Y[sub], pos, rng, stall=None)
    else:
        # roles swapped: references and estimates in the release, distances from the original records
        X_hat, rows, det = distance_attack(Y[sub], X[sub], pos, rng, stall=None)
    err = np.linalg.norm(X_hat[rows] - X[sub][rows], axis=1)
    return float(det["rho"]), float(np.median(err))


def _draw(n: int, k: int, n_targets: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    known = rng.choice(n, k, replace=False)
    rest = np.setdiff1d(np.arange(n), known)
    return known, np.sort(rng.choice(rest, min(n_targets, len(rest)), replace=False))


def upscaling_sweep(X: np.ndarray, p_values: Iterable[int], *, trials: int = 5, seed: int = 0,
                    n_targets: int = 100) -> pd.DataFrame:
    """Fig. 4.15: one row per (p, padding, space, trial): stress, rho and median error.

    The NMDS release is computed once per p; each trial draws new known points, targets and padding.
    """
    n, m = X.shape
    mean_d = float(pdist(X).mean())
    rows: list[dict[str, Any]] = []
    for p in p_values:
        Y = _release(X, int(p), seed)
        stress = _stress(X, Y)
        for t in range(trials):
            rng = np.random.default_rng([seed, int(p), t])
            known, targets = _draw(n, m + 1, n_targets, rng)
            for padding in PADDINGS:
                Yp = pad_release(Y, m, padding, mean_d, np.random.default_rng([seed, int(p), t, 1]))
                for space in ("original", "release"):
                    rho, err = _attack(X, Yp, known, targets, space=space, seed=seed + t)
                    rows.append({"figure": "4.15", "p": int(p), "padding": padding, "space": space, "trial": t,
                                 "stress": stress, "rho": rho, "error_median": err})
    return pd.DataFrame(rows)


def known_points_sweep(X: np.ndarray, p_values: Iterable[int], k_values: Iterable[int], *, trials: int = 5,
                       seed: int = 0, n_targets: int = 100) -> pd.DataFrame:
    """Fig. 4.13: one row per (p, K, trial): rho and median error of the attack with K known points."""
    n, m = X.shape
    ks = [int(k) for k in k_values]
    if min(ks) < 2 or max(ks) > n - 1:
        raise ParameterError(f"the number of known points must be in 2 .. {n - 1} (got {ks})")
    rows: list[dict[str, Any]] = []
    for p in p_values:
        Y = _release(X, int(p), seed)
        for t in range(trials):
            for k in ks:
                known, targets = _draw(n, k, n_targets, np.random.default_rng([seed, int(p), t, k]))
                rho, err = _attack(X, Y, known, targets, space="original", seed=seed + t)
                rows.append({"figure": "4.13", "p": int(p), "k": k, "trial": t, "rho": rho, "error_median": err})
    return pd.DataFrame(rows)


def make_outliers(X: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Copy of ``X`` with every attribute of ``rows`` at mean +- U(3, 4) SD (random sign): > 3 SD out."""
    Z = X.copy()
    mu, sd = X.mean(axis=0), X.std(axis=0, ddof=1)
    shift = rng.uniform(3.0, 4.0, (len(rows), X.shape[1])) * rng.choice([-1.0, 1.0], (len(rows), X.shape[1]))
    Z[rows] = mu + shift * sd
    return Z


def outlier_sweep(X: np.ndarray, p: int, shares: Sequence[float] = OUTLIER_SHARES, *, trials: int = 5,
                  seed: int = 0, n_targets: int = 100) -> pd.DataFrame:
    """Fig. 4.14: one row per (share, trial): m + 1 known points, ceil(share * (m + 1)) of them outliers.

    The outliers are made in the data before the release (they are records of the data set), so each
    (share, trial) has its own NMDS release. Within a trial the known points and targets are the same for
    every share and the outliers are nested (the paired comparison isolates the share).
    """
    n, m = X.shape
    rows: list[dict[str, Any]] = []
    for t in range(trials):
        rng = np.random.default_rng([seed, int(p), t, 14])
        known, targets = _draw(n, m + 1, n_targets, rng)
        shift_rng_seed = int(rng.integers(2**31))
        for share in shares:
            k_out = math.ceil(share * (m + 1) - 1e-9)
            Z = make_outliers(X, known[:k_out], np.random.default_rng(shift_rng_seed)) if k_out else X
            Y = _release(Z, int(p), seed)
            rho, err = _attack(Z, Y, known, targets, space="original", seed=seed + t)
            rows.append({"figure": "4.14", "p": int(p), "share": float(share), "n_outliers": k_out, "trial": t,
                         "rho": rho, "error_median": err})
    return pd.DataFrame(rows)


def _median_by(raw: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return raw.groupby(keys, sort=True)[["rho", "error_median"]].median().reset_index()


def plot_figures(up: pd.DataFrame, kp: pd.DataFrame, out: pd.DataFrame) -> bytes:
    """PNG with the three panels: Fig. 4.13 (error vs K), 4.14 (error vs outlier share), 4.15 (rho vs p)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for p, d in _median_by(kp, ["p", "k"]).groupby("p"):
        axes[0].plot(d["k"], d["error_median"], "o-", label=f"p = {p}")
    axes[0].set(xlabel="known points K", ylabel="median ||x - x^||", title="Fig. 4.13")
    d = _median_by(out, ["share"])
    axes[1].plot(100 * d["share"], d["error_median"], "o-")
    axes[1].set(xlabel="outlying known points (%)", ylabel="median ||x - x^||", title="Fig. 4.14")
    u = _median_by(up[up["space"] == "original"], ["p", "padding"])
    for pad, d in u.groupby("padding"):
        axes[2].plot(d["p"], d["rho"], "o-", label=pad)
    axes[2].set(xlabel="p", ylabel="median rho", title="Fig. 4.15 (attack in the original space)")
    for ax in (axes[0], axes[2]):
        ax.legend(fontsize=7)
    fig.tight_layout()
    return figure_png(fig)


def shape_claims(up: pd.DataFrame, kp: pd.DataFrame, out: pd.DataFrame) -> dict[str, float]:
    """The thesis's stated shapes, measured on medians over trials (1.0 = holds, else a share)."""
    u = _median_by(up, ["space", "p", "padding"]).pivot(index=["space", "p"], columns="padding", values="rho")
    o, r = u.loc["original"], u.loc["release"]
    k = _median_by(kp, ["p", "k"]).pivot(index="k", columns="p", values="error_median")
    s = _median_by(out, ["share"]).set_index("share")["error_median"]
    return {
        # Fig. 4.15: zero padding: privacy rises with p
        "zero_rho_rises_with_p_original": float(o["zero"].iloc[-1] > o["zero"].iloc[0]),
        "zero_rho_rises_with_p_release": float(r["zero"].iloc[-1] > r["zero"].iloc[0]),
        # random padding adds distortion: more privacy than zero padding
        "random_above_zero_share_original": float((o["random"] > o["zero"]).mean()),
        "random_above_zero_share_release": float((r["random"] > r["zero"]).mean()),
        # average-distance padding gives the lowest privacy
        "avgdist_lowest_share_original": float((o.idxmin(axis=1) == "avgdist").mean()),
        "avgdist_lowest_share_release": float((r.idxmin(axis=1) == "avgdist").mean()),
        # Fig. 4.13: more references -> smaller error; higher p -> larger error
        "error_falls_with_k_share": float((np.diff(k.to_numpy(), axis=0) < 0).mean()),
        "error_rises_with_p_share": float((np.diff(k.to_numpy(), axis=1) > 0).mean()),
        # Fig. 4.14: more outliers -> larger error
        "error_rises_with_outliers_share": float((np.diff(s.to_numpy()) > 0).mean()),
        "error_max_over_min_outliers": float(s.iloc[-1] / s.iloc[0]),
    }


def run_all(n: int = 1000, m: int = 100, *, trials: int = 5, seed: int = 0,
            n_targets: int = 100) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The three sweeps on ``n`` x ``m`` synthetic data; p and K grids scale with m as in the thesis (m = 100)."""
    X = synthetic(n, m, seed)
    p_up = sorted({max(1, min(m - 1, round(f * m))) for f in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)})
    p_kp = sorted({max(1, round(f * m)) for f in (0.25, 0.5, 0.9)})
    k_vals = sorted({max(2, round(f * (m + 1))) for f in (0.5, 1.0, 1.5, 2.0)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NMDS convergence notes; the attack error is the result
        up = upscaling_sweep(X, p_up, trials=trials, seed=seed, n_targets=n_targets)
        kp = known_points_sweep(X, p_kp, k_vals, trials=trials, seed=seed, n_targets=n_targets)
        out = outlier_sweep(X, max(1, round(0.5 * m)), trials=trials, seed=seed, n_targets=n_targets)
    return up, kp, out


#: targets attacked per trial by the registered reproduction: each attack in R^100 is ~30 Gauss-Newton steps
#: over (targets x 101 x 100) Jacobians, and the three figures need ~385 attacks
REPRODUCTION_TARGETS = 40


def figs_4_13_4_14_4_15(trials: int = 5) -> ReproductionReport:
    """Figs 4.13-4.15 on 1000 x 100 synthetic data, as the thesis."""
    if trials < 1:
        raise ParameterError(f"trials must be at least 1 (got {trials})")
    n, m = 1000, 100
    up, kp, out = run_all(n, m, trials=trials, n_targets=REPRODUCTION_TARGETS)
    rep = ReproductionReport("alotaibi2015-figs-4-13-4-14-4-15",
                             "distance attack: known points, outliers, attacker up-scaling (Figs 4.13-4.15)")
    c = shape_claims(up, kp, out)
    notes = {
        "zero_rho_rises_with_p_original": "thesis: zero padding, privacy rises with p",
        "zero_rho_rises_with_p_release": "thesis: zero padding, privacy rises with p",
        "random_above_zero_share_original": "thesis: random padding adds distortion",
        "random_above_zero_share_release": "thesis: random padding adds distortion",
        "avgdist_lowest_share_original": "thesis: average-distance padding gives the lowest privacy",
        "avgdist_lowest_share_release": "thesis: average-distance padding gives the lowest privacy",
        "error_falls_with_k_share": "thesis: more known points, smaller error",
        "error_rises_with_p_share": "thesis: higher p, larger error",
        "error_rises_with_outliers_share": "thesis: more outliers, larger error",
        "error_max_over_min_outliers": "median error at 15 % outliers / at none",
    }
    for key, value in c.items():
        rep.add("synthetic", key, value, None if key.startswith("error_max") else 1.0, None, "info", notes[key])
    ref = pd.read_csv(_REFERENCE)
    st = up.groupby("p")["stress"].first()
    for p, s in st.items():
        thesis_p = round(100 * p / m)
        hit = ref[ref["p"] == thesis_p]
        rep.add("synthetic", f"NMDS stress at p = {p} (thesis p = {thesis_p})", s,
                float(hit["nmds_stress"].iloc[0]) if len(hit) else None, None, "info",
                "thesis: 1000 x 100, one run, distribution unknown")
    rep.notes.append(f"{n} x {m} N(0, 1) synthetic data (the thesis does not give the distribution); "
                     f"{trials} trials; {REPRODUCTION_TARGETS} targets a trial (every cell is shown, not checked: "
                     "fewer targets keep the run to minutes at the cost of noisier medians); medians over trials")
    rep.notes.append("Slow by nature: about 30 NMDS releases of the 1000 x 100 set and about 385 Gauss-Newton "
                     "attacks in R^100.")
    rep.tables["alotaibi2015_fig_4_15.csv"] = up
    rep.tables["alotaibi2015_fig_4_13.csv"] = kp
    rep.tables["alotaibi2015_fig_4_14.csv"] = out
    rep.figures["alotaibi2015_figs_4_13_4_14_4_15.png"] = plot_figures(up, kp, out)
    return rep
