"""Reproductions of the source papers' published tables (``ppdm reproduce``)."""

from __future__ import annotations

from ppdm.exceptions import ParameterError
from ppdm.experiments import wang2008, wang2008_stream
from ppdm.experiments.base import Reproduction, ReproductionReport

__all__ = ["REPRODUCTIONS", "run_reproduction", "Reproduction", "ReproductionReport"]

REPRODUCTIONS: dict[str, Reproduction] = {
    r.id: r
    for r in (
        Reproduction("wang2008-table-2-1", "metric example A_e, rank 2 and 1 (Table 2.1)", wang2008.table_2_1),
        Reproduction("wang2008-table-2-2", "thin SVD on UCI IRIS (Table 2.2)", wang2008.table_2_2),
        Reproduction("wang2008-appendix-a", "thin SVD on WDBC, k = 1..30 (Appendix A)", wang2008.appendix_a),
        Reproduction("wang2008-appendix-h", "sparsified SVD on WDBC (Appendix H1-H9)", wang2008.appendix_h),
        Reproduction("wang2008-table-3-7", "sweep statistics incl. random baselines on WDBC (Table 3.7)",
                     wang2008.table_3_7, slow=True),
        Reproduction("wang2008-table-3-8", "WBC thin SVD k = 7 (Tables 3.8 / 4.8)", wang2008.table_3_8),
        Reproduction("wang2008-table-3-10", "WBC thin SVD k = 3 (Table 3.10)", wang2008.table_3_10),
        Reproduction("wang2008-stream-wbc", "WBC incremental row updating, 199 + 10 x 50 rows (Ch. 6)",
                     wang2008_stream.wbc_report),
        Reproduction("wang2008-table-6-3", "incremental rows, 10000 x 1000, K = 60 (Table 6.3)",
                     wang2008_stream.table_6_3_report, slow=True),
        Reproduction("wang2008-stream-columns", "incremental columns, 3000 x 3000, K = 80 (Ch. 6)",
                     wang2008_stream.columns_report, slow=True),
    )
}


def run_reproduction(id: str) -> ReproductionReport:
    if id not in REPRODUCTIONS:
        raise ParameterError(f"unknown reproduction '{id}'; see `ppdm reproduce --list`")
    return REPRODUCTIONS[id].run()
