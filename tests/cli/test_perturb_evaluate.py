from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import one_line_error


def test_perturb_then_evaluate(cli, table: Path, tmp_path: Path) -> None:
    rel, st = tmp_path / "release.csv", tmp_path / "release.state"
    # the numbers named with --columns: the other columns pass through (stderr says so)
    code, out, err = cli("perturb", table, "--method", "svd", "--rank", 2, "--label", "diagnosis", "--id", "pid",
                         "--columns", ",".join(f"a{j}" for j in range(6)), "-o", rel, "--state", st)
    assert code == 0, err
    assert "'site' reach the release unperturbed" in err
    src, R = pd.read_csv(table), pd.read_csv(rel)
    assert list(R.columns) == list(src.columns)
    # by default the ids are pseudonyms and the rows are shuffled: nothing links a row to its record
    assert not set(R["pid"].astype(str)) & set(src["pid"].astype(str))
    assert R["diagnosis"].tolist() != src["diagnosis"].tolist()
    assert sorted(R["site"].astype(str)) == sorted(src["site"].astype(str))
    # the owner aligns it through the state: the pseudonyms map back to the original ids
    from ppdm.pipeline import align_with_state

    R = align_with_state(src, R, st, "pid")
    for c in ("pid", "site", "diagnosis"):
        assert R[c].tolist() == src[c].tolist()
    A = src[[f"a{j}" for j in range(6)]].to_numpy()
    B = R[[f"a{j}" for j in range(6)]].to_numpy()
    mu, sd = A.mean(0), A.std(0, ddof=1)
    U, s, Vt = np.linalg.svd((A - mu) / sd, full_matrices=False)
    np.testing.assert_allclose(B, ((U[:, :2] * s[:2]) @ Vt[:2]) * sd + mu, atol=1e-10)
    assert stat.S_IMODE(os.stat(st).st_mode) == 0o600
    # the release holds no key material, and the summary does not leak values
    assert "components" not in rel.read_text()
    code, out, err = cli("evaluate", table, rel, "--label", "diagnosis", "--id", "pid", "--json")
    assert code == 2 and "not in the original" in err  # pseudonyms do not match without the state
    code, out, err = cli("evaluate", table, rel, "--label", "diagnosis", "--id", "pid", "--state", st, "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["value"]["re"] == pytest.approx(np.linalg.norm(A - B) / np.linalg.norm(A), rel=1e-9)
    assert set(res["utility"]) == {"kmeans_pct", "svm_pct"}
    assert res["columns"] == [f"a{j}" for j in range(6)]
    code, out, _ = cli("inspect", st)
    assert code == 0 and "components_" in out and "sha256" not in out.split('"arrays"')[1][:10]


def test_same_seed_same_bytes(cli, table: Path, tmp_path: Path) -> None:
    outs = []
    for i in range(2):
        o = tmp_path / f"r{i}.csv"
        assert cli("perturb", table, "--method", "noise", "--scale", 0.3, "--seed", 11, "-o", o)[0] == 0
        outs.append(o.read_bytes())
    assert outs[0] == outs[1]
    o = tmp_path / "r3.csv"
    cli("perturb", table, "--method", "noise", "--scale", 0.3, "--seed", 12, "-o", o)
    assert o.read_bytes() != outs[0]


def test_partition_by_column_names(cli, table: Path, tmp_path: Path) -> None:
    o = tmp_path / "p.csv"
    code, _, err = cli("perturb", table, "--method", "svd", "--rank", 1, "--partition-columns", "a1,a4",
                       "--id", "pid", "--label", "diagnosis", "-o", o, "--keep-ids")
    assert code == 0, err
    # exact parsing on both sides: untouched cells must come back bit for bit
    src, R = (pd.read_csv(p, float_precision="round_trip") for p in (table, o))
    for c in ("a0", "a2", "a3", "a5"):
        assert R[c].tolist() == src[c].tolist()
    assert not np.allclose(R["a1"], src["a1"])


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--rank", "0"], "rank=0 must be at least 1"),
        (["--rank", "20"], "rank=20 must satisfy"),
        (["--method", "ssvd", "--rank", "2", "--eps-u", "1.5"], "eps_u must be in"),
        (["--method", "nosuch"], "unknown method 'nosuch'"),
        (["--id", "nosuch"], "--id names column 'nosuch'"),
        (["--columns", "a1,zz"], "--columns names column 'zz'"),
        (["-p", "bogus=1"], "has no parameter 'bogus'"),
        (["--preprocess", "log"], "preprocess must be one of"),
        (["--rank", "abc"], "Invalid value"),
    ],
)
def test_bad_parameters(cli, table: Path, tmp_path: Path, args: list[str], match: str) -> None:
    out = tmp_path / "o.csv"
    before = table.read_bytes()
    line = one_line_error(*cli("perturb", table, "-o", out, "--id", "pid", "--label", "diagnosis", *args))
    assert match in line
    assert not out.exists() and table.read_bytes() == before


