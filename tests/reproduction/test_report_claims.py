"""A claim of a source text as a report cell (``ReproductionReport.add_claim``)."""

from __future__ import annotations

from ppdm.experiments import ReproductionReport


def test_a_held_claim_is_checked_and_can_fail() -> None:
    rep = ReproductionReport("t", "t")
    rep.add_claim("r", "holds", 1.0, 1.0, 0.0, "measured 1")
    rep.add_claim("r", "fails", 0.0, 1.0, 0.0, "measured 0")
    assert [c.kind for c in rep.cells] == ["statistical", "statistical"]
    assert [c.passed for c in rep.cells] == [True, False] and not rep.passed


def test_a_claim_found_not_to_hold_is_shown_with_its_measurement() -> None:
    rep = ReproductionReport("t", "t")
    rep.add_claim("r", "does not hold", 0.0, 1.0, 0.0, "measured 0", held=False)
    rep.add_claim("r", "no target", 3.5, None, None, "a value the text only describes")
    a, b = rep.cells
    assert a.kind == "info" and a.passed is None and a.published == 1.0
    assert a.note == "does not hold as measured; measured 0"
    assert b.kind == "info" and b.note == "a value the text only describes" and rep.passed


def test_mean_ci_is_the_t_interval() -> None:
    import pytest

    from ppdm.experiments.base import mean_ci

    # mean 2, SD 1, t_0.975 with 2 degrees of freedom = 4.302653: half-width 4.302653 / sqrt(3)
    m, lo, hi = mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0 and lo == pytest.approx(2.0 - 2.484138, abs=1e-6) and hi == pytest.approx(2.0 + 2.484138, abs=1e-6)
    assert mean_ci([5.0]) == (5.0, 5.0, 5.0)
