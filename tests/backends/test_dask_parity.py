"""Same seed, same release: the dask backend against the in-memory backend (to 1e-8 relative)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

from ppdm.pipeline import perturb  # noqa: E402
from tests.backends.conftest import make_table  # noqa: E402

pytestmark = pytest.mark.dask

ROLES = {"id": "pid", "label": "y"}


def _both(df: pd.DataFrame, npartitions: int = 5, **kw: object) -> tuple[pd.DataFrame, pd.DataFrame]:
    from ppdm.backends import load

    # the numbers named: in memory a table with categories is otherwise released whole, which the partitioned
    # path does not do (it passes them through)
    cols = [c for c in df.columns if c.startswith("x")]
    ref = perturb(df, keep_ids=True, columns=cols, **ROLES, **kw).release  # type: ignore[arg-type]
    res = load("dask").perturb(df, **ROLES, scheduler="synchronous", npartitions=npartitions, **kw)
    return ref, res.release.compute().reset_index(drop=True)


def _rel_dev(a: pd.DataFrame, b: pd.DataFrame) -> float:
    A, B = a.select_dtypes("number").to_numpy(float), b.select_dtypes("number").to_numpy(float)
    return float(np.abs(A - B).max() / np.abs(A).max())


CASES = [
    {"method": "svd", "params": {"rank": 3}},
    {"method": "svd", "params": {"rank": 2}, "preprocess": "none"},
    {"method": "svd", "params": {"rank": 4}, "preprocess": "range", "release_units": "preprocessed"},
    {"method": "svd", "params": {"rank": 3, "solver": "exact"}},  # TSQR on dask
    {"method": "ssvd", "params": {"rank": 3, "strategy": "sts", "eps_u": 0.01, "eps_v": 0.1}},
    {"method": "ssvd", "params": {"rank": 3, "strategy": "cts", "eps_u": 0.5, "eps_v": 0.5}},
    {"method": "ssvd", "params": {"rank": 3, "strategy": "ets", "eps_u": 0.3, "eps_v": 0.3}},
    {"method": "rotation", "params": {}},
    {"method": "projection", "params": {"kind": "arp", "sigma": 0.5}},
    {"method": "projection", "params": {"kind": "arpo"}, "preprocess": "minshift"},
    {"method": "svd", "params": {"rank": 2}, "partition_columns": "x1,x4,x5"},
    {"method": "svd", "params": {"rank": 2}, "partition_rows": "777"},
    {"method": "ssvd", "params": {"rank": 2, "strategy": "cts"}, "partition_rows": "1003,1500,2999,1001,1100"},
    {"method": "rotation", "params": {}, "partition_rows": "1010,1011,1500,2500", "partition_columns": "x0,x2,x6"},
    {"method": "partition", "params": {"scheme": "both", "rows": 500, "columns": 4}},
    {"method": "partition", "params": {"columns": [1, 3, 5, 6]}},
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{v}" for v in c.values())[:60])
def test_same_release_as_in_memory(case: dict) -> None:
    df = make_table()
    ref, got = _both(df, seed=3, **case)
    assert list(got.columns) == list(ref.columns)
    for c in ("pid", "site", "y"):
        assert got[c].tolist() == ref[c].tolist()
    assert _rel_dev(ref, got) < 1e-8


def test_partitioning_does_not_change_the_release() -> None:
    df = make_table(n=900)
    a = _both(df, npartitions=1, method="ssvd", params={"rank": 2, "strategy": "ets"})[1]
    b = _both(df, npartitions=9, method="ssvd", params={"rank": 2, "strategy": "ets"})[1]
    assert _rel_dev(a, b) < 1e-12


def test_compressed_svd_close_to_exact_on_low_rank_data() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 2)) @ rng.normal(size=(2, 6)) + 1e-3 * rng.normal(size=(3000, 6))
    df = pd.DataFrame(X, columns=list("abcdef"))
    from ppdm.backends import load

    ref = perturb(df, keep_ids=True, method="svd", params={"rank": 2}).release
    got = load("dask").perturb(df, method="svd", params={"rank": 2, "solver": "randomized"},
                               scheduler="synchronous", npartitions=4)
    assert got.mechanism.solver_ == "dask-compressed"
    assert _rel_dev(ref, got.release.compute().reset_index(drop=True)) < 1e-6


@pytest.mark.parametrize("method,params", [("noise", {"scale": 0.5}), ("noise", {"scale": 2.0,
                         "distribution": "uniform", "symmetric": True}), ("mult-noise", {"sigma": 0.2})])
def test_noise_is_deterministic_and_independent_of_partitioning(method: str, params: dict) -> None:
    """The dask noise stream is not numpy's single stream, but the same seed gives the same release."""
    from ppdm.backends import load

    df = make_table(n=1500)
    dk = load("dask")
    runs = [dk.perturb(df, method=method, params=params, seed=5, scheduler="synchronous", npartitions=p, **ROLES)
            for p in (4, 4, 1, 7)]
    rel = [r.release.compute().reset_index(drop=True) for r in runs]
    assert rel[0].equals(rel[1])  # same seed, same partitions: same bytes
    # other partitions: the same noise; only the rounding of the merged column statistics differs
    assert _rel_dev(rel[0], rel[2]) < 1e-12 and _rel_dev(rel[0], rel[3]) < 1e-12
    other = dk.perturb(df, method=method, params=params, seed=6, scheduler="synchronous", npartitions=4, **ROLES)
    assert not rel[0].equals(other.release.compute().reset_index(drop=True))
    # the noise has the requested law in preprocessed (z-scored) units
    cols = [c for c in df.columns if c.startswith("x")]
    sc = runs[0].scaler
    Z, R = sc.transform(df[cols].to_numpy(float)), sc.transform(rel[0][cols].to_numpy(float))
    E = R - Z if method == "noise" else R / Z
    if method == "mult-noise":
        assert abs(E.mean() - 1) < 0.02 and abs(E.std() - 0.2) < 0.02
    elif params.get("distribution") == "uniform":
        assert E.min() >= -2.0 and E.max() <= 2.0 and abs(E.mean()) < 0.1 and abs(E.std() - 4 / np.sqrt(12)) < 0.05
    else:
        assert abs(E.mean()) < 0.05 and abs(E.std() - 0.5) < 0.03
    ref = perturb(df, keep_ids=True, method=method, params=params, seed=5, **ROLES)
    assert runs[0].mechanism.seed_ == ref.mechanism.seed_


