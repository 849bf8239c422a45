from __future__ import annotations

from ppdm.experiments import REPRODUCTIONS, run_reproduction


def test_registered() -> None:
    assert REPRODUCTIONS["xu2006-table-1"].slow
    assert not REPRODUCTIONS["wang2008-table-3-9"].slow


def test_table_3_9_svd_row_concentrates_on_the_print() -> None:
    rep = run_reproduction("wang2008-table-3-9")
    cells = {(c.row, c.column): c for c in rep.cells}
    # rank-20 RE of a U[1, 10] 2000 x 100 draw: printed .3665
    assert cells[("SVD", "re")].passed and abs(cells[("SVD", "re")].computed - 0.3665) < 0.002
    # the noise of Xu et al. gives the dissertation's noise RE
    assert cells[("UD", "re")].passed and cells[("ND", "re")].passed
    assert len(rep.checked) == 16
