"""Every printed factor vector of the dissertation's hiding examples (Sec. 5.3) is a unit test."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from ppdm.exceptions import ParameterError
from ppdm.hiding import scheme1, scheme2, scheme3
from tests.conftest import SHARED

FIXTURES = SHARED / "reference" / "wang2008_pattern_hiding_fixtures.csv"


def _rows() -> list[dict[str, str]]:
    if not FIXTURES.exists():
        return []
    with FIXTURES.open() as f:
        return [r for r in csv.DictReader(f) if r["before_1"] != ""]


def _v(row: dict[str, str], prefix: str) -> np.ndarray:
    return np.array([float(row[f"{prefix}_{j}"]) for j in (1, 2, 3)])


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["case_id"])
def test_printed_fixture(row: dict[str, str]) -> None:
    before, after = _v(row, "before"), _v(row, "after")
    s = row["scheme"]
    got = scheme1(before) if s == "1" else (scheme2(_v(row, "hx"), before) if s == "2"
                                            else scheme3(_v(row, "hx"), before))
    np.testing.assert_array_equal(got, after)


def test_fixture_file_has_all_printed_cases() -> None:
    if not FIXTURES.exists():
        pytest.skip("shared reference folder not present")
    assert len(_rows()) == 8


def test_schemes_by_hand() -> None:
    np.testing.assert_array_equal(scheme1([1.8918, 0.1394, 0.1679]), [0.1394, 1.8918, 0.1679])
    # Scheme 2, different argmax: y's maximum moves to x's argmax
    np.testing.assert_array_equal(scheme2([3, 1, 0], [0.2, 0.1, 5.0]), [5.0, 0.1, 0.2])
    # same argmax: swap with the smallest other index, or with argmin H_y
    np.testing.assert_array_equal(scheme2([0, 1, 3], [0.5, 0.1, 4.0]), [4.0, 0.1, 0.5])
    np.testing.assert_array_equal(scheme2([0, 1, 3], [0.5, 0.1, 4.0], "argmin"), [0.5, 4.0, 0.1])
    np.testing.assert_array_equal(scheme3([1.2916, 1.3134, 0.0083], [0.6076, 4.1582, 0.1534]),
                                  [0.6076, 0.0083, 1.3134])
    with pytest.raises(ParameterError):
        scheme1([1.0])
    with pytest.raises(ParameterError):
        scheme2([1, 2], [1, 2], "middle")
