"""Valid tables whose columns are stored in less common types: every one is read as what it means, or refused
(or left out) in one line that names the column, never an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import one_line_error

FAST = ["--methods", "noise", "--max-reid", "1", "--max-within-5pct", "1", "--max-singling-out", "1",
        "--max-linkability", "1", "--max-membership-outliers", "1", "--no-cache", "-j", "1"]
N = 120


def _base(seed: int = 3) -> dict[str, pa.Array]:
    rng = np.random.default_rng(seed)
    return {"age": pa.array(rng.integers(18, 90, N)), "income": pa.array(rng.normal(5e4, 1e4, N))}


def _schema(cli, path: Path, *extra: object) -> dict[str, dict[str, object]]:  # type: ignore[no-untyped-def]
    code, out, err = cli("schema", path, "--json", *extra)
    assert code == 0, out + err
    return {c["name"]: c for c in json.loads(out)}


# ------------------------------------------------------------------------------- Parquet's column types


def test_time_zones_are_dates_in_utc_and_binary_text_is_text(cli, tmp_path: Path) -> None:
    """Timestamps with a time zone are dates (the instants in UTC; the release stopped with an internal error),
    and binary cells that are UTF-8 are text."""
    rng = np.random.default_rng(4)
    stamps = pd.date_range("2021-03-27 20:00", periods=N, freq="h", tz="Europe/London")  # across a clock change
    cols = _base() | {"seen": pa.array(stamps),
                      "code": pa.array([rng.choice(["ab", "cd", "é"]).encode() for _ in range(N)], type=pa.binary())}
    src = tmp_path / "t.parquet"
    pq.write_table(pa.table(cols), src)
    before = src.read_bytes()
    assert {c: i["type"] for c, i in _schema(cli, src).items()} == {"age": "integer", "income": "continuous",
                                                                  "seen": "date", "code": "categorical"}
    out = tmp_path / "o"
    code, text, err = cli("release", src, "-o", out, *FAST)
    assert code == 0, text + err
    R = pd.read_parquet(out / "release.parquet")
    days = pd.to_datetime(R["seen"], format="%Y-%m-%d")
    utc = stamps.tz_convert("UTC").tz_localize(None).normalize()
    assert days.min() >= utc.min() and days.max() <= utc.max()
    assert set(R["code"]) <= {"ab", "cd", "é"}
    assert src.read_bytes() == before


def test_nested_columns_are_left_out_with_a_warning_naming_them(cli, tmp_path: Path) -> None:
    """Lists, structs and maps are no values a release can hold: left out, with a warning that names each and
    the way to release or silence it (each stopped ``release`` and ``schema`` with an internal error)."""
    rng = np.random.default_rng(5)
    cols = _base() | {
        "tags": pa.array([["a", "b"][:k] for k in rng.integers(0, 3, N)]),
        "place": pa.array([{"x": int(k)} for k in rng.integers(0, 3, N)]),
        "attrs": pa.array([[("k", int(k))] for k in rng.integers(0, 3, N)], type=pa.map_(pa.string(), pa.int64())),
    }
    src = tmp_path / "t.parquet"
    pq.write_table(pa.table(cols), src)
    info = _schema(cli, src)
    for c in ("tags", "place", "attrs"):
        assert info[c]["type"] == "nested" and info[c]["treatment"].startswith("dropped (nested"), info[c]
    out = tmp_path / "o"
    code, text, err = cli("release", src, "-o", out, *FAST)
    assert code == 0, text + err
    for c in ("tags", "place", "attrs"):
        assert f"column '{c}' is not released: nested values" in err and f"--drop '{c}'" in err
    assert list(pd.read_parquet(out / "release.parquet").columns) == ["age", "income"]
    # --drop leaves them out without a word
    code, _, err = cli("release", src, "-o", tmp_path / "o2", "--drop", "tags,place,attrs", *FAST)
    assert code == 0 and "nested" not in err, err


@pytest.mark.parametrize("options", [["--roles", "tags=other"], ["--label", "tags"], ["--id", "tags"]])
def test_keeping_a_nested_column_is_one_line_naming_it(cli, tmp_path: Path, options: list[str]) -> None:
    src = tmp_path / "t.parquet"
    pq.write_table(pa.table(_base() | {"tags": pa.array([[str(i)] for i in range(N)])}), src)
    line = one_line_error(*cli("release", src, "-o", tmp_path / "o", *options, *FAST))
    assert "column 'tags' holds nested values" in line and "--drop 'tags'" in line
    line = one_line_error(*cli("schema", src, *options))
    assert "column 'tags' holds nested values" in line


def test_binary_that_is_not_text_is_one_line_naming_the_column(cli, tmp_path: Path) -> None:
    src = tmp_path / "t.parquet"
    cells = [b"ok"] * N
    cells[6] = bytes([0xA7, 0x00])
    pq.write_table(pa.table(_base() | {"blob": pa.array(cells, type=pa.binary())}), src)
    for args in (["schema", src], ["release", src, "-o", tmp_path / "o", *FAST]):
        line = one_line_error(*cli(*args))
        assert "column 'blob'" in line and "not UTF-8 text" in line and "data row 7" in line
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------------------- integers beyond 64 bits


def test_whole_numbers_beyond_64_bits_are_one_line_naming_the_column(cli, tmp_path: Path) -> None:
    """A column of 20-digit numbers (or Parquet's uint64 from 2**63) is refused, naming it and the way out; it
    was released as -9223372036854775808 in every row. uint64 values within 64-bit integers are released."""
    rng = np.random.default_rng(0)
    csv = tmp_path / "t.csv"
    pd.DataFrame({"age": rng.integers(18, 90, N), "income": rng.normal(5e4, 1e4, N).round(2),
                  "acct": [str(2**64 + 12345 * k) for k in range(N)]}).to_csv(csv, index=False)
    big = tmp_path / "big.parquet"
    pq.write_table(pa.table(_base() | {"u": pa.array(rng.integers(2**63, 2**64 - 1, N, dtype=np.uint64))}), big)
    for src, col in ((csv, "acct"), (big, "u")):
        for args in (["release", src, "-o", tmp_path / "o", *FAST], ["perturb", src, "--method", "noise", "-o",
                                                                     tmp_path / "p.csv"]):
            line = one_line_error(*cli(*args))
            assert f"column '{col}' holds whole numbers beyond 64 bits" in line, line
            assert "--id" in line and f"--drop '{col}'" in line, line
    # the advice works: named the id, the column becomes pseudonyms
    code, out, err = cli("release", csv, "--id", "acct", "-o", tmp_path / "o", *FAST)
    assert code == 0, out + err
    small = tmp_path / "small.parquet"
    u = rng.integers(2**62, 2**63 - 2**20, N, dtype=np.uint64)
    pq.write_table(pa.table(_base() | {"u": pa.array(u)}), small)
    code, out, err = cli("perturb", small, "--method", "noise", "-o", tmp_path / "s.parquet")
    assert code == 0, out + err
    R = pd.read_parquet(tmp_path / "s.parquet")["u"].to_numpy()
    assert R.dtype.kind in "iu" and R.min() >= int(u.min()) - 1024 and R.max() <= int(u.max()) + 1024


# ------------------------------------------------------------------------------- a Parquet release's types


def test_a_parquet_release_keeps_its_column_types_and_evaluates_against_its_original(cli, tmp_path: Path) -> None:
    """Booleans and integers beside gaps are written as booleans and integers, categories as text: the release
    was written with Python objects, read back as text, and ``evaluate`` refused ppdm's own release ("column
    'smoker' holds text")."""
    rng = np.random.default_rng(9)
    df = pd.DataFrame({"age": rng.integers(18, 90, 200), "income": rng.normal(5e4, 1e4, 200).round(2),
                       "smoker": pd.array(rng.choice([True, False, None], 200), dtype="boolean"),
                       "kids": pd.array(rng.integers(0, 5, 200), dtype="Int64"),
                       "sex": rng.choice(["F", "M"], 200)})
    df.loc[::4, "kids"] = pd.NA
    src = tmp_path / "t.parquet"
    df.to_parquet(src)
    out = tmp_path / "o"
    code, text, err = cli("release", src, "-o", out, *FAST)
    assert code == 0, text + err
    R = pd.read_parquet(out / "release.parquet")
    assert {c: str(t) for c, t in R.dtypes.items()} == {"age": "int64", "income": "float64", "smoker": "boolean",
                                                        "kids": "Int64", "sex": "object"}
    assert R["smoker"].isna().any() and set(R["smoker"].dropna()) <= {True, False}
    assert set(R["sex"]) <= {"F", "M"}
    code, text, err = cli("evaluate", src, out / "release.parquet")
    assert code == 0, text + err


# ------------------------------------------------------------------------------- numbers and dates as text


def _incomes(rng: np.random.Generator, n: int = 300) -> pd.Series:
    return pd.Series(rng.normal(5e4, 1e4, n).round(2).astype(str), dtype=object)


def test_missing_marks_among_numbers_are_gaps(cli, tmp_path: Path) -> None:
    """One "?" (or "-", "n/a", "NA", ".") in a column of 300 incomes made it free text, dropped; the marks are
    gaps of a column of numbers now, in a CSV as in Parquet. A category spelt like a mark stays a category."""
    rng = np.random.default_rng(14)
    df = pd.DataFrame({"age": rng.integers(18, 90, 300), "income": _incomes(rng),
                       "smokes": rng.choice(["yes", "no", "?"], 300)})
    for row, mark in zip((17, 40, 41, 99, 150), ("?", "-", "n/a", "NA", "."), strict=True):
        df.loc[row, "income"] = mark
    csv, parquet = tmp_path / "t.csv", tmp_path / "t.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(parquet)
    for src in (csv, parquet):
        info = _schema(cli, src)
        assert (info["income"]["type"], info["income"]["treatment"], info["income"]["n_missing"]) == (
            "continuous", "perturbed", 5), info["income"]
        assert info["smokes"]["type"] == "categorical" and info["smokes"]["n_distinct"] == 3
    out = tmp_path / "o.csv"
    code, text, err = cli("perturb", csv, "--method", "noise", "-o", out)
    assert code == 0 and "income" not in err, text + err
    R = pd.read_csv(out)
    assert R["income"].dtype == np.float64 and "?" in set(R["smokes"])


def test_text_among_numbers_is_one_line_naming_the_cell_and_its_row(cli, tmp_path: Path) -> None:
    """A column of numbers with a typo or two is refused naming the first and its row; it was dropped as free
    text with only a warning."""
    rng = np.random.default_rng(15)
    df = pd.DataFrame({"age": rng.integers(18, 90, 300), "income": _incomes(rng)})
    df.loc[17, "income"], df.loc[60, "income"], df.loc[90, "income"] = "12,5", "?", "unknown"
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    for args in (["release", src, "-o", tmp_path / "o", *FAST], ["perturb", src, "--method", "noise", "-o",
                                                                 tmp_path / "p.csv"]):
        line = one_line_error(*cli(*args))
        assert "column 'income' holds text among numbers ('12,5' and 1 more)" in line, line
        assert "data row 18" in line and "--drop 'income'" in line, line
    line = one_line_error(*cli("hide", src, "-o", tmp_path / "h.csv", "--clusters", 2, "--hide-member", 1))
    assert "column 'income'" in line and "data row 18 ('12,5')" in line, line


def test_timestamps_with_a_zone_and_day_first_dates_are_dates(cli, tmp_path: Path) -> None:
    """ISO timestamps ending in Z or an offset, and dd/mm/yyyy dates (a day beyond 12 among them), are dates:
    the first were free text, dropped, the second categories. A day-first column is released day-first."""
    rng = np.random.default_rng(16)
    seen = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 10**7, 300), unit="s")
    df = pd.DataFrame({"age": rng.integers(18, 90, 300), "utc": seen.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "paris": seen.strftime("%Y-%m-%dT%H:%M:%S+01:00"), "visit": seen.strftime("%d/%m/%Y")})
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    info = _schema(cli, src)
    assert all(info[c]["type"] == "date" and info[c]["treatment"] == "perturbed" for c in ("utc", "paris", "visit"))
    out = tmp_path / "o.csv"
    code, text, err = cli("perturb", src, "--method", "noise", "-o", out)
    assert code == 0, text + err
    R = pd.read_csv(out)
    visit = pd.to_datetime(R["visit"], format="%d/%m/%Y")
    assert visit.min() >= seen.normalize().min() and visit.max() <= seen.normalize().max()
    paris = pd.to_datetime(R["paris"], format="%Y-%m-%d")  # in UTC: an hour earlier than written
    assert paris.min() >= (seen - pd.Timedelta(hours=1)).normalize().min()


