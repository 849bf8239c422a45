"""The report's figures say nothing on stderr about the names they draw."""

from __future__ import annotations

import warnings

from ppdm.report.plots import per_column_png


def test_a_name_in_a_script_the_fonts_lack_draws_without_a_warning_a_glyph() -> None:
    # a Chinese column name: matplotlib's fonts here draw it as boxes, and warned once per glyph on stderr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = per_column_png({"名前": 0.25, "income": 0.5})
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [w for w in caught if "Glyph" in str(w.message)]
