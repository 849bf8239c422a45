"""Reproductions of Wang (2008) Ch. 4-5: NMF release and simultaneous pattern hiding.

Protocols: NMF on the raw table (WBC 1/8 fill, UCI IRIS with its errata), Lin's projected gradients
(tol 1e-4) from uniform [0, 1] starts; K-means from the first K rows, clusters labelled in seed order;
entropies and mutual information in bits after MATLAB-style rounding.
"""

from __future__ import annotations

import time

import numpy as np

from ppdm import datasets
from ppdm.experiments.base import ReproductionReport, reference_rows
from ppdm.hiding import MemberRequest, PairRequest, hide_patterns, scheme1, scheme2, scheme3
from ppdm.mechanisms.nmf import NMF
from ppdm.mechanisms.nmf_solvers import factorize, nmf_init
from ppdm.metrics.information import attribute_entropies, entropy_distortion, mutual_information_vector
from ppdm.metrics.utility import lloyd_kmeans, matched_accuracy
from ppdm.metrics.value import value_metrics

EXACT = 1e-4
PRINTED = 5.1e-5  # values printed to 4 decimals


def load_xy(name: str) -> tuple[np.ndarray, np.ndarray]:
    df = datasets.load(name)
    return df.drop(columns="class").to_numpy(float), df["class"].to_numpy()


def iris_clustering() -> ReproductionReport:
    rep = ReproductionReport("wang2008-iris-clustering", "reference K-means of UCI IRIS, seeds = rows 1-3 (Ch. 5)")
    A, y = load_xy("iris_uci")
    labels, C = lloyd_kmeans(A, A[:3])
    for j, row in enumerate(reference_rows("wang2008_iris_centroids.csv")):
        rep.add(row["cluster"], "size", float((labels == j).sum()), float(row["size"]), 0.0)
        for c, name in enumerate(("sepal_length", "sepal_width", "petal_length", "petal_width")):
            rep.add(row["cluster"], f"centroid {name}", C[j, c], float(row[name]), PRINTED)
    truth = np.array([int(r["cluster"][1:]) - 1 for r in reference_rows("wang2008_iris_truth.csv")])
    rep.add("members", "records in another cluster than printed", float((truth != labels).sum()), 0.0, 0.0)
    rep.add("accuracy", "% vs UCI classes", 100 * matched_accuracy(labels, y), 88.7, 0.05)
    rep.notes.append("Clusters are numbered in seed order: C1 is seeded by row 1.")
    return rep


# ------------------------------------------------------------------------------------- Table 5.2


def _seed_order_accuracy(B: np.ndarray, truth: np.ndarray) -> float:
    labels, _ = lloyd_kmeans(B, B[:3])
    return 100.0 * float((labels == truth).mean())


def table_5_2(n_seeds: int = 10) -> ReproductionReport:
    from ppdm.mechanisms.noise import AdditiveNoise
    from ppdm.mechanisms.projection import RandomProjection

    rep = ReproductionReport("wang2008-table-5-2", "IRIS mutual information, entropy distortion (Table 5.2)")
    A, y = load_xy("iris_uci")
    truth, _ = lloyd_kmeans(A, A[:3])
    published = {r["method"]: r for r in reference_rows("wang2008_table5_2.csv")}
    E = attribute_entropies(A)
    iris = published["IRIS (original)"]
    for j in range(4):
        rep.add("IRIS", f"H(attr{j + 1})", E[j], float(iris[f"mi_attr{j + 1}"]), PRINTED)
    rep.add("IRIS", "ED", entropy_distortion(A, A), 0.0, 0.0)
    rep.add("IRIS", "K-means % vs classes", 100 * matched_accuracy(truth, y), 88.7, 0.05)
    makers = {
        "NMF (K=3)": lambda s: NMF(3, solver="pg", tol=1e-4, random_state=s),
        "Arp": lambda s: RandomProjection("arp", sigma=0.01, random_state=s),
        "Arpo": lambda s: RandomProjection("arpo", sigma=0.01, random_state=s),
        "rpA": lambda s: RandomProjection("rpa", sigma=0.01, random_state=s),
        "rpoA": lambda s: RandomProjection("rpoa", sigma=0.01, random_state=s),
        "UD": lambda s: AdditiveNoise(3.0, distribution="uniform", random_state=s),
        "ND": lambda s: AdditiveNoise(2.0, distribution="normal", random_state=s),
    }
    for method, make in makers.items():
        rows = []
        for s in range(n_seeds):
            B = make(s).fit_transform(A)
            rows.append([*mutual_information_vector(A, B), entropy_distortion(A, B), _seed_order_accuracy(B, truth)])
        R = np.array(rows)
        mean, sd = R.mean(axis=0), R.std(axis=0, ddof=1)
        pub = published[method]
        cols = [f"mi_attr{j + 1}" for j in range(4)] + ["ed", "kmeans_acc_pct"]
        for c, col in enumerate(cols):
            kind, note = "statistical", ""
            if method == "NMF (K=3)":
                kind, note = "info", "not reproduced: an NMF release with K=3 keeps far more information"
            elif col == "kmeans_acc_pct":
                kind, note = "info", "matching rule of the printed accuracies unknown (Arpo keeps distances)"
            elif method == "rpA" and col == "ed":
                kind, note = "info", "printed zeros imply smaller projection entries than sigma_r = 0.01"
            tol = 4 * float(sd[c]) + (0.05 if col != "kmeans_acc_pct" else 5.0)
            rep.add(method, col, float(mean[c]), float(pub[col]), tol, kind, note)
    rep.notes.append(f"Random rows: mean of {n_seeds} seeded draws; tolerance 4 x SD + 0.05 (the print is one draw).")
    rep.notes.append("The NMF row (MI 1.02/0.12/1.14/0.15, ED 0.23) is far more distorted than an NMF K=3 release "
                     "of raw IRIS (MI ~1.55/0.80/1.95/1.17, ED ~0.03 here); the dissertation does not say how.")
    return rep


