"""Reproductions of the source papers' published tables (``ppdm reproduce``)."""

from __future__ import annotations

from ppdm.exceptions import ParameterError
from ppdm.experiments import (
    alotaibi2015_attacks,
    alotaibi2015_classification,
    alotaibi2015_clustering,
    alotaibi2015_distance_error,
    alotaibi2015_dot,
    alotaibi2015_examples,
    alotaibi2015_figures,
    alotaibi2015_known_points,
    alotaibi2015_nmds,
    alotaibi2015_pca_attack,
    alotaibi2015_structure,
    alotaibi2015_sweeps,
    alotaibi2015_utility,
    wang2008,
    wang2008_nmf,
    wang2008_partition,
    wang2008_perf,
    wang2008_stream,
    wang2008_wdbc,
    xu2006,
)
from ppdm.experiments.base import Reproduction, ReproductionReport

__all__ = ["REPRODUCTIONS", "BLAS_THREADS", "run_reproduction", "Reproduction", "ReproductionReport"]

REPRODUCTIONS: dict[str, Reproduction] = {
    r.id: r
    for r in (
        Reproduction("wang2008-table-2-1", "metric example A_e, rank 2 and 1 (Table 2.1)", wang2008.table_2_1),
        Reproduction("wang2008-table-2-2", "thin SVD on UCI IRIS (Table 2.2)", wang2008.table_2_2),
        Reproduction("wang2008-appendix-a", "thin SVD on WDBC, k = 1..30 (Appendix A)", wang2008.appendix_a),
        Reproduction("wang2008-appendix-h", "sparsified SVD on WDBC (Appendix H1-H9)", wang2008.appendix_h),
        Reproduction("wang2008-table-3-7", "sweep statistics incl. random baselines on WDBC (Table 3.7)",
                     wang2008.table_3_7, slow=True),
        Reproduction("wang2008-tables-3-2-3-3-3-5",
                     "mining-accuracy statistics of thin SVD, noise, projections on WDBC (Tables 3.2, 3.3, 3.5; "
                     "Figs 3.6-3.9)", wang2008_wdbc.tables_3_2_3_3_3_5, slow=True),
        Reproduction("wang2008-tables-3-6-6-2", "seven methods on WDBC at similar RE (Tables 3.6, 6.2)",
                     wang2008_wdbc.tables_3_6_6_2),
        Reproduction("wang2008-table-3-8", "WBC thin SVD k = 7 (Tables 3.8 / 4.8)", wang2008.table_3_8),
        Reproduction("wang2008-table-3-9", "ORG: original, UD, ND, SVD k = 20 rows (Table 3.9)", xu2006.table_3_9),
        Reproduction("xu2006-table-1", "SVD, SSVD, UD, ND on the synthetic 2000 x 100 set (Xu et al. Table 1)",
                     xu2006.table_1, slow=True),
        Reproduction("wang2008-fig-3-13", "ORG: attribute-partition s-SVD against the number of distorted "
                     "attributes (Fig. 3.13)", xu2006.fig_3_13, slow=True),
        Reproduction("wang2008-table-3-10", "WBC thin SVD k = 3 (Table 3.10)", wang2008.table_3_10),
        Reproduction("wang2008-fig-3-14", "selective s-SVD on WBC: accuracy against the rank, partitions P1-P3 "
                     "(Fig. 3.14)", wang2008_partition.fig_3_14, slow=True),
        Reproduction("wang2008-figs-2-4-2-5", "distortion metrics of thin SVD and noise on YEAST, from --data-dir "
                     "(Figs 2.4, 2.5)", wang2008_partition.figs_2_4_2_5, options=("data_dir", "trials"),
                     needs=("yeast",)),
        Reproduction("alotaibi2015-table-5-11", "k-NN Friedman ranks (Table 5.11)", alotaibi2015_utility.table_5_11),
        Reproduction("alotaibi2015-table-5-12", "linear SVM Friedman ranks (Table 5.12)",
                     alotaibi2015_utility.table_5_12),
        Reproduction("alotaibi2015-table-5-13", "k-NN ranks at p = n-1 with X (Table 5.13)",
                     alotaibi2015_utility.table_5_13),
        Reproduction("alotaibi2015-critical-differences", "Nemenyi critical differences (Figs 5.13-5.15)",
                     alotaibi2015_utility.critical_differences),
        Reproduction("alotaibi2015-distance-attack", "distance-based attack worked example (Sec. 4.4.2.3)",
                     alotaibi2015_utility.distance_attack_example),

        Reproduction("wang2008-iris-clustering", "reference K-means of UCI IRIS (Ch. 5)", wang2008_nmf.iris_clustering),
        Reproduction("wang2008-table-5-2", "IRIS mutual information and entropy distortion (Table 5.2)",
                     wang2008_nmf.table_5_2),
        Reproduction("wang2008-table-4-6", "Lin PG vs multiplicative NMF on WBC, K = 7 (Table 4.6)",
                     wang2008_nmf.table_4_6),
        Reproduction("wang2008-table-4-7-figs-4-3-4-4",
                     "PG NMF on WBC against K, factor sparseness, truncation to r < 7 (Table 4.7, Figs 4.3-4.4)",
                     wang2008_perf.table_4_7_figs_4_3_4_4),
        Reproduction("wang2008-table-6-1", "computation times as an ordering, 3000 x 3000 (Table 6.1)",
                     wang2008_perf.table_6_1, slow=True),
        Reproduction("wang2008-table-4-8", "NMF row on WBC, K = 7 (Tables 3.8 / 4.8)", wang2008_nmf.table_4_8),
        Reproduction("wang2008-iris-hiding", "IRIS hiding tests, Schemes 1-3, paper vs targeted search (Ch. 5)",
                     wang2008_nmf.iris_hiding, slow=True),
        Reproduction("ppdm-hiding-targets", "100 random single-member hiding requests on IRIS and WBC",
                     wang2008_nmf.hiding_targets, slow=True),

        Reproduction("alotaibi2015-table-2-2", "Mahalanobis distances of the Example 2.2 objects (Table 2.2)",
                     alotaibi2015_examples.table_2_2),
        Reproduction("alotaibi2015-tables-3-2-3-4",
                     "Iris X and its 3-D release Y: rows, statistics, correlations (Tables 3.2-3.4)",
                     alotaibi2015_examples.tables_3_2_3_4),
        Reproduction("alotaibi2015-table-3-5", "PAV example (Table 3.5)", alotaibi2015_nmds.table_3_5),
        Reproduction("alotaibi2015-sec-3-3-5", "NMDS worked example, 5 Iris records to p = 3 (Sec. 3.3.5)",
                     alotaibi2015_nmds.sec_3_3_5),
        Reproduction("alotaibi2015-fig-3-5", "NMDS of a Swiss roll, a Gaussian and three clusters to 2-D (Fig. 3.5)",
                     alotaibi2015_nmds.fig_3_5),
        Reproduction("alotaibi2015-table-3-7", "Minkowski r = 1..5 at p = n - 1: Euclidean lowest (Table 3.7)",
                     alotaibi2015_nmds.table_3_7, slow=True),
        Reproduction("alotaibi2015-fig-3-4", "distribution of Iris dissimilarities after NMDS to p = 3, 2, 1 "
                     "(Fig. 3.4)", alotaibi2015_figures.fig_3_4, slow=True),
        Reproduction("alotaibi2015-fig-4-20", "covariance ellipses of N(0, Sigma) draws with 10-30 % replaced by "
                     "their images, six transforms (Fig. 4.20)", alotaibi2015_figures.fig_4_20, slow=True),
        Reproduction("alotaibi2015-fig-5-12", "class separation of Wine in 2-D, X and five releases (Fig. 5.12)",
                     alotaibi2015_figures.fig_5_12, slow=True),

        Reproduction("wang2008-stream-wbc", "WBC incremental row updating, 199 + 10 x 50 rows (Ch. 6)",
                     wang2008_stream.wbc_report),
        Reproduction("wang2008-table-6-3", "incremental rows, 10000 x 1000, K = 60 (Table 6.3)",
                     wang2008_stream.table_6_3_report, slow=True),
        Reproduction("wang2008-stream-columns", "incremental columns, 3000 x 3000, K = 80 (Ch. 6)",
                     wang2008_stream.columns_report, slow=True),

        Reproduction("alotaibi2015-tables-4-3-4-4",
                     "PCA-attack eigen matching distances at p = n-1 on Wine, BCW, Iris (Tables 4.3 / 4.4)",
                     alotaibi2015_attacks.tables_4_3_4_4),
        Reproduction("alotaibi2015-figs-4-12-4-18-4-19",
                     "stress and attack privacy against p for RP, PCA, SVD, NMDS, DCT (Figs 4.12, 4.18, 4.19)",
                     alotaibi2015_sweeps.figs_4_12_4_18_4_19, slow=True, options=("data_dir", "trials")),
        Reproduction("alotaibi2015-figs-4-13-4-14-4-15",
                     "distance attack: known points, outlying known points, attacker up-scaling (Figs 4.13-4.15)",
                     alotaibi2015_known_points.figs_4_13_4_14_4_15, slow=True, options=("trials",)),
        Reproduction("alotaibi2015-fig-4-11",
                     "distance attack on NMDS releases of 1000 x 100 synthetic data: error over the iterations "
                     "and against p (Fig. 4.11)", alotaibi2015_distance_error.fig_4_11, slow=True,
                     options=("trials",)),
        Reproduction("alotaibi2015-figs-4-16-4-17",
                     "PCA-based attack on synthetic data: NMDS at p = n, error against p and known-sample size "
                     "(Figs 4.16, 4.17)", alotaibi2015_pca_attack.figs_4_16_4_17, slow=True, options=("trials",)),
        Reproduction("alotaibi2015-tables-5-6-5-9",
                     "neighbourhood preservation and class compactness, synthetic and real (Tables 5.6-5.9, Fig. 5.11)",
                     alotaibi2015_structure.tables_5_6_to_5_9, slow=True, options=("data_dir",)),
        Reproduction("alotaibi2015-figs-5-1-5-3-tables-5-3-5-4",
                     "clustering VI against p (k-means, single linkage, DBSCAN) and paired t-tests at p = n-1 "
                     "(Figs 5.1-5.3, Tables 5.3-5.4)",
                     alotaibi2015_clustering.figs_5_1_5_3_tables_5_3_5_4, slow=True, options=("data_dir",)),
        Reproduction("alotaibi2015-table-5-5",
                     "paired t-tests of k-means VI, NMDS against the others, k = 3..10 synthetic clusters (Table 5.5)",
                     alotaibi2015_clustering.table_5_5, slow=True),
        Reproduction("alotaibi2015-figs-5-8-5-10",
                     "k-NN, linear and kernel SVM accuracy against p for RP, PCA, SVD, NMDS, DCT (Figs 5.8-5.10)",
                     alotaibi2015_classification.figs_5_8_5_10, slow=True, options=("data_dir", "trials")),
        Reproduction("alotaibi2015-table-5-10", "RMSE of dot products against p, 10 synthetic sets (Table 5.10)",
                     alotaibi2015_dot.table_5_10, slow=True),
    )
}


