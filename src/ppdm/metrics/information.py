"""Information-theoretic distortion and pattern side effects (Wang 2008 Ch. 5).

* Entropy of an attribute and mutual information between an attribute and its released counterpart,
  in bits, after discretising each value by rounding to the nearest integer with halves away from zero
  (MATLAB ``round``; numpy's round-half-to-even does not reproduce Table 5.2).
* ``M``: the vector of per-attribute mutual informations; ED = ``||E - E~|| / ||E||`` over the vectors
  of attribute entropies.
* Side-effect rate: the share of non-confidential records whose cluster changed; the membership-change
  list says which records moved from where to where.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ppdm.exceptions import InputError

__all__ = [
    "round_half_away",
    "entropy",
    "mutual_information",
    "mutual_information_vector",
    "attribute_entropies",
    "entropy_distortion",
    "side_effect_rate",
    "membership_changes",
]


def round_half_away(x: np.ndarray) -> np.ndarray:
    """Round to the nearest integer, halves away from zero (MATLAB ``round``)."""
    x = np.asarray(x, dtype=np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _codes(x: np.ndarray) -> np.ndarray:
    return np.unique(round_half_away(x), return_inverse=True)[1].ravel()


def entropy(x: np.ndarray) -> float:
    """Empirical entropy (bits) of a column after MATLAB-style rounding."""
    p = np.bincount(_codes(x)) / len(x)
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def mutual_information(x: np.ndarray, y: np.ndarray) -> float:
    """Empirical mutual information ``I(X; Y)`` (bits) of two columns after MATLAB-style rounding."""
    x, y = np.asarray(x), np.asarray(y)
    if len(x) != len(y):
        raise InputError(f"columns of {len(x)} and {len(y)} values; compare matching columns")
    a, b = _codes(x), _codes(y)
    joint = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(joint, (a, b), 1.0)
    joint /= len(x)
    pa, pb = joint.sum(axis=1), joint.sum(axis=0)
    nz = joint > 0
    return float((joint[nz] * np.log2(joint[nz] / np.outer(pa, pb)[nz])).sum())


def _pair(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.shape != B.shape:
        raise InputError(f"original {A.shape} and release {B.shape} differ in shape; compare matching tables")
    return A, B


def mutual_information_vector(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``M = (I(A_j; B_j))_j``, one value per attribute."""
    A, B = _pair(A, B)
    return np.array([mutual_information(A[:, j], B[:, j]) for j in range(A.shape[1])])


def attribute_entropies(A: np.ndarray) -> np.ndarray:
    A = np.asarray(A, dtype=np.float64)
    return np.array([entropy(A[:, j]) for j in range(A.shape[1])])


def entropy_distortion(A: np.ndarray, B: np.ndarray) -> float:
    """ED = ``||E(A) - E(B)|| / ||E(A)||`` over the per-attribute entropies."""
    A, B = _pair(A, B)
    E, Eb = attribute_entropies(A), attribute_entropies(B)
    den = float(np.linalg.norm(E))
    return float(np.linalg.norm(E - Eb) / den) if den > 0 else float("nan")


def side_effect_rate(before: np.ndarray, after: np.ndarray, confidential: Iterable[int] = ()) -> float:
    """Share of the non-confidential records (0-based positions) whose cluster label changed."""
    before, after = np.asarray(before), np.asarray(after)
    if before.shape != after.shape:
        raise InputError("label vectors differ in length; compare the same records")
    keep = np.ones(len(before), dtype=bool)
    keep[list(confidential)] = False
    if not keep.any():
        return 0.0
    return float((before[keep] != after[keep]).mean())


def membership_changes(before: np.ndarray, after: np.ndarray, names: Sequence[object] | None = None,
                       ) -> list[dict[str, Any]]:
    """Every record whose cluster changed: ``{"record", "from", "to"}`` with clusters numbered from 1."""
    before, after = np.asarray(before), np.asarray(after)
    rows = np.flatnonzero(before != after)
    return [{"record": names[i] if names is not None else int(i) + 1, "from": int(before[i]) + 1,
             "to": int(after[i]) + 1} for i in rows]
