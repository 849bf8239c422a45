"""Options checked before any work: each mistake is one line on stderr, exit code 2, never an internal error.

Seeds below zero, -p values of the wrong type or given twice, --columns naming a column a table lacks, table
outputs whose suffix names a format ppdm does not write, the generators' options, and the paths of inspect
and reproduce; plus the count of known pairs an attack report names.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import one_line_error


@pytest.fixture
def released(cli, table: Path, tmp_path: Path) -> Path:
    """A linkable (--keep-ids) noise release of ``table``, row for row."""
    rel = tmp_path / "release.csv"
    code, _, err = cli("perturb", table, "--method", "noise", "--label", "diagnosis", "--id", "pid", "--keep-ids",
                       "--seed", 1, "-o", rel)
    assert code == 0, err
    return rel


# ------------------------------------------------------------------------------------------------- seeds


@pytest.mark.parametrize("command", ["export", "attack", "mds-dims", "evaluate"])
def test_negative_seed_is_refused_by_every_command(cli, table: Path, released: Path, tmp_path: Path,
                                                   command: str) -> None:
    args = {
        "export": ["datasets", "export", "low_rank", "-o", tmp_path / "lr.csv", "--n", 50, "--m", 5, "--rank", 2],
        "attack": ["attack", table, released, "--label", "diagnosis", "--id", "pid", "--threat", "outsider"],
        "mds-dims": ["mds-dims", table, "--max-dims", 2, "--max-rows", 30, "--id", "pid", "--label", "diagnosis",
                     "--drop", "site"],
        "evaluate": ["evaluate", table, released, "--label", "diagnosis", "--id", "pid", "--utility", "kmeans",
                     "--sample", 30],
    }[command]
    line = one_line_error(*cli(*args, "--seed", -1))
    assert "--seed" in line and "0" in line


# ---------------------------------------------------------------------------------------------------- -p


@pytest.mark.parametrize(("args", "words"), [
    (["--method", "svd", "-p", "rank=abc"], ["-p rank takes an integer", "'abc'"]),
    (["--method", "svd", "-p", "rank="], ["-p rank= gives no value", "an integer"]),
    (["--method", "svd", "-p", "rank=2.5"], ["-p rank takes an integer"]),
    (["--method", "noise", "-p", "symmetric=maybe"], ["-p symmetric takes true or false", "'maybe'"]),
    (["--method", "noise", "-p", "scale=big"], ["-p scale takes a number"]),
    (["--method", "svd", "--rank", "3", "-p", "rank=4"], ["rank is given twice", "--rank", "-p rank=4"]),
    (["--method", "svd", "-p", "rank=3", "-p", "rank=4"], ["rank is given twice", "-p rank=3", "-p rank=4"]),
    (["--method", "nmf", "--rank", "2", "-p", "components=3"], ["components is given twice", "--rank"]),
    (["--method", "noise", "--seed", "3", "-p", "random_state=4"], ["seed is given twice", "--seed"]),
])
def test_p_values_of_the_wrong_type_or_given_twice_are_refused(cli, table: Path, tmp_path: Path, args: list[str],
                                                               words: list[str]) -> None:
    out = tmp_path / "r.csv"
    line = one_line_error(*cli("perturb", table, "--label", "diagnosis", "--id", "pid", "-o", out, *args))
    for w in words:
        assert w in line, line
    assert not out.exists()


@pytest.mark.parametrize("text", ["False", "false", "no", "NO"])
def test_p_false_in_words_is_false(cli, table: Path, tmp_path: Path, text: str) -> None:
    # 'False' kept as a string was truthy: symmetric noise released while the summary said symmetric=False
    out = tmp_path / "r.csv"
    code, stdout, err = cli("perturb", table, "--method", "noise", "--label", "diagnosis", "--id", "pid",
                            "--keep-ids", "--preprocess", "none", "--seed", 0, "-p", "scale=1", "-p",
                            "distribution=uniform", "-p", f"symmetric={text}", "-o", out)
    assert code == 0, err
    assert "symmetric=False" in stdout
    cols = [f"a{j}" for j in range(6)]
    noise = pd.read_csv(out)[cols].to_numpy() - pd.read_csv(table)[cols].to_numpy()
    assert noise.min() >= -1e-9  # U[0, a]: one-sided, as symmetric=False asks


def test_p_true_and_numbers_are_read_as_such() -> None:
    from ppdm.cli.params import parse_params

    got = parse_params(["symmetric=Yes", "scale=0.5", "distribution=uniform"], "noise")
    assert got == {"symmetric": True, "scale": 0.5, "distribution": "uniform"}
    assert parse_params(["rank=3"], "svd") == {"rank": 3} and type(parse_params(["rank=3"], "svd")["rank"]) is int
    assert parse_params(["keep=none"], "nmf") == {"keep": None}


# ---------------------------------------------------------------------------------------------- --columns


def test_evaluate_columns_naming_a_column_no_table_has(cli, table: Path, released: Path) -> None:
    line = one_line_error(*cli("evaluate", table, released, "--label", "diagnosis", "--id", "pid", "--columns",
                               "nosuch"))
    assert "--columns names column 'nosuch', which the original table does not have" in line


def test_evaluate_columns_naming_a_column_the_release_lacks(cli, table: Path, released: Path,
                                                            tmp_path: Path) -> None:
    short = tmp_path / "short.csv"
    pd.read_csv(released).drop(columns=["a2"]).to_csv(short, index=False)
    line = one_line_error(*cli("evaluate", table, short, "--label", "diagnosis", "--id", "pid", "--columns",
                               "a1,a2"))
    assert "--columns names column 'a2', which the release does not have" in line


def test_dask_evaluate_columns_naming_a_column_the_release_lacks(cli, table: Path, released: Path,
                                                                 tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    short = tmp_path / "short.csv"
    pd.read_csv(released).drop(columns=["a2"]).to_csv(short, index=False)
    line = one_line_error(*cli("evaluate", table, short, "--label", "diagnosis", "--id", "pid", "--columns",
                               "a1,a2", "--backend", "dask"))
    assert "--columns names column 'a2', which the release does not have" in line


def test_attack_columns_naming_a_column_no_table_has(cli, table: Path, released: Path) -> None:
    line = one_line_error(*cli("attack", table, released, "--label", "diagnosis", "--id", "pid", "--threat",
                               "outsider", "--columns", "a0,nosuch"))
    assert "--columns names column 'nosuch', which the original table does not have" in line


# ------------------------------------------------------------------------------------------- known pairs


def test_known_io_above_half_the_rows_reports_the_count_used(cli, table: Path, released: Path,
                                                             tmp_path: Path) -> None:
    report = tmp_path / "a.json"
    code, out, err = cli("attack", table, released, "--label", "diagnosis", "--id", "pid", "--threat",
                         "known-io:100000", "--json", report)
    assert code == 0, err
    res = json.loads(report.read_text())
    used = res["results"][0]["details"]["n_known_pairs"]
    assert used == 30  # half of the 60 rows
    desc = res["threat_description"]
    assert "100000 known" not in desc
    assert desc.startswith("the attacker knows 30 known original records") and "capped at 30" in desc
    assert "half of the 60 rows" in desc
    assert "capped at 30" in " ".join(out.split())  # the footer says it too


def test_known_io_within_half_the_rows_is_not_said_to_be_capped() -> None:
    from ppdm.attacks import ThreatModel

    assert ThreatModel.parse("known-io:10").describe(60, 6).startswith("the attacker knows 10 known")
    assert "capped" not in ThreatModel.parse("known-io:10").describe(60, 6)
    assert "m + 1 = 31" in ThreatModel.parse("insider").describe(40, 30)  # a preset's m + 1 above n/2 too


# ---------------------------------------------------------------------------------------------- outputs


@pytest.mark.parametrize("suffix", [".xlsx", ".json", ".txt", ".csv.gz"])
def test_table_outputs_in_a_format_ppdm_does_not_write_are_refused(cli, table: Path, tmp_path: Path,
                                                                  suffix: str) -> None:
    out = tmp_path / f"release{suffix}"
    runs = [
        ("perturb", table, "--method", "noise", "--label", "diagnosis", "--id", "pid", "-o", out),
        ("hide", table, "-k", 3, "--hide-member", 5, "--label", "diagnosis", "--id", "pid", "--drop", "site",
         "-o", out),
        ("stream", "init", table, "--state", tmp_path / "s.state", "--rank", 2, "--label", "diagnosis", "--id",
         "pid", "--drop", "site", "-o", out),
        ("datasets", "export", "iris", "-o", out),
    ]
    for args in runs:
        line = one_line_error(*cli(*args))
        assert f"'release{suffix}'" in line and "name it .csv, .tsv or .parquet" in line, (args, line)
        assert not out.exists()
    assert not (tmp_path / "s.state").exists()  # refused before any work


def test_tsv_output_is_tab_separated(cli, tmp_path: Path) -> None:
    out = tmp_path / "iris.tsv"
    code, _, err = cli("datasets", "export", "iris", "-o", out)
    assert code == 0, err
    assert "\t" in out.read_text().splitlines()[0]
    from ppdm.data.io import read_table

    assert read_table(out).shape == (150, 5)  # read back as written


# --------------------------------------------------------------------------------------------- datasets


@pytest.mark.parametrize(("args", "words"), [
    (["--noise", "-1"], ["--noise"]),
    (["--noise", "nan"], ["--noise"]),
    (["--n", "0"], ["--n"]),
])
def test_export_low_rank_refuses_bad_options(cli, tmp_path: Path, args: list[str], words: list[str]) -> None:
    out = tmp_path / "lr.csv"
    line = one_line_error(*cli("datasets", "export", "low_rank", "-o", out, "--n", 10, "--m", 5, "--rank", 2,
                               *args))
    for w in words:
        assert w in line, line
    assert "rank" not in line
    assert not out.exists()


def test_low_rank_refuses_nan_noise_and_empty_shapes() -> None:
    from ppdm.datasets import low_rank
    from ppdm.exceptions import ParameterError

    with pytest.raises(ParameterError, match="noise"):
        low_rank(10, 5, 2, noise=float("nan"))
    with pytest.raises(ParameterError, match="noise"):
        low_rank(10, 5, 2, noise=-1.0)
    with pytest.raises(ParameterError, match=r"n \(rows\)"):
        low_rank(0, 5, 2)


def test_export_low_rank_default_rank_fits_a_small_matrix(cli, tmp_path: Path) -> None:
    out = tmp_path / "lr.csv"
    code, _, err = cli("datasets", "export", "low_rank", "-o", out, "--n", 10, "--m", 5)
    assert code == 0, err
    X = pd.read_csv(out).to_numpy()
    assert X.shape == (10, 5) and np.linalg.matrix_rank(X) == 5


def test_export_refuses_options_the_dataset_does_not_take(cli, tmp_path: Path) -> None:
    line = one_line_error(*cli("datasets", "export", "org", "-o", tmp_path / "o.csv", "--rank", 3))
    assert "generator 'org' takes no rank" in line
    line = one_line_error(*cli("datasets", "export", "iris", "-o", tmp_path / "i.csv", "--n", 3))
    assert "--n shapes a generated dataset" in line
    line = one_line_error(*cli("datasets", "export", "nosuch", "-o", tmp_path / "x.csv"))
    assert "unknown generator or dataset 'nosuch'" in line and "low_rank" in line


def test_datasets_show_describes_the_generators_it_lists(cli) -> None:
    code, out, err = cli("datasets", "list")
    assert code == 0 and "org" in out
    code, out, err = cli("datasets", "show", "org")
    assert code == 0, err
    assert "generator" in out and "2000 rows x 101 columns" in out and "classes:" in out
    line = one_line_error(*cli("datasets", "show", "nosuch"))
    assert "unknown generator or dataset 'nosuch'" in line and "org" in line


# ------------------------------------------------------------------------------------------------ paths


def test_inspect_a_directory_names_it(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    line = one_line_error(*cli("inspect", "."))
    assert "'.' is a directory, not a ppdm state file" in line


def test_reproduce_out_naming_a_file_says_so(cli, tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("")
    line = one_line_error(*cli("reproduce", "wang2008-table-2-1", "--out", f))
    assert "is a file; --out takes a directory" in line