# ----------------------------------------------------------------------------- commas inside numbers


def test_decimal_commas_and_thousands_are_numbers_where_the_file_settles_them(cli, tmp_path: Path) -> None:
    """A ';'-separated file of a European spreadsheet (a byte-order mark, CRLF, "67574,04", "1.234,5") and a
    CSV with commas between thousands ("12,345.67") are read as numbers, each column named on stderr; the
    column was dropped as free text. "1,234" alone in a tab-separated file is ambiguous and stays text."""
    rng = np.random.default_rng(17)
    incomes = rng.normal(5e4, 1e4, 300).round(2)
    european = [f"{v:,.2f}".replace(",", " ").replace(".", ",").replace(" ", ".") for v in incomes]  # 50.123,45
    european[5], european[9] = "?", ""
    rows = "".join(f"{a};{e};{x}\r\n" for a, e, x in zip(rng.integers(18, 90, 300), european,
                                                         rng.choice(["M", "F"], 300), strict=True))
    semi = tmp_path / "eu.csv"
    semi.write_bytes(b"\xef\xbb\xbf" + f"age;income;sex\r\n{rows}".encode())
    code, out, err = cli("schema", semi, "--sep", ";", "--json")
    assert code == 0, out + err
    info = {c["name"]: c for c in json.loads(out)}
    assert (info["income"]["type"], info["income"]["n_missing"]) == ("continuous", 2), info["income"]
    assert "number column 'income' with a decimal comma" in err and f"= {incomes[0]})" in err, err
    release = tmp_path / "o.csv"
    code, text, err = cli("perturb", semi, "--sep", ";", "--method", "noise", "-p", "scale=0.0001", "-o", release)
    assert code == 0, text + err
    R = pd.read_csv(release)
    assert R["income"].dtype == np.float64
    assert np.abs(R["income"].dropna().mean() - np.delete(incomes, [5, 9]).mean()) < 0.01 * incomes.std()

    english = pd.DataFrame({"age": rng.integers(18, 90, 300), "income": [f"{v:,.2f}" for v in incomes]})
    comma = tmp_path / "us.csv"
    english.to_csv(comma, index=False)
    assert _schema(cli, comma)["income"]["type"] == "continuous"

    tab = tmp_path / "amb.tsv"
    tab.write_text("age\tcode\n" + "".join(f"{a}\t{c},{c:03d}\n" for a, c in zip(range(20, 320), range(300),
                                                                                  strict=True)))
    code, out, err = cli("schema", tab, "--json")
    assert code == 0 and "decimal comma" not in err and "thousands" not in err, out + err
    assert {c["name"]: c for c in json.loads(out)}["code"]["type"] != "continuous"


def test_points_among_a_decimal_comma_are_not_thousands_unless_the_file_says_so(cli, tmp_path: Path) -> None:
    """"1.234" beside one "1,5" in a comma-separated CSV is a decimal point and a typo, refused naming the cell;
    it is not read as 1234 and 1.5."""
    rng = np.random.default_rng(18)
    df = pd.DataFrame({"age": rng.integers(18, 90, 300), "ratio": [f"{v:.3f}" for v in rng.uniform(1, 9, 300)]})
    df.loc[40, "ratio"] = "1,5"
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    line = one_line_error(*cli("perturb", src, "--method", "noise", "-o", tmp_path / "p.csv"))
    assert "column 'ratio' holds text among numbers ('1,5')" in line and "data row 41" in line, line
