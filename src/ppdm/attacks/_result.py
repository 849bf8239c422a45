"""Attack results (frozen, JSON-able) and the scores every reconstruction attack shares.

Scores are computed by the data owner, who holds the original: the attacker never sees them.

* ``rmse``: root mean squared error of the reconstructed values over the attacked records, in original units;
* ``within_5pct``: share of reconstructed values within +-5 % of the true value (``|x^ - x| <= 0.05 |x|``);
* ``reidentification_rate``: share of attacked records whose nearest original record is the true one
  (for linkage: share of released rows linked to the right original row).

Every result carries two baselines on the same records: ``baseline_no_release`` (the attacker without the
release, guessing each value from the column's distribution: its median, or at chance for linkage) and
``baseline_original`` (the attacker who sees the original: 0 error, every record re-identified).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

__all__ = ["AttackResult", "reconstruction_scores_rows", "no_release_scores",
           "ORIGINAL_SCORES", "t_interval", "beyond_baseline"]

# re-identification of reconstructions is scored on at most this many attacked records (against all records)
MAX_REID_TARGETS = 2000


@dataclass(frozen=True)
class AttackResult:
    """One attack's outcome. ``None`` where a score does not apply.

    Attributes
    ----------
    attack : str
        Registered attack name (``known_io``, ``linkage``, ...).
    threat : str
        The threat model it ran under (CLI syntax or preset name).
    success : float
        The headline score (named by ``success_measure``); higher means a more successful attack.
    success_measure : str
    rmse, within_5pct, reidentification_rate : float or None
    baseline_no_release, baseline_original : dict
        The same scores for the attacker without the release and for the one who sees the original.
    ci : list of two floats or None
        95 % confidence interval of ``success`` over ``n_seeds`` seeded repetitions (t interval).
    n_seeds : int
    details : dict
        Attack-specific figures (JSON-able; never data values or keys).
    control_rate : float or None
        The same attack's success where the release carries nothing of the target's own row (linkage:
        chance among the attacker's records; reconstructions: the column-median guess).
    excess : float or None
        ``success - control_rate``, floored at 0: what the release discloses beyond the control.
    within_5pct_beyond_baseline : float or None
        Share of values recovered within +-5 % among those the column-median guess misses: value
        disclosure beyond what the population already tells.
    """

    attack: str
    threat: str
    success: float | None
    success_measure: str
    rmse: float | None = None
    within_5pct: float | None = None
    reidentification_rate: float | None = None
    baseline_no_release: dict[str, float | None] = field(default_factory=dict)
    baseline_original: dict[str, float | None] = field(default_factory=dict)
    ci: list[float] | None = None
    n_seeds: int = 1
    details: dict[str, Any] = field(default_factory=dict)
    control_rate: float | None = None
    excess: float | None = None
    within_5pct_beyond_baseline: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (NaN and infinities become None)."""
        return _clean(asdict(self))


def _clean(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        return float(obj) if np.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


#: rows compared at a time: a whole table compared at once makes several table-sized temporaries (a
#: million rows x 20 columns: 160 MB each)
ROW_CHUNK = 65_536


def _hits(X_hat: np.ndarray, X: np.ndarray, pct: float) -> np.ndarray:
    """Where ``X_hat`` lies within +-pct % of ``X`` (a zero truth needs an exact hit)."""
    return np.abs(X_hat - X) <= pct / 100.0 * np.abs(X) + 1e-12 * (np.abs(X) + 1)


def _row_blocks(X_hat: np.ndarray, X: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """``X_hat`` and ``X`` a block of rows at a time (one block when they are not row-aligned tables)."""
    if np.ndim(X_hat) != np.ndim(X) or np.ndim(X) == 0 or np.shape(X_hat)[0] != np.shape(X)[0]:
        return [(X_hat, X)]
    return [(X_hat[s:s + ROW_CHUNK], X[s:s + ROW_CHUNK]) for s in range(0, max(len(X), 1), ROW_CHUNK)]


def within_pct(X_hat: np.ndarray, X: np.ndarray, pct: float = 5.0) -> float:
    """Share of values recovered within +-pct % of the truth (a zero truth needs an exact hit)."""
    size = np.broadcast_shapes(np.shape(X_hat), np.shape(X))
    total = int(np.prod(size))
    if total == 0:
        return float("nan")
    # counted a block of rows at a time: the same share as one comparison, without table-sized temporaries
    return sum(int(np.count_nonzero(_hits(a, x, pct))) for a, x in _row_blocks(X_hat, X)) / total


def rmse(X_hat: np.ndarray, X: np.ndarray) -> float:
    """Root mean squared error of ``X_hat`` against ``X``, a block of rows at a time."""
    total = int(np.prod(np.broadcast_shapes(np.shape(X_hat), np.shape(X))))
    if total == 0:
        return float("nan")
    return float(np.sqrt(sum(_square_sum(a, x) for a, x in _row_blocks(X_hat, X)) / total))


def _square_sum(X_hat: np.ndarray, X: np.ndarray) -> float:
    """The sum of the squared differences of two blocks."""
    d = np.subtract(X_hat, X, dtype=np.float64).ravel()
    return float(d @ d)


def reidentification_rows(X_hat_rows: np.ndarray, X: np.ndarray, rows: np.ndarray,
                          rng: np.random.Generator) -> float:
    """Share of the estimated ``rows`` (sorted; ``X_hat_rows[i]`` estimates ``X[rows[i]]``) whose nearest
    original row (among all) is their own."""
    from ppdm.utils.neighbors import nearest_neighbors

    pos = np.arange(len(rows))
    if len(rows) > MAX_REID_TARGETS:
        pos = np.searchsorted(rows, np.sort(rng.choice(rows, MAX_REID_TARGETS, replace=False)))
    nn = nearest_neighbors(X_hat_rows[pos], X, 1)[:, 0]
    return float((nn == rows[pos]).mean())


def beyond_baseline(X_hat: np.ndarray, X: np.ndarray, pct: float = 5.0) -> float:
    """Share of values within +-pct % among those the column-median guess misses (0 when it misses none)."""
    med = np.median(X, axis=0)
    missed = hit = 0
    for a, x in _row_blocks(X_hat, X):  # counted a block of rows at a time
        tol = pct / 100.0 * np.abs(x) + 1e-12 * (np.abs(x) + 1)
        miss = np.abs(med - x) > tol
        missed += int(np.count_nonzero(miss))
        hit += int(np.count_nonzero((np.abs(a - x) <= tol) & miss))
    return hit / missed if missed else 0.0


def reconstruction_scores_rows(
    X_hat_rows: np.ndarray, X: np.ndarray, rows: np.ndarray, rng: np.random.Generator,
    median: np.ndarray | None = None,
) -> dict[str, float]:
    """RMSE, within-5 % share (raw and beyond the median guess) and re-identification of a reconstruction
    given for ``rows`` (sorted) only.

    ``median``: the columns' medians of ``X`` when the caller has them (they fill non-finite estimates).
    """
    if not np.isfinite(X_hat_rows).all():
        X_hat_rows = np.where(np.isfinite(X_hat_rows), X_hat_rows, np.median(X, axis=0) if median is None else median)
    truth = X[rows]
    E = X_hat_rows - truth
    return {
        "rmse": float(np.sqrt(np.mean(E**2))),
        "within_5pct": within_pct(X_hat_rows, truth),
        "within_5pct_beyond_baseline": beyond_baseline(X_hat_rows, truth),
        "reidentification_rate": reidentification_rows(X_hat_rows, X, rows, rng),
    }


def no_release_scores(X: np.ndarray, rows: np.ndarray, median: np.ndarray | None = None) -> dict[str, float]:
    """The attacker without the release: every value guessed as its column's median; linkage at chance.

    ``median``: the columns' medians of ``X`` when the caller has them.
    """
    med = np.median(X, axis=0) if median is None else median
    rows = np.asarray(rows)
    # the rows' values read a block at a time: every row of a large table is not copied out at once
    sq = hits = 0.0
    for s in range(0, len(rows), ROW_CHUNK):
        truth = X[rows[s:s + ROW_CHUNK]]
        guess = np.broadcast_to(med, truth.shape)
        sq += _square_sum(guess, truth)
        hits += int(np.count_nonzero(_hits(guess, truth, 5.0)))
        del truth, guess
    cells = len(rows) * (X.shape[1] if X.ndim == 2 else 1)
    return {
        "rmse": float(np.sqrt(sq / cells)) if cells else float("nan"),
        "within_5pct": hits / cells if cells else float("nan"),
        "within_5pct_beyond_baseline": 0.0,
        "reidentification_rate": 1.0 / X.shape[0],
    }


ORIGINAL_SCORES: dict[str, float | None] = {"rmse": 0.0, "within_5pct": 1.0, "within_5pct_beyond_baseline": 1.0,
                                            "reidentification_rate": 1.0}


def t_interval(values: list[float], level: float = 0.95) -> list[float] | None:
    """Two-sided t confidence interval of the mean (None for fewer than two values)."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=np.float64)
    if len(v) < 2:
        return None
    from scipy.stats import t

    half = float(t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)))
    return [float(v.mean() - half), float(v.mean() + half)]
