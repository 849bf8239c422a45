"""``ppdm attack`` and ``ppdm evaluate`` say what they could not do or how they matched the tables.

- the default threat on a release without a state (another tool's) runs without the seed search and says so;
- a control that holds the original's own records is refused (most of them) or warned about (some);
- ``evaluate`` says when rows are matched by position and which columns one table lacks.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import InputError, PrivacyWarning
from tests.conftest import one_line_error


def _numbers(tmp_path: Path, n: int = 120, m: int = 5) -> tuple[Path, Path]:
    """An original and a release another tool made of it (multiplicative noise, no state file)."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(n, m)) @ rng.normal(size=(m, m)) + 20
    o = pd.DataFrame(A, columns=[f"v{j}" for j in range(m)])
    o["label"] = rng.integers(0, 2, n)
    r = o.copy()
    r.iloc[:, :m] = A * rng.normal(1, 0.1, size=A.shape)
    po, pr = tmp_path / "o.csv", tmp_path / "r.csv"
    o.to_csv(po, index=False)
    r.to_csv(pr, index=False)
    return po, pr


# ------------------------------------------------------------------------ the seed search without a state


def test_the_default_threat_attacks_a_release_without_a_state_and_says_the_seed_search_was_skipped(
        cli, tmp_path: Path) -> None:
    po, pr = _numbers(tmp_path)
    js = tmp_path / "a.json"
    code, out, err = cli("attack", po, pr, "--label", "label", "--json", js)
    assert code == 0, err
    res = json.loads(js.read_text())
    ran = [r["attack"] for r in res["results"]]
    assert ran and "seed_search" not in ran
    assert "--state" in res["skipped"]["seed_search"]
    assert "seed_search skipped" in err and "--state" in err
    assert "seed_search skipped" not in out  # stdout is the report; the note is on stderr


def test_all_attacks_without_a_state_also_say_the_seed_search_was_skipped(cli, tmp_path: Path) -> None:
    po, pr = _numbers(tmp_path)
    code, _, err = cli("attack", po, pr, "--label", "label", "--all", "--threat", "population")
    assert code == 0, err
    assert "seed_search skipped" in err


def test_the_seed_search_asked_for_by_name_without_a_state_is_still_refused(cli, tmp_path: Path) -> None:
    po, pr = _numbers(tmp_path)
    line = one_line_error(*cli("attack", po, pr, "--label", "label", "--threat", "population",
                               "--attacks", "seed_search"))
    assert "--state" in line


def test_a_threat_without_the_population_has_nothing_skipped(cli, tmp_path: Path) -> None:
    po, pr = _numbers(tmp_path)
    js = tmp_path / "a.json"
    code, _, err = cli("attack", po, pr, "--label", "label", "--threat", "known-io:6", "--json", js)
    assert code == 0, err
    assert json.loads(js.read_text())["skipped"] == {} and "skipped" not in err


# ------------------------------------------------------------------------ a control of the original's rows


def _people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"pid": [f"id{seed}-{i}" for i in range(n)],
                       "age": rng.integers(18, 90, n), "income": rng.lognormal(10, 0.5, n).round(2),
                       "town": rng.choice(["north", "south", "east", "west"], n)})
    df["label"] = (df["income"] > df["income"].median()).astype(int)
    return df


def test_the_original_given_as_the_control_is_refused_with_the_overlap(cli, tmp_path: Path) -> None:
    members = _people(150, 0)
    po, pr = tmp_path / "o.csv", tmp_path / "r.csv"
    members.to_csv(po, index=False)
    members.sample(frac=1.0, random_state=3).to_csv(pr, index=False)
    line = one_line_error(*cli("attack", po, pr, "--control", po, "--id", "pid", "--threat", "known-io:6"))
    assert "150 of the control's 150 rows" in line and "control" in line and "release did not contain" in line


def test_a_control_holding_the_originals_rows_without_their_ids_is_refused(cli, tmp_path: Path) -> None:
    members = _people(150, 0)
    po, pr, pc = tmp_path / "o.csv", tmp_path / "r.csv", tmp_path / "c.csv"
    members.to_csv(po, index=False)
    members.to_csv(pr, index=False)
    members.drop(columns="pid").head(100).to_csv(pc, index=False)  # the shared columns alone still match
    line = one_line_error(*cli("attack", po, pr, "--control", pc, "--id", "pid", "--threat", "known-io:6"))
    assert "100 of the control's 100 rows" in line


