"""NMF on the dask backend: the same iterates as the in-memory solver (same init, same solver)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

from ppdm.pipeline import load_release_state, perturb  # noqa: E402
from tests.backends.conftest import make_table  # noqa: E402

pytestmark = pytest.mark.dask

ROLES = {"id": "pid", "label": "y"}
COLS = [f"x{j}" for j in range(7)]


def _dev(a: pd.DataFrame, b: pd.DataFrame) -> float:
    A, B = a[COLS].to_numpy(float), b[COLS].to_numpy(float)
    return float(np.abs(A - B).max() / np.abs(A).max())


CASES = [
    {"params": {"components": 3, "solver": "mu", "max_iter": 40}},
    {"params": {"components": 3, "solver": "als", "max_iter": 40}},
    {"params": {"components": 3, "solver": "hals", "max_iter": 25}},
    {"params": {"components": 4, "keep": 2, "solver": "mu", "max_iter": 30, "l1": 0.01, "l2": 0.1}},
    {"params": {"components": 3, "solver": "hals", "max_iter": 15, "sparsify": "cts", "eps_h": 0.5, "eps_w": 0.5}},
    {"params": {"components": 2, "solver": "als", "max_iter": 20}, "preprocess": "range",
     "partition_rows": "1003,1500,1799,1001,1100,1400,1200,1300", "partition_columns": "x0,x2,x6"},
    {"params": {"components": 2, "solver": "mu", "max_iter": 20}, "preprocess": "none",
     "release_units": "preprocessed"},
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{v}" for v in c.values())[:60])
def test_same_factorisation_as_in_memory(case: dict) -> None:
    from ppdm.backends import load

    df = make_table(n=800)
    if case.get("preprocess") == "none":
        df[COLS] = df[COLS].abs() + 0.1
    ref = perturb(df, keep_ids=True, method="nmf", seed=5, columns=COLS, **ROLES, **case)  # the numbers, as dask
    got = load("dask").perturb(df, method="nmf", seed=5, scheduler="synchronous", npartitions=3, **ROLES, **case)
    rel = got.release.compute().reset_index(drop=True)
    assert rel["pid"].tolist() == ref.release["pid"].tolist()
    assert _dev(ref.release, rel) < 1e-8
    a, b = ref.mechanism, got.mechanism
    a, b = getattr(a, "mechanism_", a), getattr(b, "mechanism_", b)
    assert a.n_iter_ == b.n_iter_
    assert np.allclose(b.components_, a.components_, rtol=1e-8, atol=1e-12)
    assert b.objective_ == pytest.approx(a.objective_, rel=1e-9)
    assert b.sparseness_h_ == pytest.approx(a.sparseness_h_, rel=1e-9, abs=1e-12)


def test_cli_parquet_on_a_local_cluster_with_state(tmp_path: Path, client: object, cli) -> None:
    df = make_table(n=900).drop(columns=["site"])
    src = tmp_path / "data"
    src.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[idx].to_parquet(src / f"p{i}.parquet", index=False)
    out, state = tmp_path / "rel", tmp_path / "nmf.state"
    code, msg = cli(src / "*.parquet", "--method", "nmf", "--rank", "3", "--nmf-solver", "hals", "-p", "max_iter=20",
                    "--label", "y", "--id", "pid", "--backend", "dask", "-o", out, "--state", state, "--seed", "4")
    assert code == 0, msg
    ref = perturb(df, keep_ids=True, method="nmf", params={"components": 3, "solver": "hals", "max_iter": 20}, seed=4,
                  **ROLES)
    assert _dev(ref.release, pd.read_parquet(out)) < 1e-8
    mech = load_release_state(state)[0]
    assert mech.factors_.shape == (900, 3)
    assert np.abs(mech.factors_ - ref.mechanism.factors_).max() < 1e-8 * np.abs(ref.mechanism.factors_).max()


@pytest.mark.parametrize(("extra", "words"), [(("--nmf-solver", "pg"), "no partitioned form"),
                                              (("-p", "init=nndsvd"), "init='random'")])
def test_unsupported_nmf_options_are_refused(tmp_path: Path, cli, extra: tuple[str, ...], words: str) -> None:
    f = tmp_path / "t.csv"
    make_table(n=60).to_csv(f, index=False)
    out = tmp_path / "o"
    code, msg = cli(f, "--method", "nmf", "--components", "2", *extra, "--id", "pid", "--label", "y",
                    "--drop", "site", "--backend", "dask", "--scheduler", "synchronous", "-o", out)
    assert code == 2 and words in msg
    assert not out.exists()
