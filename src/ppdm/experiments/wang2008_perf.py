"""Reproductions of Wang (2008) Sec. 4.4 and 6.1: NMF against its dimension on WBC (Table 4.7, Figs 4.3, 4.4)
and the computation times of the hiding methods on a 3000 x 3000 matrix (Table 6.1).

NMF is Lin's projected-gradient alternating least squares (tol 1e-4, maxiter 50000) from uniform [0, 1]
starts, one seeded start per trial, on raw WBC (1/8 fill). Run times and iteration counts depend on the
machine and the start, so they are compared as the shapes the text states (orderings, trends), each
measured over seeded trials; Table 6.1 is measured once and its ordering shown, not checked: CPU times of
3000 x 3000 decompositions change their order with the machine and its load (thin SVD against Arpo held
in some runs and not in others).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from ppdm.experiments.base import ReproductionReport, figure_png, reference_rows
from ppdm.experiments.wang2008_nmf import load_xy
from ppdm.mechanisms.nmf_solvers import factorize, hoyer_sparseness, nmf_init
from ppdm.metrics import svm_accuracy, value_metrics

__all__ = ["table_4_7_figs_4_3_4_4", "table_6_1", "TABLE_4_7_FINDINGS"]

_SPARSE = ("ppdm's projected-gradient NMF from uniform starts gives a denser H than W (Hoyer sparseness about "
           "0.32 against 0.62 over 5 starts): the printed sparseness is not reproduced")
#: Table 4.7 / Fig. 4.3 cells found not to agree with the print (5 seeded starts)
TABLE_4_7_FINDINGS: dict[tuple[str, str], str] = {
    ("Table 4.7 claim", "Spearman(K, initial gradient norm) > 0.5 (printed 0.95; 1 = yes)"):
        "the initial projected-gradient norm of uniform starts does not grow with K here",
    ("Fig. 4.3", "sparseness_w (mean of 5)"): _SPARSE, ("Fig. 4.3", "sparseness_h (mean of 5)"): _SPARSE,
    ("Fig. 4.3", "share of H entries that are zero > 0.5 (1 = yes)"): _SPARSE,
    ("Fig. 4.3", "H sparser than W in every run (1 = yes)"): _SPARSE,
}


def _plots(dims: pd.DataFrame, trunc: pd.DataFrame, sparse: pd.DataFrame) -> dict[str, bytes]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for col, lab in (("sparseness_w", "W (basis vectors)"), ("sparseness_h", "H (factor vectors)")):
        ax.bar(lab, sparse[col].mean(), yerr=sparse[col].std(ddof=1) if len(sparse) > 1 else 0, capsize=4)
    ax.set_ylabel("Hoyer sparseness")
    ax.set_title("Fig. 4.3: sparseness of the NMF factors, WBC, K = 7", fontsize=9)
    fig.tight_layout()
    out = {"wang2008_fig_4_3.png": figure_png(fig)}
    fig, ax1 = plt.subplots(figsize=(6, 4))
    g = trunc.groupby("r")
    ax1.errorbar(g["re"].mean().index, g["re"].mean(), yerr=g["re"].std(ddof=1), color="C0", marker="o",
                 label="RE (privacy)")
    ax1.set_xlabel("final dimension r (from K = 7)")
    ax1.set_ylabel("RE")
    ax2 = ax1.twinx()
    ax2.errorbar(g["svm_pct"].mean().index, g["svm_pct"].mean(), yerr=g["svm_pct"].std(ddof=1), color="C1",
                 marker="s", label="SVM accuracy %")
    ax2.set_ylabel("SVM accuracy % (squares)")
    ax1.set_title("Fig. 4.4: NMF performance against the final dimension (WBC)", fontsize=9)
    fig.tight_layout()
    out["wang2008_fig_4_4.png"] = figure_png(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    d = dims.groupby("K")
    ax.errorbar(d["iterations"].median().index, d["iterations"].median(), fmt="o-", label="iterations (median)")
    pub = pd.DataFrame(reference_rows("wang2008_table4_7.csv")).astype(float)
    ax.plot(pub["dimension_k"], pub["iterations"], "x--", label="iterations (printed)")
    ax.set_xlabel("NMF dimension K")
    ax.set_ylabel("outer iterations to tol 1e-4")
    ax.legend(fontsize=7)
    ax.set_title("Table 4.7: projected-gradient NMF on WBC against K", fontsize=9)
    fig.tight_layout()
    out["wang2008_table_4_7.png"] = figure_png(fig)
    return out


def table_4_7_figs_4_3_4_4(n_seeds: int = 5) -> ReproductionReport:
    """Table 4.7 (PG NMF against K), Fig. 4.3 (sparseness at K = 7) and Fig. 4.4 (truncation to r < 7)."""
    rep = ReproductionReport("wang2008-table-4-7-figs-4-3-4-4",
                             "projected-gradient NMF on WBC: dimension, sparseness, truncation "
                             "(Table 4.7, Figs 4.3-4.4)")
    rep.findings.update(TABLE_4_7_FINDINGS)
    A, y = load_xy("wbc")
    pub = {int(r["dimension_k"]): r for r in reference_rows("wang2008_table4_7.csv")}
    dims, trunc, sparse = [], [], []
    for seed in range(n_seeds):
        for K in sorted(pub, reverse=True):
            H0, W0 = nmf_init(A, K, "random", np.random.default_rng([seed, K]))
            r = factorize(A, K, solver="pg", H0=H0, W0=W0, tol=1e-4, max_iter=50000, time_limit=4000)
            dims.append({"seed": seed, "K": K, "iterations": r.n_iter, "initial_gradient": r.initial_gradient,
                         "seconds": r.seconds, "objective": r.objective})
            if K == 7:
                sparse.append({"seed": seed, "sparseness_w": hoyer_sparseness(r.W),
                               "sparseness_h": hoyer_sparseness(r.H), "zero_share_h": float(np.mean(r.H == 0))})
                for rr in range(7, 0, -1):
                    B = r.H[:, :rr] @ r.W[:rr]
                    trunc.append({"seed": seed, "r": rr, "re": value_metrics(A, B)["re"],
                                  "svm_pct": svm_accuracy(B, y, gamma="scale", n_folds=10)})
    D, T, S = pd.DataFrame(dims), pd.DataFrame(trunc), pd.DataFrame(sparse)
    med = D.groupby("K").median()
    for K in sorted(pub, reverse=True):
        for col, pcol in (("iterations", "iterations"), ("initial_gradient", "initial_gradient_norm"),
                          ("seconds", "run_time_s")):
            rep.add(f"K={K}", f"{col} (median of {n_seeds})", float(med.loc[K, col]), float(pub[K][pcol]), None,
                    "info", "depends on the start and the machine")
    ks = sorted(pub)
    printed_rho = spearmanr(ks, [float(pub[k]["initial_gradient_norm"]) for k in ks])[0]
    rho = spearmanr(ks, [med.loc[k, "initial_gradient"] for k in ks])[0]
    rep.add("Table 4.7 claim", f"Spearman(K, initial gradient norm) > 0.5 (printed {printed_rho:.2f}; 1 = yes)",
            float(rho > 0.5), 1.0, 0.0, "statistical", f"measured rho = {rho:.2f}")
    rep.add("Table 4.7 claim", "every K converges within 300 iterations (printed <= 128; 1 = yes)",
            float(D["iterations"].max() <= 300), 1.0, 0.0, "statistical",
            f"largest over all starts: {int(D['iterations'].max())}")
    fastest = int(med["seconds"].idxmin())
    rep.add("Table 4.7 claim", "K = 2 is the fastest (printed 0.52 s vs >= 4.65 s; 1 = yes)", float(fastest == 2),
            1.0, None, "info", f"fastest median: K = {fastest}; run times depend on the machine and its load "
            "(it held on a quiet machine and not on a loaded one), so this is shown, not checked")
    # Fig. 4.3: printed W 0.34, H 0.64, more than half of H zero; the text: factors sparser than the basis
    for col, target in (("sparseness_w", 0.34), ("sparseness_h", 0.64)):
        v = S[col].to_numpy()
        rep.add("Fig. 4.3", f"{col} (mean of {n_seeds})", float(v.mean()), target, 4 * float(v.std(ddof=1)) + 0.05,
                "statistical", "printed from one run")
    rep.add("Fig. 4.3", "share of H entries that are zero > 0.5 (1 = yes)", float(S["zero_share_h"].mean() > 0.5), 1.0,
            0.0, "statistical", f"measured {S['zero_share_h'].mean():.3f}")
    rep.add("Fig. 4.3", "H sparser than W in every run (1 = yes)",
            float((S["sparseness_h"] > S["sparseness_w"]).all()), 1.0, 0.0, "statistical")
    # Fig. 4.4: a smaller final dimension gives more privacy (RE) and less utility (accuracy)
    g = T.groupby("r").mean()
    rep.add("Fig. 4.4", "RE rises as r falls from 7 to 1 (1 = yes)",
            float(bool((np.diff(g["re"].to_numpy()) <= 0).all())), 1.0, 0.0, "statistical",
            "mean RE over starts, r = 1..7: " + " ".join(f"{v:.3f}" for v in g["re"]))
    rep.add("Fig. 4.4", "SVM accuracy at r = 1 below that at r = 7, points", float(g.loc[7, "svm_pct"] -
            g.loc[1, "svm_pct"]), None, None, "info")
    rep.add("Fig. 4.4", "accuracy at r = 1 < accuracy at r = 7 (1 = yes)",
            float(g.loc[1, "svm_pct"] < g.loc[7, "svm_pct"]), 1.0, 0.0, "statistical",
            "mean accuracy r = 1..7: " + " ".join(f"{v:.1f}" for v in g["svm_pct"]))
    rep.add("Fig. 4.4", "RE at r = 4 (the recommended dimension)", float(g.loc[4, "re"]), None, None, "info")
    rep.notes.append(f"{n_seeds} uniform [0, 1] starts per K; r < 7 keeps the first r columns of H and rows of W "
                     "of the K = 7 factorisation (Algorithm 7, step 5b).")
    rep.notes.append("SVM: scikit-learn SVC (RBF, gamma 'scale', C = 1), 10 stratified folds; SVMlight's are not "
                     "reported.")
    rep.tables["wang2008_table_4_7_runs.csv"] = D
    rep.tables["wang2008_fig_4_4_truncation.csv"] = T
    rep.tables["wang2008_fig_4_3_sparseness.csv"] = S
    rep.figures.update(_plots(D, T, S))
    return rep


def table_6_1(n: int = 3000, seed: int = 0) -> ReproductionReport:
    """Table 6.1: CPU times of NMF (K = 100), thin SVD (K = 100), Arp, Arpo and the complete SVD, as an ordering."""
    from ppdm.mechanisms.nmf import NMF
    from ppdm.mechanisms.projection import RandomProjection
    from ppdm.mechanisms.svd import svd_reconstruct

    rep = ReproductionReport("wang2008-table-6-1", "computation times of four hiding methods, 3000 x 3000 (Table 6.1)")
    A = np.random.default_rng(seed).uniform(0.0, 1.0, size=(n, n))
    runs = {
        "NMF-based": lambda: NMF(100, solver="pg", tol=1e-4, max_iter=50, random_state=seed).fit_transform(A),
        "thinSVD-based": lambda: svd_reconstruct(A, 100, solver="lanczos"),
        "Arp": lambda: RandomProjection("arp", sigma=1.0, random_state=seed).fit_transform(A),
        "Arpo": lambda: RandomProjection("arpo", sigma=1.0, random_state=seed).fit_transform(A),
        "complete SVD": lambda: np.linalg.svd(A),
    }
    pub = {r["method"]: float(r["cpu_time_s"]) for r in reference_rows("wang2008_table6_1.csv")}
    times = {}
    for name, run in runs.items():
        t = time.process_time()
        run()
        times[name] = time.process_time() - t
        rep.add(name, "CPU s", times[name], pub[name], None, "info", "machine-dependent")
    order = sorted(pub, key=pub.__getitem__)
    for a, b in zip(order, order[1:], strict=False):
        rep.add("ordering", f"{a} faster than {b} (1 = yes)", float(times[a] < times[b]), 1.0, None, "info",
                f"one run's times, which depend on the machine and its load: {times[a]:.2f} s vs {times[b]:.2f} s "
                f"(printed {pub[a]:.2f} vs {pub[b]:.2f})")
    measured = sorted(times, key=times.__getitem__)
    rep.notes.append("printed order: " + " < ".join(order) + "; measured: " + " < ".join(measured))
    rep.notes.append(f"one run on a {n} x {n} U[0, 1] matrix (the source matrix is not described); NMF stops after "
                     "50 projected-gradient iterations (the dissertation gives no stopping rule for this table); "
                     "CPU time of this process (all threads).")
    rep.notes.append("Slow by nature: the claim is about decompositions of a 3000 x 3000 matrix, the paper's size.")
    rep.tables["wang2008_table_6_1.csv"] = pd.DataFrame(
        [{"method": k, "cpu_s": v, "printed_cpu_s": pub[k]} for k, v in times.items()])
    return rep
