"""Factor-swapping schemes of Wang (2008) Sec. 5.3 on NMF factor vectors (rows of H).

* Scheme 1 (max-min swap, one record x): swap the largest and the smallest entry of ``H_x``.
* Scheme 2 (factor index swap, pair x, y; y is modified): move ``H_y``'s largest entry to the position
  of ``H_x``'s largest; when both maxima sit at the same index, swap ``H_y``'s maximum with entry ``t``
  (``t_policy='smallest'``: the smallest index other than argmax H_x, the default; ``'argmin'``: the
  position of ``H_y``'s minimum).
* Scheme 3 (hybrid, pair x, y; y is modified): ``H_y[argmax H_x] <- min H_x`` and
  ``H_y[argmin H_x] <- max H_x`` (the dissertation prints "argmax" for the second index; its examples
  and the 2007 paper show argmin).

Ties are resolved by the first index, as MATLAB's ``max``/``min`` do.
"""

from __future__ import annotations

import numpy as np

from ppdm.exceptions import ParameterError

__all__ = ["scheme1", "scheme2", "scheme3", "T_POLICIES"]

T_POLICIES = ("smallest", "argmin")


def _vec(h: object, name: str) -> np.ndarray:
    v = np.array(h, dtype=np.float64).ravel()
    if v.size < 2:
        raise ParameterError(f"{name} needs at least two factors (components >= 2) for a swap")
    return v


def scheme1(hx: object) -> np.ndarray:
    """Scheme 1: a copy of ``hx`` with its maximum and minimum swapped."""
    h = _vec(hx, "scheme 1")
    i, j = int(np.argmax(h)), int(np.argmin(h))
    h[i], h[j] = h[j], h[i]
    return h


def scheme2(hx: object, hy: object, t_policy: str = "smallest") -> np.ndarray:
    """Scheme 2: a copy of ``hy`` whose maximum is moved to (or, if already there, away from) argmax ``hx``."""
    x, y = _vec(hx, "scheme 2"), _vec(hy, "scheme 2")
    if x.size != y.size:
        raise ParameterError("scheme 2 needs factor vectors of the same length")
    if t_policy not in T_POLICIES:
        raise ParameterError(f"t_policy must be one of {', '.join(T_POLICIES)}; got {t_policy!r}")
    idx, idy = int(np.argmax(x)), int(np.argmax(y))
    if idx != idy:
        t = idx
    elif t_policy == "smallest":
        t = 0 if idx != 0 else 1
    else:
        t = int(np.argmin(y))
        if t == idy:  # a constant vector: fall back to the smallest other index
            t = 0 if idx != 0 else 1
    y[idy], y[t] = y[t], y[idy]
    return y


def scheme3(hx: object, hy: object) -> np.ndarray:
    """Scheme 3: a copy of ``hy`` with ``hy[argmax hx] = min hx`` and ``hy[argmin hx] = max hx``."""
    x, y = _vec(hx, "scheme 3"), _vec(hy, "scheme 3")
    if x.size != y.size:
        raise ParameterError("scheme 3 needs factor vectors of the same length")
    imax, imin = int(np.argmax(x)), int(np.argmin(x))
    y[imax] = x[imin]
    y[imin] = x[imax]
    return y
