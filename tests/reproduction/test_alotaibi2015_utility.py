"""Friedman ranks, critical differences and the distance-attack example against ../shared/reference."""

from __future__ import annotations

import pytest

from ppdm.experiments import alotaibi2015_utility as a


@pytest.mark.parametrize("fn, n_min", [(a.table_5_11, 80), (a.table_5_12, 85), (a.table_5_13, 96),
                                       (a.critical_differences, 6), (a.distance_attack_example, 6)])
def test_reproduction_passes(fn, n_min: int) -> None:  # type: ignore[no-untyped-def]
    rep = fn()
    assert not rep.failed, [(c.row, c.column, c.computed, c.published) for c in rep.failed]
    assert len(rep.checked) >= n_min


def test_misprints_are_reported_not_hidden() -> None:
    rep = a.table_5_12()
    cell = next(c for c in rep.cells if c.row == "spam55" and c.column == "rp rank")
    assert cell.kind == "info" and cell.published == 4 and cell.computed == 3
    cd = a.critical_differences()
    printed = next(c for c in cd.cells if c.row == "Table 5.13" and c.column.endswith("printed"))
    assert printed.published == 1.98 and abs(printed.computed - 1.947) < 1e-3
