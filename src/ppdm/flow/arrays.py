"""The numeric core of a release, shared by every execution path: preprocess, fit, map back to units.

Also the guards that every path applies to the numbers it is given (magnitudes that would overflow).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ppdm.data.preprocess import PREPROCESSING, Scaler
from ppdm.utils.validation import check_choice, check_magnitude

__all__ = ["perturb_array", "check_magnitude", "scaled_gram", "affine_release", "PERTURB_COPIES", "EVALUATE_COPIES"]


def perturb_array(
    X: np.ndarray,
    mechanism: Any,
    *,
    preprocess: str = "zscore",
    release_units: str = "original",
    y: np.ndarray | None = None,
) -> tuple[np.ndarray, Scaler]:
    """Release a numeric array: preprocess, fit the mechanism, map back to original units.

    ``y`` (the label) goes to mechanisms that use it (``_uses_label``: microaggregation within classes).

    Mechanisms whose release is linear in the preprocessed data (thin SVD, rotation) take a fused
    path: the scaling is folded into one ``m x m`` matrix, so the data are read twice (Gram matrix,
    then one matrix product) and never copied in full.
    """
    check_choice(preprocess, "preprocess", PREPROCESSING)
    check_choice(release_units, "release_units", ("original", "preprocessed"))
    X = np.asarray(X, dtype=np.float64)
    check_magnitude(X)
    from ppdm.mechanisms.svd import ThinSVD

    n, m = X.shape
    if (
        isinstance(mechanism, ThinSVD)
        and ThinSVD.resolved_solver(n, m, int(mechanism.rank), mechanism.solver) == "gram"
        and n >= m
    ):
        from ppdm.utils.validation import check_rank

        check_rank(mechanism.rank, n, m)
        G, scaler = scaled_gram(X, preprocess)
        mechanism.fit_from_gram(G, n)
        return affine_release(X, mechanism.linear_operator(), scaler, release_units), scaler
    scaler = Scaler(preprocess).fit(X)
    # no preprocessed copy of the table when the scaling changes nothing the mechanism sees: it reads X itself
    # (made read-only meanwhile: a mechanism never writes into its input)
    as_given = scaler.method == "none" or bool(getattr(mechanism, "_scale_free", False))
    with _read_only(X) if as_given else contextlib.nullcontext():
        Z = X if as_given else scaler.transform(X)
        # the preprocessed copy is this function's own: a mechanism that can writes its release into it
        into = {"overwrite_input": True} if not as_given and getattr(mechanism, "_releases_into_input", False) else {}
        out = (mechanism.fit_transform(Z, y, **into) if getattr(mechanism, "_uses_label", False)
               else mechanism.fit_transform(Z, **into))
        del Z
    if as_given and np.may_share_memory(out, X):
        out = out.copy()  # a release that is (part of) its input is still the caller's own array
    if as_given and scaler.method != "none":
        # a scale-free release is in X's units already
        if release_units != "original" and out.shape[1] == m:
            out = scaler.transform(out, copy=False)
    elif release_units == "original" and out.shape[1] == m:
        out = scaler.inverse_transform(out, copy=False)
        block = getattr(mechanism, "distorted_block", None)
        if block is not None:
            # cells outside the distorted block are released exactly as given (no scaling round trip)
            rows, cols = block()
            exact = X.copy()
            exact[np.ix_(rows, cols)] = out[np.ix_(rows, cols)]
            out = exact
    return out, scaler


@contextlib.contextmanager
def _read_only(X: np.ndarray) -> Iterator[None]:
    """``X`` cannot be written while the block runs (it is the caller's table, given without a copy)."""
    was = X.flags.writeable
    X.flags.writeable = False
    try:
        yield
    finally:
        if was:
            X.flags.writeable = True


#: dense n x m float64 working arrays a release holds at its peak (see the guard in ``perturb``)
PERTURB_COPIES = 5
#: dense n x m working arrays of ``evaluate``: both tables, their rank arrays, normalised copies
EVALUATE_COPIES = 8

def scaled_gram(X: np.ndarray, preprocess: str) -> tuple[np.ndarray, Scaler]:
    """Gram matrix of the preprocessed data without materialising it; z-score statistics come free.

    For z-scoring, the sample variances are the diagonal of the centred Gram matrix divided by n - 1,
    which saves a full pass (and a full temporary) over the data.
    """
    from ppdm.utils.linalg import gram

    n = X.shape[0]
    if preprocess == "zscore":
        mu = X.mean(axis=0)
        G = gram(X, offset=mu)
        sd = np.sqrt(np.diag(G) / max(n - 1, 1))
        sd = np.where((sd == 0) | ~np.isfinite(sd), 1.0, sd)
        G /= np.outer(sd, sd)
        return G, Scaler.from_stats("zscore", mu, sd)
    scaler = Scaler(preprocess).fit(X)
    off = scaler.offset_ if np.any(scaler.offset_ != 0) else None
    return gram(X, offset=off, scale=scaler.scale_), scaler


def affine_release(X: np.ndarray, P: np.ndarray, scaler: Scaler, units: str) -> np.ndarray:
    """``((X - off) / sc) @ P`` mapped back with ``* sc + off``, as one product ``X @ M + b``."""
    off, sc = scaler.offset_, scaler.scale_
    if units == "original":
        M = (P / sc[:, None]) * sc[None, :]
        b = off - off @ M
    else:
        M = P / sc[:, None]
        b = -(off / sc) @ P
    out = X @ M
    out += b
    return out
