"""SVM accuracy as the dissertations' SVMlight runs give it: RBF kernel, N contiguous folds, SVMlight's default C.

Wang (2008) states the kernel (RBF), its gamma and the number of folds (Table 3.7's header: 10-fold, RBF,
gamma = 1; attributes shifted so that each column's smallest value is 0) but not C. SVMlight chooses C
itself when none is given: ``C = 1 / r^2`` with ``r`` the mean distance, in the kernel's feature space, of
the training examples from the origin, ``sqrt(K(x, x) - 2 K(x, 0) + K(0, 0))``; for the RBF kernel
``sqrt(2 - 2 exp(-gamma ||x||^2))``. That default, computed on each training fold as SVMlight computes it,
is the protocol here; :func:`cv_accuracy` takes a fixed ``C`` too, for the sensitivity to it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ppdm.metrics import range_normalize

__all__ = ["default_c", "cv_accuracy"]


def default_c(Z: np.ndarray, gamma: float) -> float:
    """SVMlight's default C for an RBF kernel on the training examples ``Z``: 1 / (mean feature-space norm)^2."""
    sq = np.einsum("ij,ij->i", Z, Z)
    r = np.sqrt(np.maximum(2.0 - 2.0 * np.exp(-gamma * sq), 0.0))
    return float(1.0 / max(float(r.mean()), 1e-12) ** 2)


def cv_accuracy(X: np.ndarray, y: Sequence[object] | np.ndarray, *, gamma: float = 1.0, C: float | None = None,
                n_folds: int = 10, normalize: bool = True) -> float:
    """Mean accuracy (%) over ``n_folds`` contiguous folds of an RBF SVM.

    Parameters
    ----------
    X : ndarray
        The table (a release); range-normalised per matrix first when ``normalize`` (each column's
        smallest value becomes 0).
    y : array-like
        Class labels.
    gamma : float
        RBF kernel parameter, ``exp(-gamma ||a - b||^2)``.
    C : float, optional
        Fixed penalty; by default SVMlight's own choice on each training fold (:func:`default_c`).
    n_folds : int
        Contiguous folds, in row order (SVMlight's ``-x``-style split of the file as given).
    normalize : bool
        Range-normalise the columns to [0, 1] before the split.
    """
    from sklearn.model_selection import KFold
    from sklearn.svm import SVC

    Z = range_normalize(X) if normalize else np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    scores = []
    for train, test in KFold(n_folds, shuffle=False).split(Z):
        c = default_c(Z[train], gamma) if C is None else float(C)
        model = SVC(kernel="rbf", gamma=gamma, C=c).fit(Z[train], y[train])
        scores.append(float(np.mean(model.predict(Z[test]) == y[test])))
    return 100.0 * float(np.mean(scores))