def test_left_projection_is_refused() -> None:
    from ppdm.backends import load
    from ppdm.exceptions import ParameterError

    with pytest.raises(ParameterError, match="arpo"):
        load("dask").perturb(make_table(n=50), method="projection", params={"kind": "rpoa"}, scheduler="synchronous")


@pytest.mark.parametrize("rank_mode", ["sort_index", "rank"])
def test_value_metrics_match_in_memory(rank_mode: str) -> None:
    import dask.array as da

    from ppdm.backends import load
    from ppdm.metrics import value_metrics

    rng = np.random.default_rng(2)
    A = rng.normal(size=(3000, 5))
    A[:, 2] = np.round(A[:, 2])  # ties: the stable sort must keep row order, as in memory
    B = A + rng.normal(scale=0.3, size=A.shape)
    ref = value_metrics(A, B, rank_mode)
    got = load("dask").value_metrics(da.from_array(A, chunks=(700, 5)), da.from_array(B, chunks=(400, 5)),
                                     rank_mode, budget=48.0 * 3000 * 2)  # two columns per group
    assert got.keys() == ref.keys()
    for k in ref:
        assert got[k] == pytest.approx(ref[k], rel=1e-12, abs=1e-12), k


def test_kmeans_matches_in_memory() -> None:
    import dask.array as da

    from ppdm.backends import load
    from ppdm.datasets import load as load_data
    from ppdm.metrics import kmeans_accuracy, lloyd_kmeans

    df = load_data("wdbc")
    X, y = df.drop(columns=["class"]).to_numpy(float), df["class"].to_numpy()
    dk = load("dask")
    Xd = da.from_array(X, chunks=(100, -1))
    lab_ref, C_ref = lloyd_kmeans(X, X[:3])
    lab, C = dk.lloyd_kmeans(Xd, X[:3])
    np.testing.assert_array_equal(lab, lab_ref)
    np.testing.assert_allclose(C, C_ref, rtol=1e-10)
    assert dk.kmeans_accuracy(Xd, y) == pytest.approx(kmeans_accuracy(X, y), abs=1e-12)


def test_rank_metrics_refuse_columns_beyond_the_memory_budget() -> None:
    from ppdm.backends import load
    from ppdm.exceptions import ResourceError

    A = np.arange(200.0).reshape(100, 2)
    with pytest.raises(ResourceError, match="sample"):
        load("dask").value_metrics(A, A + 1, budget=1000)


def test_evaluate_matches_in_memory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ppdm.backends import load
    from ppdm.pipeline import evaluate

    df = make_table(n=1500).drop(columns=["site", "pid"])
    rel = perturb(df, keep_ids=True, method="noise", params={"scale": 0.3}, label="y").release
    df.to_parquet(tmp_path / "a.parquet", index=False)
    rel.to_csv(tmp_path / "b.csv", index=False)
    ref = evaluate(df, rel, label="y", utility=("kmeans",))
    got = load("dask").evaluate(tmp_path / "a.parquet", tmp_path / "b.csv", label="y", scheduler="synchronous")
    assert got["columns"] == ref["columns"]
    for k, v in ref["value"].items():
        assert got["value"][k] == pytest.approx(v, rel=1e-12, abs=1e-12), k
    assert got["utility"]["kmeans_pct"] == pytest.approx(ref["utility"]["kmeans_pct"], abs=1e-9)


def test_a_failed_publish_keeps_the_earlier_release_and_state(tmp_path, monkeypatch) -> None:
    """The new state replaces the old only once the new release is in place (the state is its key)."""
    import ppdm.backends.dask_release as dask_release

    df = make_table(n=200)
    out, state = tmp_path / "rel", tmp_path / "rel.state"
    perturb(df, method="noise", backend="dask", scheduler="synchronous", output=out, state=state, **ROLES)
    before = (state.read_bytes(), sorted(p.name for p in out.iterdir()))

    def broken(tmp, target):
        raise OSError("disk full")

    monkeypatch.setattr(dask_release, "publish", broken)
    with pytest.raises(OSError, match="disk full"):
        perturb(df, method="svd", params={"rank": 2}, backend="dask", scheduler="synchronous", output=out,
                state=state, force=True, **ROLES)
    assert (state.read_bytes(), sorted(p.name for p in out.iterdir())) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel", "rel.state"]  # no stage or lock left behind
