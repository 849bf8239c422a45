"""Reproductions on the synthetic ORG set: Xu, Zhang, Han, Wang (sparsified SVD) Table 1 and Wang (2008) Table 3.9.

ORG is 2000 x 100 with i.i.d. U[1, 10] entries and the label rule of both documents
(:func:`ppdm.datasets.org`); each seed is a new draw. Xu et al. state the set-up (UD on [0, 0.8], ND with
sigma = 0.46, SVD and SSVD at k = 85, dropping threshold 0.001, 5-fold SVM) but the numbers of their Table 1
are lost from the text, so their claims, stated in prose, are checked as shapes over seeded draws. The
dissertation's Table 3.9 prints numbers for the same set at k = 20; its SVD row is nearly deterministic (RE
of a rank-20 approximation of a U[1, 10] matrix concentrates), its noise rows are compared with the same
noise as Xu et al. (the dissertation does not restate it, but its printed RE match), and its s-SVD and
partition rows need a threshold and blocks it does not report.

The dropping threshold is applied as in the dissertation's STS: absolute, to the entries of U_k and V_k.
SVM: scikit-learn SVC (RBF, gamma = 'scale', C = 1) on range-normalised data, 5 stratified folds;
SVMlight's parameters are not reported.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.datasets import org
from ppdm.experiments.base import ReproductionReport, reference_rows
from ppdm.mechanisms.noise import AdditiveNoise
from ppdm.mechanisms.sparsified import SparsifiedSVD
from ppdm.mechanisms.svd import svd_reconstruct
from ppdm.metrics import svm_accuracy, value_metrics

__all__ = ["table_1", "table_3_9"]


def _svm(B: np.ndarray, y: np.ndarray) -> float:
    return svm_accuracy(B, y, gamma="scale", n_folds=5)


def _release(method: str, A: np.ndarray, seed: int, k: int = 85, eps: float = 0.001) -> np.ndarray:
    if method == "UD":
        return AdditiveNoise(0.8, distribution="uniform", random_state=seed).fit_transform(A)
    if method == "ND":
        return AdditiveNoise(0.46, distribution="normal", random_state=seed).fit_transform(A)
    if method == "SVD":
        return svd_reconstruct(A, k, solver="exact")
    return SparsifiedSVD(k, strategy="sts", eps_u=eps, eps_v=eps, solver="exact").fit_transform(A)


def _measure(A: np.ndarray, B: np.ndarray, y: np.ndarray, svm: bool = True) -> dict[str, float]:
    m = value_metrics(A, B)
    out = {"VD": m["re"], "RP": m["rp"], "RK": m["rk"], "CP": m["cp"], "CK": m["ck"]}
    out["accuracy"] = _svm(B, y) if svm else np.nan
    return out


def _monotone(values: list[float], sign: int) -> float:
    """1.0 when ``values`` never move against ``sign`` (+1 rising, -1 falling), else 0.0."""
    d = np.diff(np.asarray(values, float)) * sign
    return float(bool((d >= -1e-12).all()))


def table_1(n_seeds: int = 3) -> ReproductionReport:
    """Xu et al. Table 1: SVD, SSVD, UD and ND on ORG, as the shapes the text states."""
    rep = ReproductionReport("xu2006-table-1", "SVD, SSVD, UD, ND on the synthetic 2000 x 100 set (Xu et al. Table 1)")
    rows = []
    claims: dict[str, list[float]] = {}

    def claim(key: str, value: float) -> None:
        claims.setdefault(key, []).append(value)

    for seed in range(n_seeds):
        df = org(random_state=seed)
        A, y = df.drop(columns="class").to_numpy(float), df["class"].to_numpy()
        orig = _svm(A, y)
        rows.append({"seed": seed, "method": "original", "k": np.nan, "eps": np.nan, "accuracy": orig})
        r = {}
        for method in ("UD", "ND", "SVD", "SSVD"):
            r[method] = _measure(A, _release(method, A, 100 + seed), y)
            rows.append({"seed": seed, "method": method, "k": 85.0, "eps": 0.001 if method == "SSVD" else np.nan,
                         **r[method]})
        vd = [r[m]["VD"] for m in ("UD", "ND", "SVD")]
        claim("VD of UD, ND, SVD within 25 % of each other (max / min)", max(vd) / min(vd))
        claim("UD and ND keep every attribute-mean rank (CP = 0, CK = 1)",
              float(all(r[m]["CP"] == 0 and r[m]["CK"] == 1 for m in ("UD", "ND"))))
        claim("SSVD has the highest RP", float(max(r, key=lambda m: r[m]["RP"]) == "SSVD"))
        claim("SSVD has the lowest RK", float(min(r, key=lambda m: r[m]["RK"]) == "SSVD"))
        claim("SSVD CP / SVD CP (text: almost four)", r["SSVD"]["CP"] / max(r["SVD"]["CP"], 1e-12))
        claim("SSVD CK (text: 0.02)", r["SSVD"]["CK"])
        claim("SVD CK (text: about 0.8; 20 % of attributes change rank)", r["SVD"]["CK"])
        claim("largest accuracy loss against the original, points",
              max(orig - r[m]["accuracy"] for m in r))
        # with k, SVD's VD and CP fall while RK, CK and accuracy rise; SSVD is stable in the threshold
        ks = (40, 60, 85, 95)
        sweep = [_measure(A, _release("SVD", A, seed, k=k), y, svm=seed == 0) for k in ks]
        for k, s in zip(ks, sweep, strict=True):
            rows.append({"seed": seed, "method": "SVD", "k": float(k), "eps": np.nan, **s})
        claim("SVD: VD falls with k", _monotone([s["VD"] for s in sweep], -1))
        claim("SVD: CP falls with k", _monotone([s["CP"] for s in sweep], -1))
        claim("SVD: RK rises with k", _monotone([s["RK"] for s in sweep], +1))
        claim("SVD: CK rises with k", _monotone([s["CK"] for s in sweep], +1))
        if seed == 0:
            claim("SVD: accuracy rises with k (seed 0)", _monotone([s["accuracy"] for s in sweep], +1))
            eps_grid = (0.0005, 0.001, 0.002, 0.005)
            es = [_measure(A, _release("SSVD", A, seed, eps=e), y) for e in eps_grid]
            for e, s in zip(eps_grid, es, strict=True):
                rows.append({"seed": seed, "method": "SSVD", "k": 85.0, "eps": e, **s})
            claim("SSVD: accuracy range over eps 0.0005-0.005, points (text: no trend)",
                  max(s["accuracy"] for s in es) - min(s["accuracy"] for s in es))
    table = pd.DataFrame(rows)
    checks = {  # claim -> (target, tolerance): the text's statement as an interval
        "VD of UD, ND, SVD within 25 % of each other (max / min)": (1.0, 0.25),
        "UD and ND keep every attribute-mean rank (CP = 0, CK = 1)": (1.0, 0.0),
        "SSVD has the highest RP": (1.0, 0.0),
        "SSVD has the lowest RK": (1.0, 0.0),
        "SSVD CP / SVD CP (text: almost four)": (4.0, 1.0),
        "SSVD CK (text: 0.02)": (0.02, 0.03),
        "SVD CK (text: about 0.8; 20 % of attributes change rank)": (0.8, 0.1),
        "largest accuracy loss against the original, points": (0.0, 2.0),
        "SVD: VD falls with k": (1.0, 0.0),
        "SVD: CP falls with k": (1.0, 0.0),
        "SVD: RK rises with k": (1.0, 0.0),
        "SVD: CK rises with k": (1.0, 0.0),
        "SVD: accuracy rises with k (seed 0)": (1.0, 0.0),
        "SSVD: accuracy range over eps 0.0005-0.005, points (text: no trend)": (0.0, 2.0),
    }
    for key, vals in claims.items():
        target, tol = checks[key]
        v = np.asarray(vals, float)
        worst = float(v[np.argmax(np.abs(v - target))])  # every seed must hold: show the worst
        rep.add("claim", key, worst, target, tol, "statistical",
                f"worst of {len(v)} seed(s); mean {v.mean():.4g}" if len(v) > 1 else "")
    for method in ("UD", "ND", "SVD", "SSVD"):
        d = table[(table["method"] == method) & (table["k"] == 85) & ((table["eps"] == 0.001) | table["eps"].isna())]
        for col in ("VD", "RP", "RK", "CP", "CK", "accuracy"):
            rep.add(f"{method} (mean of {n_seeds})", col, float(d[col].mean()), None, None, "info")
    rep.add("original (mean)", "accuracy", float(table.loc[table["method"] == "original", "accuracy"].mean()), None,
            None, "info")
    rep.notes.append("The numbers of Table 1 are not in the text; the claims are the paper's Sec. 5.1 prose.")
    rep.notes.append(f"{n_seeds} ORG draws; a claim is checked on its worst draw (trend in accuracy and the "
                     "threshold sweep on the first draw only, for time).")
    rep.tables["xu2006_table_1.csv"] = table
    return rep


def table_3_9(n_seeds: int = 3) -> ReproductionReport:
    """Wang (2008) Table 3.9: the ORG, UD, ND and SVD (k = 20) rows."""
    rep = ReproductionReport("wang2008-table-3-9", "ORG: original, UD, ND, SVD k = 20 rows (Wang 2008 Table 3.9)")
    pub = {r["method"]: r for r in reference_rows("wang2008_table3_9.csv")}
    vals: dict[tuple[str, str], list[float]] = {}
    for seed in range(n_seeds):
        df = org(random_state=seed)
        A, y = df.drop(columns="class").to_numpy(float), df["class"].to_numpy()
        vals.setdefault(("ORG (original)", "svm_pct"), []).append(_svm(A, y))
        for method in ("UD", "ND", "SVD"):
            m = _measure(A, _release(method, A, 100 + seed, k=20), y)
            for col, key in (("re", "VD"), ("rp", "RP"), ("rk", "RK"), ("cp", "CP"), ("ck", "CK"),
                             ("svm_pct", "accuracy")):
                vals.setdefault((method, col), []).append(m[key])
    floor = {"re": 2e-3, "rp": 1.0, "rk": 5e-4, "cp": 1.0, "ck": 0.05, "svm_pct": 1.5}
    for (method, col), v in vals.items():
        a = np.asarray(v, float)
        target = pub[method].get(col, "")
        if target == "":
            continue
        if col == "svm_pct":
            rep.add(method, col, float(a.mean()), float(target), None, "info", "SVMlight gamma / C differ")
            continue
        rep.add(method, col, float(a.mean()), float(target), 4 * float(a.std(ddof=1)) + floor[col], "statistical",
                "noise as in Xu et al. (U[0, 0.8], N(0, 0.46))" if method in ("UD", "ND") else "")
    base = np.mean(vals[("ORG (original)", "svm_pct")])
    gap = max(abs(np.mean(vals[(m, "svm_pct")]) - base) for m in ("UD", "ND", "SVD"))
    rep.add("claim", "largest accuracy change against ORG, points (table: <= 0.45)", float(gap), 0.0, 2.0,
            "statistical")
    rep.notes.append("The s-SVD and partition rows (s-SVD[P1]-[P3]) need a threshold and block sizes the "
                     "dissertation does not report; they are not computed.")
    rep.notes.append(f"{n_seeds} ORG draws; tolerance 4 x SD over draws + a floor for rounding and ties.")
    return rep
