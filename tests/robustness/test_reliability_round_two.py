"""The second round of reliability: no command writes its own inputs, every command takes the schema's
treatment of columns, states know their tables, contradicting options are one error, and the cases of the
issue's table each behave as its last column says. (Kills at every instant: ``test_fault_injection.py``.)"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import one_line_error

FAST = ["--max-reid", "1", "--max-within-5pct", "1", "--max-singling-out", "1", "--max-linkability", "1",
    "--max-membership-outliers", "1", "--no-cache", "-j", "1"]


@pytest.fixture
def small_grid(tmp_path: Path) -> Path:
    """One candidate per mechanism: these tests are about the command, not the sweep."""
    p = tmp_path / "grid.yaml"
    p.write_text("methods:\n- method: noise\n  grid: {scale: [1.0]}\n- method: mdav\n  grid: {k: [20]}\n")
    return p


@pytest.fixture
def nums(tmp_path: Path) -> Path:
    rng = np.random.default_rng(21)
    df = pd.DataFrame(rng.normal(size=(120, 4)), columns=list("abcd"))
    df.insert(0, "rid", np.arange(1000, 1120))
    df["class"] = np.where(df["a"] > 0, "yes", "no")
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    return p


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    rng = np.random.default_rng(22)
    n = 160
    df = pd.DataFrame({
        "rid": np.arange(n),
        "age": rng.integers(18, 90, n),
        "income": rng.normal(50, 10, n).round(2),
        "sex": rng.choice(["F", "M"], n),
        "city": rng.choice(["Leeds", "York", "Hull"], n),
        "visit": (pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D")).strftime("%Y-%m-%d"),
        "email": [f"person{i}@mail.example" for i in range(n)],
        "class": rng.choice(["a", "b"], n),
    })
    df.loc[::9, "income"] = np.nan
    df.loc[::13, "city"] = np.nan
    p = tmp_path / "mixed.csv"
    df.to_csv(p, index=False)
    return p


# ------------------------------------------------------------------------------------ inputs never outputs


def test_an_output_never_names_an_input(cli, nums: Path, tmp_path: Path) -> None:
    rel, st = tmp_path / "r.csv", tmp_path / "r.state"
    assert cli("perturb", nums, "--method", "noise", "--id", "rid", "-o", rel, "--state", st)[0] == 0
    before, mode = st.read_bytes(), os.stat(st).st_mode
    (tmp_path / "hard.json").hardlink_to(st)
    (tmp_path / "soft.state").symlink_to(st)
    for json_out, state_in in ((st, st), (tmp_path / "hard.json", st), (st, tmp_path / "soft.state")):
        line = one_line_error(*cli("attack", nums, rel, "--id", "rid", "--state", state_in, "--json", json_out,
                                   "--force"))
        assert "this command reads" in line and "state file" in line
    assert st.read_bytes() == before and os.stat(st).st_mode == mode
    # the original, the release, a config: through any name
    (tmp_path / "alias.csv").hardlink_to(nums)
    assert "this command reads" in one_line_error(*cli("perturb", nums, "--method", "noise", "-o",
                                                       tmp_path / "alias.csv", "--force"))
    assert "this command reads" in one_line_error(*cli("attack", nums, rel, "--id", "rid", "--json", rel,
                                                       "--force"))
    cfg = tmp_path / "out" / "release.json"
    cfg.parent.mkdir()
    cfg.write_text("methods:\n- method: noise\n  grid: {scale: [1.0]}\n")
    line = one_line_error(*cli("release", nums, "--id", "rid", "--config", cfg, "-o", cfg.parent, "--force"))
    assert "holds the config" in line and cfg.read_text().startswith("methods")
    line = one_line_error(*cli("stream", "init", nums, "--id", "rid", "--label", "class", "--state", nums,
                               "--force"))
    assert "this command reads" in line
    # a release directory whose release file is the input under another name (a hard link)
    (tmp_path / "hl").mkdir()
    (tmp_path / "hl" / "release.csv").hardlink_to(nums)
    line = one_line_error(*cli("release", nums, "--id", "rid", "--methods", "noise", "-o", tmp_path / "hl", "--force"))
    assert "holds the input table" in line
    assert pd.read_csv(nums).shape == (120, 6)


# ----------------------------------------------------------------------------------------- one schema


def test_perturb_releases_a_whole_table_as_release_does(cli, mixed: Path, tmp_path: Path) -> None:
    src = pd.read_csv(mixed)
    out = tmp_path / "m.csv"
    code, _, err = cli("perturb", mixed, "--method", "mdav", "--id", "rid", "--label", "class", "-o", out,
                       "--keep-ids")
    assert code == 0, err
    R = pd.read_csv(out)
    assert "email" not in R.columns and "'email' is not released" in err  # an identifier, dropped, with why
    for c in ("sex", "city"):  # categories perturbed, and among the original's
        assert set(R[c].dropna()) <= set(src[c].dropna())
    assert (R[["sex", "city"]].astype(str).to_numpy() != src[["sex", "city"]].astype(str).to_numpy()).any()
    ages = R["age"].to_numpy(float)
    assert np.all(ages == np.round(ages)) and ages.min() >= src["age"].min() and ages.max() <= src["age"].max()
    assert pd.to_datetime(R["visit"], format="%Y-%m-%d").notna().all()
    # gaps are values the mechanism releases: about as many, but not copied onto the records' own rows
    for c in ("income", "city"):
        assert R[c].isna().any() and abs(R[c].isna().mean() - src[c].isna().mean()) < 0.1, c
    # a table of categories only
    cats = tmp_path / "cats.csv"
    src[["rid", "sex", "city", "class"]].fillna("none").to_csv(cats, index=False)
    code, _, err = cli("perturb", cats, "--method", "mdav", "--id", "rid", "-o", tmp_path / "c.csv")
    assert code == 0, err
    C = pd.read_csv(tmp_path / "c.csv")
    assert set(C.columns) == {"rid", "sex", "city", "class"} and set(C["city"]) <= {"Leeds", "York", "Hull", "none"}


def test_perturb_takes_a_candidates_categorical_rules_as_release_does(mixed: Path) -> None:
    """``perturb --method mdav`` with ``min_count`` releases no category that fewer records hold, as the same
    candidate in ``release`` does (perturb used to pass the one-hot columns to MDAV as numbers, so the rule
    was silently ignored and a rare category pointed at its few holders)."""
    from ppdm.pipeline import perturb

    src = pd.read_csv(mixed)
    src.loc[:5, "city"] = "Whitby"  # held by six records
    for seed in range(3):
        plain = perturb(src, method="mdav", params={"k": 20}, id="rid", label="class", seed=seed).release
        ruled = perturb(src, method="mdav", params={"k": 20, "min_count": 30}, id="rid", label="class",
                        seed=seed).release
        assert "Whitby" not in set(ruled["city"].dropna()), seed
        assert set(ruled["city"].dropna()) <= {"Leeds", "York", "Hull"}
        assert not plain["city"].astype(str).equals(ruled["city"].astype(str))


def test_identifying_columns_are_dropped_by_every_command_unless_kept(cli, mixed: Path, tmp_path: Path,
                                                                      small_grid: Path) -> None:
    src = pd.read_csv(mixed)
    small = tmp_path / "small.csv"  # fewer rows than free text needs: a name in every row is still an identifier
    src.iloc[:30].assign(name=[f"N{i}" for i in range(30)]).drop(columns=["email"]).to_csv(small, index=False)
    code, out, err = cli("schema", small, "--id", "rid", "--json")
    assert code == 0 and {c["name"]: c["treatment"] for c in json.loads(out)}["name"].startswith("dropped")
    nums_only = tmp_path / "n.csv"
    src[["rid", "income", "email"]].fillna(50).assign(x=np.arange(len(src)) * 1.5 + 1).to_csv(nums_only, index=False)
    runs = {
        "perturb": ["perturb", nums_only, "--method", "noise", "--id", "rid", "-o", tmp_path / "p.csv"],
        "stream": ["stream", "init", nums_only, "--id", "rid", "--rank", "1", "--state", tmp_path / "s.state",
                   "-o", tmp_path / "s.csv"],
        "hide": ["hide", nums_only, "--id", "rid", "--clusters", "2", "--hide-member", "5", "-o", tmp_path / "h.csv"],
        "release": ["release", nums_only, "--id", "rid", "--config", small_grid, *FAST, "-o", tmp_path / "rel"],
    }
    for name, args in runs.items():
        code, _, err = cli(*args)
        assert code == 0, (name, err)
        assert "'email' is not released" in err, name
    for f in (tmp_path / "p.csv", tmp_path / "s.csv", tmp_path / "rel" / "release.csv"):
        assert "@mail.example" not in f.read_text() and "email" not in pd.read_csv(f, nrows=1).columns
    # kept by a role: released, with a warning that says what it costs
    code, _, err = cli("perturb", mixed, "--method", "noise", "--id", "rid", "--roles", "email=other", "-o",
                       tmp_path / "kept.csv")
    assert code == 0 and "can identify people" in err
    assert "email" in pd.read_csv(tmp_path / "kept.csv").columns


@pytest.mark.parametrize(("extra", "word"), [
    (["--label", "class", "--drop", "class"], "--drop"),
    (["--label", "class", "--roles", "class=drop"], "--roles"),
    (["--roles", "rid=drop"], "--roles"),
])
def test_contradicting_options_are_one_error(cli, nums: Path, tmp_path: Path, extra: list[str], word: str) -> None:
    for cmd in (["perturb", nums, "--method", "noise", "-o", tmp_path / "x.csv"],
                ["release", nums, "--methods", "noise", *FAST, "-o", tmp_path / "x"]):
        line = one_line_error(*cli(*cmd, "--id", "rid", *extra))
        assert "give it one treatment" in line and word in line
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "x").exists()


def test_the_advice_on_shown_columns_works_when_followed(cli, nums: Path, tmp_path: Path, small_grid: Path) -> None:
    # a label that singles out records: the advice says how to leave it out, and following it works
    df = pd.read_csv(nums)
    df["class"] = [f"c{i}" for i in range(len(df))]
    p = tmp_path / "uniq.csv"
    df.to_csv(p, index=False)
    line = one_line_error(*cli("release", p, "--id", "rid", "--label", "class", "--config", small_grid,
                               "--no-cache", "-j", "1", "-o", tmp_path / "a"))
    assert "single out" in line and "leave out --label" in line
    # as the advice says: no --label (the column, unique to each row, is then dropped as an identifier)
    code, _, err = cli("release", p, "--id", "rid", "--config", small_grid, *FAST, "-o", tmp_path / "b")
    assert code == 0 and "'class' is not released" in err


def test_integer_coded_tables_come_back_as_integers_in_range(cli, tmp_path: Path, small_grid: Path) -> None:
    rng = np.random.default_rng(23)
    n = 240
    df = pd.DataFrame({"sex": rng.integers(1, 3, n), "marital": rng.integers(1, 6, n), "edu": rng.integers(1, 10, n),
                       "class": rng.integers(0, 2, n)})
    df.insert(0, "rid", np.arange(n))
    p = tmp_path / "codes.csv"
    df.to_csv(p, index=False)
    outs = []
    for method in ("mdav", "noise"):
        o = tmp_path / f"{method}.csv"
        assert cli("perturb", p, "--method", method, "--id", "rid", "--label", "class", "-o", o)[0] == 0
        outs.append(pd.read_csv(o))
    assert cli("release", p, "--id", "rid", "--label", "class", "--config", small_grid, *FAST, "-o",
               tmp_path / "rel")[0] == 0
    outs.append(pd.read_csv(tmp_path / "rel" / "release.csv"))
    for R in outs:
        for c in ("sex", "marital", "edu"):
            v = R[c].to_numpy(float)
            assert np.all(v == np.round(v)) and v.min() >= df[c].min() and v.max() <= df[c].max(), c


# ------------------------------------------------------------------------------------------ states


def test_a_state_is_checked_against_its_tables(cli, nums: Path, tmp_path: Path) -> None:
    noid = tmp_path / "noid.csv"
    pd.read_csv(nums).drop(columns=["rid"]).to_csv(noid, index=False)
    for k in (1, 2):
        assert cli("perturb", noid, "--method", "noise", "--label", "class", "-o", tmp_path / f"a{k}.csv",
                   "--state", tmp_path / f"a{k}.state")[0] == 0
    line = one_line_error(*cli("evaluate", noid, tmp_path / "a1.csv", "--label", "class", "--state",
                               tmp_path / "a2.state"))
    assert "another release" in line
    line = one_line_error(*cli("attack", noid, tmp_path / "a1.csv", "--state", tmp_path / "a2.state"))
    assert "another release" in line
    other = tmp_path / "other.csv"  # the same records in another order: another table to align against
    pd.read_csv(noid).iloc[::-1].to_csv(other, index=False)
    assert "another original" in one_line_error(*cli("evaluate", other, tmp_path / "a1.csv", "--state",
                                                     tmp_path / "a1.state"))
    # the original with more columns than the release was made from is still its original
    assert cli("evaluate", nums, tmp_path / "a1.csv", "--state", tmp_path / "a1.state")[0] == 0
    assert cli("evaluate", noid, tmp_path / "a1.csv", "--label", "class", "--state", tmp_path / "a1.state")[0] == 0
    # the same release in another format, read by the user's own code: still its release
    from ppdm.pipeline import evaluate

    pd.read_csv(tmp_path / "a1.csv").to_parquet(tmp_path / "a1.parquet", index=False)
    assert evaluate(noid, tmp_path / "a1.parquet", label="class", state=tmp_path / "a1.state")["n_rows"] == 120
    assert evaluate(pd.read_csv(noid), pd.read_csv(tmp_path / "a1.csv"), state=tmp_path / "a1.state")["n_rows"]
    # with pseudonymous ids, the ids pair rows with records: a part of the release aligns, another release's
    # pseudonyms do not
    for k in (1, 2):
        assert cli("perturb", nums, "--method", "noise", "--id", "rid", "-o", tmp_path / f"i{k}.csv", "--state",
                   tmp_path / f"i{k}.state")[0] == 0
    pd.read_csv(tmp_path / "i1.csv").iloc[::2].to_csv(tmp_path / "part.csv", index=False)
    assert cli("evaluate", nums, tmp_path / "part.csv", "--id", "rid", "--state", tmp_path / "i1.state")[0] == 0
    assert "pseudonyms" in one_line_error(*cli("evaluate", nums, tmp_path / "i1.csv", "--id", "rid", "--state",
                                               tmp_path / "i2.state"))


def test_a_damaged_state_claiming_a_huge_array_is_damaged(cli, nums: Path, tmp_path: Path) -> None:
    st = tmp_path / "r.state"
    assert cli("perturb", nums, "--method", "noise", "--id", "rid", "-o", tmp_path / "r.csv", "--state", st)[0] == 0
    forged = tmp_path / "big.state"
    with zipfile.ZipFile(st) as zin, zipfile.ZipFile(forged, "w", compression=zipfile.ZIP_STORED) as zout:
        for n in zin.namelist():
            data = zin.read(n)
            if n.endswith(".npy") and b"(120,)" in data[:128]:
                data = data.replace(b"(120,)", b"(1000000, 1000000)", 1)
            zout.writestr(n, data)
    os.chmod(forged, 0o600)
    for args in (("inspect", forged), ("evaluate", nums, tmp_path / "r.csv", "--id", "rid", "--state", forged)):
        assert "damaged" in one_line_error(*cli(*args))


# ------------------------------------------------------------------------------------------ evaluate


def test_evaluate_names_a_text_cell_and_leaves_out_rows_without_a_label(cli, nums: Path, tmp_path: Path) -> None:
    rel = tmp_path / "k.csv"
    assert cli("perturb", nums, "--method", "noise", "--id", "rid", "--label", "class", "-o", rel, "--keep-ids")[0] == 0
    R = pd.read_csv(rel).astype({"c": object})
    R.loc[6, "c"] = "n/d?"
    R.to_csv(tmp_path / "text.csv", index=False)
    line = one_line_error(*cli("evaluate", nums, tmp_path / "text.csv", "--id", "rid"))
    assert "column 'c'" in line and "row 7" in line
    gaps = tmp_path / "gaps.csv"
    df = pd.read_csv(nums).astype({"class": object})
    df.loc[::10, "class"] = np.nan
    df.to_csv(gaps, index=False)
    code, out, err = cli("evaluate", gaps, rel, "--id", "rid", "--label", "class", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["left_out"]["without_label"] == 12 and res["utility"]["kmeans_pct"]["release"] is not None


def test_zero_workers_is_one_clear_error(cli, nums: Path, tmp_path: Path) -> None:
    assert "0 workers" in one_line_error(*cli("release", nums, "--methods", "noise", "-j", "0", "-o", tmp_path / "o"))
    (tmp_path / "c.yaml").write_text("n_jobs: 0\n")
    assert "0 workers" in one_line_error(*cli("release", nums, "--config", tmp_path / "c.yaml", "-o", tmp_path / "o"))


# ------------------------------------------------------------------------------------------- minor


def test_minor_cases(cli, nums: Path, tmp_path: Path) -> None:
    df = pd.read_csv(nums)
    # an all-empty column: the advice drops the column, and following it works
    empty = tmp_path / "empty.csv"
    df.assign(e=np.nan).to_csv(empty, index=False)
    line = one_line_error(*cli("perturb", empty, "--method", "noise", "--columns", "a,b,e", "-o", tmp_path / "e.csv"))
    assert "leave it out of --columns" in line
    code, _, err = cli("perturb", empty, "--method", "noise", "--columns", "a,b", "-o", tmp_path / "e.csv")
    assert code == 0 and "'e' is not released: no values" in err
    assert "fill or drop those rows" not in line
    # a missing id is refused as a repeated one is
    noid = tmp_path / "gap_id.csv"
    df.astype({"rid": object}).assign(rid=lambda d: d["rid"].where(d.index != 3)).to_csv(noid, index=False)
    assert "missing" in one_line_error(*cli("perturb", noid, "--method", "noise", "--id", "rid", "-o", tmp_path / "g"))
    # the overflow message names the column
    big = tmp_path / "big.csv"
    df.assign(b=df["b"] * 1e200).to_csv(big, index=False)
    assert "column 'b'" in one_line_error(*cli("perturb", big, "--method", "noise", "-o", tmp_path / "b.csv"))
    # formula-like cells: the warning goes to stderr (stdout may be the release)
    f = tmp_path / "f.csv"
    df.assign(note=["=SUM(A1)", "x"] * 60).to_csv(f, index=False)
    code, out, err = cli("perturb", f, "--method", "noise", "--columns", "a,b", "--roles", "note=other", "-o",
                         tmp_path / "f_out.csv")
    assert code == 0 and "formulas" in err and "formulas" not in out
    # UTF-16 named as such; gzip read as it is
    u16 = tmp_path / "u16.csv"
    u16.write_bytes(nums.read_text().encode("utf-16"))
    assert "UTF-16" in one_line_error(*cli("perturb", u16, "--method", "noise", "-o", tmp_path / "u.csv"))
    # a workbook (a ZIP whose first bytes hold no zero byte) named as such; it was "a header but no data rows"
    book = tmp_path / "t.xlsx"
    with zipfile.ZipFile(book, "w") as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
    book.write_bytes(book.read_bytes()[:4] + b"garbage" + book.read_bytes()[4:])
    assert "Excel workbook" in one_line_error(*cli("perturb", book, "--method", "noise", "-o", tmp_path / "x.csv"))
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(gzip.compress(nums.read_bytes()))
    assert cli("perturb", gz, "--method", "noise", "--id", "rid", "-o", tmp_path / "gz.csv")[0] == 0
    assert len(pd.read_csv(tmp_path / "gz.csv")) == 120


def test_no_lock_file_is_left_beside_an_output(cli, nums: Path, tmp_path: Path) -> None:
    st = tmp_path / "s.state"
    assert cli("stream", "init", nums, "--id", "rid", "--label", "class", "--rank", "2", "--state", st)[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.state", "t.csv"]
    # a run killed while it holds its lock leaves nothing beside the output, and the lock is free again
    out = tmp_path / "o.csv"
    holder = ("import sys, time\nfrom ppdm.data.io import output_lock\nwith output_lock(sys.argv[1]):\n"
              "    print('held', flush=True)\n    time.sleep(60)\n")
    for sig in (signal.SIGKILL, signal.SIGTERM):
        p = subprocess.Popen([sys.executable, "-c", holder, str(out)], stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        assert "another ppdm run" in one_line_error(*cli("perturb", nums, "--method", "noise", "-o", out))
        p.send_signal(sig)
        p.wait(timeout=30)
        assert sorted(x.name for x in tmp_path.iterdir()) == ["s.state", "t.csv"]
    assert cli("perturb", nums, "--method", "noise", "-o", out)[0] == 0
