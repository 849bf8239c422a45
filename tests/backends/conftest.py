from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest


@pytest.fixture(scope="module")
def client() -> Iterator[object]:
    """A two-worker LocalCluster on the loopback interface (ephemeral dashboard port), shared by a test module."""
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(host="127.0.0.1", n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", memory_limit="1GiB") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def make_table(n: int = 2000, m: int = 7, seed: int = 0) -> pd.DataFrame:
    """Low-rank numeric columns on different scales plus an id, a text column and a label."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) @ rng.normal(size=(3, m)) + 0.3 * rng.normal(size=(n, m))
    X = X * rng.uniform(0.5, 20, size=m) + rng.uniform(-50, 50, size=m)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(m)])
    df.insert(0, "pid", np.arange(1000, 1000 + n))
    df["site"] = np.where(np.arange(n) % 3, "north", "south")
    df["y"] = (X[:, 0] > np.median(X[:, 0])).astype(int)
    return df


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run ``ppdm perturb ARGS`` in-process; return (exit code, stdout + stderr)."""
    from ppdm.cli import main

    def run(*args: object) -> tuple[int, str]:
        with pytest.raises(SystemExit) as e:
            # the linkable layout, so that releases compare row by row with the in-memory ones
            main(["perturb", "--keep-ids", *(str(a) for a in args)])
        out, err = capsys.readouterr()
        code = int(e.value.code or 0)
        if code == 2:
            assert "Traceback" not in out + err and len(err.strip().splitlines()) == 1, err
        return code, out + err

    return run
