"""Distance-based record linkage and interval disclosure (Domingo-Ferrer & Torra).

Linkage: an attacker holding original records links each released row to its nearest original record.
Spaces tried (the data owner reports each and the worst case):

* ``raw``: the values as they are;
* ``standardised``: each table z-scored with its own column means and deviations (defeats rescaling);
* ``projected``: both tables projected onto the release's own principal subspace (centred, rank from the
  release's singular-value gap or the Gavish-Donoho threshold). A low-rank release lies in that subspace,
  so the population projected there lands on its own released row: this defeats SVD releases;
* ``known_columns``: only the columns the attacker knows for every record.

Interval disclosure: the share of original values that fall in an interval around the released value,
rank based (the values whose ranks lie within +-p % of n of the released value's rank) and deviation based
(+-p % of the column's standard deviation), averaged over p = 1..10.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdm.attacks._filtering import gavish_donoho_rank
from ppdm.utils.neighbors import nearest_neighbors

__all__ = ["linkage_rates", "interval_disclosure", "release_subspace"]


def release_subspace(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Centre and orthonormal basis (p x r) of the release's principal subspace.

    An exactly low-rank release is detected from its singular-value gap; otherwise r comes from the
    Gavish-Donoho threshold (the signal part of a noisy release).
    """
    n, p = Y.shape
    mu = Y.mean(axis=0)
    if n * p <= 4_000_000:
        s, Vt = np.linalg.svd(Y - mu, full_matrices=False)[1:]
        V, rel_tol = Vt.T, 1e-10
    else:
        from ppdm.utils.linalg import gram

        w, V = np.linalg.eigh(gram(Y, offset=mu))
        s, V = np.sqrt(np.clip(w[::-1], 0, None)), V[:, ::-1]
        rel_tol = 1e-6  # eigenvalues carry ~eps * s_0^2 of rounding, i.e. ~1e-8 s_0 on s
    tiny = s <= rel_tol * (s[0] if s[0] > 0 else 1.0)
    r = int((~tiny).sum()) if tiny.any() else gavish_donoho_rank(s, n, p)
    r = max(1, min(r, p))
    return mu, V[:, :r], r


def _rate(A: np.ndarray, B: np.ndarray, targets: np.ndarray) -> float:
    """Share of released rows ``B[targets]`` whose nearest row of ``A`` is their own."""
    nn = nearest_neighbors(B[targets], A, 1)[:, 0]
    return float((nn == targets).mean())


def _z(A: np.ndarray) -> np.ndarray:
    sd = A.std(axis=0, ddof=1)
    return (A - A.mean(axis=0)) / np.where(sd == 0, 1.0, sd)


def linkage_rates(
    X: np.ndarray,
    Y: np.ndarray,
    *,
    known_rows: np.ndarray | None = None,
    column_idx: list[int] | None = None,
    targets: np.ndarray | None = None,
) -> dict[str, Any]:
    """Re-identification rates per space.

    Parameters
    ----------
    X, Y : original and release (rows aligned: row i of Y belongs to row i of X)
    known_rows : the original rows the attacker holds (None: all of them, the population)
    column_idx : positions of the columns the attacker knows (known-columns threat)
    targets : the released rows attacked, among ``known_rows`` (None: all of them); every attacked row is
        still compared with every record the attacker holds
    """
    n = X.shape[0]
    rows = np.arange(n) if known_rows is None else np.sort(np.asarray(known_rows))
    A = X[rows]
    out: dict[str, Any] = {"chance": 1.0 / len(rows), "n_attacker_records": int(len(rows))}
    rates: dict[str, float] = {}
    # row i of A is original row rows[i]; the matching released row is Y[rows[i]]
    local = np.arange(len(rows)) if targets is None else np.searchsorted(rows, np.sort(np.asarray(targets)))
    out["n_targets"] = int(len(local))
    same = Y.shape[1] == X.shape[1]
    if same:
        rates["raw"] = _rate(A, Y[rows], local)
        rates["standardised"] = _rate(_z(A), _z(Y)[rows], local)
    if same:
        # the projection is orthogonal in a metric: raw units, and the population's own z-scores
        mu, V, r = release_subspace(Y)
        rates["projected"] = _rate((A - mu) @ V, (Y[rows] - mu) @ V, local)
        m_a, s_a = A.mean(axis=0), A.std(axis=0, ddof=1)
        s_a = np.where(s_a == 0, 1.0, s_a)
        Yz = (Y - m_a) / s_a
        mu_z, Vz, rz = release_subspace(Yz)
        rates["projected_standardised"] = _rate(((A - m_a) / s_a - mu_z) @ Vz, (Yz[rows] - mu_z) @ Vz, local)
        out["projected_rank"] = int(min(r, rz))
    if column_idx:
        cols = list(column_idx)
        if same:
            rates["known_columns"] = _rate(_z(A[:, cols]), _z(Y[:, cols])[rows], local)
    out["rates"] = rates
    out["best_space"] = max(rates, key=lambda k: rates[k]) if rates else None
    return out


def interval_disclosure(X: np.ndarray, Y: np.ndarray, pcts: tuple[int, ...] = tuple(range(1, 11)),
                        rows: np.ndarray | None = None) -> dict[str, Any]:
    """Share of original values inside rank- and deviation-based intervals around the released values.

    ``rows``: measure on these rows only (the intervals still come from every value of each column).
    """
    n, m = X.shape
    Xs = np.sort(X, axis=0)
    sd = X.std(axis=0, ddof=1)
    if rows is not None:
        X, Y = X[rows], Y[rows]
    rank_share, sd_share = [], []
    for p in pcts:
        h = max(1, int(round(p / 100 * n)))
        pos = np.empty_like(Y, dtype=np.int64)
        for j in range(m):
            pos[:, j] = np.searchsorted(Xs[:, j], Y[:, j])
        lo = np.take_along_axis(Xs, np.clip(pos - h, 0, n - 1), axis=0)
        hi = np.take_along_axis(Xs, np.clip(pos + h, 0, n - 1), axis=0)
        rank_share.append(float(((X >= lo) & (X <= hi)).mean()))
        sd_share.append(float((np.abs(X - Y) <= p / 100 * sd).mean()))
    return {"rank_interval_share": float(np.mean(rank_share)), "sd_interval_share": float(np.mean(sd_share)),
            "percents": list(pcts)}
