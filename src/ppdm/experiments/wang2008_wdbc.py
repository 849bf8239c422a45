"""Reproductions of Wang (2008) Sec. 3.3 on WDBC: Tables 3.2, 3.3, 3.5 (with Figs 3.6-3.9) and 3.6 / 6.2.

Protocols as in :mod:`ppdm.experiments.wang2008`: distortion on the raw matrix; K-means on the per-matrix
range-normalised release from its first two rows with the better label matching; the noise and projection
sweeps of Appendices B-G (100 grid points each, one seeded draw per point). SVMlight's C and fold assignment
are not reported, so SVM accuracies (scikit-learn SVC, RBF, gamma = 1, C = 1, contiguous 10 folds) are shown
and only their coarse shape (near the original or near chance) is checked.

Table 3.2 is a deterministic summary of the thin-SVD sweep (Appendix A, k = 1..29). Tables 3.3 and 3.5 are
statistics of one published 100-draw sweep; they are compared with the mean over seeded sweeps at a tolerance
of 4 seed-to-seed SDs plus a slack (as for Table 3.7). Table 3.6 (= Table 6.2 for five of its rows) prints one
draw per method; the random rows are compared with the mean over seeded draws in the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ppdm.experiments.base import ReproductionReport, figure_png, reference_rows
from ppdm.experiments.wang2008 import EXACT, RP_TOL, SWEEP_GRIDS, appendix_a_rows, load_xy, svm_wdbc
from ppdm.metrics import (
    corr_maintain,
    corr_val,
    dist_maintain,
    dist_val,
    kmeans_accuracy,
    sweep_stats,
    value_metrics,
)

__all__ = ["sweep_rows", "tables_3_2_3_3_3_5", "tables_3_6_6_2", "TABLES_3_3_3_5_FINDINGS", "TABLES_3_6_6_2_FINDINGS"]

_COLLAPSE = ("the printed minimum 33.74 is one draw's collapse of K-means; none of 4 x 100 seeded draws collapses, "
             "so the minimum (and Max.rel.err, computed from it) comes out near 50 %")
_BELOW_50 = ("the printed minimum is below 50 %, which K-means accuracy with the better of the two label "
             "matchings cannot be (the dissertation's rule): the print cannot come from the stated protocol")
#: Tables 3.3 / 3.5 cells found not to agree with the print (4 seeds x 100 draws)
TABLES_3_3_3_5_FINDINGS: dict[tuple[str, str], str] = {
    ("3.3 uniform K-means", "min"): _COLLAPSE, ("3.3 uniform K-means", "Max.rel.err %"): _COLLAPSE,
    ("3.5 rpA K-means", "min"): _BELOW_50, ("3.5 rpA K-means", "Max.rel.err %"): _BELOW_50,
    ("3.5 rpoA K-means", "min"): _BELOW_50, ("3.5 rpoA K-means", "Max.rel.err %"): _BELOW_50,
}
_NOISE_CM = ("the noise appendices' CorrMaintain follows neither the written definition nor the legacy one "
             "(see Table 3.7): the printed draw is not reproducible")
#: Table 3.6 cells found not to agree with the print (8 seeded draws per row)
TABLES_3_6_6_2_FINDINGS: dict[tuple[str, str], str] = {
    ("uniformNoise", "corrmaintain_pct"): _NOISE_CM, ("normalNoise", "corrmaintain_pct"): _NOISE_CM,
    ("Arpo", "corrval"): "printed 1.2769 for one draw at sigma_r 5.8627; 8 seeded draws give 1.385 with a spread "
                         "that does not reach the print",
}

_ORIG_KM, _ORIG_SVM = 92.79, 96.49  # rounded originals used by Max.rel.err (spec Sec. 6.2)
_SVM_EVERY = 10  # SVM on every 10th draw: "10 samples per random-projection method"


def sweep_rows(method: str, seed: int, A: np.ndarray, y: np.ndarray, svm: bool = True) -> pd.DataFrame:
    """One 100-draw sweep of a random baseline on WDBC: parameter, RE, K-means and (every 10th draw) SVM."""
    make, grid = SWEEP_GRIDS[method]
    ss = np.random.SeedSequence([seed, 7, list(SWEEP_GRIDS).index(method)])
    rows = []
    for i, (param, child) in enumerate(zip(grid, ss.spawn(len(grid)), strict=True)):
        B = make(float(param), int(child.generate_state(1)[0])).fit_transform(A)  # type: ignore[attr-defined]
        r: dict[str, Any] = {"method": method, "seed": seed, "param": float(param), "re": value_metrics(A, B)["re"],
                             "kmeans_pct": kmeans_accuracy(B, y), "svm_pct": np.nan}
        if svm and i % _SVM_EVERY == 0:
            r["svm_pct"] = svm_wdbc(B, y)
        rows.append(r)
    return pd.DataFrame(rows)


_REL = {"mean": 0.02, "std": 0.2, "max": 0.05, "min": 0.05}
_STAT_FLOOR = {"RE": 1e-3, "Kmeans_pct": 0.5}


def _stat_tol(vals: np.ndarray, target: float, metric: str, stat: str) -> float:
    """4 seed-to-seed SDs of the statistic, plus a relative slack (larger for the spread) and a floor.

    The published statistic is itself one sweep, so it varies about as much as ours do between seeds.
    """
    sd = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
    return 4 * sd + _REL[stat] * abs(target) + _STAT_FLOOR[metric]


def _stat_cells(rep: ReproductionReport, tag: str, metric: str, per_seed: list[dict[str, Any]],
                pub: dict[str, str], stats: tuple[str, ...] = ("mean", "std", "max", "min")) -> None:
    for s in stats:
        if not pub.get(s):
            continue
        vals = np.array([ps[s] for ps in per_seed], dtype=float)
        target = float(pub[s])
        rep.add(tag, s, float(vals.mean()), target, _stat_tol(vals, target, metric, s), "statistical")


def _plot(sweeps: pd.DataFrame) -> dict[str, bytes]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = {}
    specs = {
        "3_6": (("uniformNoise", "normalNoise"), "re", "RE", "noise parameter (a of U[0,a]; sigma)",
                "Fig. 3.6: RE against the noise magnitude (WDBC)"),
        "3_7": (("uniformNoise", "normalNoise"), "kmeans_pct", "K-means accuracy %",
                "noise parameter (a of U[0,a]; sigma)", "Fig. 3.7: K-means accuracy against the noise (WDBC)"),
        "3_8": (("Arp", "Arpo", "rpA", "rpoA"), "re", "RE (log scale)", "sigma_r",
                "Fig. 3.8: RE against sigma_r, random projections (WDBC)"),
        "3_9": (("Arp", "Arpo", "rpA", "rpoA"), "kmeans_pct", "K-means accuracy %", "sigma_r",
                "Fig. 3.9: K-means accuracy against sigma_r (WDBC)"),
    }
    for key, (methods, col, ylabel, xlabel, title) in specs.items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for m in methods:
            d = sweeps[(sweeps["method"] == m) & (sweeps["seed"] == 0)]
            ax.plot(d["param"], d[col], ".-", lw=0.8, label=m)
        if key == "3_8":
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        out[f"wang2008_fig_{key}.png"] = figure_png(fig)
    return out


def tables_3_2_3_3_3_5(n_seeds: int = 4) -> ReproductionReport:
    """Tables 3.2, 3.3 and 3.5 with the claims of Figs 3.6-3.9."""
    rep = ReproductionReport("wang2008-tables-3-2-3-3-3-5",
                             "mining-accuracy statistics of thin SVD, noise and random projection on WDBC "
                             "(Tables 3.2, 3.3, 3.5; Figs 3.6-3.9)")
    rep.findings.update(TABLES_3_3_3_5_FINDINGS)
    A, y = load_xy("wdbc")
    # Table 3.2: deterministic statistics of Appendix A, k = 1..29
    svd = [r for r in appendix_a_rows(with_svm=True, progress=False) if r["k"] <= 29]
    t32 = {r["mining_algorithm"]: r for r in reference_rows("wang2008_table3_2.csv")}
    km = sweep_stats([r["kmeans_pct"] for r in svd], _ORIG_KM)
    rep.add("3.2 thin SVD", "RE mean", float(np.mean([r["re"] for r in svd])), float(t32["K-means"]["re_mean"]),
            EXACT)
    rep.add("3.2 thin SVD K-means", "mean %", km["mean"], float(t32["K-means"]["mean_pct"]), 0.005)
    rep.add("3.2 thin SVD K-means", "Max.rel.err %", km["max_rel_err_pct"],  # type: ignore[arg-type]
            float(t32["K-means"]["max_rel_err_pct"]), 0.005)
    sv = sweep_stats([r["svm_pct"] for r in svd], _ORIG_SVM)
    rep.add("3.2 thin SVD SVM", "mean %", sv["mean"], float(t32["SVMlight"]["mean_pct"]), None, "info",
            "SVMlight C and folds unknown")
    rep.add("3.2 thin SVD SVM", "Max.rel.err %", sv["max_rel_err_pct"],  # type: ignore[arg-type]
            float(t32["SVMlight"]["max_rel_err_pct"]), None, "info", "SVMlight C and folds unknown")
    # the random sweeps
    parts = [sweep_rows(m, s, A, y, svm=m not in ("uniformNoise", "normalNoise")) for m in SWEEP_GRIDS
             for s in range(n_seeds)]
    sweeps = pd.concat(parts, ignore_index=True)

    def per_seed(method: str, col: str, original: float | None = None) -> list[dict[str, Any]]:
        d = sweeps[sweeps["method"] == method]
        return [sweep_stats(g[col].dropna().to_list(), original) for _, g in d.groupby("seed")]

    km0, svm0 = kmeans_accuracy(A, y), svm_wdbc(A, y)
    for r in reference_rows("wang2008_table3_3.csv"):
        method = "uniformNoise" if r["noise"] == "uniform" else "normalNoise"
        grid = SWEEP_GRIDS[method][1]
        rep.add(f"3.3 {r['noise']}", "original K-means %", km0, float(r["original_pct"]), 0.005)
        rep.add(f"3.3 {r['noise']}", "mean noise parameter", float(grid.mean()), float(r["mean_noise_parameter"]),
                0.005)
        res = per_seed(method, "re")
        _stat_cells(rep, f"3.3 {r['noise']} RE", "RE", res, {"mean": r["re_mean"]})
        ks = per_seed(method, "kmeans_pct", _ORIG_KM)
        _stat_cells(rep, f"3.3 {r['noise']} K-means", "Kmeans_pct", ks,
                    {"mean": r["mean_pct"], "std": r["std_pct"], "max": r["max_pct"], "min": r["min_pct"]})
        target, note = float(r["max_rel_err_pct"]), ""
        if method == "normalNoise":
            target, note = 8.71, "printed 9.65, copied from the thin-SVD row; Table 3.7 prints 8.71"
        vals = np.array([k["max_rel_err_pct"] for k in ks], dtype=float)
        rep.add(f"3.3 {r['noise']} K-means", "Max.rel.err %", float(vals.mean()), target,
                _stat_tol(vals, target, "Kmeans_pct", "min"), "statistical", note)
        if method == "uniformNoise":
            rep.notes.append("Table 3.3 uniform: the printed K-means minimum 33.74 is a rare collapse of one draw.")
    for r in reference_rows("wang2008_table3_5.csv"):
        method, section = r["method"], r["section"]
        if section == "RE":
            pub = dict(r)
            if method == "Arpo":
                pub["min"] = "1.0727"  # printed 1.0927; Table 3.7 and Appendix E give 1.0727
                rep.add("3.5 Arpo RE", "min as printed", float(np.mean([x["min"] for x in per_seed(method, "re")])),
                        1.0927, None, "info", "printed 1.0927; Table 3.7 and Appendix E give 1.0727, checked above")
            _stat_cells(rep, f"3.5 {method} RE", "RE", per_seed(method, "re"), pub)
        elif section == "K-means":
            rep.add(f"3.5 {method} K-means", "original %", km0, float(r["original_pct"]), 0.005)
            ks = per_seed(method, "kmeans_pct", _ORIG_KM)
            _stat_cells(rep, f"3.5 {method} K-means", "Kmeans_pct", ks, r)
            vals = np.array([k["max_rel_err_pct"] for k in ks], dtype=float)
            target = float(r["max_rel_err_pct"])
            rep.add(f"3.5 {method} K-means", "Max.rel.err %", float(vals.mean()), target,
                    _stat_tol(vals, target, "Kmeans_pct", "min"), "statistical")
        else:
            sv = per_seed(method, "svm_pct", _ORIG_SVM)
            rep.add(f"3.5 {method} SVM", "original %", svm0, float(r["original_pct"]), None, "info",
                    "SVMlight's default C (C unreported)")
            for s in ("mean", "std", "max", "min", "max_rel_err_pct"):
                rep.add(f"3.5 {method} SVM", s, float(np.mean([x[s] for x in sv])), float(r[s]), None, "info",
                        "SVMlight's default C (C unreported)")
            mean = float(np.mean([x["mean"] for x in sv]))
            if method in ("Arp", "Arpo"):
                rep.add(f"3.5 {method} SVM", "mean >= 90 % (near the original; 1 = yes)", float(mean >= 90), 1.0,
                        0.0, "statistical", "text: Arp and Arpo keep SVM accuracy")
            else:
                majority = 100 * max(np.mean(y == c) for c in np.unique(y))
                rep.add(f"3.5 {method} SVM", "mean <= majority-class rate + 1 (1 = yes)", float(mean <= majority + 1),
                        1.0, 0.0, "statistical", f"text: useless for mining (majority class {majority:.1f} %)")
    # Figs 3.6-3.9: the stated shapes
    for method in ("uniformNoise", "normalNoise"):
        d = sweeps[sweeps["method"] == method]
        corr = float(np.mean([np.corrcoef(g["param"], g["re"])[0, 1] for _, g in d.groupby("seed")]))
        rep.add(f"Fig. 3.6 {method}", "corr(RE, noise parameter)", corr, 1.0, 0.01, "statistical",
                "text: RE almost linearly related to the noise magnitude")
    for method in ("Arp", "rpA"):
        d = sweeps[sweeps["method"] == method]
        corr = float(np.mean([np.corrcoef(g["param"], g["re"])[0, 1] for _, g in d.groupby("seed")]))
        rep.add(f"Fig. 3.8 {method}", "corr(RE, sigma_r)", corr, 1.0, 0.05, "statistical",
                "RE grows with sigma_r without orthonormalisation")
    for method in ("Arpo", "rpoA"):
        d = sweeps[sweeps["method"] == method]
        ratio = float(np.mean([g["re"].max() / g["re"].min() for _, g in d.groupby("seed")]))
        rep.add(f"Fig. 3.8 {method}", "max RE / min RE over sigma_r", ratio, 1.0, 1.0, "statistical",
                "text: orthonormalisation caps RE, independent of sigma_r (checked: ratio < 2)")
    rep.notes.append(f"Random sweeps: {n_seeds} seeds x 100 draws per method (grids of Appendices B-G); SVM on "
                     f"every {_SVM_EVERY}th draw of the projection sweeps.")
    rep.notes.append("K-means accuracy takes the better of the two label matchings, so it is never below 50 %; "
                     "the printed rpA / rpoA minima (42.71 / 44.64) cannot come from that rule.")
    rep.notes.append("Tolerance of a statistic: 4 x its SD over the seeds + 2 % (mean), 20 % (std) or 5 % (max, "
                     "min) of the published value + 0.001 (RE) or 0.5 points (K-means).")
    rep.notes.append("Max.rel.err = (original - Min) / original x 100 with the rounded originals 92.79 / 96.49.")
    rep.notes.append(f"Slow by nature: {len(SWEEP_GRIDS) * n_seeds * 100} seeded releases of WDBC, each clustered, "
                     f"and an SVM on every {_SVM_EVERY}th projection release.")
    rep.tables["wang2008_tables_3_3_3_5_sweeps.csv"] = sweeps
    rep.figures.update(_plot(sweeps))
    return rep


# --------------------------------------------------------------------------------- Table 3.6 / 6.2

_ROW_MAKERS = {
    "uniformNoise": ("uniformNoise", 2.1850),
    "normalNoise": ("normalNoise", 1.27),
    "Arp": ("Arp", 0.1109),
    "Arpo": ("Arpo", 5.8627),
    "rpA": ("rpA", 0.0100),
    "rpoA": ("rpoA", 1.4227),
}
_COLS = ("re", "rp", "rk", "distval", "distmaintain_pct", "corrval", "corrmaintain_pct", "kmeans_pct")
_FLOOR = {"re": 1e-3, "rp": 0.5, "rk": 0.002, "distval": 0.001, "distmaintain_pct": 0.05, "corrval": 0.005,
          "corrmaintain_pct": 1.0, "kmeans_pct": 1.0}


def _row_metrics(A: np.ndarray, B: np.ndarray, y: np.ndarray, legacy: bool = False) -> dict[str, float]:
    m = value_metrics(A, B)
    return {"re": m["re"], "rp": m["rp"], "rk": m["rk"], "distval": dist_val(A, B),
            "distmaintain_pct": dist_maintain(A, B), "corrval": corr_val(A, B),
            "corrmaintain_pct": corr_maintain(A, B, "legacy") if legacy else corr_maintain(A, B),
            "kmeans_pct": kmeans_accuracy(B, y), "svm_pct": svm_wdbc(B, y)}


def tables_3_6_6_2(n_seeds: int = 8) -> ReproductionReport:
    """Table 3.6 (seven methods at similar RE) and its five-row subset, Table 6.2."""
    from ppdm.mechanisms.svd import svd_reconstruct

    rep = ReproductionReport("wang2008-tables-3-6-6-2", "seven methods on WDBC at similar RE (Tables 3.6, 6.2)")
    rep.findings.update(TABLES_3_6_6_2_FINDINGS)
    A, y = load_xy("wdbc")
    pub = {r["method"]: r for r in reference_rows("wang2008_table3_6.csv")}
    t62 = {r["method"]: r for r in reference_rows("wang2008_table6_2.csv")}
    svd = _row_metrics(A, svd_reconstruct(A, 4, solver="exact"), y, legacy=True)
    rows = [dict(svd, method="thinSVD", seed=-1)]
    for c in _COLS:
        tol = RP_TOL if c == "rp" else EXACT
        rep.add("thinSVD k=4", c, svd[c], float(pub["thinSVD"][c]), tol,
                note="legacy CorrMaintain" if c == "corrmaintain_pct" else "")
    rep.add("thinSVD k=4", "svm_pct", svd["svm_pct"], float(pub["thinSVD"]["svm_pct"]), None, "info",
            "SVMlight C and folds unknown")
    for method, (grid_key, param) in _ROW_MAKERS.items():
        make = SWEEP_GRIDS[grid_key][0]
        draws = []
        for s in range(n_seeds):
            B = make(param, 1000 + s).fit_transform(A)  # type: ignore[attr-defined]
            draws.append(_row_metrics(A, B, y))
            rows.append(dict(draws[-1], method=method, seed=s))
        for c in (*_COLS, "svm_pct"):
            v = np.array([d[c] for d in draws])
            target = float(pub[method][c])
            if c == "svm_pct":
                rep.add(method, c, float(v.mean()), target, None, "info", "SVMlight C and folds unknown")
                continue
            tol = 4 * float(v.std(ddof=1)) + _FLOOR[c]
            note = ""
            if method == "Arp" and c in ("rk", "distmaintain_pct", "corrval"):
                note = "Appendix D prints this draw with other RK / DistMaintain / CorrVal"
            if method in ("Arpo", "rpoA") and c == "re":
                note = "the print is the minimum-RE draw of its sweep"
            if method.endswith("Noise") and c == "corrmaintain_pct":
                note = "the noise appendices' CorrMaintain follows neither definition (see Table 3.7)"
            rep.add(method, c, float(v.mean()), target, tol, "statistical", note)
    # Table 6.2 repeats five rows of Table 3.6: check the prints agree, then the same cells apply
    for method, r in t62.items():
        for c in ("re", "kmeans_pct", "svm_pct"):
            rep.add(f"6.2 {method}", f"{c} printed = Table 3.6", float(r[c]), float(pub[method][c]), 0.0)
    rep.notes.append(f"Random rows: mean of {n_seeds} seeded draws at the printed parameter; tolerance 4 x SD "
                     "+ a floor per metric for rounding and ties (the print is one draw).")
    rep.notes.append("Table 6.2 (and the GrC paper's Table 2) repeats the thinSVD, Arp, Arpo, rpA, rpoA rows.")
    rep.tables["wang2008_tables_3_6_6_2_draws.csv"] = pd.DataFrame(rows)
    return rep
