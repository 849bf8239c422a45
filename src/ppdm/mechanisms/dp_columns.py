"""A table's columns as codes of small domains, and codes back as values: the discretisation of the
marginal-based mechanisms (:mod:`ppdm.mechanisms.dp_marginals`).

A categorical column is its codes (``0..K-1``: the public list of its categories). A number (continuous,
integer, a date as days) is cut at bounds ``[lo, hi]``: one code for every value at or below ``lo``, equal-width
bins between, one code for every value above ``hi``. A column with gaps has one more code: the gap, a value of
its own.

The bounds are public (given by the user) or measured: a noisy histogram of the column on :data:`RANGE_EDGES`, a
grid fixed in advance (0 and eight cells per decade on each side, from 1e-4 to 1e12), and the outer edges of
the cells whose noisy count clears :data:`RANGE_CLEARANCE` standard deviations of the noise, widened to hold
the decades of cells near them whose summed count clears :data:`DECADE_CLEARANCE` deviations of its summed
noise (:func:`bounds_from_counts`, post-processing of the measurement).

Decoding is post-processing of the synthetic codes and a draw from the mechanism's generator: a code below or
above the bounds becomes the bound, a bin a uniform draw within it (integers and dates rounded), a gap a gap.
No statistic of the table enters the decoding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["KINDS", "RANGE_EDGES", "RANGE_CLEARANCE", "DECADE_CLEARANCE", "RANGE_REACH", "BEST_RUN_CLEARANCE",
           "ColumnCode", "range_cells",
           "bounds_from_counts", "number_code", "category_code", "encode_column", "decode_column"]

KINDS = ("continuous", "integer", "categorical")
_PER_DECADE = 8
_POSITIVE = 10.0 ** (np.arange(-4 * _PER_DECADE, 12 * _PER_DECADE + 1) / _PER_DECADE)
#: the public grid whose cells a number's range is measured on: -1e12 .. -1e-4, 0, 1e-4 .. 1e12
RANGE_EDGES = np.concatenate([-_POSITIVE[::-1], [0.0], _POSITIVE])
#: a cell bounds a column when its noisy count is at least this many noise deviations. A cell of noise alone
#: clears 4 deviations with probability 3e-5, one of the grid's 259 cells about 0.8 %: about one column's
#: range in 130 is stretched to a cell of noise (0.7 % of 5,000 noisy histograms of a 1,500-record column,
#: simulated), and its values then share the lowest bins. A higher clearance would lose real far values (a
#: few dozen capital gains in the tens of thousands beside thousands of zeros), so the rule stays
RANGE_CLEARANCE = 4.0
#: a run of a decade of cells beyond the bounds widens them when its summed count clears this many deviations
#: of its summed noise and it starts within :data:`RANGE_REACH` decades of them (:func:`_widened`)
DECADE_CLEARANCE = 4.5
RANGE_REACH = 3
#: when no cell clears the noise, the decade of cells with the largest count bounds a column if that count clears
#: this many deviations of its summed noise. Simulated, 400 to 4,000 noisy histograms each, the noise of
#: epsilon 4 shared by six columns: noise alone clears it in 4.8 % of histograms; WDBC's compactness (192
#: records over a decade and a half) in 99 %, where the largest cell alone was a cell of noise in 9 %; 48
#: records of WDBC's radius in 7 %, and the fit otherwise stops with the reason, where the largest cell alone
#: missed the data in 82 % of histograms (published ages of 133,352,144 and more on such a table)
BEST_RUN_CLEARANCE = 3.5


@dataclass(frozen=True)
class ColumnCode:
    """How one column is coded: its kind, its domain size (the gap's code included) and, for a number, its
    bounds."""

    kind: str
    size: int
    gap: int  # the gap's code, or -1 when the column has no gaps
    lo: float = float("nan")
    hi: float = float("nan")

    @property
    def values(self) -> int:
        """Codes that stand for values (the gap's excluded)."""
        return self.size - (self.gap >= 0)


def range_cells(values: np.ndarray) -> np.ndarray:
    """Each value's cell on :data:`RANGE_EDGES` (``0..len(RANGE_EDGES)``); a gap gets the extra last cell."""
    v = np.asarray(values, dtype=np.float64)
    cells = np.searchsorted(RANGE_EDGES, np.where(np.isnan(v), 0.0, v), side="right")
    return np.where(np.isnan(v), len(RANGE_EDGES) + 1, cells)


def bounds_from_counts(noisy: np.ndarray, sigma: float) -> tuple[float, float] | None:
    """The bounds a noisy range histogram (:func:`range_cells`) supports: the outer edges of the cells whose
    count clears :data:`RANGE_CLEARANCE` deviations of the noise (or, when none does, of the decade of cells
    with the largest count, if it clears :data:`BEST_RUN_CLEARANCE` deviations of its summed noise), widened to
    hold every decade of cells near them whose summed count clears :data:`DECADE_CLEARANCE` deviations of its
    summed noise (:func:`_widened`). None when nothing clears the noise: the measurement says nothing of the
    range (a table of a few dozen records, whose every cell is within the noise).

    The largest cell of noise is no answer then: on 48 records of ages 20 to 89 at epsilon 1, it bounded the
    ages anywhere on the grid's 1e12 (ages of 133,352,144 and more were published).

    The widening finds values spread thinly over several decades, as a word's frequency or an amount is on a
    small table (most records at 0, the rest from 0.01 to 10): no single cell of theirs clears the noise, and
    without it such a column's range was its bulk alone, every other value clipped to it. On a 1,500-record
    spambase extract (14 word and character frequencies, 4 categories) at epsilon 4, dp-aim's releases kept
    0.33 to 0.49 of the label signal without it (mean 0.39, five keys) and 0.51 to 0.73 with it (mean 0.60,
    five keys); see the formal privacy guide.
    """
    counts = np.asarray(noisy, dtype=np.float64)[: len(RANGE_EDGES) + 1]  # the gaps' cell plays no part
    clear = np.flatnonzero(counts >= RANGE_CLEARANCE * sigma)
    if clear.size:
        first, last = int(clear[0]), int(clear[-1])
    else:
        runs = _decade_runs(counts)
        best = int(np.argmax(runs))
        if runs[best] < BEST_RUN_CLEARANCE * sigma * np.sqrt(_PER_DECADE):
            return None
        first, last = best, best + _PER_DECADE - 1
    first, last = _widened(counts, first, last, sigma)
    # cell i holds [RANGE_EDGES[i - 1], RANGE_EDGES[i]); the outer cells are open towards infinity
    lo = RANGE_EDGES[max(first - 1, 0)]
    hi = RANGE_EDGES[min(last, len(RANGE_EDGES) - 1)]
    if not hi > lo:
        hi = RANGE_EDGES[min(np.searchsorted(RANGE_EDGES, lo, side="right"), len(RANGE_EDGES) - 1)]
    return float(lo), float(hi)


def _decade_runs(counts: np.ndarray) -> np.ndarray:
    """The summed counts of every run of a decade of cells: ``runs[i]`` holds cells ``i .. i + 7``."""
    return np.convolve(counts, np.ones(_PER_DECADE), mode="valid")


def _widened(counts: np.ndarray, first: int, last: int, sigma: float) -> tuple[int, int]:
    """The cells ``first..last`` grown to hold every run of a decade of cells (at any offset) whose summed
    count clears :data:`DECADE_CLEARANCE` deviations of its noise (``sigma`` times the root of the cells
    summed) and starts within :data:`RANGE_REACH` decades of the cells held so far. Noise alone clears one of
    the about 50 runs within reach with probability about 2e-4, and widens a range by at most four decades
    at a time."""
    if len(counts) < _PER_DECADE:
        return first, last
    clear = _decade_runs(counts) >= DECADE_CLEARANCE * sigma * np.sqrt(_PER_DECADE)
    reach = RANGE_REACH * _PER_DECADE
    grown = True
    while grown:
        grown = False
        up = np.flatnonzero(clear[last + 1: last + 1 + reach])
        if up.size:
            last, grown = min(last + 1 + int(up[-1]) + _PER_DECADE - 1, len(counts) - 1), True
        down = np.flatnonzero(clear[max(first - _PER_DECADE - reach, 0): max(first - _PER_DECADE + 1, 0)])
        if down.size:
            first, grown = max(first - _PER_DECADE - reach, 0) + int(down[0]), True
    return first, last


def number_code(kind: str, lo: float, hi: float, n_bins: int, nullable: bool) -> ColumnCode:
    """The coding of a number column between bounds ``lo < hi`` in ``n_bins`` codes (plus the gap).

    Always ``n_bins`` codes, whatever the bounds: a table's domains are then the same at every fit (only the
    categories and the columns with gaps set them), so Private-PGM's compiled programs for a model's structure
    serve every fit of the table in a process.
    """
    return ColumnCode(kind, n_bins + nullable, n_bins if nullable else -1, float(lo), float(hi))


def category_code(levels: int, nullable: bool) -> ColumnCode:
    return ColumnCode("categorical", int(levels) + nullable, int(levels) if nullable else -1)


def encode_column(values: np.ndarray, code: ColumnCode) -> np.ndarray:
    """The codes of one column's values (a gap: the gap's code)."""
    v = np.asarray(values, dtype=np.float64)
    gap = np.isnan(v)
    w = np.where(gap, 0.0, v)
    if code.kind == "categorical":
        out = np.clip(np.round(w), 0, code.values - 1).astype(np.int64)
    else:
        inner = code.values - 2  # equal-width bins between the bounds
        k = np.ceil((w - code.lo) / (code.hi - code.lo) * inner).astype(np.int64)
        out = np.clip(k, 0, inner + 1)  # 0: at or below lo; inner + 1: above hi
    if gap.any():
        out[gap] = code.gap
    return out


def decode_column(codes: np.ndarray, code: ColumnCode, rng: np.random.Generator) -> np.ndarray:
    """Values for synthetic codes of one column (a gap's code: NaN); draws from ``rng`` within bins."""
    c = np.asarray(codes, dtype=np.int64)
    gap = c == code.gap
    if code.kind == "categorical":
        out = c.astype(np.float64)
    else:
        inner = code.values - 2
        width = (code.hi - code.lo) / inner
        # a bin k in 1..inner holds (lo + (k - 1) w, lo + k w]; the outer codes are the bounds themselves
        drawn = code.lo + (np.clip(c, 1, inner) - 1 + rng.random(len(c))) * width
        out = np.where(c <= 0, code.lo, np.where(c > inner, code.hi, drawn))
        if code.kind == "integer":
            out = np.clip(np.round(out), np.ceil(code.lo), np.floor(code.hi)) + 0.0
    out[gap] = np.nan
    return out