def test_no_overwrite_without_force(cli, table: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.csv"
    out.write_text("keep")
    assert "already exists" in one_line_error(*cli("perturb", table, "-o", out, "--rank", 1))
    assert out.read_text() == "keep"
    assert cli("perturb", table, "-o", out, "--rank", 1, "--force", "--label", "diagnosis", "--id", "pid")[0] == 0
    assert "is the input" in one_line_error(*cli("perturb", table, "-o", table, "--rank", 1, "--force"))


def test_datasets_and_reproduce_list(cli, tmp_path: Path) -> None:
    code, out, _ = cli("datasets", "list")
    assert code == 0 and "wdbc" in out and "org" in out
    o = tmp_path / "iris.csv"
    assert cli("datasets", "export", "iris", "-o", o)[0] == 0
    assert pd.read_csv(o).shape == (150, 5)
    o2 = tmp_path / "org.csv"
    assert cli("datasets", "export", "org", "-o", o2, "--n", 50)[0] == 0
    assert pd.read_csv(o2).shape == (50, 101)
    code, out, _ = cli("reproduce", "--list")
    assert "wang2008-appendix-a" in out


def test_help_is_fast_and_lazy() -> None:
    code = "import sys, ppdm.cli.app; print('sklearn' in sys.modules, 'matplotlib' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["False", "False"]
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ppdm", "--help"], capture_output=True, check=True)
    assert time.perf_counter() - t < 3.0


def test_every_help_names_the_extra_it_asks_for() -> None:
    # rich reads "[audit]" as a markup tag: unescaped, the help said "pip install 'ppdm'", which installs nothing new
    import re

    from typer.testing import CliRunner

    from ppdm.cli.app import app

    runner = CliRunner()
    commands = re.findall(r"│ (\w+) ", runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).output)
    assert "attack" in commands and "release" in commands
    asks = []
    for name in commands:
        text = runner.invoke(app, [name, "--help"], env={"COLUMNS": "200"}).output
        asks += re.findall(r"pip install '([^']*)'", text)
    assert "ppdm[audit]" in asks
    assert all(re.fullmatch(r"ppdm\[\w+\]", a) for a in asks), asks


def test_the_summary_says_where_the_key_is_kept(cli, table: Path, tmp_path: Path) -> None:
    # without --state nothing keeps the key: the summary said "kept only in the state file" all the same
    code, out, err = cli("perturb", table, "--method", "noise", "-o", tmp_path / "a.csv")
    assert code == 0, err
    said = " ".join((out + err).split())
    assert "kept nowhere (no state file was asked for)" in said and "kept only in the state file" not in said
    code, out, err = cli("perturb", table, "--method", "noise", "-o", tmp_path / "b.csv", "--state",
                         tmp_path / "b.state")
    assert code == 0, err
    said = " ".join((out + err).split())
    assert "kept only in the state file" in said and "kept nowhere" not in said