def test_a_control_with_some_of_the_originals_rows_is_warned_about(cli, tmp_path: Path) -> None:
    members, control = _people(150, 0), _people(100, 1)
    control = pd.concat([control.iloc[:90], members.iloc[:10]], ignore_index=True)
    po, pr, pc = tmp_path / "o.csv", tmp_path / "r.csv", tmp_path / "c.csv"
    members.to_csv(po, index=False)
    members.to_csv(pr, index=False)
    control.to_csv(pc, index=False)
    js = tmp_path / "a.json"
    code, out, err = cli("attack", po, pr, "--control", pc, "--id", "pid", "--threat", "known-io:6", "--json", js)
    assert code == 0, err
    assert "PrivacyWarning" in err and "10 of the control's 100 rows" in err
    assert json.loads(js.read_text())["anonymisation"]["control_in_original"] == 10


def test_check_control_reads_integers_and_floats_alike() -> None:
    from ppdm.attacks.anonymisation import check_control

    members = _people(60, 0)
    as_floats = members.astype({"age": "float64"})
    with pytest.raises(InputError, match="60 of the control's 60 rows"):
        check_control(members, as_floats)
    other = _people(40, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_control(members, other) == 0
    with pytest.warns(PrivacyWarning, match="3 of the control's 43 rows"):
        assert check_control(members, pd.concat([other, as_floats.head(3)], ignore_index=True)) == 3


# ------------------------------------------------------------------------ evaluate: rows and columns matched


@pytest.fixture
def wdbc_sample(tmp_path: Path, wdbc: pd.DataFrame) -> Path:
    p = tmp_path / "t.csv"
    wdbc.sample(200, random_state=1).to_csv(p, index=False)
    return p


def test_evaluate_without_a_state_says_rows_are_matched_by_position(cli, tmp_path: Path, wdbc_sample: Path) -> None:
    rel, st = tmp_path / "r.csv", tmp_path / "r.state"
    code, _, err = cli("perturb", wdbc_sample, "-o", rel, "--method", "svd", "--rank", "5", "--label", "class",
                       "--state", st, "--seed", "1")
    assert code == 0, err
    code, out, err = cli("evaluate", wdbc_sample, rel, "--label", "class", "--utility", "kmeans")
    assert code == 0, err
    assert "matched by position" in err and "--state" in err and "matched by position" not in out
    code, out, err = cli("evaluate", wdbc_sample, rel, "--label", "class", "--utility", "kmeans", "--json")
    assert code == 0 and json.loads(out)["rows_matched_by"] == "position"
    code, out, err = cli("evaluate", wdbc_sample, rel, "--label", "class", "--utility", "kmeans", "--state", st)
    assert code == 0, err
    assert "matched by position" not in err


def test_evaluate_names_the_columns_one_table_lacks(cli, tmp_path: Path, wdbc_sample: Path) -> None:
    rel = tmp_path / "k.csv"
    code, _, err = cli("perturb", wdbc_sample, "-o", rel, "--method", "svd", "--rank", "5", "--label", "class",
                       "--keep-ids", "--seed", "1")
    assert code == 0, err
    renamed = tmp_path / "k_renamed.csv"
    pd.read_csv(rel).rename(columns={"mean_radius": "radius"}).to_csv(renamed, index=False)
    code, out, err = cli("evaluate", wdbc_sample, renamed, "--label", "class", "--utility", "kmeans")
    assert code == 0, err
    assert "'mean_radius'" in err and "'radius'" in err and "baselines" in err and "29 common columns" in err
    code, out, _ = cli("evaluate", wdbc_sample, renamed, "--label", "class", "--utility", "kmeans", "--json")
    assert json.loads(out)["columns_left_out"] == {"original": ["mean_radius"], "release": ["radius"]}
    # the same columns on both sides: nothing to say about them
    code, _, err = cli("evaluate", wdbc_sample, rel, "--label", "class", "--utility", "kmeans")
    assert code == 0 and "baselines" not in err


def test_a_control_of_other_people_on_coarse_columns_passes() -> None:
    """On four yes/no columns every real person outside the table matches some row of it: the original's own
    repeated rows show that chance, and such a control is neither refused nor warned about."""
    from ppdm.attacks.anonymisation import check_control

    rng = np.random.default_rng(0)
    coarse = pd.DataFrame({c: rng.choice(["yes", "no"], 600) for c in "wxyz"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_control(coarse.iloc[:400], coarse.iloc[400:]) == 200  # all of them, by chance
