"""Success beyond the control, as auditors score the three tests of anonymisation.

An attack succeeds on a share ``main`` of its attempts against people in the release and on a share
``control`` of the same attempts against real people outside it. What the release discloses is the excess,
normalised by what was left to gain: ``risk = (main - control) / (1 - control)``. Its 95 % interval is
anonymeter's: a Wilson interval of each rate, the two errors propagated through the ratio.
"""

from __future__ import annotations

from math import sqrt
from statistics import NormalDist
from typing import Any

__all__ = ["wilson", "excess"]


def wilson(successes: int, total: int, confidence: float = 0.95) -> tuple[float, float]:
    """Centre and half-width of the Wilson score interval of ``successes`` in ``total`` Bernoulli trials."""
    z = NormalDist().inv_cdf(0.5 * (1.0 + confidence))
    z2 = z * z
    den = total + z2
    centre = (successes + 0.5 * z2) / den
    half = z / den * sqrt(successes * (total - successes) / max(total, 1) + 0.25 * z2)
    return centre, half


def excess(main_hits: int, main_total: int, control_hits: int, control_total: int, *,
           confidence: float = 0.95) -> dict[str, Any]:
    """The risk of an attack beyond its control, with its interval.

    Parameters
    ----------
    main_hits, main_total : int
        Successes and attempts against people in the release.
    control_hits, control_total : int
        The same against real people outside it.
    confidence : float, default=0.95

    Returns
    -------
    dict
        ``main`` and ``control`` (the two shares), ``risk_raw`` (``(main - control) / (1 - control)``, negative
        when the control is more exposed), ``risk`` (the same within [0, 1]: what a policy limits),
        ``interval`` (anonymeter's: Wilson centres and the propagated error, within [0, 1]), ``n_main`` and
        ``n_control``. An attack that made no attempt has risk 0 and interval [0, 0].
    """
    if main_total == 0 or control_total == 0:
        return {"main": 0.0, "control": 0.0, "risk": 0.0, "risk_raw": 0.0, "interval": [0.0, 0.0],
                "n_main": int(main_total), "n_control": int(control_total)}
    main, control = main_hits / main_total, control_hits / control_total
    raw = (main - control) / (1.0 - control) if control < 1.0 else 0.0
    m, dm = wilson(main_hits, main_total, confidence)
    c, dc = wilson(control_hits, control_total, confidence)
    centre = (m - c) / (1.0 - c)
    err = sqrt((dm / abs(1.0 - c)) ** 2 + (dc * (m - 1.0) / (1.0 - c) ** 2) ** 2)
    return {"main": main, "control": control, "risk": min(max(raw, 0.0), 1.0), "risk_raw": raw,
            "interval": [min(max(centre - err, 0.0), 1.0), min(max(centre + err, 0.0), 1.0)],
            "n_main": int(main_total), "n_control": int(control_total)}
