"""Wang (2008) Ch. 6 incremental updating: the WBC protocol against the spec's figures, and scaled-down
versions of the synthetic row and column scenarios (the full ones run with ``ppdm reproduce``)."""

from __future__ import annotations

import warnings

import pytest

from ppdm.experiments import REPRODUCTIONS, wang2008_stream
from ppdm.experiments.base import reference_rows


def test_wbc_report_passes() -> None:
    rep = wang2008_stream.wbc_report()
    assert not rep.failed, [(c.row, c.column, c.computed, c.published) for c in rep.failed]
    final = {c.column: c.computed for c in rep.cells if c.row == "rows=699"}
    assert abs(final["final RE incremental"] - 0.1268) < 5e-4
    assert abs(final["final RE full"] - 0.1222) < 1e-4
    assert len(rep.checked) == 32  # 22 + one silhouette difference per step


def test_registered() -> None:
    assert {"wang2008-stream-wbc", "wang2008-table-6-3", "wang2008-stream-columns"} <= set(REPRODUCTIONS)
    assert REPRODUCTIONS["wang2008-table-6-3"].slow
    assert [int(r["rows"]) for r in reference_rows("wang2008_table6_3.csv")] == list(range(3000, 10001, 1000))


@pytest.mark.slow
def test_rows_scaled_down_within_one_percent() -> None:
    rows = wang2008_stream.table_6_3(n=3000, m=300, rank=60, k=36, start=600, batch=600, progress=False)
    assert [r["rows"] for r in rows] == [1200, 1800, 2400, 3000]
    for r in rows:
        assert r["incremental_re"] >= r["exact_re"] - 1e-12
        assert r["incremental_re"] <= 1.01 * r["exact_re"]


def test_columns_scaled_down_runs_and_stays_close() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = wang2008_stream.columns(n=300, m=300, rank=30, k=24, start=24, add=6, steps=10, buffer_rank=4,
                                       progress=False)
    assert rows[-1]["columns"] == 84
    for r in rows:
        assert r["recompute_re"] - 1e-9 <= r["incremental_re"] <= 1.15 * r["recompute_re"]
        assert r["recompute_re"] - 1e-9 <= r["buffered_re"] <= r["incremental_re"] + 1e-12
    assert rows[-1]["buffered_re"] <= 1.02 * rows[-1]["recompute_re"]


def test_columns_recomputes_only_every_kth_step() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = wang2008_stream.columns(n=200, m=200, rank=20, k=16, start=16, add=4, steps=6, buffer_rank=2,
                                       progress=False, recompute_every=3)
    done = [i for i, r in enumerate(rows) if r["recompute_re"] == r["recompute_re"]]  # not NaN
    assert done == [2, 5]
    assert rows[5]["cumulative_recompute_s"] == rows[2]["recompute_s"] + rows[5]["recompute_s"]
    assert all(r["recompute_re"] - 1e-9 <= r["incremental_re"] for r in (rows[2], rows[5]))


def test_wbc_silhouettes_of_incremental_and_exact_agree() -> None:
    rows = wang2008_stream.wbc_rows(with_svm=False)
    assert [r["rows"] for r in rows] == list(range(249, 700, 50))
    for r in rows:
        assert -1 <= r["silhouette_incremental"] <= 1 and -1 <= r["silhouette_full"] <= 1
        assert abs(r["silhouette_incremental"] - r["silhouette_full"]) <= 0.02
        assert r["same_cluster_share"] >= 0.98


def test_silhouette_by_hand() -> None:
    import numpy as np

    # range-normalised, the four records are the corners of the unit square; K-means from rows 1-2 puts
    # (0, 0), (0, 1) in one cluster and (1, 0), (1, 1) in the other
    B = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 0.1], [10.0, 0.1]])
    s, labels = wang2008_stream._silhouette(B, 2)
    assert labels.tolist() == [0, 1, 0, 1]
    # every record: a = 1 (its cluster mate), b = mean(1, sqrt 2) (the other cluster)
    b = (1 + np.sqrt(2)) / 2
    assert s == pytest.approx((b - 1) / b)
