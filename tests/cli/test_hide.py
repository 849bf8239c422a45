from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def iris_csv(tmp_path: Path) -> Path:
    from ppdm import datasets

    p = tmp_path / "iris.csv"
    datasets.load("iris_uci").to_csv(p, index=False)
    return p


def _lloyd(X: np.ndarray, K: int) -> np.ndarray:
    C = X[:K].copy()
    for _ in range(500):
        lab = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(-1), 1)
        new = np.array([X[lab == j].mean(0) if (lab == j).any() else C[j] for j in range(K)])
        if np.allclose(new, C):
            break
        C = new
    return lab


def test_hide_member_to_cluster(cli: Cli, iris_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "release.csv"
    code, stdout, _ = cli("hide", iris_csv, "--clusters", 3, "--hide-member", "50:2", "--label", "class", "-o", out,
                          "--keep-ids")
    assert code == 0, stdout
    assert "achieved" in stdout and "side-effect rate: 0.00 %" in stdout and "50: 3->2" in stdout
    assert "RE " in stdout
    A = pd.read_csv(iris_csv).drop(columns="class").to_numpy(float)
    R = pd.read_csv(out)
    assert R["class"].tolist() == pd.read_csv(iris_csv)["class"].tolist()
    B = R.drop(columns="class").to_numpy(float)
    truth, lab = _lloyd(A, 3), _lloyd(B, 3)
    assert lab[49] == 1 and (np.delete(lab, 49) == np.delete(truth, 49)).all()


def test_negate_pairs_json_and_state(cli: Cli, iris_csv: Path, tmp_path: Path) -> None:
    out, st = tmp_path / "r.csv", tmp_path / "r.state"
    code, stdout, _ = cli("hide", iris_csv, "--clusters", 3, "--negate-pair", "50,30", "--negate-pair", "80,130",
                          "--label", "class", "-o", out, "--state", st, "--json")
    assert code == 0
    s = json.loads(stdout)
    assert s["achieved"] and s["side_effect_rate"] == 0.0 and s["trials"] >= 1
    assert {m["record"] for m in s["moved"]} <= {30, 50, 80, 130} and s["side_effects"] == []
    assert "re" in s["value"] and "entropy_distortion" in s
    assert (st.stat().st_mode & 0o077) == 0
    assert "factors" not in stdout.replace('"factors"', "")  # no key material printed
    from ppdm.state import load_state

    header, arrays = load_state(st, "hiding")
    assert arrays["factors"].shape == (150, 3) and arrays["components"].shape == (3, 4)


def test_ids_name_records(cli: Cli, iris_csv: Path, tmp_path: Path) -> None:
    df = pd.read_csv(iris_csv)
    df.insert(0, "rid", [f"r{i}" for i in range(1, 151)])
    src = tmp_path / "ids.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "o.csv"
    code, stdout, _ = cli("hide", src, "-k", 3, "--id", "rid", "--label", "class", "--hide-member", "r80",
                          "-o", out, "--json", "--keep-ids")
    assert code == 0
    s = json.loads(stdout)
    assert s["goals"][0]["record"] == "r80" and pd.read_csv(out)["rid"].tolist() == df["rid"].tolist()


@pytest.mark.parametrize(
    ("args", "msg"),
    [
        (["--hide-member", "999"], "not in the table"),
        (["--hide-member", "50:3"], "already in cluster"),
        (["--hide-member", "50:7"], "does not exist"),
        (["--join-pair", "50,30"], "already in the same cluster"),
        (["--negate-pair", "50"], "ID1,ID2"),
        (["--hide-member", "50", "--components", "9"], "components"),
        (["--hide-member", "50", "--clusters", "0"], "positive"),
        (["--hide-member", "50", "--clusters", "151"], "exceeds"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(cli: Cli, iris_csv: Path, tmp_path: Path, args: list[str],
                                                   msg: str) -> None:
    out = tmp_path / "x.csv"
    base = ["hide", iris_csv, "--label", "class", "-o", out]
    if "--clusters" not in args:
        base += ["--clusters", "3"]
    code, stdout, err = cli(*base, *args)
    assert code == 2 and msg in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_negative_values_without_shift_and_zero_rows(cli: Cli, iris_csv: Path, tmp_path: Path) -> None:
    df = pd.read_csv(iris_csv)
    neg = df.copy()
    neg["sepal_length"] -= 6
    p = tmp_path / "neg.csv"
    neg.to_csv(p, index=False)
    out = tmp_path / "x.csv"
    code, _, err = cli("hide", p, "-k", 3, "--label", "class", "--hide-member", "50", "--no-shift", "-o", out)
    assert code == 2 and "negative" in err and not out.exists()
    zero = df.copy()
    zero.iloc[9, :4] = 0.0
    z = tmp_path / "zero.csv"
    zero.to_csv(z, index=False)
    code, _, err = cli("hide", z, "-k", 3, "--label", "class", "--hide-member", "50", "-o", out)
    assert code == 2 and "all zeros" in err and not out.exists()


def test_perturb_nmf_command(cli: Cli, tmp_path: Path) -> None:
    from ppdm import datasets

    src = tmp_path / "wbc.csv"
    datasets.load("wbc").to_csv(src, index=False)
    out = tmp_path / "release.csv"
    code, stdout, err = cli("perturb", src, "--method", "nmf", "--components", 7, "--keep", 4, "--label", "class",
                            "-o", out)
    assert code == 0, err
    A = pd.read_csv(src).drop(columns="class").to_numpy(float)
    B = pd.read_csv(out).drop(columns="class").to_numpy(float)
    assert B.shape == A.shape and 0.01 < np.linalg.norm(A - B) / np.linalg.norm(A) < 1.0
    out2 = tmp_path / "r2.csv"
    code, _, err = cli("perturb", src, "--method", "nmf", "--components", 7, "--nmf-solver", "pg",
                       "--preprocess", "none", "--label", "class", "-o", out2, "--json")
    assert code == 0, err
    code, _, err = cli("perturb", src, "--method", "nmf", "--components", 10, "--label", "class", "-o",
                       tmp_path / "r3.csv")
    assert code == 2 and "components" in err and not (tmp_path / "r3.csv").exists()


def test_information_measures_say_they_round_and_never_print_nan(cli: Cli, iris_csv: Path, tmp_path: Path) -> None:
    code, stdout, err = cli("hide", iris_csv, "-k", 3, "--hide-member", 50, "--label", "class", "-o",
                            tmp_path / "a.csv", "--seed", 1)
    assert code == 0, err
    assert "rounded to integers" in stdout and "Wang 2008" in stdout
    assert "ED 0." in stdout and "not measured meaningfully" not in stdout
    # the same table in [0, 0.4]: every value rounds to 0, so no column is measured and ED is undefined
    df = pd.read_csv(iris_csv)
    num = df.columns[:-1]
    df[num] = (df[num] - df[num].min()) / (df[num].max() - df[num].min()) * 0.4
    df.to_csv(tmp_path / "small.csv", index=False)
    code, stdout, err = cli("hide", tmp_path / "small.csv", "-k", 3, "--hide-member", 50, "--label", "class", "-o",
                            tmp_path / "b.csv", "--seed", 1)
    assert code == 0, err
    assert "nan" not in stdout.lower() and "ED undefined" in stdout and "rescale" in stdout
    assert "not measured meaningfully" in stdout and all(c in stdout for c in num)
    assert "mutual information (bits)" not in stdout  # no column's 0.000 is shown as if measured
    code, stdout, err = cli("hide", tmp_path / "small.csv", "-k", 3, "--hide-member", 50, "--label", "class", "-o",
                            tmp_path / "c.csv", "--seed", 1, "--json")
    s = json.loads(stdout)
    assert "NaN" not in stdout and s["entropy_distortion"] is None and "undefined" in s["entropy_distortion_note"]
    assert s["information_unmeasured_columns"] == list(num)
