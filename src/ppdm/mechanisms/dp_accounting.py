"""One release's privacy budget, spent through OpenDP: every noisy count, every private selection, one filter.

The marginal-based mechanisms (:mod:`ppdm.mechanisms.dp_marginals`) never add noise themselves. They hand
:class:`Budget` a function of the table (a histogram's cells, a vector of selection scores) and the share of
the budget it may spend; OpenDP calibrates the noise to that share (``binary_search_param`` over its own
privacy map), draws it from its cryptographically secure generator and charges it to a privacy filter over a
fully adaptive composition (zero-concentrated DP). The filter refuses any query that would take the total
beyond the budget, and OpenDP's conversion turns the budget into the stated (epsilon, delta).

The privacy unit is one record added or removed (OpenDP's symmetric distance 1). What ppdm states to OpenDP
(``honest-but-curious``) and tests itself: a histogram's cells are each record's own cell (a row-by-row map,
so OpenDP's count by categories bounds the counts' change); a selection score moves by at most its stated
sensitivity when a record comes or goes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Budget", "Measured", "rho_for", "approx_dp"]


@dataclass(frozen=True)
class Measured:
    """One OpenDP measurement of a release: what it measured and what it cost."""

    name: str
    kind: str  # "gaussian counts" | "noisy max"
    sensitivity: float  # L2 (counts) or L-infinity (scores) under one record added or removed
    scale: float  # the noise scale OpenDP calibrated
    rho: float  # its zCDP cost, by OpenDP's privacy map


def _prelude() -> Any:
    from ppdm.mechanisms.dp_synthetic import opendp_prelude

    return opendp_prelude()


def rho_for(epsilon: float, delta: float) -> float:
    """The largest zCDP budget rho that OpenDP's conversion turns into at most (epsilon, delta)."""
    dp = _prelude()
    odometer = dp.c.make_fully_adaptive_composition(_table_domain(dp), dp.symmetric_distance(),
                                                    dp.zero_concentrated_divergence())

    def approx(rho: float) -> Any:
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.c.make_privacy_filter(odometer, 1, rho)),
                                   float(delta))

    return float(dp.binary_search_param(approx, d_in=1, d_out=(float(epsilon), float(delta))))


def approx_dp(rho: float, delta: float) -> float:
    """epsilon at ``delta`` of a ``rho``-zCDP release, by OpenDP's conversion."""
    dp = _prelude()
    odometer = dp.c.make_fully_adaptive_composition(_table_domain(dp), dp.symmetric_distance(),
                                                    dp.zero_concentrated_divergence())
    flt = dp.c.make_privacy_filter(odometer, 1, max(float(rho), 1e-300))
    return float(dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(flt), float(delta)).map(1)[0])


def _table_domain(dp: Any) -> Any:
    # the table as OpenDP sees it: an opaque matrix of codes, one row per record
    return dp.user_domain("ppdm.coded_table", lambda x: isinstance(x, np.ndarray) and x.ndim == 2)


