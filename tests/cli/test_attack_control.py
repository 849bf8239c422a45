"""``ppdm attack --control``: the three tests of anonymisation on a user's release, and ``--anonymeter``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import one_line_error


def _people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"pid": [f"id{seed}-{i}" for i in range(n)],
                       "age": rng.integers(18, 90, n), "income": rng.lognormal(10, 0.5, n).round(2),
                       "town": rng.choice(["north", "south", "east", "west"], n),
                       "job": rng.choice(list("abcdefgh"), n)})
    df["label"] = (df["income"] > df["income"].median()).astype(int)
    return df


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    members, control, other = _people(300, 0), _people(120, 1), _people(250, 2)
    paths = {"orig": tmp_path / "orig.csv", "copy": tmp_path / "copy.csv", "ctrl": tmp_path / "ctrl.csv",
             "other": tmp_path / "other.csv"}
    members.to_csv(paths["orig"], index=False)
    members.sample(frac=1.0, random_state=3).to_csv(paths["copy"], index=False)  # the members, reordered
    control.to_csv(paths["ctrl"], index=False)
    other.drop(columns="pid").to_csv(paths["other"], index=False)
    return paths


def test_a_copied_release_fails_every_test(cli, files: dict[str, Path], tmp_path: Path) -> None:
    js = tmp_path / "a.json"
    code, out, err = cli("attack", files["orig"], files["copy"], "--control", files["ctrl"], "--id", "pid",
                         "--label", "label", "--threat", "known-io:6", "--json", js)
    assert code == 0, err
    res = json.loads(js.read_text())["anonymisation"]
    assert res["schema"] == "ppdm.anonymisation/1" and res["columns"] == ["age", "income", "town", "job", "label"]
    assert res["singling_out"]["risk"] == 1.0
    assert res["linkability"]["risk"] > 0.8
    assert res["membership"]["overall"]["advantage"] == 1.0
    assert res["inference"]["income"]["risk"] > 0.9
    assert res["anonymeter"] is None
    for word in ("singling out", "linkability", "membership", "inference", "worst split"):
        assert word in out
    # the release is matched to the original by id: the attack battery ran beside the tests
    assert "attacks on the release" in out
    members = pd.read_csv(files["orig"])
    assert f"{members['income'].iloc[0]:.2f}" not in out + js.read_text()


def test_a_release_of_other_people_with_its_own_rows_skips_the_battery(cli, files: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    js = tmp_path / "b.json"
    code, out, err = cli("attack", files["orig"], files["other"], "--control", files["ctrl"], "--id", "pid",
                         "--json", js)
    assert code == 0, err
    res = json.loads(js.read_text())
    assert res["results"] == [] and "battery_skipped" in res
    assert "attack battery skipped" in out
    assert res["anonymisation"]["linkability"]["risk"] < 0.1
    assert res["anonymisation"]["singling_out"]["equal_size"]["risk"] < 0.1
    # the figure a release record would show: anonymeter's two families read against the scaled control, the
    # targeted one at equal sizes, the largest of the three
    so = res["anonymisation"]["singling_out"]
    policy = max(so["univariate"]["risk"], so["multivariate"]["risk"], so["targeted"]["equal_size"]["risk"])
    assert f"policy reads singling out as {100 * policy:.1f} %" in " ".join(out.split())


def test_a_control_without_the_releases_columns_is_refused(cli, files: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    pd.read_csv(files["ctrl"]).drop(columns="job").to_csv(bad, index=False)
    code, out, err = cli("attack", files["orig"], files["copy"], "--control", bad, "--id", "pid")
    line = one_line_error(code, out, err)
    assert "'job'" in line and "control" in line


def test_anonymeter_needs_the_control(cli, files: dict[str, Path]) -> None:
    code, out, err = cli("attack", files["orig"], files["copy"], "--anonymeter")
    assert "--control" in one_line_error(code, out, err)


def test_anonymeter_missing_names_the_extra(cli, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import ppdm.attacks.audit as audit

    monkeypatch.setattr(audit, "anonymeter_available", lambda: False)
    code, out, err = cli("attack", files["orig"], files["copy"], "--control", files["ctrl"], "--id", "pid",
                         "--anonymeter")
    assert "pip install 'ppdm[audit]'" in one_line_error(code, out, err)


def test_anonymeter_beside_ppdm(cli, files: dict[str, Path], tmp_path: Path) -> None:
    pytest.importorskip("anonymeter", reason="the audit extra (anonymeter) is not installed")
    js = tmp_path / "c.json"
    code, out, err = cli("attack", files["orig"], files["copy"], "--control", files["ctrl"], "--id", "pid",
                         "--label", "label", "--anonymeter", "--json", js)
    assert code == 0, err
    peer = json.loads(js.read_text())["anonymisation"]["anonymeter"]
    assert set(peer) >= {"singling_out_univariate", "singling_out_multivariate", "linkability", "inference"}
    assert peer["singling_out_univariate"]["risk"] > 0.9  # the release copies its members
    assert "anonym." in out
