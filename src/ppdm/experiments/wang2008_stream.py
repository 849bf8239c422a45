"""Reproductions of Wang (2008) Ch. 6: incremental SVD updating next to full recomputation.

* WBC: start with 199 rows at K = 7 and add 10 batches of 50 (spec Sec. 9: final RE 0.1268 vs 0.1222).
* Table 6.3: a 10000 x 1000 matrix of rank 100, K = 60, start with 2000 rows and add 8 x 1000.
  The data are ``ppdm.datasets.low_rank(10000, 1000, 100, spectrum='linear')``: orthonormal random
  factors and singular values decaying linearly from 1 to 1/100 (the paper's generator is not given;
  this spectrum gives an exact rank-60 RE of 0.256 against the paper's 0.27). Times are this machine's.
* Columns: 3000 x 3000 of rank 100, K = 80, start with 80 columns and add 22 columns 100 times
  (2280 columns in the end, as printed); recomputation with ARPACK (Lanczos), as the paper.

Releases are of the raw data (spec Sec. 2: distortion is always applied to the raw matrix).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ppdm import datasets
from ppdm.exceptions import PrivacyWarning
from ppdm.experiments.base import ReproductionReport, reference_rows
from ppdm.mechanisms.incremental import IncrementalSVD
from ppdm.metrics import kmeans_accuracy, svm_accuracy
from ppdm.utils.linalg import thin_svd

__all__ = ["wbc_rows", "table_6_3", "columns", "wbc_report", "table_6_3_report", "columns_report"]


def _re(A: np.ndarray, B: np.ndarray) -> float:
    return float(np.linalg.norm(A - B) / np.linalg.norm(A))


def _exact(A: np.ndarray, k: int, solver: str = "exact") -> np.ndarray:
    U, s, Vt, _ = thin_svd(A, k, solver=solver, rng=np.random.default_rng(0))
    assert U is not None
    return (U * s) @ Vt


def _progress(total: int, description: str):  # type: ignore[no-untyped-def]
    from rich.progress import BarColumn, Progress, TextColumn

    p = Progress(TextColumn(description), BarColumn(), TextColumn("{task.completed}/{task.total}"), transient=True)
    return p, p.add_task(description, total=total)


def _silhouette(B: np.ndarray, K: int) -> tuple[float, np.ndarray]:
    """Mean silhouette (Euclidean, as MATLAB's) of K-means on the range-normalised release, and its labels.

    K-means follows the dissertation's protocol (Lloyd from the first K rows of the range-normalised matrix).
    """
    from sklearn.metrics import silhouette_score

    from ppdm.metrics import lloyd_kmeans, range_normalize

    Z = range_normalize(B)
    labels, _ = lloyd_kmeans(Z, Z[:K])
    return float(silhouette_score(Z, labels)), labels


def wbc_rows(start: int = 199, batch: int = 50, k: int = 7, with_svm: bool = True) -> list[dict[str, float]]:
    """Per step: rows, RE / K-means / SVM of the incremental and of the full recomputation."""
    df = datasets.load("wbc")
    A, y = df.drop(columns="class").to_numpy(float), df["class"].to_numpy()
    est = IncrementalSVD(k).fit(A[:start])
    out = []
    for lo in range(start, A.shape[0], batch):
        est.update(A[lo : lo + batch])
        n = est.n_samples_seen_
        Bi, Bf = est.reconstruct(), _exact(A[:n], k)
        r = {"rows": n, "re_incremental": _re(A[:n], Bi), "re_full": _re(A[:n], Bf),
             "kmeans_incremental": kmeans_accuracy(Bi, y[:n]), "kmeans_full": kmeans_accuracy(Bf, y[:n])}
        (si, li), (sf, lf) = _silhouette(Bi, 2), _silhouette(Bf, 2)
        r |= {"silhouette_incremental": si, "silhouette_full": sf, "same_cluster_share": float(np.mean(li == lf))}
        if with_svm:
            r["svm_incremental"] = svm_accuracy(Bi, y[:n], gamma="scale", n_folds=10)
            r["svm_full"] = svm_accuracy(Bf, y[:n], gamma="scale", n_folds=10)
        out.append(r)
    return out


def wbc_report() -> ReproductionReport:
    rep = ReproductionReport("wang2008-stream-wbc", "WBC incremental row updating, 199 + 10 x 50 rows, K = 7 (Ch. 6)")
    rows = wbc_rows()
    for r in rows:
        tag = f"rows={r['rows']}"
        rep.add(tag, "RE incremental", r["re_incremental"], None, None, "info")
        rep.add(tag, "RE full", r["re_full"], None, None, "info")
        rep.add(tag, "RE difference", r["re_incremental"] - r["re_full"], 0.0, 0.01,
                note="paper: difference of the order of 1e-3")
        rep.add(tag, "K-means % incremental", r["kmeans_incremental"], r["kmeans_full"], None, "info",
                "published: no degradation")
        rep.add(tag, "SVM % difference", r["svm_incremental"] - r["svm_full"], 0.0, 1.5,
                note="paper: same SVM accuracy; SVMlight setup unknown (tolerance of spec Sec. 9)")
        rep.add(tag, "mean silhouette incremental (Fig. 6.6)", r["silhouette_incremental"], None, None, "info")
        rep.add(tag, "mean silhouette Lanczos (Fig. 6.7)", r["silhouette_full"], None, None, "info",
                "exact LAPACK rank-7 here")
        rep.add(tag, "mean silhouette difference", r["silhouette_incremental"] - r["silhouette_full"], 0.0, 0.02,
                note="paper: row updating does not affect clustering (figures only, no values)")
        rep.add(tag, "records in the same K-means cluster", r["same_cluster_share"], None, None, "info")
    last = rows[-1]
    rep.add("rows=699", "final RE incremental", last["re_incremental"], 0.1268, 5e-4, note="spec Sec. 9")
    rep.add("rows=699", "final RE full", last["re_full"], 0.1222, 1e-4, note="Table 3.8 / spec Sec. 9")
    rep.notes.append("Economy QR of the residual with r = min(m, q) (q = 50 > m = 9); raw data, K = 7.")
    rep.notes.append("SVM: scikit-learn SVC (RBF, gamma='scale') on range-normalised data, 10-fold stratified.")
    rep.notes.append("Silhouettes (Figs 6.6 / 6.7): K-means with K = 2 from the first 2 rows of each range-normalised "
                     "approximation; mean silhouette over its records (Euclidean); the figures print no values, so "
                     "the difference is checked at 0.02.")
    return rep


def table_6_3(
    n: int = 10_000, m: int = 1_000, rank: int = 100, k: int = 60, start: int = 2_000, batch: int = 1_000,
    residual_rank: int | None = None, progress: bool = True,
) -> list[dict[str, float]]:
    """Per step: rows, time and RE of the incremental update and of an exact LAPACK recomputation."""
    X = datasets.low_rank(n, m, rank, spectrum="linear", random_state=0)
    est = IncrementalSVD(k, residual_rank=residual_rank, track_gram=False, random_state=0).fit(X[:start])
    out = []
    steps = range(start, n, batch)
    bar, task = _progress(len(steps), "table 6.3")
    with bar if progress else _Null():
        for lo in steps:
            t = time.perf_counter()
            est.update(X[lo : lo + batch])
            Bi = est.reconstruct()
            t_inc = time.perf_counter() - t
            A = X[: lo + batch]
            t = time.perf_counter()
            Bf = _exact(A, k)
            t_full = time.perf_counter() - t
            out.append({"rows": lo + batch, "incremental_time_s": t_inc, "incremental_re": _re(A, Bi),
                        "exact_time_s": t_full, "exact_re": _re(A, Bf)})
            if progress:
                bar.advance(task)
    return out


class _Null:
    def __enter__(self):  # type: ignore[no-untyped-def]
        return self

    def __exit__(self, *a: object) -> None:
        return None


def table_6_3_report() -> ReproductionReport:
    rep = ReproductionReport("wang2008-table-6-3", "incremental rows, 10000 x 1000 of rank 100, K = 60 (Table 6.3)")
    published = {int(r["rows"]): r for r in reference_rows("wang2008_table6_3.csv")}
    for r in table_6_3():
        p = published[int(r["rows"])]
        tag = f"rows={r['rows']}"
        rep.add(tag, "incremental RE", r["incremental_re"], float(p["incremental_re"]), None, "info",
                "other synthetic data")
        rep.add(tag, "exact RE", r["exact_re"], float(p["lanczos_re"]), None, "info", "other synthetic data")
        rep.add(tag, "RE relative gap", (r["incremental_re"] - r["exact_re"]) / r["exact_re"], 0.0, 0.01,
                note="issue target: within 1 %; paper 0.87 % at 10000 rows")
        rep.add(tag, "incremental time s", r["incremental_time_s"], float(p["incremental_time_s"]), None, "info",
                "MATLAB 7.1 times")
        rep.add(tag, "exact time s", r["exact_time_s"], float(p["lanczos_time_s"]), None, "info",
                "LAPACK here, Lanczos in the paper")
    rep.notes.append("Data: ppdm.datasets.low_rank(10000, 1000, 100, spectrum='linear', random_state=0).")
    rep.notes.append("Incremental time includes the refresh release U S V^T of every row; exact time is "
                     "LAPACK SVD plus the same release.")
    return rep


def columns(
    n: int = 3_000, m: int = 3_000, rank: int = 100, k: int = 80, start: int = 80, add: int = 22, steps: int = 100,
    buffer_rank: int = 8, progress: bool = True, recompute_every: int = 1,
) -> list[dict[str, float]]:
    """Per step: columns, time and RE of the incremental update (the paper's, and with ``buffer_rank``
    extra tracked components) and of a Lanczos recomputation.

    The recomputation runs after every ``recompute_every``-th step only (its RE and time are NaN on the
    others): each is an independent ARPACK SVD of the whole table so far, the costly part of the run.
    """
    if recompute_every < 1:
        raise ValueError(f"recompute_every must be at least 1 (got {recompute_every})")
    X = datasets.low_rank(n, m, rank, spectrum="linear", random_state=1)
    variants = {"incremental": IncrementalSVD(k, track_gram=False).fit(X[:, :start]),
                "buffered": IncrementalSVD(k, buffer_rank=buffer_rank, track_gram=False).fit(X[:, :start])}
    cum = dict.fromkeys([*variants, "recompute"], 0.0)
    out = []
    bar, task = _progress(steps, "columns")
    with bar if progress else _Null():
        for i in range(steps):
            lo = start + i * add
            A = X[:, : lo + add]
            row: dict[str, float] = {"columns": lo + add}
            for name, est in variants.items():
                t = time.perf_counter()
                est.add_columns(X[:, lo : lo + add])
                B = est.reconstruct()
                row[f"{name}_s"] = time.perf_counter() - t
                cum[name] += row[f"{name}_s"]
                row[f"cumulative_{name}_s"], row[f"{name}_re"] = cum[name], _re(A, B)
            row["recompute_s"] = row["recompute_re"] = float("nan")
            if (i + 1) % recompute_every == 0:
                t = time.perf_counter()
                Bf = _exact(A, k, solver="lanczos")
                row["recompute_s"] = time.perf_counter() - t
                cum["recompute"] += row["recompute_s"]
                row["recompute_re"] = _re(A, Bf)
            row["cumulative_recompute_s"] = cum["recompute"]
            out.append(row)
            if progress:
                bar.advance(task)
    return out


_RECOMPUTE_EVERY = 10


#: Fig. 6.2 cells found not to hold when the reproduction was measured (the synthetic matrix is seeded)
COLUMNS_FINDINGS: dict[tuple[str, str], str] = {
    ("columns=300", "incremental RE gap"): "the incremental RE is 0.0057 above the recomputed one at 300 columns, "
                                           "beyond the 0.005 read from the paper's other Ch. 6 gaps (0.0024, 0.0046)",
}


def columns_report() -> ReproductionReport:
    rep = ReproductionReport("wang2008-stream-columns",
                             "incremental columns, 3000 x 3000 of rank 100, K = 80, 80 + 100 x 22 columns (Ch. 6)")
    rep.findings.update(COLUMNS_FINDINGS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # K = 80 = the first block's width, as the paper
        rows = columns(recompute_every=_RECOMPUTE_EVERY)
    checked = rows[_RECOMPUTE_EVERY - 1 :: _RECOMPUTE_EVERY]
    for r in checked:
        tag = f"columns={r['columns']}"
        rep.add(tag, "recompute RE", r["recompute_re"], None, None, "info")
        rep.add(tag, "incremental RE", r["incremental_re"], None, None, "info")
        # the paper reports "very close RE"; its own Ch. 6 gaps are 0.0024 (Table 6.3) and 0.0046 (WBC)
        rep.add(tag, "incremental RE gap", r["incremental_re"] - r["recompute_re"], 0.0, 0.005,
                note="paper: 'very close RE'; absolute, as the paper's Ch. 6 gaps (<= 0.0046)")
        rep.add(tag, "buffered RE", r["buffered_re"], None, None, "info")
        rep.add(tag, "buffered RE relative gap", (r["buffered_re"] - r["recompute_re"]) / r["recompute_re"], 0.0, 0.01)
        rep.add(tag, "cumulative incremental s", r["cumulative_incremental_s"], None, None, "info")
        rep.add(tag, "incremental s, this step", r["incremental_s"], None, None, "info")
        rep.add(tag, "recompute s, this step", r["recompute_s"], None, None, "info")
    last = rows[-1]
    rep.add("end", "cumulative incremental s", last["cumulative_incremental_s"], 29.1719, None, "info",
            "MATLAB 7.1")
    ratio = sum(r["recompute_s"] for r in checked) / sum(r["incremental_s"] for r in checked)
    rep.add("end", "recompute / incremental time", ratio, 104.7306 / 29.1719, None, "info",
            f"paper: cumulative over all 100 steps, incremental faster (3.6x); here the {len(checked)} steps "
            "where both run")
    rep.notes.append(f"The recomputation runs after every {_RECOMPUTE_EVERY}th step (where the RE gaps are "
                     "checked): an ARPACK SVD of the whole table so far costs far more than the update, and the "
                     "paper's cumulative recomputation time over all 100 steps is not rerun. Slow by nature: 200 "
                     "incremental updates of a 3000-row table and 10 ARPACK SVDs of up to 3000 x 2280.")
    rep.notes.append("Data: ppdm.datasets.low_rank(3000, 3000, 100, spectrum='linear', random_state=1).")
    rep.notes.append("Recomputation: ARPACK (scipy svds), rank 80, plus the release; incremental time includes "
                     "the refresh release of the whole table after every update.")
    rep.notes.append("'buffered': the same updates tracking 8 extra components (buffer_rank=8), released at rank 80; "
                     "each truncation then discards less of what later columns need.")
    return rep