# ------------------------------------------------------------------------------- Tables 4.6, 4.8


def table_4_6(n_seeds: int = 3) -> ReproductionReport:
    rep = ReproductionReport("wang2008-table-4-6", "Lin PG vs multiplicative NMF on WBC, K = 7 (Table 4.6)")
    A, _ = load_xy("wbc")
    rows = {r["tolerance"]: r for r in reference_rows("wang2008_table4_6.csv")}
    for tol_s in ("1e-3", "1e-4", "1e-5"):
        tol = float(tol_s)
        pub = rows[tol_s]
        for s in range(n_seeds):
            H0, W0 = nmf_init(A, 7, "random", np.random.default_rng(s))
            r = factorize(A, 7, solver="pg", H0=H0, W0=W0, tol=tol, max_iter=50000, time_limit=4000)
            tag = f"PG tol={tol_s} seed={s}"
            if tol_s == "1e-3":
                rep.add(tag, "objective ||A-HW||_F", r.objective, float(pub["objective_nmf_pg"]), None, "info",
                        "our PG stops earlier at 1e-3 (~41.8); see notes")
            else:
                rep.add(tag, "objective ||A-HW||_F", r.objective, float(pub["objective_nmf_pg"]), 0.3, "statistical")
            rep.add(tag, "iterations", r.n_iter, float(pub["iterations_nmf_pg"]), None, "info")
            rep.add(tag, "initial objective", r.initial_objective, 276.2, None, "info", "depends on the draw")
    H0, W0 = nmf_init(A, 7, "random", np.random.default_rng(0))
    r = factorize(A, 7, solver="mu", H0=H0, W0=W0, tol=1e-3, max_iter=50000, time_limit=4000)
    rep.add("MU tol=1e-3 seed=0", "objective ||A-HW||_F", r.objective, float(rows["1e-3"]["objective_nmfm_mu"]), 0.3,
            "statistical")
    rep.add("MU tol=1e-3 seed=0", "iterations", r.n_iter, float(rows["1e-3"]["iterations_nmfm_mu"]), None, "info")
    rep.notes.append("Each seed is one uniform [0, 1] start shared by both solvers; iterations depend on the draw.")
    rep.notes.append("At tol 1e-3 the printed run reached 41.4 after 17 iterations from an initial gradient norm of "
                     "7609.7; ours start near 4400 and stop at ~41.8, so that row is shown, not checked.")
    return rep


def table_4_8(n_seeds: int = 5) -> ReproductionReport:
    rep = ReproductionReport("wang2008-table-4-8", "NMF row on WBC, K = 7 (Tables 3.8 / 4.8)")
    A, _ = load_xy("wbc")
    pub = next(r for r in reference_rows("wang2008_table4_8.csv") if r["method"] == "NMF")
    vals = []
    for s in range(n_seeds):
        B = NMF(7, solver="pg", tol=1e-4, max_iter=50000, random_state=s).fit_transform(A)
        vals.append(value_metrics(A, B))
    for col in ("re", "rp", "rk", "cp", "ck"):
        v = np.array([x[col] for x in vals])
        kind, tol = ("statistical", 0.005) if col == "re" else ("info", None)
        rep.add("NMF K=7", col, float(v.mean()), float(pub[col]), tol, kind,
                "" if col == "re" else "rank metrics of a single random draw")
        if col == "re":
            rep.add("NMF K=7", "re (worst seed)", float(np.abs(v - float(pub[col])).max()) + float(pub[col]),
                    float(pub[col]), tol, "statistical", "largest deviation over the seeds")
    rep.notes.append(f"Mean over {n_seeds} seeded starts of Lin's PG (tol 1e-4) on raw WBC.")
    return rep


# ----------------------------------------------------------------------------------- hiding tests


def _vec(row: dict[str, str], prefix: str) -> np.ndarray | None:
    vals = [row[f"{prefix}_{j}"] for j in (1, 2, 3)]
    return None if any(v == "" for v in vals) else np.array([float(v) for v in vals])


