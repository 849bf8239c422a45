"""Reproduction of Alotaibi (2015), Figs 5.1-5.3 and Tables 5.3 / 5.4: clustering utility of the RP, PCA,
SVD, NMDS and DCT releases measured by the variation of information (VI, eq. 5.8, bits).

Protocol (thesis Sec. 5.2.3):

* Figs 5.1-5.3: z-scored X released at every p = 1 .. n - 1; VI between the clustering of X and that of
  the release, for k-means (initial centroids the class means, computed on each table: deterministic),
  single-linkage hierarchical clustering cut at k and DBSCAN (MinPts 4, eps at the knee of the sorted
  4th-neighbour distances; noise is one extra label); k = the number of classes. Releases are clustered as
  released (no second scaling).
* Tables 5.3 / 5.4: p = n - 1, 30 trials of k-means. The thesis does not say what varies between its
  trials (its k-means start is deterministic); here each trial starts from k records drawn at random, the
  same records for X and every release, so the trials are paired. Table 5.3: paired t-test of
  VI(k-means on X, classes) against VI(k-means on Y, classes); Table 5.4: of VI on the NMDS release
  against VI on each other release.

The printed p-values come from the thesis's unstated trial design, so they are shown (``info``) and the
decision each prints (significant at 0.05 or not) is the checked claim, with the measured p-value in the
note. The figures print no numbers; the text's claims about them are checked on each data set.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError
from ppdm.experiments.base import ReproductionReport, figure_png, reference_rows

__all__ = ["METHODS", "ALGORITHMS", "vi_sweep", "kmeans_trials", "figs_5_1_5_3_tables_5_3_5_4", "k_clusters",
           "table_5_5"]

METHODS = ("rp", "pca", "svd", "nmds", "dct")
ALGORITHMS = ("kmeans", "single", "dbscan")
_FIG = {"kmeans": "5.1", "single": "5.2", "dbscan": "5.3"}
TRIALS = 30


def _labels(A: np.ndarray, y: np.ndarray, algorithm: str) -> np.ndarray:
    from ppdm.metrics.utility_suite import cluster_labels

    name = {"kmeans": "kmeans_classmean", "single": "single", "dbscan": "dbscan"}[algorithm]
    return cluster_labels(A, y, name, standardise=False)


def vi_sweep(Z: np.ndarray, y: np.ndarray, *, seed: int = 0) -> pd.DataFrame:
    """VI(clustering of X, clustering of the release) for every method, algorithm and p = 1 .. n - 1."""
    from ppdm.experiments.alotaibi2015_attacks import release_at_p
    from ppdm.metrics.utility_suite import variation_of_information

    base = {a: _labels(Z, y, a) for a in ALGORITHMS}
    rows: list[dict[str, Any]] = []
    for p in range(1, Z.shape[1]):
        for k in METHODS:
            Y = release_at_p(k, Z, p, seed)
            for a in ALGORITHMS:
                rows.append({"method": k, "p": p, "algorithm": a,
                             "vi": variation_of_information(base[a], _labels(Y, y, a))})
    return pd.DataFrame(rows)


def kmeans_trials(Z: np.ndarray, y: np.ndarray, *, trials: int = TRIALS, seed: int = 0, p: int | None = None
                  ) -> dict[str, np.ndarray]:
    """VI against the classes of k-means from ``trials`` random starts (the same records for every table)."""
    from ppdm.experiments.alotaibi2015_attacks import release_at_p
    from ppdm.metrics.utility import lloyd_kmeans
    from ppdm.metrics.utility_suite import variation_of_information

    K = len(np.unique(y))
    p = Z.shape[1] - 1 if p is None else p
    tables = {"x": Z} | {k: release_at_p(k, Z, p, seed) for k in METHODS}
    rng = np.random.default_rng(seed)
    starts = [rng.choice(Z.shape[0], K, replace=False) for _ in range(trials)]
    return {k: np.array([variation_of_information(y, lloyd_kmeans(A, A[s])[0]) for s in starts])
            for k, A in tables.items()}


def _paired_p(a: np.ndarray, b: np.ndarray) -> float:
    from scipy import stats

    if np.allclose(a, b):
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.ttest_rel(a, b).pvalue)


def _claim(rep: ReproductionReport, row: str, claim: str, holds: bool, measured: str) -> None:
    rep.add(row, claim, float(holds), 1.0, 0.0, "statistical", measured)


def _figure_cells(rep: ReproductionReport, name: str, sw: pd.DataFrame) -> None:
    for a in ALGORITHMS:
        v = sw[sw["algorithm"] == a].pivot(index="p", columns="method", values="vi")[list(METHODS)]
        row = f"{name}, Fig. {_FIG[a]} ({a})"
        means = v.mean()
        nums = ", ".join(f"{k} {means[k]:.3f}" for k in METHODS)
        _claim(rep, row, "DCT's mean VI over p is the highest", means["dct"] >= means.max() - 1e-12,
               "mean VI " + nums)
        _claim(rep, row, "PCA or NMDS has the lowest mean VI over p",
               min(means["pca"], means["nmds"]) <= means.min() + 1e-12, "mean VI " + nums)
        _claim(rep, row, "RP and SVD above PCA and NMDS (mean VI over p)",
               min(means["rp"], means["svd"]) > max(means["pca"], means["nmds"]), "mean VI " + nums)
        if len(v) > 1:
            ok = [k for k in ("pca", "svd", "nmds") if v[k].iloc[-1] <= v[k].iloc[0]]
            _claim(rep, row, "VI at p = n - 1 no higher than at p = 1 (PCA, SVD, NMDS)", len(ok) == 3,
                   ", ".join(f"{k} {v[k].iloc[0]:.3f} -> {v[k].iloc[-1]:.3f}" for k in ("pca", "svd", "nmds")))
    if name == "Wine":
        v = sw[(sw["algorithm"] == "kmeans") & (sw["method"] == "nmds") & (sw["p"] >= 5)]
        rep.add("Wine, Fig. 5.1 text", "largest NMDS k-means VI for p = 5..12 (text: below 0.08)",
                float(v["vi"].max()), 0.04, 0.04, "statistical", "checked as VI in [0, 0.08]")


def _table_cells(rep: ReproductionReport, name: str, vi: dict[str, np.ndarray]) -> None:
    t3 = {r["dataset"]: r for r in reference_rows("alotaibi2015_table5_3.csv")}[name]
    t4 = {r["dataset"]: r for r in reference_rows("alotaibi2015_table5_4.csv")}[name]
    for k in METHODS:
        p = _paired_p(vi["x"], vi[k])
        pub = float(t3[k])
        rep.add(f"{name}, Table 5.3", f"{k.upper()} p-value", p, pub, None, "info")
        _claim(rep, f"{name}, Table 5.3", f"{k.upper()}: {'significant' if pub < 0.05 else 'not significant'} "
               "at 0.05, as printed", (p < 0.05) == (pub < 0.05),
               f"p = {p:.4f}; mean VI X {vi['x'].mean():.3f}, {k} {vi[k].mean():.3f}")
    for k in ("rp", "pca", "svd", "dct"):
        p = _paired_p(vi["nmds"], vi[k])
        pub = float(t4[k])
        rep.add(f"{name}, Table 5.4", f"NMDS vs {k.upper()} p-value", p, pub, None, "info")
        if pub < 0.05:
            holds = p < 0.05 and vi["nmds"].mean() < vi[k].mean()
            claim = f"NMDS significantly better than {k.upper()}"
        else:
            holds = p >= 0.05
            claim = f"NMDS not significantly different from {k.upper()}"
        _claim(rep, f"{name}, Table 5.4", claim, holds,
               f"p = {p:.4f}; mean VI nmds {vi['nmds'].mean():.3f}, {k} {vi[k].mean():.3f}")


def plot_figs(sweeps: dict[str, pd.DataFrame]) -> bytes:
    """PNG: one row per data set, one column per clustering algorithm (Figs 5.1-5.3), VI against p."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(sweeps)
    fig, axes = plt.subplots(len(names), 3, figsize=(11, 2.8 * len(names)), squeeze=False)
    for i, name in enumerate(names):
        for j, a in enumerate(ALGORITHMS):
            ax = axes[i][j]
            d = sweeps[name][sweeps[name]["algorithm"] == a]
            for k in METHODS:
                dk = d[d["method"] == k].sort_values("p")
                ax.plot(dk["p"], dk["vi"], marker="o", ms=3, label=k.upper())
            ax.set_title(f"{name}: Fig. {_FIG[a]} ({a})", fontsize=9)
            ax.set_xlabel("p")
            ax.set_ylabel("VI (bits)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return figure_png(fig)


#: Figs 5.1-5.3 / Tables 5.3-5.4 cells found not to hold when the reproduction was measured (bundled sets)
FIGS_5_1_5_3_FINDINGS: dict[tuple[str, str], str] = dict.fromkeys((
    ('Iris, Fig. 5.1 (kmeans)', "DCT's mean VI over p is the highest"),
    ('Iris, Fig. 5.2 (single)', "DCT's mean VI over p is the highest"),
    ('Iris, Fig. 5.2 (single)', 'RP and SVD above PCA and NMDS (mean VI over p)'),
    ('Iris, Table 5.3', 'RP: not significant at 0.05, as printed'),
    ('Iris, Table 5.3', 'PCA: significant at 0.05, as printed'),
    ('Iris, Table 5.4', 'NMDS significantly better than PCA'),
    ('Iris, Table 5.4', 'NMDS significantly better than DCT'),
    ('Wine, Fig. 5.1 (kmeans)', "DCT's mean VI over p is the highest"),
    ('Wine, Fig. 5.1 (kmeans)', 'RP and SVD above PCA and NMDS (mean VI over p)'),
    ('Wine, Fig. 5.2 (single)', "DCT's mean VI over p is the highest"),
    ('Wine, Fig. 5.3 (dbscan)', "DCT's mean VI over p is the highest"),
    ('Wine, Fig. 5.1 text', 'largest NMDS k-means VI for p = 5..12 (text: below 0.08)'),
    ('Wine, Table 5.3', 'SVD: significant at 0.05, as printed'),
    ('Wine, Table 5.3', 'DCT: significant at 0.05, as printed'),
    ('Wine, Table 5.4', 'NMDS significantly better than RP'),
    ('Wine, Table 5.4', 'NMDS significantly better than PCA'),
    ('Wine, Table 5.4', 'NMDS significantly better than SVD'),
    ('Wine, Table 5.4', 'NMDS significantly better than DCT'),
    ('BCW, Fig. 5.1 (kmeans)', "DCT's mean VI over p is the highest"),
    ('BCW, Fig. 5.1 (kmeans)', 'RP and SVD above PCA and NMDS (mean VI over p)'),
    ('BCW, Fig. 5.2 (single)', "DCT's mean VI over p is the highest"),
    ('BCW, Fig. 5.2 (single)', 'PCA or NMDS has the lowest mean VI over p'),
    ('BCW, Fig. 5.2 (single)', 'RP and SVD above PCA and NMDS (mean VI over p)'),
    ('BCW, Fig. 5.3 (dbscan)', 'RP and SVD above PCA and NMDS (mean VI over p)'),
    ('BCW, Table 5.3', 'NMDS: not significant at 0.05, as printed'),
    ('BCW, Table 5.4', 'NMDS significantly better than RP'),
    ('BCW, Table 5.4', 'NMDS significantly better than PCA'),
    ('BCW, Table 5.4', 'NMDS significantly better than SVD'),
    ('BCW, Table 5.4', 'NMDS significantly better than DCT'),
), "does not come out on these data (the measured value is in the cell's note and the tables --out writes)")


#: thesis sets small enough for the all-p sweep, read from a data directory when there
_SMALL_SETS = (("Pima Diabetes", "pima"), ("Ecoli", "ecoli"), ("Credit Approval", "credit"), ("Hepatitis", "hepatitis"))


def figs_5_1_5_3_tables_5_3_5_4(data_dir: str | Path | None = None) -> ReproductionReport:
    """The VI sweeps and t-tests on Iris, Wine and BCW, plus the small thesis sets found in ``data_dir``.

    Small: at most 768 records and 19 attributes (Pima Diabetes, Ecoli, Credit Approval, Hepatitis), for which
    an NMDS release at every p takes minutes; the others are left out.
    """
    from ppdm.experiments.alotaibi2015_structure import load_labelled
    from ppdm.experiments.alotaibi2015_sweeps import available, data_notes

    sets = [("Iris", "iris"), ("Wine", "wine"), ("BCW", "wbc")]
    if data_dir is not None:
        if not Path(data_dir).is_dir():
            raise InputError(f"data directory '{data_dir}' does not exist")
        sets += [(n, s) for n, s in _SMALL_SETS if available(s, data_dir)]
    rep = ReproductionReport("alotaibi2015-figs-5-1-5-3-tables-5-3-5-4",
                             "clustering VI against p and paired t-tests at p = n - 1 (Figs 5.1-5.3, Tables 5.3-5.4)")
    rep.findings.update(FIGS_5_1_5_3_FINDINGS)
    sweeps: dict[str, pd.DataFrame] = {}
    trial_rows = []
    for name, stem in sets:
        Z, y = load_labelled(stem, data_dir, max_rows=None)
        sweeps[name] = vi_sweep(Z, y)
        _figure_cells(rep, name, sweeps[name])
        vi = kmeans_trials(Z, y)
        _table_cells(rep, name, vi)
        trial_rows += [{"dataset": name, "table": k, "trial": t, "vi": float(v)} for k, a in vi.items()
                       for t, v in enumerate(a)]
    rep.tables["figs_5_1_5_3_vi.csv"] = pd.concat([s.assign(dataset=n) for n, s in sweeps.items()], ignore_index=True)
    rep.tables["tables_5_3_5_4_trials.csv"] = pd.DataFrame(trial_rows)
    rep.figures["figs_5_1_5_3.png"] = plot_figs(sweeps)
    rep.notes.append("from a data directory: Pima Diabetes, Ecoli, Credit Approval and Hepatitis; the larger sets "
                     "(Multiple Features, Page Blocks, Yeast, SCC, Image Segmentation, Spambase, Satlog, Handwritten "
                     "Digits) are too large for an NMDS release at every p in minutes and are left out")
    rep.notes += data_notes([s for _, s in sets], data_dir)
    rep.notes.append("trials: k-means from k random records (seeded, the same for X and every release); the thesis "
                     "does not say what varies between its 30 trials")
    return rep


def k_clusters(k: int, *, m: int = 1000, n: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``m`` records in ``n`` dimensions from ``k`` unit-variance Gaussian clusters with centres uniform in
    [-5, 5]^n (the thesis does not give its generator), z-scored."""
    from ppdm.metrics.utility_suite import zscore

    rng = np.random.default_rng([seed, k])
    y = np.arange(m) % k
    X = rng.uniform(-5.0, 5.0, (k, n))[y] + rng.standard_normal((m, n))
    return zscore(X), y


#: Table 5.5 decisions found not to hold when the reproduction was measured (100 starts a k)
TABLE_5_5_FINDINGS: dict[tuple[str, str], str] = dict.fromkeys(
    ((row, "NMDS significantly better (p < 0.05, lower mean VI)")
     for row in ("PCA, k = 3", "SVD, k = 3", "PCA, k = 4", "DCT, k = 7")),
    "NMDS's k-means VI is not significantly lower here (the p-value and the means are in the note)")


def table_5_5(trials: int = 100) -> ReproductionReport:
    """NMDS against each other release, paired t-test of k-means VI over ``trials`` starts, k = 3..10 clusters."""
    rep = ReproductionReport("alotaibi2015-table-5-5",
                             "paired t-tests of k-means VI, NMDS against the others, k = 3..10 clusters (Table 5.5)")
    rep.findings.update(TABLE_5_5_FINDINGS)
    pub = {r["method"].lower(): r for r in reference_rows("alotaibi2015_table5_5.csv")}
    rows = []
    for k in range(3, 11):
        Z, y = k_clusters(k)
        vi = kmeans_trials(Z, y, trials=trials, p=2)
        rows += [{"k": k, "table": t, "trial": i, "vi": float(v)} for t, a in vi.items() for i, v in enumerate(a)]
        for meth in ("rp", "pca", "svd", "dct"):
            p = _paired_p(vi["nmds"], vi[meth])
            rep.add(f"{meth.upper()}", f"k = {k} p-value", p, float(pub[meth][f"k{k}"]), None, "info")
            _claim(rep, f"{meth.upper()}, k = {k}", "NMDS significantly better (p < 0.05, lower mean VI)",
                   p < 0.05 and vi["nmds"].mean() < vi[meth].mean(),
                   f"p = {p:.4f}; mean VI nmds {vi['nmds'].mean():.3f}, {meth} {vi[meth].mean():.3f}")
    rep.tables["table_5_5_trials.csv"] = pd.DataFrame(rows)
    rep.notes.append(f"synthetic sets: 1000 records in 3-D, k Gaussian clusters (unit variance, centres uniform in "
                     f"[-5, 5]^3), z-scored, released to p = 2; {trials} k-means starts from k random records, the "
                     "same for every release")
    return rep
