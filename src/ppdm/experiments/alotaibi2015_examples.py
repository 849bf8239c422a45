"""Reproduction of Alotaibi (2015), Example 2.2 / Table 2.2: Mahalanobis distances of three objects from the
five-object data set of Table 2.1.

The thesis prints ``d(y_i, X)`` = 2.2, 5.2, 4.5 and defines the distance with a square root (eq. 2.11). The
printed values are the *squared* distances from ``y_i`` to the mean of ``X`` under the sample (n - 1)
covariance (what MATLAB's ``mahal(Y, X)`` returns): 2.2, 5.2, 4.533. The squared distances are checked
against the print (one decimal: tolerance 0.05); the distances of eq. 2.11 are shown.
"""

from __future__ import annotations

import numpy as np

from ppdm.distances import mahalanobis
from ppdm.experiments.base import ReproductionReport, reference_rows

__all__ = ["table_2_2"]

_PRINTED_1DP = 0.05 + 1e-9


def table_2_2() -> ReproductionReport:
    """Squared Mahalanobis distances of y_1..y_3 from the mean of Table 2.1's X (sample covariance)."""
    rep = ReproductionReport("alotaibi2015-table-2-2", "Mahalanobis distances of the Example 2.2 objects (Table 2.2)")
    rows = reference_rows("alotaibi2015_table2_1.csv")
    X = np.array([[float(r["x1"]), float(r["x2"])] for r in rows if r["object"] != "Mean"])
    mean_row = next(r for r in rows if r["object"] == "Mean")
    mu = X.mean(axis=0)
    for j, c in enumerate(("x1", "x2")):
        rep.add("mean of X", c, mu[j], float(mean_row[c]), 1e-9, note="printed in Table 2.1")
    cov = np.cov(X, rowvar=False, ddof=1)
    for r in reference_rows("alotaibi2015_table2_2.csv"):
        y = np.array([float(r["y1"]), float(r["y2"])])
        d = mahalanobis(y, mu, cov)
        rep.add(r["object"], "squared Mahalanobis distance to the mean", d * d, float(r["d_printed"]), _PRINTED_1DP,
                note="the print is d^2 (sample covariance), not the d of eq. 2.11")
        rep.add(r["object"], "Mahalanobis distance (eq. 2.11)", d, None, None, "info")
    rep.notes.append("X is Table 2.1 (five objects in 2-D); covariance with n - 1; the printed values match the "
                     "squared distance, as MATLAB mahal returns it, not the square root of eq. 2.11.")
    return rep