def scheme_fixtures(rep: ReproductionReport) -> None:
    """Apply the schemes to every printed before-vector and compare with the printed after-vector."""
    for row in reference_rows("wang2008_pattern_hiding_fixtures.csv"):
        before, after, hx = _vec(row, "before"), _vec(row, "after"), _vec(row, "hx")
        if before is None or after is None:
            continue
        scheme = int(row["scheme"])
        got = scheme1(before) if scheme == 1 else scheme2(hx, before) if scheme == 2 else scheme3(hx, before)
        rep.add(row["case_id"], "max |swap - printed|", float(np.abs(got - after).max()), 0.0, 0.0)


IRIS_TESTS: list[tuple[str, list[MemberRequest], list[PairRequest], int]] = [
    ("S1 50->C2", [MemberRequest(49, 1)], [], 3),
    ("S1 50->C1", [MemberRequest(49, 0)], [], 3),
    ("S1 80->C1", [MemberRequest(79, 0)], [], 3),
    ("S1 80->C3", [MemberRequest(79, 2)], [], 3),
    ("S1 130->C2", [MemberRequest(129, 1)], [], 3),
    ("S1 130->C3", [MemberRequest(129, 2)], [], 3),
    ("S2 test 1 (50,80)", [], [PairRequest(49, 79)], 2),
    ("S2 test 2 (50,30)", [], [PairRequest(49, 29)], 2),
    ("S2 test 3 (50,30)+(80,130)", [], [PairRequest(49, 29), PairRequest(79, 129)], 2),
    ("S3 test 1 (50,80)", [], [PairRequest(49, 79)], 3),
    ("S3 test 2 (50,30)", [], [PairRequest(49, 29)], 3),
    ("S3 test 3 (50,30)+(80,130)", [], [PairRequest(49, 29), PairRequest(79, 129)], 3),
]


def iris_hiding(max_trials: int = 500) -> ReproductionReport:
    rep = ReproductionReport("wang2008-iris-hiding", "IRIS membership and relation hiding, Schemes 1-3 (Ch. 5)")
    scheme_fixtures(rep)
    A, _ = load_xy("iris_uci")
    stats: dict[str, list[tuple[int, float]]] = {"paper": [], "targeted": []}
    for name, members, pairs, scheme in IRIS_TESTS:
        for search in ("paper", "targeted"):
            t = time.perf_counter()
            res = hide_patterns(A, 3, members, pairs, search=search, scheme=scheme,
                                max_trials=max_trials, random_state=0)
            dt = time.perf_counter() - t
            stats[search].append((res.trials, dt))
            rep.add(f"{name} [{search}]", "achieved", float(res.achieved), 1.0, 0.0)
            rep.add(f"{name} [{search}]", "side-effect rate", res.side_effect_rate, 0.0, 0.0)
            rep.add(f"{name} [{search}]", "trials", res.trials, None, None, "info")
    for search, st in stats.items():
        tr, sec = np.array(st, dtype=float).T
        rep.add(f"{search} search", "mean trials", float(tr.mean()), None, None, "info")
        rep.add(f"{search} search", "mean seconds", float(sec.mean()), None, None, "info")
    rep.notes.append("Paper search: a fresh random NMF per trial (default HALS solver, tol 1e-4; Lin PG reaches "
                     "the same objective, slower), Scheme 1 for memberships, Scheme 2 or 3 for pairs. "
                     "Targeted search: minimal factor moves (see ppdm.hiding.search).")
    rep.notes.append("Success and side effects are checked on each release with K-means from its first 3 rows.")
    return rep


def hiding_targets(n_requests: int = 100, max_trials: int = 200) -> ReproductionReport:
    """Random single-member requests (any other cluster) on IRIS (K=3) and WBC (K=2), targeted search."""
    rep = ReproductionReport("ppdm-hiding-targets", "random single-member hiding on IRIS and WBC (beyond the papers)")
    for name, K in (("iris_uci", 3), ("wbc", 2)):
        A, _ = load_xy(name)
        rng = np.random.default_rng(2026)
        zero, trials, secs = 0, [], []
        for i in range(n_requests):
            rec = int(rng.integers(len(A)))
            res = hide_patterns(A, K, [MemberRequest(rec)], max_trials=max_trials, random_state=i)
            zero += bool(res.achieved and res.side_effect_rate == 0.0)
            trials.append(res.trials)
            secs.append(res.seconds)
        # target: at least 95 of 100 with zero side effects (published = the ideal, tolerance = the allowance)
        rep.add(name, f"zero-side-effect successes of {n_requests}", zero, n_requests, 0.05 * n_requests)
        rep.add(name, "mean trials", float(np.mean(trials)), None, None, "info")
        rep.add(name, "mean seconds", float(np.mean(secs)), None, None, "info")
    rep.notes.append("Records drawn with a fixed seed; each request is checked with K-means from the first K rows.")
    return rep
