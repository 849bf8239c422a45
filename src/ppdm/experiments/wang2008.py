"""Reproductions of Wang (2008), *Matrix Decomposition for Data Disclosure Control*: the SVD family.

Protocols (spec Sec. 9, verified): distortion on raw data; K-means on the per-matrix range-normalised
release from its first K rows with best label matching; RP/CP with the sort-index convention;
IRIS pattern metrics on range-normalised data.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ppdm import datasets
from ppdm.experiments.base import ReproductionReport, reference_json, reference_rows
from ppdm.mechanisms.noise import AdditiveNoise
from ppdm.mechanisms.projection import RandomProjection
from ppdm.mechanisms.sparsified import SparsifiedSVD
from ppdm.mechanisms.svd import svd_reconstruct
from ppdm.metrics import (
    corr_maintain,
    corr_val,
    dist_maintain,
    dist_val,
    kmeans_accuracy,
    range_normalize,
    svm_accuracy,
    sweep_stats,
    value_metrics,
    varp,
)

EXACT = 1e-4  # print precision of 4-dp values plus float slack
RP_TOL = 0.05  # RP is tie-sensitive (observed differences up to 0.023)


def load_xy(name: str) -> tuple[np.ndarray, np.ndarray]:
    df = datasets.load(name)
    return df.drop(columns="class").to_numpy(float), df["class"].to_numpy()


def svm_wdbc(B: np.ndarray, y: np.ndarray, C: float | None = None) -> float:
    """SVMlight as Table 3.7's header states it (RBF, gamma = 1, 10 folds; range-normalised): C unreported.

    ``C`` None: SVMlight's own default on each training fold (:mod:`ppdm.experiments.svmlight`).
    """
    from ppdm.experiments.svmlight import cv_accuracy

    return cv_accuracy(B, y, gamma=1.0, C=C, n_folds=10)


def _progress(total: int, description: str):  # type: ignore[no-untyped-def]
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    p = Progress(TextColumn(description), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                 TimeRemainingColumn(), transient=True)
    return p, total


def table_2_1() -> ReproductionReport:
    rep = ReproductionReport("wang2008-table-2-1", "metric example: rank-2 and rank-1 SVD of A_e (Table 2.1)")
    ex = reference_json("wang2008_sec2_3_Ae_example")
    A = np.array(ex["A_e"], dtype=float)
    for row in reference_rows("wang2008_table2_1.csv"):
        k = int(row["svd_rank_k"])
        m = value_metrics(A, svd_reconstruct(A, k, solver="exact"), rank_mode="rank")
        for col in ("re", "rp", "rk", "cp", "ck"):
            rep.add(f"k={k}", col.upper(), m[col], float(row[col]), EXACT)
    B1 = svd_reconstruct(A, 1, solver="exact")
    rep.add("k=1", "max |B - printed|", float(np.abs(B1 - np.array(ex["rank1_svd_matrix_printed"])).max()), 0.0,
            5.1e-5, note="printed to 4 dp")
    rep.notes.append("RP/RK use the 'rank' convention, which Table 2.1 follows (the tables use 'sort_index').")
    return rep


def table_2_2() -> ReproductionReport:
    rep = ReproductionReport("wang2008-table-2-2", "thin SVD on UCI IRIS, k = 1..4 (Table 2.2)")
    A, _ = load_xy("iris_uci")
    s = np.linalg.svd(A, compute_uv=False)
    An = range_normalize(A)
    for row in reference_rows("wang2008_table2_2.csv"):
        k = int(row["k"])
        B = svd_reconstruct(A, k, solver="exact")
        Bn = range_normalize(B)
        rep.add(f"k={k}", "RE", value_metrics(A, B)["re"], float(row["re"]), 6e-6)
        rep.add(f"k={k}", "VarP", varp(s, k), float(row["varp"]), 6e-6)
        rep.add(f"k={k}", "DistVal", dist_val(An, Bn), float(row["distval"]), 6e-6)
        rep.add(f"k={k}", "CorrVal", corr_val(An, Bn), float(row["corrval"]), 6e-6)
        rep.add(f"k={k}", "DistMaintain %", dist_maintain(An, Bn), float(row["distmaintain_pct"]), None, "info",
                "tie-sensitive, not reproducible")
        rep.add(f"k={k}", "CorrMaintain %", corr_maintain(An, Bn), float(row["corrmaintain_pct"]), None, "info",
                "tie-sensitive, not reproducible")
    rep.notes.append("IRIS is the UCI file with its two errata; pattern metrics on range-normalised data.")
    return rep


def appendix_a_rows(with_svm: bool = True, progress: bool = True) -> list[dict[str, float]]:
    """Every metric of the thin-SVD release of WDBC for k = 1..30.

    Deterministic, so the rows are computed once per process and copied out (Appendix A, Tables 3.2 and
    3.7 all use them); ``with_svm=False`` leaves the SVM column out.
    """
    if not _APPENDIX_A:
        _APPENDIX_A.extend(_appendix_a_compute(progress))
    return [dict(r) if with_svm else {k: v for k, v in r.items() if k != "svm_pct"} for r in _APPENDIX_A]


_APPENDIX_A: list[dict[str, float]] = []  # filled by the first call of appendix_a_rows


def _appendix_a_compute(progress: bool) -> list[dict[str, float]]:
    A, y = load_xy("wdbc")
    rows = []
    ks = range(1, 31)
    bar, _ = _progress(len(ks), "appendix A: ranks")
    with bar if progress else _Null() as p:
        task = p.add_task("ranks", total=len(ks)) if progress else None
        for k in ks:
            B = svd_reconstruct(A, k, solver="exact")
            r = dict(value_metrics(A, B), k=k)
            r["distval"] = dist_val(A, B)
            r["distmaintain_pct"] = dist_maintain(A, B)
            r["corrval"] = corr_val(A, B)
            r["corrmaintain_pct"] = corr_maintain(A, B, "legacy")
            r["kmeans_pct"] = kmeans_accuracy(B, y)
            r["svm_pct"] = svm_wdbc(B, y)
            rows.append(r)
            if progress:
                p.advance(task)
    return rows


class _Null:
    def __enter__(self):  # type: ignore[no-untyped-def]
        return self

    def __exit__(self, *a: object) -> None:
        return None


def appendix_a() -> ReproductionReport:
    rep = ReproductionReport("wang2008-appendix-a", "thin SVD on WDBC, k = 1..30, all metrics (Appendix A)")
    computed = {r["k"]: r for r in appendix_a_rows()}
    for row in reference_rows("wang2008_appendix_a.csv"):
        k = int(row["k"])
        c = computed[k]
        full = k == 30
        for col in ("re", "rk", "cp", "ck", "distval", "distmaintain_pct", "corrval", "kmeans_pct"):
            if full and col == "rk":
                continue
            rep.add(f"k={k}", col, c[col], float(row[col]), EXACT)
        if not full:
            rep.add(f"k={k}", "rp", c["rp"], float(row["rp"]), RP_TOL)
        else:  # full rank: B = A up to rounding, so the ranks RP/RK compare are decided by floating-point noise
            for col in ("rp", "rk"):
                rep.add(f"k={k}", col, c[col], float(row[col]), None, "info",
                        "full rank: B equals A up to rounding, the print's ranks are floating-point artefacts")
        if k >= 4:
            rep.add(f"k={k}", "corrmaintain_pct", c["corrmaintain_pct"], float(row["corrmaintain_pct"]), EXACT,
                    note="legacy variant")
        else:
            rep.add(f"k={k}", "corrmaintain_pct", c["corrmaintain_pct"], float(row["corrmaintain_pct"]), None, "info",
                    "legacy variant differs for k <= 3")
        rep.add(f"k={k}", "svm_pct", c["svm_pct"], float(row["svm_pct"]), None, "info", "SVMlight's C unreported")
    rep.notes.append("RP uses the sort-index convention with a stable sort; k = 30 (full rank) RP/RK not checked.")
    rep.notes.append("SVM: scikit-learn SVC (RBF, gamma = 1, contiguous 10 folds, SVMlight's default C on each "
                     "training fold): shown, not checked, since the dissertation does not report its C.")
    return rep


def appendix_h() -> ReproductionReport:
    rep = ReproductionReport("wang2008-appendix-h", "sparsified SVD (STS) on WDBC, eps_v = 0.02 (Appendix H1-H9)")
    A, y = load_xy("wdbc")
    rows = reference_rows("wang2008_appendix_h.csv")
    bar, _ = _progress(len(rows), "appendix H")
    with bar as p:
        task = p.add_task("cells", total=len(rows))
        for row in rows:
            k, eu, ev = int(row["k"]), float(row["eps_u"]), float(row["eps_v"])
            B = SparsifiedSVD(k, strategy="sts", eps_u=eu, eps_v=ev, solver="exact").fit_transform(A)
            m = value_metrics(A, B)
            tag = f"k={k} eps_u={eu:.3f}"
            for col in ("re", "rk", "cp", "ck"):
                rep.add(tag, col, m[col], float(row[col]), EXACT)
            rep.add(tag, "rp", m["rp"], float(row["rp"]), RP_TOL)
            rep.add(tag, "distval", dist_val(A, B), float(row["distval"]), EXACT)
            rep.add(tag, "kmeans_pct", kmeans_accuracy(B, y), float(row["kmeans_pct"]), EXACT)
            rep.add(tag, "distmaintain_pct", dist_maintain(A, B), float(row["distmaintain_pct"]), EXACT)
            rep.add(tag, "corrval", corr_val(A, B), float(row["corrval"]), EXACT)
            rep.add(tag, "corrmaintain_pct", corr_maintain(A, B), float(row["corrmaintain_pct"]), None, "info",
                    "follows neither the written nor the legacy definition, as in the noise appendices")
            if row["svm_computed"] == "1":
                rep.add(tag, "svm_pct", svm_wdbc(B, y), float(row["svm_pct"]), None, "info",
                        "SVMlight's C unreported: its default here")
            p.advance(task)
    return rep


def _svd_row(name: str, rep: ReproductionReport, k: int, row: dict[str, str]) -> None:
    A, y = load_xy("wbc")
    B = svd_reconstruct(A, k, solver="exact")
    m = value_metrics(A, B)
    for col in ("re", "rk", "cp", "ck"):
        rep.add(f"thin SVD k={k}", col, m[col], float(row[col]), EXACT)
    rep.add(f"thin SVD k={k}", "rp", m["rp"], float(row["rp"]), RP_TOL)
    rep.add(f"thin SVD k={k}", "svm_pct", svm_accuracy(B, y, gamma="scale", n_folds=10), float(row["svm_pct"]),
            None, "info", "SVMlight parameters unreported")
    rep.add("original", "svm_pct", svm_accuracy(A, y, gamma="scale", n_folds=10), 96.4, None, "info")


def table_3_8() -> ReproductionReport:
    rep = ReproductionReport("wang2008-table-3-8", "WBC (1/8 imputation), thin SVD k = 7 row (Tables 3.8, 4.8)")
    row = next(r for r in reference_rows("wang2008_table3_8.csv") if r["method"] == "thinSVD")
    _svd_row("table3_8", rep, 7, row)
    rep.notes.append("The noise and sparsified rows need parameters the dissertation does not report.")
    return rep


def table_3_10() -> ReproductionReport:
    rep = ReproductionReport("wang2008-table-3-10", "WBC partition table, whole-matrix thin SVD k = 3 row (Table 3.10)")
    row = next(r for r in reference_rows("wang2008_table3_10.csv") if r["scheme"] == "SVD")
    _svd_row("table3_10", rep, 3, row)
    rep.notes.append("The partition rows need the unreported sparsification thresholds.")
    return rep


# ----------------------------------------------------------------------------------- Table 3.7

SWEEP_GRIDS: dict[str, tuple[Callable[[float, int], object], np.ndarray]] = {
    "uniformNoise": (lambda a, s: AdditiveNoise(a, distribution="uniform", random_state=s), np.linspace(0.5, 20, 100)),
    "normalNoise": (lambda a, s: AdditiveNoise(a, distribution="normal", random_state=s), np.linspace(0.2, 15, 100)),
    "Arp": (lambda a, s: RandomProjection("arp", sigma=a, random_state=s), np.linspace(0.01, 10, 100)),
    "Arpo": (lambda a, s: RandomProjection("arpo", sigma=a, random_state=s), np.linspace(0.01, 10, 100)),
    "rpA": (lambda a, s: RandomProjection("rpa", sigma=a, random_state=s), np.linspace(0.01, 10, 100)),
    "rpoA": (lambda a, s: RandomProjection("rpoa", sigma=a, random_state=s), np.linspace(0.01, 10, 100)),
}
_STAT_METRICS = ("RE", "DistMaintain_pct", "CorrMaintain_pct", "Kmeans_pct")


#: draws (0-based grid positions) whose SVMlight accuracy Appendices B-G print (their ``svm_computed``)
SVM_DRAWS: dict[str, tuple[int, ...]] = {
    "uniformNoise": tuple(range(2, 90, 3)), "normalNoise": tuple(range(2, 90, 3)),
    "Arp": (0, 1, 4, 9, 14, 19, 24, 29, 34, 39, 44, 49, 50, 51, 54, 59, 64, 69, 74, 79, 84, 89, 94, 99),
    "Arpo": (0, 1, 4, 9, 14, 19, 24, 29, 34, 39, 44, 49), "rpA": (0, 1, 4, 9, 19, 24, 29, 34, 39, 44, 49),
    "rpoA": (0, 1, 4, 9, 14, 19, 24, 29, 34, 39, 44, 49),
}
#: C values of the sensitivity of Table 3.7's SVM block (SVMlight's own default is the protocol)
SVM_C_GRID = (0.1, 10.0)
_ORIG_SVM = 96.49  # Table 3.7's printed original SVMlight accuracy, used by Max.rel.err


def baseline_sweep(method: str, seed: int, A: np.ndarray, y: np.ndarray,
                   svm_c: tuple[float | None, ...] = ()) -> dict[str, list[float]]:
    """One 100-draw sweep of a random baseline on WDBC (Appendices B-G), one seed per draw.

    ``svm_c``: SVM accuracies at these C values (None: SVMlight's default) on the draws whose SVM the
    appendices print, under ``SVM_pct`` (the first C) and ``SVM_pct C=<c>``.
    """
    make, grid = SWEEP_GRIDS[method]
    out: dict[str, list[float]] = {k: [] for k in _STAT_METRICS}
    ss = np.random.SeedSequence([seed, list(SWEEP_GRIDS).index(method)])
    for i, (param, child) in enumerate(zip(grid, ss.spawn(len(grid)), strict=True)):
        B = make(float(param), int(child.generate_state(1)[0])).fit_transform(A)  # type: ignore[attr-defined]
        out["RE"].append(value_metrics(A, B)["re"])
        out["DistMaintain_pct"].append(dist_maintain(A, B))
        out["CorrMaintain_pct"].append(corr_maintain(A, B))
        out["Kmeans_pct"].append(kmeans_accuracy(B, y))
        if i in SVM_DRAWS[method]:
            for j, c in enumerate(svm_c):
                out.setdefault("SVM_pct" if j == 0 else f"SVM_pct C={c:g}", []).append(svm_wdbc(B, y, c))
    return out


_BELOW_MAJORITY = ("printed below the majority-class rate (62.7 %), which an SVM predicting one class reaches; "
                   "with SVMlight's default C the SVM here predicts one class on these releases")
#: Table 3.7 cells found not to agree with the print (3 seeds x 100 draws; thin SVD deterministic)
TABLE_3_7_FINDINGS: dict[tuple[str, str], str] = {
    **dict.fromkeys((("CorrMaintain_pct thinSVD", s) for s in ("mean", "std", "min")),
                    "the legacy variant reproduces Appendix A's CorrMaintain for k >= 4 only; its printed k <= 3 "
                    "values follow no definition, so the statistics over k = 1..29 differ"),
    ("SVM_pct uniformNoise", "mean"): "87.0 % with SVMlight's default C against 91.27 % printed (C not reported)",
    ("SVM_pct uniformNoise", "max_rel_err_pct"): "follows the lower minimum (C not reported)",
    ("SVM_pct Arpo", "max_rel_err_pct"): "4.9 against 3.1 printed: one draw's minimum, C not reported",
    **dict.fromkeys((("SVM_pct " + m, s) for m in ("rpA", "rpoA") for s in ("mean", "std", "max", "min",
                                                                        "max_rel_err_pct")), _BELOW_MAJORITY),
}


def table_3_7(n_seeds: int = 3, svm: bool = True, n_jobs: int = -1) -> ReproductionReport:
    """Table 3.7: thin SVD and the six random baselines on WDBC (``svm=False`` leaves the SVM block out); the
    baselines' sweeps run on ``n_jobs`` processes (-1: one per core)."""
    rep = ReproductionReport("wang2008-table-3-7", "sweep statistics on WDBC (Table 3.7)")
    rep.findings.update(TABLE_3_7_FINDINGS)
    A, y = load_xy("wdbc")
    published = {(r["metric"], r["method"]): r for r in reference_rows("wang2008_table3_7.csv")}
    _t37_thin_svd(rep, published, A, y, svm)
    from joblib import Parallel, delayed

    jobs = [(method, seed) for method in SWEEP_GRIDS for seed in range(n_seeds)]
    bar, _ = _progress(len(jobs), "table 3.7 baselines")
    runs: dict[tuple[str, int], dict[str, list[float]]] = {}
    with bar as p:
        task = p.add_task("sweeps", total=len(jobs))
        # every sweep is seeded by its method and seed alone: the same results in any order, on any worker
        sweeps = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(baseline_sweep)(method, seed, A, y, ((None, *SVM_C_GRID) if seed == 0 else (None,)) if svm
                                    else ()) for method, seed in jobs)
        for job, res in zip(jobs, sweeps, strict=True):
            runs[job] = res
            p.advance(task)
    for method in SWEEP_GRIDS:
        _t37_baseline_cells(rep, published, method, [runs[method, seed] for seed in range(n_seeds)])
    rep.notes.append("CorrMaintain of the noise sweeps (Appendices B, C) follows neither the written definition "
                     "(mean ~4.1 / ~7.5 here vs 1.02 / 2.31 printed) nor the legacy one (which goes negative); "
                     "shown, not checked. The projection sweeps match the written definition.")
    rep.notes.append(f"Random baselines: {n_seeds} seeds x 100 draws each; tolerance = 4 x seed-to-seed SD "
                     "+ a slack for the single published sweep (see the code).")
    rep.notes.append("SVM block: RBF, gamma = 1, contiguous 10 folds on range-normalised releases (the header); C "
                     "is not reported, so SVMlight's own default on each training fold is used (see "
                     "ppdm.experiments.svmlight); the draws are those whose SVM the appendices print (30 per "
                     "noise, 11-24 per projection; the text says 10). Sensitivity: the mean at C = "
                     + ", ".join(f"{c:g}" for c in SVM_C_GRID) + " (thin SVD; seed 0 of each baseline), shown.")
    rep.notes.append(f"Slow by nature: {len(SWEEP_GRIDS) * n_seeds * 100} seeded releases of WDBC, each ranking its "
                     "161,596 pairwise distances (DistMaintain) and clustered; fewer seeds would leave the "
                     "seed-to-seed SD behind every tolerance without support.")
    return rep


