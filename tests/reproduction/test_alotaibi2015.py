from __future__ import annotations

from ppdm.experiments import REPRODUCTIONS, run_reproduction


def test_registered() -> None:
    for k in ("alotaibi2015-table-3-5", "alotaibi2015-sec-3-3-5", "alotaibi2015-table-3-7"):
        assert k in REPRODUCTIONS


def test_table_3_5_pav_exact() -> None:
    rep = run_reproduction("alotaibi2015-table-3-5")
    assert rep.passed and len(rep.checked) == 12


def test_worked_example() -> None:
    rep = run_reproduction("alotaibi2015-sec-3-3-5")
    assert rep.passed and len(rep.checked) == 7
