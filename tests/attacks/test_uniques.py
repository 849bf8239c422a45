"""Special uniques (SUDA's minimal sample uniques of small size) on tables counted by hand."""

from __future__ import annotations

import numpy as np

from ppdm.attacks.uniques import special_uniques


def _orig() -> np.ndarray:
    # sex, region, job of six people
    return np.array([
        ["f", "north", "nurse"],
        ["f", "north", "nurse"],
        ["m", "north", "nurse"],
        ["m", "south", "clerk"],
        ["m", "south", "clerk"],
        ["f", "south", "pilot"],   # the only pilot: unique on job alone
    ], dtype=object)


def test_original_special_uniques_by_hand() -> None:
    O = _orig()
    # singles: 'pilot' is unique (row 5). pairs: (m, north) row 2, (f, south) row 5, (m, nurse) row 2,
    # (f, pilot) row 5, (south, pilot) row 5. So rows 2 and 5 are special uniques; rows 0, 1, 3, 4 never
    su = special_uniques(O, O, max_size=3, own=np.arange(6))
    assert su["original_share"] == 2 / 6
    assert su["release_share"] == 2 / 6 and su["pointing_share"] == 2 / 6
    assert su["correct_share"] == 2 / 6  # a copy of the table singles out both of them correctly
    assert su["subsets"] == 3 + 3 + 1 and su["max_size"] == 3
    only_singles = special_uniques(O, O, max_size=1)
    assert only_singles["original_share"] == 1 / 6 and only_singles["correct_share"] is None


def test_a_release_pointing_at_someone_else_is_counted_but_not_correct() -> None:
    O = _orig()
    R = O.copy()
    R[[2, 5]] = R[[5, 2]]  # the two special uniques' rows swapped
    su = special_uniques(O, R, own=np.arange(6))
    assert su["pointing_share"] == 2 / 6
    assert su["correct_share"] == 0.0
    assert np.isclose(su["chance"], (2 / 6) / 6)
    # a released unique value absent from the original points at nobody: row 5 as (m, south, astronaut) is
    # unique only on subsets holding 'astronaut', and (m, south) is shared with rows 3 and 4
    R2 = O.copy()
    R2[5] = ["m", "south", "astronaut"]
    su2 = special_uniques(O, R2, own=np.arange(6))
    assert su2["release_share"] >= 2 / 6
    assert su2["correct_share"] < su["pointing_share"] and su2["correct_share"] == 1 / 6  # row 2 only


def test_many_columns_search_pairs_only_and_scale_linearly() -> None:
    rng = np.random.default_rng(0)
    O = rng.integers(0, 3, size=(20_000, 14)).astype(str).astype(object)
    su = special_uniques(O, O[:500], own=np.arange(500))
    assert su["max_size"] == 2 and su["subsets"] == 14 + 91
    assert su["original_share"] == 0.0  # 9 combinations per pair for 20,000 records: nobody is unique
