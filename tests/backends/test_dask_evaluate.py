"""`ppdm evaluate --backend dask`: value metrics and K-means on every row, record linkage on a seeded sample."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

from ppdm.pipeline import perturb  # noqa: E402
from tests.backends.conftest import make_table  # noqa: E402

pytestmark = pytest.mark.dask

COLS = [f"x{j}" for j in range(7)]


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    from ppdm.cli import main

    with pytest.raises(SystemExit) as e:
        main(["evaluate", *(str(a) for a in args)])
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def _files(tmp_path: Path, n: int = 1200) -> tuple[pd.DataFrame, pd.DataFrame, Path, Path]:
    df = make_table(n=n).drop(columns=["site"])
    rel = perturb(df, keep_ids=True, method="noise", params={"scale": 0.2}, id="pid", label="y", seed=1).release
    orig, out = tmp_path / "orig", tmp_path / "rel"
    orig.mkdir()
    out.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(n), 3)):  # three original files, two release files
        df.iloc[idx].to_parquet(orig / f"o{i}.parquet", index=False)
    for i, idx in enumerate(np.array_split(np.arange(n), 2)):
        rel.iloc[idx].to_parquet(out / f"r{i}.parquet", index=False)
    return df, rel, orig, out


def test_cli_evaluate_with_sampled_linkage(tmp_path: Path, client: object, capsys: pytest.CaptureFixture[str]) -> None:
    from ppdm.attacks import linkage_rates
    from ppdm.pipeline import evaluate

    df, rel, orig, out = _files(tmp_path)
    code, txt, err = _run(capsys, orig, out, "--backend", "dask", "--id", "pid", "--label", "y", "--sample", "300",
                          "--seed", "9", "--json")
    assert code == 0, err
    got = json.loads(txt)
    ref = evaluate(df, rel, id="pid", label="y", utility=("kmeans",))
    assert got["columns"] == COLS
    for k, v in ref["value"].items():
        assert got["value"][k] == pytest.approx(v, rel=1e-12, abs=1e-12), k
    assert got["utility"]["kmeans_pct"] == pytest.approx(ref["utility"]["kmeans_pct"], abs=1e-9)
    # the documented sample: row i is kept when u_i < 300 / n, u from SeedSequence(seed, spawn_key=(i // 65536,))
    u = np.random.default_rng(np.random.SeedSequence(9, spawn_key=(0,))).random((len(df), 1))[:, 0]
    keep = u < 300 / len(df)
    link = got["linkage"]
    assert link["n_sample"] == int(keep.sum()) and f"sample of {int(keep.sum())} of 1200 rows" in link["sample"]
    want = linkage_rates(df[COLS].to_numpy(float)[keep], rel[COLS].to_numpy(float)[keep])
    assert link["rates"] == pytest.approx(want["rates"], abs=1e-12)
    code, txt, err = _run(capsys, orig, out, "--backend", "dask", "--label", "y", "--sample", "300", "--seed", "9")
    assert code == 0, err
    assert f"record linkage on a seeded sample of {int(keep.sum())} of 1200 rows" in " ".join(txt.split())


@pytest.mark.parametrize(("extra", "words"), [(("--utility", "svm"), "svm is not available with --backend dask"),
                                              (("--id", "y"), "differ row by row")])
def test_cli_evaluate_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...],
                               words: str) -> None:
    df, rel, orig, out = _files(tmp_path, n=300)
    rel["y"] = rel["y"].to_numpy()[::-1]
    rel.to_parquet(out / "r0.parquet", index=False)
    (out / "r1.parquet").unlink()
    code, txt, err = _run(capsys, orig, out, "--backend", "dask", "--scheduler", "synchronous", *extra)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
