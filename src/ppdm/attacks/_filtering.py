"""Release-only reconstruction attacks: spectral filtering, low-rank denoising, ICA, face value.

* Spectral filtering (Kargupta et al. 2003): additive i.i.d. noise spreads evenly over all eigenvalues of
  the covariance, while the signal concentrates in a few. Eigenvalues above the largest noise eigenvalue
  ``sigma^2 (1 + sqrt(m / n))^2`` (Marchenko-Pastur) are kept; sigma^2 is estimated as the median eigenvalue
  (the attacker may also be told it). Works in raw units; noise added in z-score units (as ppdm's noise
  mechanisms do) is the low-rank denoiser's case, which standardises first.
* Low-rank denoising: keep the singular values above the Gavish-Donoho optimal hard threshold
  ``omega(beta) * median(s)`` of the standardised, centred release.
* ICA (Liu, Giannella & Kargupta 2006): a release that mixes columns linearly is unmixed by FastICA; the
  components are matched to the original columns by the Kolmogorov-Smirnov distance of their
  standardised distributions (the attacker knows each column's distribution) and rescaled to them.
* Face value: the release read as the original (what a careless reader learns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["spectral_filter", "low_rank_denoise", "low_rank_map", "ica_attack", "gavish_donoho_rank",
           "ks_statistic", "wiener_reconstruction", "wiener_map"]


def _standardise_stats(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and deviations of the release, without copying it."""
    from ppdm.utils.linalg import column_mean_std

    mu, sd = column_mean_std(Y)  # nan below two rows
    # a column constant up to rounding (a release of identical rows) stays constant: scaling its rounding
    # noise up to unit variance would invent a signal
    top = np.maximum(Y.max(axis=0, initial=-np.inf), -Y.min(axis=0, initial=np.inf)) if len(Y) else np.zeros(0)
    flat = (sd <= 1e-10 * np.where(np.isfinite(top), top, 0.0)) | (sd == 0) | ~np.isfinite(sd)
    return mu, np.where(flat, 1.0, sd)


def _rows(Y: np.ndarray, out_rows: np.ndarray | None) -> np.ndarray:
    return Y if out_rows is None else Y[out_rows]


