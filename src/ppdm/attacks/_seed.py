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

from ppdm.attacks._result import ROW_CHUNK

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
        if all(_appears(r, B, 1e-9 * scale + 1e-12) for r in probe):
            order = match_rows(Y, B, scale)  # each published row's replayed twin
            return {"found": True, "seeds_tried": tried, "seed_found": True, "X_hat": X[order], "order": order}
    return {"found": False, "seeds_tried": tried}


#: rows compared or keyed at a time (the attacks' one block size): a million-row replay is never copied whole
#: into a comparison
_CHUNK = ROW_CHUNK


def _appears(row: np.ndarray, B: np.ndarray, tol: np.ndarray) -> bool:
    """Whether some row of ``B`` equals ``row`` to within ``tol`` per column (a block of rows at a time)."""
    return any(bool(np.all(np.abs(B[s:s + _CHUNK] - row) <= tol, axis=1).any()) for s in range(0, len(B), _CHUNK))


def _row_keys(V: np.ndarray, step: np.ndarray) -> np.ndarray:
    """A 64-bit key of each row's values on the grid ``step`` (a block of rows at a time). Equal grid rows
    have equal keys; unequal ones almost never do, and a match is checked on the grid values themselves."""
    keys = np.empty(len(V), dtype=np.uint64)
    mult = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it mixes the bits and loses none
    with np.errstate(over="ignore"):
        for s in range(0, len(V), _CHUNK):
            Q = np.round(V[s:s + _CHUNK] / step).astype(np.int64).view(np.uint64)
            h = np.zeros(len(Q), dtype=np.uint64)
            for j in range(Q.shape[1]):
                h = (h ^ Q[:, j]) * mult
                h ^= h >> np.uint64(29)
            keys[s:s + len(Q)] = h
    return keys


def match_rows(Y: np.ndarray, B: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """For each row of ``Y``, the index of an equal row of ``B`` (to rounding): ``B[order]`` is ``Y``.

    Rows are matched by their values on a grid of 1e-9 of each column's scale, by sorting 64-bit keys of
    their grid values (no table of a million rows' keys as Python objects); equal rows are paired as a stack
    pairs them: the first of ``Y``'s equal rows gets the last of ``B``'s, and so on. A row whose values fall
    on another side of a grid line than its twin's (or a row without a twin) is matched by its nearest
    neighbour among the rows left over.
    """
    step = 1e-9 * np.asarray(scale, dtype=np.float64)
    kb, ky = _row_keys(B, step), _row_keys(Y, step)
    ob = np.argsort(kb, kind="stable")
    kb = kb[ob]
    oy = np.argsort(ky, kind="stable")
    ky = ky[oy]
    lo, hi = np.searchsorted(kb, ky, "left"), np.searchsorted(kb, ky, "right")
    rank = np.arange(len(ky)) - np.searchsorted(ky, ky, "left")  # the row's place among Y's equal keys
    del kb, ky
    order = np.full(len(Y), -1, dtype=np.int64)
    paired = rank < hi - lo
    order[oy[paired]] = ob[(hi - 1 - rank)[paired]]
    del lo, hi, rank, ob, oy, paired
    # a key shared by unequal rows (a 64-bit collision) is no match: checked on the grid values
    for s in range(0, len(Y), _CHUNK):
        o = order[s:s + _CHUNK]
        ok = o >= 0
        same = np.all(np.round(Y[s:s + _CHUNK][ok] / step) == np.round(B[o[ok]] / step), axis=1)
        o[np.flatnonzero(ok)[~same]] = -1
    used = np.zeros(len(B), dtype=bool)
    used[order[order >= 0]] = True
    left = np.flatnonzero(order < 0)
    if len(left):
        from ppdm.utils.neighbors import nearest_neighbors

        free = np.flatnonzero(~used) if (~used).any() else np.arange(len(B))
        order[left] = free[nearest_neighbors(Y[left], B[free], 1)[:, 0]]
    return order