def _t37_thin_svd(rep: ReproductionReport, published: dict[tuple[str, str], dict[str, str]], A: np.ndarray,
                  y: np.ndarray, svm: bool) -> None:
    """Table 3.7's thin-SVD rows: deterministic statistics over k = 1..29, SVM sensitivity to C."""
    rows = [r for r in appendix_a_rows(progress=False) if r["k"] <= 29]
    for metric, key, orig in (("RE", "re", None), ("DistMaintain_pct", "distmaintain_pct", None),
                              ("CorrMaintain_pct", "corrmaintain_pct", None), ("Kmeans_pct", "kmeans_pct", 92.79),
                              *((("SVM_pct", "svm_pct", _ORIG_SVM),) if svm else ())):
        st = sweep_stats([r[key] for r in rows], orig)
        pub = published[(metric, "thinSVD")]
        for s in ("mean", "std", "max", "min", "max_rel_err_pct"):
            if s == "max_rel_err_pct" and orig is None:
                continue
            tol = EXACT if metric == "RE" else 1e-3 if s != "max_rel_err_pct" else 0.01
            kind, note = "exact", ""
            if metric == "CorrMaintain_pct":
                note = "legacy variant (Appendix A's; it differs for k <= 3)"
            if metric == "SVM_pct":
                kind, tol, note = "statistical", _stat_tol(np.zeros(1), float(pub[s]), metric, s), _SVM_NOTE
            rep.add(f"{metric} thinSVD", s, st[s], float(pub[s]), tol, kind, note)  # type: ignore[arg-type]
    if not svm:
        return
    B = {k: svd_reconstruct(A, k, solver="exact") for k in range(1, 30)}
    for c in SVM_C_GRID:
        acc = float(np.mean([svm_wdbc(B[k], y, c) for k in B]))
        rep.add("SVM_pct thinSVD", f"mean at C = {c:g}", acc, float(published[("SVM_pct", "thinSVD")]["mean"]), None,
                "info", "sensitivity to C")