def spectral_filter(Y: np.ndarray, noise_var: float | None = None, *,
                    out_rows: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Project the centred release on the covariance eigenvectors above the noise bound.

    ``out_rows``: estimate only these rows (the covariance still comes from every row).
    """
    from ppdm.utils.linalg import gram

    n, m = Y.shape
    mu = Y.mean(axis=0)
    # raw units: i.i.d. noise is isotropic there (Kargupta's setting)
    w, V = np.linalg.eigh(gram(Y, offset=mu) / max(n - 1, 1))
    w, V = w[::-1], V[:, ::-1]
    s2 = float(np.median(w)) if noise_var is None else float(noise_var)
    bound = s2 * (1 + np.sqrt(m / n)) ** 2
    k = max(1, int((w > bound).sum()))
    Vk = V[:, :k]
    return ((_rows(Y, out_rows) - mu) @ Vk) @ Vk.T + mu, {"components_kept": k, "noise_variance_estimate": s2}


def gavish_donoho_rank(s: np.ndarray, n: int, m: int) -> int:
    """Number of singular values above the optimal hard threshold for unknown noise (Gavish & Donoho 2014)."""
    beta = min(n, m) / max(n, m)
    omega = 0.56 * beta**3 - 0.95 * beta**2 + 1.82 * beta + 1.43
    tau = omega * float(np.median(s))
    return max(1, int((s > tau).sum()))


def low_rank_map(Y: np.ndarray) -> tuple[Any, dict[str, Any]]:
    """The rank-r denoising of the standardised release (r from the Gavish-Donoho threshold), fitted on every
    row, as a map that estimates any block of the release's rows."""
    from ppdm.utils.linalg import gram

    n, m = Y.shape
    mu, sd = _standardise_stats(Y)
    w, V = np.linalg.eigh(gram(Y, offset=mu, scale=sd))
    s, V = np.sqrt(np.clip(w[::-1], 0, None)), V[:, ::-1]
    tiny = s <= 1e-6 * (s[0] if s[0] > 0 else 1.0)  # an exactly low-rank release: keep its rank
    r = int((~tiny).sum()) if tiny.any() else gavish_donoho_rank(s, n, m)
    Vr = V[:, :r]

    def estimate(rows_of_y: np.ndarray) -> np.ndarray:
        return (((rows_of_y - mu) / sd) @ Vr) @ Vr.T * sd + mu

    return estimate, {"rank_kept": int(r)}


def low_rank_denoise(Y: np.ndarray, *, out_rows: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Rank-r reconstruction of the standardised release, r from the Gavish-Donoho threshold.

    ``out_rows``: estimate only these rows (the subspace still comes from every row).
    """
    estimate, details = low_rank_map(Y)
    return estimate(_rows(Y, out_rows)), details


def ks_statistic(a: np.ndarray, b_sorted: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov statistic ``sup |F_a - F_b|`` (``b`` already sorted)."""
    a = np.sort(a)
    grid = np.concatenate([a, b_sorted])
    fa = np.searchsorted(a, grid, side="right") / len(a)
    fb = np.searchsorted(b_sorted, grid, side="right") / len(b_sorted)
    return float(np.max(np.abs(fa - fb)))


def ks_matrix(A: np.ndarray, B_sorted: np.ndarray) -> np.ndarray:
    """:func:`ks_statistic` of every column of ``A`` against every column of ``B_sorted`` (each sorted).

    ``B``'s distribution function is a step function, constant between its distinct values ``v_1 < ... < v_u``
    (``c_k`` below and at ``v_k``, ``c_0 = 0``), and ``A``'s is monotone: on each step the largest gap is at
    one of its ends, so the statistic is the largest of ``|F_A(v_k) - c_k|`` and ``|F_A(v_k^-) - c_(k-1)|``.
    Two binary searches of ``B``'s distinct values (all columns at once) in each column of ``A``: a column of
    categories (two values) costs two values, not a sample's worth (a 22-column categorical table's attack
    took 1.7 s in one binary search a pair).
    """
    A = np.sort(A, axis=0)
    na, nb = len(A), len(B_sorted)
    values, below_or_at, below = [], [], []
    for j in range(B_sorted.shape[1]):
        col = B_sorted[:, j]
        last = np.flatnonzero(np.r_[col[1:] != col[:-1], True])  # the last row of each distinct value
        cum = (last + 1) / nb
        values.append(col[last])
        below_or_at.append(cum)
        below.append(np.r_[0.0, cum[:-1]])
    V, C, Cp = np.concatenate(values), np.concatenate(below_or_at), np.concatenate(below)
    starts = np.cumsum([0] + [len(v) for v in values[:-1]])  # each column's first distinct value in V
    out = np.empty((A.shape[1], B_sorted.shape[1]))
    for i in range(A.shape[1]):
        at = np.searchsorted(A[:, i], V, side="right") / na
        before = np.searchsorted(A[:, i], V, side="left") / na
        out[i] = np.maximum.reduceat(np.maximum(np.abs(at - C), np.abs(before - Cp)), starts)
    return out


#: FastICA learns the unmixing from at most this many rows (it is then applied to all of them)
ICA_FIT_ROWS = 10_000


def ica_attack(
    X: np.ndarray, Y: np.ndarray, rng: np.random.Generator, *, out_rows: np.ndarray | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Unmix the release with FastICA and map components to columns by their distributions.

    ``out_rows``: estimate only these rows (the unmixing and the components' scales come from every row).
    """
    import warnings

    from scipy.optimize import linear_sum_assignment
    from sklearn.decomposition import FastICA

    from ppdm.utils.linalg import column_mean_std, column_quantiles, gram

    n, m = X.shape
    n_y, p = Y.shape
    mu_y, sd_y = _standardise_stats(Y)
    fit_rows = None if len(Y) <= ICA_FIT_ROWS else np.sort(rng.choice(len(Y), ICA_FIT_ROWS, replace=False))
    fit = (_rows(Y, fit_rows) - mu_y) / sd_y
    out = np.arange(n) if out_rows is None else np.asarray(out_rows)
    # a low-rank release (a truncated SVD, rows set to zero) has no more independent sources than its rank:
    # whitening more components than that divides by zero
    sv = np.linalg.svd(fit - fit.mean(axis=0), compute_uv=False)
    # a standardised column has singular values of order sqrt(rows); rounding noise is far below that
    rank = int((sv > max(sv[0] * 1e-8, 1e-6 * np.sqrt(len(fit)))).sum()) if sv.size else 0
    k = min(p, m, rank)
    if k == 0:
        return np.broadcast_to(column_quantiles(X), (len(out), m)).copy(), {"components": 0,
                                                                             "mean_ks_distance": 1.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a release that mixes its columns linearly unmixes in tens of iterations; one that does not (noise,
        # synthetic records) never converges, and 400 iterations took 8.5 s on 5,000 x 36 where 200 take half
        ica = FastICA(n_components=k, whiten="unit-variance", max_iter=200,
                      random_state=int(rng.integers(2**31 - 1)))
        # the unmixing is estimated from at most ICA_FIT_ROWS rows (a seeded sample), then applied to every row
        # constant columns carry no source, and scikit-learn's whitening signs its components by the first
        # column's loading: a constant first column (a blank pixel) zeroed every component
        live = np.ptp(fit, axis=0) > 0
        components, centre = np.zeros((k, p)), np.zeros(p)
        try:
            ica.fit(fit[:, live])
            components[:, live], centre[live] = ica.components_, ica.mean_
        except ValueError:  # NaN components reached its own pseudo-inverse
            components[:] = np.nan
    if not np.all(np.isfinite(components)):
        # FastICA's fixed point breaks down on degenerate sources (a release of two distinct rows gave NaN):
        # the whitened principal components, ICA's own starting point, are the attacker's sources then
        centre = fit.mean(axis=0)
        _, sv_fit, vt = np.linalg.svd(fit - centre, full_matrices=False)
        components = vt[:k] * (np.sqrt(len(fit)) / sv_fit[:k])[:, None]
    del fit
    # the sources are affine in the release, s = (y - mu_y) M - c: over every row their mean is -c and
    # their variances the diagonal of M^T Cov(Y) M, from the release's Gram matrix (no sources table is made)
    unmix = components.T / sd_y[:, None]  # y -> source, in the release's own units
    shift = centre @ components.T
    s_mu = -shift
    s_var = np.einsum("ij,ik,kj->j", unmix, gram(Y, offset=mu_y), unmix) / max(n_y, 1)
    s_sd = np.sqrt(np.clip(s_var, 0.0, None))
    s_sd = np.where(s_sd == 0, 1.0, s_sd)

    def sources(rows: np.ndarray | None) -> np.ndarray:
        return (_rows(Y, rows) - mu_y) @ unmix - shift
    # the attacker's knowledge: each column's distribution (standardised for matching, raw for rescaling)
    mu, sd = column_mean_std(X, ddof=0)
    sd = np.where(sd == 0, 1.0, sd)
    sub = np.arange(n) if n <= 5000 else np.sort(rng.choice(n, 5000, replace=False))
    S_sub = (sources(sub) - s_mu) / s_sd
    Xsorted = np.sort((X[sub] - mu) / sd, axis=0)
    d_plus, d_minus = ks_matrix(S_sub, Xsorted), ks_matrix(-S_sub, Xsorted)
    cost = np.minimum(d_plus, d_minus)
    sign = np.where(d_plus <= d_minus, 1.0, -1.0)
    r, c = linear_sum_assignment(cost)
    S = (sources(None if out_rows is None else out) - s_mu) / s_sd
    X_hat = np.broadcast_to(column_quantiles(X), (len(out), m)).copy()
    for i, j in zip(r, c, strict=True):
        X_hat[:, j] = mu[j] + sd[j] * sign[i, j] * S[:, i]
    return X_hat, {"components": int(k), "mean_ks_distance": float(cost[r, c].mean())}


def wiener_map(A: np.ndarray | Sequence[np.ndarray], Y: np.ndarray) -> tuple[Any, dict[str, Any]]:
    """The Wiener (linear MMSE) estimate of :func:`wiener_reconstruction`, fitted on every row, as a map that
    estimates any block of the release's rows. ``A``: the attacker's records, or several parts of them
    (their union is never copied into one table)."""
    from ppdm.utils.linalg import gram, union_mean_std

    parts = [A] if isinstance(A, np.ndarray) else list(A)
    n_a = sum(len(p) for p in parts)
    mu, sd = union_mean_std(parts)
    sd = np.where((sd == 0) | ~np.isfinite(sd), 1.0, sd)
    # covariances in the population's z-scores, accumulated in row chunks of the raw columns: no
    # standardised copy of either table is made (a million-row release is compared with a million-row
    # population)
    Sa = sum((gram(p, offset=mu, scale=sd) for p in parts), np.zeros((Y.shape[1],) * 2)) / max(n_a - 1, 1)
    finite = bool(np.isfinite(Y).all())
    Yf = Y if finite else np.where(np.isfinite(Y), Y, mu)  # an unreadable value reads as the mean
    ybar = Yf.mean(axis=0)
    Sy = gram(Yf, offset=ybar, scale=sd) / max(len(Yf) - 1, 1)
    W = Sa @ np.linalg.pinv(Sy, hermitian=True)

    def estimate(rows_of_y: np.ndarray) -> np.ndarray:
        rows_of_y = np.where(np.isfinite(rows_of_y), rows_of_y, mu)
        X_hat = ((rows_of_y - ybar) / sd) @ W.T
        X_hat *= sd
        X_hat += mu
        return X_hat

    return estimate, {"gain_trace": float(np.trace(W))}


def wiener_reconstruction(A: np.ndarray, Y: np.ndarray, *,
                          out_rows: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Linear minimum-mean-square-error estimate of the records from a release of additive noise.

    The attacker holds the population (or a sample of it) ``A``: its covariance ``S_a`` in its own
    z-scores, with the release's covariance ``S_y`` in the same units, gives ``x^ = mu + S_a S_y^-1 (y - ybar)``
    (noise independent of the data; no known pairs needed). Works for any published noise level, because
    the noise covariance is ``S_y - S_a``. ``out_rows``: estimate only these rows (default all).
    """
    estimate, details = wiener_map(A, Y)
    return estimate(_rows(Y, out_rows)), details
