"""Classical (Torgerson) MDS, used as the NMDS start and as a baseline."""

from __future__ import annotations

import numpy as np

from ppdm.utils.validation import check_memory

__all__ = ["classical_from_data", "classical_from_condensed", "classical_from_square"]


def classical_from_data(Z: np.ndarray, p: int) -> tuple[np.ndarray, float]:
    """Classical MDS of Euclidean distances = centred principal-component scores (no n x n matrix).

    Returns the ``n x p`` configuration (zero-padded when the data have fewer than ``p`` positive
    eigenvalues) and the goodness of fit ``sum_{i<=p} lambda_i / sum lambda_+`` (eq. 3.5).
    """
    Zc = Z - Z.mean(axis=0)
    U, s, _ = np.linalg.svd(Zc, full_matrices=False)
    lam = s**2
    pos = lam > lam.max(initial=0.0) * 1e-12
    Y = np.zeros((Z.shape[0], p))
    q = int(min(p, pos.sum()))
    Y[:, :q] = U[:, :q] * s[:q]
    tot = float(lam[pos].sum())
    return Y, (float(lam[:q].sum()) / tot if tot > 0 else 1.0)


def classical_from_condensed(delta: np.ndarray, n: int, p: int, max_bytes: float = 2 * 1024**3
                             ) -> tuple[np.ndarray, float]:
    """Classical MDS of any dissimilarities: top-p eigenpairs of ``B = -1/2 J Delta^2 J``."""
    from scipy.spatial.distance import squareform

    check_memory(8.0 * n * n * 2, "classical MDS of an n x n matrix",
                 "use -p init=random or the landmark mode -p landmarks=2000 "
                 "(init='random' or landmarks=2000 in Python)",
                 budget=max_bytes)
    A = squareform(np.asarray(delta, dtype=np.float64), checks=False)
    A *= A
    return classical_from_square(A, n, p)


def classical_from_square(A: np.ndarray, n: int, p: int) -> tuple[np.ndarray, float]:
    """Classical MDS from the ``n x n`` squared dissimilarities ``A`` (overwritten by ``B``)."""
    from scipy.linalg import eigh

    A *= -0.5
    A -= A.mean(axis=0)
    A -= A.mean(axis=1)[:, None]
    lam, V = eigh(A, subset_by_index=[max(n - p, 0), n - 1])
    lam, V = lam[::-1], V[:, ::-1]
    Y = np.zeros((n, p))
    pos = lam > 0
    Y[:, : pos.sum()] = V[:, pos] * np.sqrt(lam[pos])
    all_lam = np.linalg.eigvalsh(A) if n <= 3000 else lam
    tot = float(all_lam[all_lam > 0].sum())
    return Y, (float(lam[pos].sum()) / tot if tot > 0 else 1.0)
