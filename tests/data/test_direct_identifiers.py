"""Direct identifiers never reach a release unnoticed, however often their values repeat.

A table of visits names its patients on every visit: the e-mail, telephone number and name of a patient seen
three times repeat, so they are neither free text nor "a different value in every row". Their names, or what
their values are, still say that they identify people.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.data.columns import DIRECT, direct_identifier_name, infer_columns


def _visits(n_patients: int = 60, n_visits: int = 200, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    patients = pd.DataFrame({
        "patient_name": [f"Ann{i} Smith{i % 11}" for i in range(n_patients)],
        "email": [f"p{i}@clinic.example.org" for i in range(n_patients)],
        "phone": [f"07{rng.integers(100, 999)} {rng.integers(100000, 999999)}" for i in range(n_patients)],
        # what the values are, under names that do not say it
        "contact": [f"patient.{i}@example.com" for i in range(n_patients)],
        "reach_on": [f"+44 20 {rng.integers(1000, 9999)} {rng.integers(1000, 9999)}" for i in range(n_patients)],
        "ssn": 100_000_000 + rng.choice(899_999_999, n_patients, replace=False),  # no 7 GB arange
        "age": rng.integers(18, 90, n_patients),
        "sex": rng.choice(["F", "M"], n_patients),
        "income_band": rng.choice(["10000-19999", "20000-49999", "50000-74999", "75000-99999"], n_patients),
        "has_email": rng.choice(["yes", "no"], n_patients),
        # a fraction is no identifier, whatever its name (spambase's word frequencies)
        "word_freq_email": rng.exponential(0.2, n_patients).round(2),
    })
    visits = patients.iloc[rng.integers(0, n_patients, n_visits)].reset_index(drop=True)
    visits["drug_name"] = rng.choice(["aspirin", "statin", "insulin", "none"], n_visits)
    visits["systolic"] = rng.normal(130, 15, n_visits).round()
    return visits


IDENTIFYING = ("patient_name", "email", "phone", "contact", "reach_on", "ssn")
KEPT = ("age", "sex", "income_band", "has_email", "word_freq_email", "drug_name", "systolic")


def test_the_schema_drops_repeated_direct_identifiers_and_keeps_the_rest() -> None:
    infos = {i.name: i for i in infer_columns(_visits())}
    for c in IDENTIFYING:
        assert infos[c].treatment.startswith(DIRECT), (c, infos[c].treatment)
    assert infos["contact"].treatment == f"{DIRECT}e-mail addresses)"
    assert infos["reach_on"].treatment == f"{DIRECT}telephone numbers)"
    assert infos["ssn"].treatment == f"{DIRECT}so named)"
    for c in KEPT:
        assert infos[c].treatment == "perturbed", (c, infos[c].treatment)


@pytest.mark.parametrize(("name", "identifying"), [
    ("email", True), ("E-mail", True), ("phone_no", True), ("SSN", True), ("lastName", True), ("Name", True),
    ("patient name", True), ("home_address", True), ("username", True),
    ("drug_name", False), ("hospital name", False), ("age", False), ("signal", False), ("sinus", False),
    ("company", False), ("class", False), ("home_phone_no", True), ("word_freq_address", False),
])
def test_names_that_say_a_column_identifies_people(name: str, identifying: bool) -> None:
    assert direct_identifier_name(name) is identifying


def test_a_role_keeps_such_a_column_with_a_warning(cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    code, _, err = _release(cli, tmp_path, _visits(), "--roles", "email=other")
    assert code == 0, err
    assert "column 'email' is free text, names each row or is named as an identifier, and is released" in err
    assert "p1@clinic.example.org" in (tmp_path / "out" / "release.csv").read_text()


def _release(cli: Callable[..., tuple[int, str, str]], tmp_path: Path, df: pd.DataFrame,
             *args: str) -> tuple[int, str, str]:
    """One candidate, the policy opened: this is about the columns, not the sweep."""
    src = tmp_path / "visits.csv"
    df.to_csv(src, index=False)
    grid = tmp_path / "grid.yaml"
    grid.write_text("methods:\n- method: mdav\n  grid: {k: [10]}\n")
    return cli("release", src, "-o", tmp_path / "out", "--config", grid, "--no-cache", "-j", "1", "--max-reid", "1",
               "--max-within-5pct", "1", "--max-singling-out", "1", "--max-linkability", "1",
               "--max-membership-outliers", "1", *args)


def test_a_release_publishes_none_of_them(cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    df = _visits()
    out = tmp_path / "out"
    code, _, err = _release(cli, tmp_path, df)
    assert code == 0, err
    released = pd.read_csv(out / "release.csv", dtype=str)
    assert not set(IDENTIFYING) & set(released.columns)
    text = "\n".join(p.read_text(errors="replace") for p in out.iterdir() if p.suffix in (".csv", ".json", ".html"))
    for c in ("email", "contact", "reach_on"):
        assert not any(v in text for v in df[c].unique()), c
    for c in IDENTIFYING:
        assert f"column '{c}' is not released: a direct identifier" in err
    # a repeated identifier cannot be an --id (it does not name each row once): the warning does not offer it
    assert "'email' is not released: a direct identifier: so named; keep it with --roles" in err