class Budget:
    """A table's privacy filter: queries spend at most ``rho`` in total (zCDP, one record added or removed).

    Parameters
    ----------
    table : ndarray of shape (n, m)
        The coded table every query reads (it never leaves OpenDP's queryable).
    rho : float
        The whole release's zCDP budget (see :func:`rho_for`).
    """

    def __init__(self, table: np.ndarray, rho: float) -> None:
        dp = _prelude()
        self._dp = dp
        self.rho = float(rho)
        self._domain = _table_domain(dp)
        self._metric = dp.symmetric_distance()
        odometer = dp.c.make_fully_adaptive_composition(self._domain, self._metric, dp.zero_concentrated_divergence())
        self._queryable = dp.c.make_privacy_filter(odometer, d_in=1, d_out=self.rho)(table)
        self.log: list[Measured] = []
        self._scales: dict[tuple[str, float, float], float] = {}

    @property
    def spent(self) -> float:
        """The zCDP loss of the queries answered so far, as OpenDP's filter counts it."""
        return float(self._queryable.privacy_loss(1))

    @property
    def left(self) -> float:
        """The budget not yet spent. The filter's own loss composes every query answered so far, a Python
        callback each, and asked before every query it made a fit's accounting quadratic (3 s of 152 queries on 65
        columns); under zCDP a sequence's loss is the sum of its queries' losses, each from OpenDP's privacy map
        (the log's costs), and the filter still refuses any query beyond the budget."""
        return max(0.0, self.rho - sum(m.rho for m in self.log))

    def _share(self, rho: float) -> float:
        # shares that add up to the budget exceed it by a rounding error at the last query: that query gets
        # what is left (a larger request is refused by the filter)
        left = self.left
        return float(rho) if rho <= left * (1 - 1e-9) or rho > left * (1 + 1e-6) else left * (1 - 1e-9)

    def counts(self, name: str, cells: Callable[[np.ndarray], np.ndarray], size: int, rho: float) -> np.ndarray:
        """A noisy histogram: ``cells(table)`` gives each record's cell in ``range(size)``; OpenDP counts them
        and adds discrete Gaussian noise calibrated to spend ``rho``."""
        measurement, sensitivity, scale = self.count_measurement(cells, size, rho)
        answer = self._ask(name, "gaussian counts", measurement, sensitivity, scale)
        return np.asarray(answer, dtype=np.float64)

    def count_measurement(self, cells: Callable[[np.ndarray], np.ndarray], size: int,
                          rho: float) -> tuple[Any, float, float]:
        """The OpenDP measurement :meth:`counts` asks the filter (not yet charged), its sensitivity and scale."""
        dp = self._dp
        ints = dp.vector_domain(dp.atom_domain(T=dp.i64))
        # one record's cell is a function of that record alone: the map is 1-stable row by row. OpenDP takes a
        # NumPy vector whole (a Python list is checked element by element: 2 ms a query of 3,750 records)
        rows = dp.t.make_user_transformation(self._domain, self._metric, ints, self._metric,
                                             function=lambda t: np.ascontiguousarray(cells(t), dtype=np.int64),
                                             stability_map=lambda d_in: d_in)
        counting = rows >> dp.t.then_count_by_categories(categories=list(range(int(size))), null_category=False,
                                                          MO=dp.L2Distance[dp.i64])
        sensitivity = counting.map(1)  # OpenDP's bound on the counts' L2 change for one record

        def gaussian(scale: float) -> Any:
            return dp.m.make_gaussian(counting.output_domain, counting.output_metric, scale)

        scale = self._calibrated("gaussian", gaussian, sensitivity, rho)
        return counting >> dp.m.then_gaussian(scale), float(sensitivity), scale

    def noisy_max(self, name: str, scores: Callable[[np.ndarray], Sequence[float]], sensitivity: float,
                  rho: float) -> int:
        """The index of the highest score, chosen by OpenDP's noisy max (exponential mechanism) spending
        ``rho``; ``sensitivity`` bounds how far any score moves when a record is added or removed."""
        dp = self._dp
        floats = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        linf = dp.linf_distance(T=float)
        scoring = dp.t.make_user_transformation(
            self._domain, self._metric, floats, linf,
            function=lambda t: np.ascontiguousarray(scores(t), dtype=np.float64),
            stability_map=lambda d_in: float(d_in) * sensitivity)

        def noisy_max(scale: float) -> Any:
            return dp.m.make_noisy_max(floats, linf, dp.zero_concentrated_divergence(), scale=scale)

        scale = self._calibrated("noisy max", noisy_max, float(sensitivity), rho)
        chosen = scoring >> dp.m.then_noisy_max(dp.zero_concentrated_divergence(), scale=scale)
        return int(self._ask(name, "noisy max", chosen, float(sensitivity), scale))

    def _calibrated(self, kind: str, make: Callable[[float], Any], sensitivity: Any, rho: float) -> float:
        """The smallest noise scale at which OpenDP's privacy map of ``make(scale)`` at ``sensitivity`` is at
        most ``rho`` (OpenDP's binary search; the same request is searched once)."""
        rho = self._share(rho)
        key = (kind, float(sensitivity), rho)
        if key not in self._scales:
            self._scales[key] = float(self._dp.binary_search_param(make, d_in=sensitivity, d_out=rho))
        return self._scales[key]

    def _ask(self, name: str, kind: str, measurement: Any, sensitivity: float, scale: float) -> Any:
        cost = float(measurement.map(1))
        answer = self._queryable(measurement)  # the filter refuses a query beyond the budget
        self.log.append(Measured(name, kind, sensitivity, scale, cost))
        return answer
