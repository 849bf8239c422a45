"""Reproductions of Alotaibi (2015), *Non-Metric MDS for Distance-Based PPDM*: PAV and NMDS.

* Table 3.5: PAV on d = [4, 3, 2, 1, 5, 3] (deterministic, exact).
* Sec. 3.3.5: the 5-record Iris example to p = 3 from random starts: the published run is random, so
  the checks are the spec's: final stress < 1e-3 and released distances in the rank order of Delta.
* Table 3.7: stress at p = n - 1 for Minkowski r = 1..5 is lowest at r = 2 (Euclidean), on the
  bundled Wine and BCW (random NMDS: the published values are shown, the ordering is checked).
"""

from __future__ import annotations

import warnings

import numpy as np

from ppdm import datasets
from ppdm.experiments.base import ReproductionReport, reference_json, reference_rows

__all__ = ["table_3_5", "sec_3_3_5", "table_3_7"]


def _zscore(X: np.ndarray) -> np.ndarray:
    """Thesis preprocessing: sample SD; constant columns become 0; missing cells become 0 afterwards."""
    mu = np.nanmean(X, axis=0)
    sd = np.nanstd(X, axis=0, ddof=1)
    sd = np.where(sd > 0, sd, 1.0)
    return np.nan_to_num((X - mu) / sd, nan=0.0)


def table_3_5() -> ReproductionReport:
    from ppdm.mds.pav import MonotoneFit, pav

    rep = ReproductionReport("alotaibi2015-table-3-5", "PAV monotone regression example (Table 3.5)")
    rows = reference_rows("alotaibi2015_table3_5.csv")
    d = np.array([float(r["d"]) for r in rows])
    rank = np.array([float(r["rank_delta"]) for r in rows])
    ours = pav(d)
    compiled = MonotoneFit(rank)(d)
    for r, a, b in zip(rows, ours, compiled, strict=True):
        rep.add(r["pair_ij"], "dhat_final", a, float(r["dhat_final"]), 1e-12)
        rep.add(r["pair_ij"], "dhat_final (compiled PAV)", b, float(r["dhat_final"]), 1e-12)
    return rep


def sec_3_3_5() -> ReproductionReport:
    from scipy.spatial.distance import pdist
    from scipy.stats import rankdata

    from ppdm.mechanisms.nmds import NonMetricMDS

    rep = ReproductionReport("alotaibi2015-sec-3-3-5", "NMDS worked example: 5 Iris records to p = 3 (Sec. 3.3.5)")
    ex = reference_json("alotaibi2015_sec3_3_5_nmds_example")
    Z = _zscore(np.asarray(ex["X"], float))
    err = float(np.abs(Z - np.asarray(ex["X_zscored_printed"])).max())
    rep.add("X'", "max |z-score - printed|", err, 0.0, 0.005)
    delta = pdist(Z)
    for seed in range(3):
        m = NonMetricMDS(3, n_init=3, random_state=seed, leak_check=False)
        Y = m.fit_transform(Z)
        rep.add(f"seed {seed}", "final stress-1", m.stress_, 0.0, 1e-3, "statistical",
                "published 8.12e-7 from one random start; checked < 1e-3")
        same = float(np.mean(rankdata(pdist(Y)) == rankdata(delta)))
        rep.add(f"seed {seed}", "share of pairs with the rank of Delta", same, 1.0, 0.0, "statistical")
    rep.notes.append("the classical start is exact here (rank-3 data), so every run falls back to random starts")
    return rep


def table_3_7() -> ReproductionReport:
    from ppdm.mechanisms.nmds import NonMetricMDS

    rep = ReproductionReport("alotaibi2015-table-3-7",
                             "NMDS stress at p = n - 1 for Minkowski r = 1..5: Euclidean lowest (Table 3.7)")
    published = {r["dataset"]: r for r in reference_rows("alotaibi2015_table3_7.csv")}
    data = {"Wine": datasets.load("wine"), "BCW": datasets.load("wbc", fill="none")}
    for name, df in data.items():
        Z = _zscore(df.drop(columns="class").to_numpy(float))
        p = Z.shape[1] - 1
        stress = []
        for r in (1, 2, 3, 4, 5):
            m = NonMetricMDS(p, dissimilarity="minkowski", minkowski_r=float(r), random_state=0, leak_check=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m.fit(Z)
            stress.append(m.stress_)
            rep.add(name, f"stress r={r}", m.stress_, float(published[name][f"stress_r{r}"]), None, "info",
                    "random NMDS; value shown, not checked")
        rep.add(name, "argmin r is 2 (1 = yes)", float(int(np.argmin(stress)) == 1), 1.0, 0.0, "statistical")
    rep.notes.append("BCW: 16 of 699 records miss a value (2.3 % > 2 %), so missing z-scores are set to 0")
    rep.notes.append("HRDigits and ImgSeg are not bundled, so their rows of Table 3.7 are not reproduced here")
    return rep