#: BLAS threads while a reproduction runs: one by default (see :func:`run_reproduction`)
BLAS_THREADS = 1


def run_reproduction(id: str, *, blas_threads: int | None = BLAS_THREADS, **options: object) -> ReproductionReport:
    """Run a reproduction; ``options`` (None values ignored) must be among those it declares.

    Parameters
    ----------
    id : str
        A key of :data:`REPRODUCTIONS`.
    blas_threads : int or None
        Threads the BLAS/LAPACK library may use meanwhile (None: leave its setting alone). One by
        default: the reproductions run many small products and solves (sweeps of draws, batched
        Gauss-Newton steps, K-means iterations), where a threaded BLAS gains nothing and, when the
        cores are shared with other work, its waiting threads make each call tens to hundreds of times
        slower. The results do not depend on it (up to rounding).
    **options
        Keyword options of the reproduction (``data_dir``, ``trials``).
    """
    if id not in REPRODUCTIONS:
        raise ParameterError(f"unknown reproduction '{id}'; see `ppdm reproduce --list`")
    r = REPRODUCTIONS[id]
    given = {k: v for k, v in options.items() if v is not None}
    bad = sorted(set(given) - set(r.options))
    if bad:
        names = ", ".join("--" + b.replace("_", "-") for b in bad)
        raise ParameterError(f"reproduction '{id}' takes no {names}")
    if blas_threads is None:
        return r.run(**given)
    if blas_threads < 1:
        raise ParameterError(f"blas_threads must be at least 1 (got {blas_threads})")
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=blas_threads, user_api="blas"):
        return r.run(**given)
