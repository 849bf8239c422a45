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


def within_pct(X_hat: np.ndarray, X: np.ndarray, pct: float = 5.0) -> float:
    """Share of values recovered within +-pct % of the truth (a zero truth needs an exact hit)."""
    return float((np.abs(X_hat - X) <= pct / 100.0 * np.abs(X) + 1e-12 * (np.abs(X) + 1)).mean())


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
    tol = pct / 100.0 * np.abs(X) + 1e-12 * (np.abs(X) + 1)
    missed = np.abs(med - X) > tol
    if not missed.any():
        return 0.0
    return float((np.abs(X_hat - X) <= tol)[missed].mean())


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
    guess = np.broadcast_to(np.median(X, axis=0) if median is None else median, X[rows].shape)
    return {
        "rmse": float(np.sqrt(np.mean((guess - X[rows]) ** 2))),
        "within_5pct": within_pct(guess, X[rows]),
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
