"""Seed search: the attacker regenerates a mechanism's random draws from guessable seeds.

Under Kerckhoffs's principle the attacker knows the mechanism, its published parameters and the
preprocessing; only the random draws are secret. If those draws came from a small or default seed, the
attacker (who holds the population) replays the release for each candidate seed and keeps the one whose
output contains the published rows exactly: the noise is then known and every value recovered. A release
keyed with 128 bits of operating-system entropy (ppdm's default) is out of reach of any such scan.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["COMMON_SEEDS", "seed_search", "candidate_seeds", "match_rows"]

#: seeds people type: defaults of tutorials and libraries, years, repeated digits
COMMON_SEEDS = (42, 123, 1234, 12345, 123456, 1234567, 12345678, 2020, 2021, 2022, 2023, 2024, 2025, 2026, 31337,
                4242, 777, 999, 9999, 99999, 1000, 10000, 100000, 2**31 - 1, 2**32 - 1)


def candidate_seeds(scan: int = 1000) -> list[int]:
    """Seeds 0..scan-1 and the common ones."""
    return list(dict.fromkeys([*range(int(scan)), *COMMON_SEEDS]))


def seed_search(
    X: np.ndarray,
    Y: np.ndarray,
    method: str,
    params: dict[str, Any],
    preprocess: str,
    seeds: Iterable[int],
    *,
    probe_rows: int = 3,
    y: np.ndarray | None = None,
    max_seconds: float | None = None,
) -> dict[str, Any]:
    """Replay ``method`` on the population ``X`` with each seed; a hit when published rows appear exactly.

    The comparison is on sets of rows (``probe_rows`` released rows searched among the replayed release),
    so shuffling the rows does not hide a replayed key. Returns ``found`` (bool), ``seeds_tried`` and, on a
    hit, the replayed release in published order (``X_hat``, aligned to ``Y``'s rows). ``max_seconds`` bounds
    the scan (a million-row replay takes seconds): the result then says how many seeds were tried.
    """
    import time
    import warnings

    from ppdm import registry
    from ppdm.flow.arrays import perturb_array

    if not getattr(registry.get(method).load(), "_seed_reproducible", True):
        # part of the release's randomness is not drawn from the seed (OpenDP's noise in dp-copula): no seed
        # regenerates it, and a replay would cost a full fit per seed
        return {"found": False, "seeds_tried": 0, "why": "the mechanism's noise is not drawn from its seed"}
    params = {k: v for k, v in params.items() if k != "random_state"}  # the key is what is searched for
    probe = Y[: min(probe_rows, len(Y))]
    scale = np.maximum(np.abs(probe).max(axis=0), 1e-300)
    tried = 0
    start = time.perf_counter()
    for s in seeds:
        if max_seconds is not None and tried and time.perf_counter() - start > max_seconds:
            return {"found": False, "seeds_tried": tried, "why": f"the scan stopped after {max_seconds:g} s"}
        tried += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mech = registry.build(method, params, random_state=int(s))
            B, _ = perturb_array(X, mech, preprocess=preprocess, y=y)
        if B.shape[1] != Y.shape[1]:
            return {"found": False, "seeds_tried": tried, "why": "the replay releases other columns"}
        # every probe row must be some replayed row, to rounding (CSV round trips keep ~15 digits)
        hits = [np.flatnonzero(np.all(np.abs(B - r) <= 1e-9 * scale + 1e-12, axis=1)) for r in probe]
        if all(len(h) for h in hits):
            order = match_rows(Y, B, scale)  # each published row's replayed twin
            return {"found": True, "seeds_tried": tried, "seed_found": True, "X_hat": X[order], "order": order}
    return {"found": False, "seeds_tried": tried}


def match_rows(Y: np.ndarray, B: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """For each row of ``Y``, the index of an equal row of ``B`` (to rounding): ``B[order]`` is ``Y``.

    Rows are matched by their values on a grid of 1e-9 of each column's scale, in linear time; equal rows
    are paired in order. A row whose values fall on another side of a grid line than its twin's (or a row
    without a twin) is matched by its nearest neighbour among the rows left over.
    """
    step = 1e-9 * np.asarray(scale, dtype=np.float64)

    def keys(V: np.ndarray) -> list[bytes]:
        Q = np.ascontiguousarray(np.round(V / step).astype(np.int64))
        return [r.tobytes() for r in Q]

    pool: dict[bytes, list[int]] = {}
    for i, k in enumerate(keys(B)):
        pool.setdefault(k, []).append(i)
    order = np.full(len(Y), -1, dtype=np.int64)
    used = np.zeros(len(B), dtype=bool)
    for i, k in enumerate(keys(Y)):
        twins = pool.get(k)
        if twins:
            order[i] = twins.pop()
            used[order[i]] = True
    left = np.flatnonzero(order < 0)
    if len(left):
        from ppdm.utils.neighbors import nearest_neighbors

        free = np.flatnonzero(~used) if (~used).any() else np.arange(len(B))
        order[left] = free[nearest_neighbors(Y[left], B[free], 1)[:, 0]]
    return order