_SVM_NOTE = "SVMlight's default C on each training fold (C unreported)"


def _t37_baseline_cells(rep: ReproductionReport, published: dict[tuple[str, str], dict[str, str]], method: str,
                        runs: list[dict[str, list[float]]]) -> None:
    """Statistics of one baseline's seeded sweeps against its Table 3.7 rows."""
    for metric in (*_STAT_METRICS, *(("SVM_pct",) if "SVM_pct" in runs[0] else ())):
        pub = published[(metric, method)]
        orig = {"Kmeans_pct": 92.79, "SVM_pct": _ORIG_SVM}.get(metric)
        per_seed = [sweep_stats(r[metric], orig) for r in runs]
        for s in ("mean", "std", "max", "min", "max_rel_err_pct"):
            if not pub.get(s):
                continue
            vals = np.array([ps[s] for ps in per_seed])
            target = float(pub[s])
            note, kind = (_SVM_NOTE if metric == "SVM_pct" else ""), "statistical"
            if metric == "CorrMaintain_pct" and method == "uniformNoise" and s == "mean":
                target, note = 1.0161, "printed 1.1061 (digit transposition; appendix mean 1.0161)"
            if metric == "CorrMaintain_pct" and method.endswith("Noise"):
                kind, note = "info", "variant of the noise appendices not reproducible" + (f"; {note}" if note else "")
            tol = _stat_tol(vals, target, metric, "min" if s == "max_rel_err_pct" else s)
            rep.add(f"{metric} {method}", s, float(vals.mean()), target, tol, kind, note)
    for key in runs[0]:
        if key.startswith("SVM_pct C="):
            rep.add(f"SVM_pct {method}", f"mean at {key[8:]} (seed 0)", float(np.mean(runs[0][key])),
                    float(published[("SVM_pct", method)]["mean"]), None, "info", "sensitivity to C")


def _stat_tol(vals: np.ndarray, target: float, metric: str, stat: str) -> float:
    """Tolerance for one statistic of one published 100-draw sweep, from the spread across our seeds.

    The published value is itself one sweep, so it varies as much as ours do from seed to seed; the
    extremes (max/min) and tiny percentages get an extra slack for their heavy tails. SVM accuracies get
    2 % of the print (20 % for the spread) and a point.
    """
    sd = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
    if metric == "SVM_pct":  # accuracies near 95 %: a relative slack of 10 % would accept anything
        return 4 * sd + (0.2 if stat == "std" else 0.02) * abs(target) + 1.0
    rel = 0.10 if stat in ("mean", "std") else 0.25
    floor = {"RE": 1e-3, "DistMaintain_pct": 0.05, "CorrMaintain_pct": 1.0, "Kmeans_pct": 1.0, "SVM_pct": 1.0}[metric]
    if metric == "Kmeans_pct" and stat in ("min", "std"):
        floor = 6.0  # the uniform-noise K-means minimum is a rare collapse (33.7 %)
    return 4 * sd + rel * abs(target) + floor
