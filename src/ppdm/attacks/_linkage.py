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


def release_subspace(Y: np.ndarray, *, loc: np.ndarray | None = None,
                     scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Centre and orthonormal basis (p x r) of the release's principal subspace.

    An exactly low-rank release is detected from its singular-value gap; otherwise r comes from the
    Gavish-Donoho threshold (the signal part of a noisy release). ``loc``/``scale``: the subspace of
    ``(Y - loc) / scale`` (a large release is never copied to scale it).
    """
    n, p = Y.shape
    scaled = loc is not None and scale is not None
    if n * p <= 4_000_000:
        Z = (Y - loc) / scale if scaled else Y
        mu = Z.mean(axis=0)
        s, Vt = np.linalg.svd(Z - mu, full_matrices=False)[1:]
        V, rel_tol = Vt.T, 1e-10
    else:
        from ppdm.utils.linalg import gram

        centre = Y.mean(axis=0)
        mu = (centre - loc) / scale if scaled else centre
        w, V = np.linalg.eigh(gram(Y, offset=centre, scale=scale if scaled else None))
        s, V = np.sqrt(np.clip(w[::-1], 0, None)), V[:, ::-1]
        rel_tol = 1e-6  # eigenvalues carry ~eps * s_0^2 of rounding, i.e. ~1e-8 s_0 on s
    tiny = s <= rel_tol * (s[0] if s[0] > 0 else 1.0)
    r = int((~tiny).sum()) if tiny.any() else gavish_donoho_rank(s, n, p)
    r = max(1, min(r, p))
    return mu, V[:, :r], r


#: the spaces this module measures (the population attacker's are in :mod:`ppdm.attacks._population`)
_OWN_SPACES = frozenset({"raw", "standardised", "projected", "known_columns"})

#: rows of the attacker's pool mapped into a space at a time: a space's copy of a large pool is never whole
POOL_BLOCK = 65_536


def nearest_in_pool(queries: np.ndarray, X: np.ndarray, rows: np.ndarray | None, to_space: Any) -> np.ndarray:
    """Position, in the pool ``X`` (or ``X[rows]``), of every query's nearest pool row, the pool mapped into
    the queries' space (``to_space``) a block of rows at a time; exact, ties to the earlier row."""
    n = len(X) if rows is None else len(rows)
    if n <= POOL_BLOCK:
        return nearest_neighbors(queries, to_space(X if rows is None else X[rows]), 1)[:, 0]
    best = np.full(len(queries), np.inf)
    where = np.zeros(len(queries), dtype=np.int64)
    for start in range(0, n, POOL_BLOCK):
        block = X[start:start + POOL_BLOCK] if rows is None else X[rows[start:start + POOL_BLOCK]]
        idx, dist = nearest_neighbors(queries, to_space(block), 1, return_distance=True)
        del block  # one block at a time
        closer = dist[:, 0] < best
        best[closer], where[closer] = dist[closer, 0], idx[closer, 0] + start
    return where


def _moments(X: np.ndarray, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Column means and deviations (ddof 1; a constant column gets 1) without a copy of the table."""
    from ppdm.utils.linalg import column_mean_std

    mean, sd = column_mean_std(X, rows)
    return mean, np.where(sd == 0, 1.0, sd)


def linkage_rates(
    X: np.ndarray,
    Y: np.ndarray,
    *,
    known_rows: np.ndarray | None = None,
    column_idx: list[int] | None = None,
    targets: np.ndarray | None = None,
    spaces: frozenset[str] | None = None,
) -> dict[str, Any]:
    """Re-identification rates per space.

    Parameters
    ----------
    X, Y : original and release (rows aligned: row i of Y belongs to row i of X)
    known_rows : the original rows the attacker holds (None: all of them, the population)
    column_idx : positions of the columns the attacker knows (known-columns threat)
    targets : the released rows attacked, among ``known_rows`` (None: all of them); every attacked row is
        still compared with every record the attacker holds
    spaces : the spaces measured (None: all)

    Only the targets' released rows are mapped into each space as a whole; the attacker's pool is mapped a
    block at a time, so memory stays near the two tables themselves.
    """
    n = X.shape[0]
    rows = None if known_rows is None else np.sort(np.asarray(known_rows))
    held = n if rows is None else len(rows)
    out: dict[str, Any] = {"chance": 1.0 / held, "n_attacker_records": int(held)}
    rates: dict[str, float] = {}
    # position i of the pool is original row rows[i]; the matching released row is Y[rows[i]]
    if targets is None:
        local = np.arange(held)
    else:
        local = np.sort(np.asarray(targets)) if rows is None else np.searchsorted(rows, np.sort(np.asarray(targets)))
    out["n_targets"] = int(len(local))
    Yt = Y[local if rows is None else rows[local]]

    def rate(queries: np.ndarray, to_space: Any) -> float:
        return float((nearest_in_pool(queries, X, rows, to_space) == local).mean())

    def want(space: str) -> bool:
        return spaces is None or space in spaces

    if Y.shape[1] == X.shape[1] and (spaces is None or spaces & _OWN_SPACES):
        m_a, s_a = _moments(X, rows)
        m_y, s_y = _moments(Y, None)

        def z_scores(a: np.ndarray) -> np.ndarray:
            Z = a - m_a  # one block-sized array, scaled in place
            Z /= s_a
            return Z

        def projected_z(a: np.ndarray) -> np.ndarray:
            Z = z_scores(a)
            Z -= mu_z
            return Z @ Vz

        if want("raw"):
            rates["raw"] = rate(Yt, lambda a: a)
        if want("standardised"):
            rates["standardised"] = rate((Yt - m_y) / s_y, z_scores)
        if want("projected"):
            # the projection is orthogonal in a metric: raw units, and the population's own z-scores
            mu, V, r = release_subspace(Y)
            rates["projected"] = rate((Yt - mu) @ V, lambda a: (a - mu) @ V)
            mu_z, Vz, rz = release_subspace(Y, loc=m_a, scale=s_a)
            rates["projected_standardised"] = rate(((Yt - m_a) / s_a - mu_z) @ Vz, projected_z)
            out["projected_rank"] = int(min(r, rz))
        if column_idx and want("known_columns"):
            c = list(column_idx)
            rates["known_columns"] = rate((Yt[:, c] - m_y[c]) / s_y[c], lambda a: (a[:, c] - m_a[c]) / s_a[c])
    out["rates"] = rates
    out["best_space"] = max(rates, key=lambda k: rates[k]) if rates else None
    return out


def interval_disclosure(X: np.ndarray, Y: np.ndarray, pcts: tuple[int, ...] = tuple(range(1, 11)),
                        rows: np.ndarray | None = None) -> dict[str, Any]:
    """Share of original values inside rank- and deviation-based intervals around the released values.

    ``rows``: measure on these rows only (the intervals still come from every value of each column).
    Computed a column at a time: only one sorted column is held, never a sorted copy of the table.
    """
    n, m = X.shape
    count = n if rows is None else len(rows)
    rank_hits = np.zeros(len(pcts))
    sd_hits = np.zeros(len(pcts))
    for j in range(m):
        col = X[:, j]
        sorted_col = np.sort(col)
        sd = col.std(ddof=1)
        x = col if rows is None else col[rows]
        yv = Y[:, j] if rows is None else Y[rows, j]
        pos = np.searchsorted(sorted_col, yv)
        for i, p in enumerate(pcts):
            h = max(1, int(round(p / 100 * n)))
            lo = sorted_col[np.clip(pos - h, 0, n - 1)]
            hi = sorted_col[np.clip(pos + h, 0, n - 1)]
            rank_hits[i] += np.count_nonzero((x >= lo) & (x <= hi))
            sd_hits[i] += np.count_nonzero(np.abs(x - yv) <= p / 100 * sd)
    cells = max(count * m, 1)
    return {"rank_interval_share": float(np.mean(rank_hits / cells)),
            "sd_interval_share": float(np.mean(sd_hits / cells)), "percents": list(pcts)}
