from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.cli import main


def one_line_error(code: int, out: str, err: str) -> str:
    """The CLI's error contract: exit code 2, no traceback, exactly one stderr line (returned)."""
    assert code == 2, (code, out, err)
    assert "Traceback" not in err + out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _find_shared() -> Path:
    """The project's shared/ folder (specs, reference tables, datasets): beside the repository."""
    if os.environ.get("PPDM_SHARED"):
        return Path(os.environ["PPDM_SHARED"])
    for parent in Path(__file__).resolve().parents:
        if (parent / "shared" / "reference").is_dir():
            return parent / "shared"
    return Path(__file__).resolve().parents[2] / "shared"


SHARED = _find_shared()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(int(os.environ.get("PPDM_TEST_SEED", "0")))


@pytest.fixture
def wdbc() -> pd.DataFrame:
    from ppdm import datasets

    return datasets.load("wdbc")


@pytest.fixture
def table(tmp_path: Path, rng: np.random.Generator) -> Path:
    """A small CSV with an id, a label, six numeric columns and a text column."""
    n = 60
    X = rng.normal(size=(n, 3)) @ rng.normal(size=(3, 6)) + rng.normal(scale=0.1, size=(n, 6)) + 5
    df = pd.DataFrame(X, columns=[f"a{j}" for j in range(6)])
    df.insert(0, "pid", np.arange(100, 100 + n))
    df["site"] = np.where(np.arange(n) % 2, "north", "south")
    df["diagnosis"] = np.where(X[:, 0] > 5, "M", "B")
    path = tmp_path / "patients.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``ppdm ARGS`` in-process; return (exit code, stdout, stderr)."""

    def run(*args: object) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as e:
            main([str(a) for a in args])
        out, err = capsys.readouterr()
        return int(e.value.code or 0), out, err

    return run
