"""Simultaneous value and pattern hiding: one NMF release that also hides cluster memberships and
pairwise same-cluster relations (Wang 2008 Ch. 5, Algorithms 8 and 9), plus a targeted search.

Every candidate is checked the way an analyst would see it: the release ``Hhat W`` is mapped back to
the published units (inverse of the nonnegativity shift) and clustered with the reference protocol
(Lloyd from the same seed rows). A request is achieved when every confidential membership/relation
is in its requested state and the share of *other* records whose cluster changed is at most
``tolerance``.

Searches
--------
``'paper'``
    The dissertation's procedure: each trial is a fresh random NMF with K = number of clusters, the
    scheme applied to the confidential factor vectors (Scheme 1 for memberships, Scheme 2 or 3 for
    pairs), and a full check; repeat until success or ``max_trials``.
``'targeted'`` (default)
    One NMF; each confidential factor vector moves toward the factor vector of its target cluster's
    reference centroid by the smallest amount that makes the centroid rule (nearest reference centroid)
    pick the target, plus a small margin. Records whose release row falls nearer another reference
    centroid (at risk) are pulled back toward their own centroid by the smallest amount that fixes
    them. Then Lloyd is run on the candidate; records that still end in the wrong cluster get a larger
    move, and so on. When a move cannot reach its cluster, the next restart uses one more component.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ppdm.exceptions import InputError, ParameterError
from ppdm.hiding.clustering import reference_protocol
from ppdm.hiding.schemes import T_POLICIES, scheme1, scheme2, scheme3
from ppdm.mechanisms.nmf import NonnegativeShift, check_components
from ppdm.mechanisms.nmf_solvers import SOLVERS, factorize, nnls_rows
from ppdm.metrics.information import membership_changes, side_effect_rate
from ppdm.utils.validation import check_choice, check_int, check_real

__all__ = ["MemberRequest", "PairRequest", "HidingResult", "hide_patterns", "SEARCHES"]

SEARCHES = ("targeted", "paper")
_MARGIN = 0.05  # extra move beyond the smallest one, so that Lloyd's centroid updates keep the record there


@dataclass(frozen=True)
class MemberRequest:
    """Record ``record`` (0-based row) must leave its cluster: for ``target`` (0-based) or any other."""

    record: int
    target: int | None = None


@dataclass(frozen=True)
class PairRequest:
    """Relation ``x R y`` must change (``together=None``) or become ``together``; y is the record modified."""

    x: int
    y: int
    together: bool | None = None


@dataclass
class HidingResult:
    """Outcome of a hiding request. ``H`` and ``W`` are key material: keep them out of reports."""

    release: np.ndarray
    achieved: bool
    trials: int
    side_effect_rate: float
    truth: np.ndarray
    labels: np.ndarray
    confidential: list[int]
    search: str
    seconds: float
    components: int
    H: np.ndarray = field(repr=False)
    W: np.ndarray = field(repr=False)
    offset: np.ndarray = field(repr=False)
    scale: np.ndarray = field(repr=False)
    goals: list[dict[str, Any]] = field(default_factory=list)

    def changes(self, names: Sequence[object] | None = None) -> list[dict[str, Any]]:
        """Every record whose cluster differs from the reference (confidential ones included)."""
        return membership_changes(self.truth, self.labels, names)


# ------------------------------------------------------------------------------------ validation


def _validate(X: np.ndarray, K: int, members: Sequence[MemberRequest], pairs: Sequence[PairRequest],
              truth: np.ndarray) -> None:
    n = len(X)
    if not members and not pairs:
        raise ParameterError("nothing to hide; name a member to move or a pair to negate")

    def check_row(r: int) -> None:
        if not 0 <= r < n:
            raise InputError(f"record {r + 1} is not in the table (1..{n}); check the record names")

    for req in members:
        check_row(req.record)
        if req.target is not None:
            if not 0 <= req.target < K:
                raise ParameterError(f"target cluster {req.target + 1} does not exist; clusters are 1..{K}")
            if req.target == truth[req.record]:
                raise ParameterError(f"record {req.record + 1} is already in cluster {req.target + 1}; "
                                     "name another target cluster or none")
    for p in pairs:
        check_row(p.x)
        check_row(p.y)
        if p.x == p.y:
            raise ParameterError(f"pair ({p.x + 1}, {p.y + 1}) names one record twice; name two records")
        if p.together is not None and (truth[p.x] == truth[p.y]) == p.together:
            state = "in the same cluster" if p.together else "in different clusters"
            raise ParameterError(f"records {p.x + 1} and {p.y + 1} are already {state}; nothing to change")
    if K < 2:
        raise ParameterError("hiding needs at least 2 clusters")


def _goals_met(L: np.ndarray, truth: np.ndarray, members: Sequence[MemberRequest],
               pairs: Sequence[PairRequest]) -> list[dict[str, Any]]:
    out = []
    for req in members:
        ok = L[req.record] == req.target if req.target is not None else L[req.record] != truth[req.record]
        out.append({"kind": "member", "record": req.record, "from": int(truth[req.record]),
                    "to": int(L[req.record]), "target": req.target, "achieved": bool(ok)})
    for p in pairs:
        was = bool(truth[p.x] == truth[p.y])
        want = (not was) if p.together is None else p.together
        now = bool(L[p.x] == L[p.y])
        out.append({"kind": "pair", "x": p.x, "y": p.y, "together_before": was, "together_after": now,
                    "achieved": now == want})
    return out


# ---------------------------------------------------------------------------------------- driver


def hide_patterns(
    X: np.ndarray,
    n_clusters: int,
    members: Sequence[MemberRequest] = (),
    pairs: Sequence[PairRequest] = (),
    *,
    search: str = "targeted",
    scheme: int = 3,
    t_policy: str = "smallest",
    components: int | None = None,
    solver: str = "hals",
    tol: float = 1e-4,
    max_iter: int = 500,
    max_trials: int = 200,
    tolerance: float = 0.0,
    reference: str = "first-rows",
    shift: bool = True,
    random_state: object = 0,
    progress: Callable[[int, int], None] | None = None,
) -> HidingResult:
    """Release ``X`` through NMF while hiding the requested memberships and relations.

    Parameters
    ----------
    X : ndarray (n x m)
        The table in published units (nonnegative, or shifted when ``shift``).
    n_clusters : int
        K of the reference K-means.
    members, pairs : sequences of :class:`MemberRequest` / :class:`PairRequest`
    search : {'targeted', 'paper'}
    scheme : {2, 3}
        Pair scheme of the paper search (memberships always use Scheme 1).
    t_policy : {'smallest', 'argmin'}
        Scheme 2's swap partner when both maxima coincide.
    components : int, optional
        NMF inner dimension; default ``n_clusters`` (as in the papers).
    solver, tol, max_iter
        NMF solver settings (:func:`ppdm.mechanisms.nmf_solvers.factorize`).
    max_trials : int
        Candidate releases checked at most (each is one full clustering of a candidate).
    tolerance : float in [0, 1]
        Largest acceptable side-effect rate (default 0: no other record may move).
    reference : {'first-rows', 'kmeans++'}
    shift : bool
        Shift negative columns (exact inverse on release); False makes negative input an error.
    random_state : int, Generator or None
    progress : callable(trials_done, max_trials), optional
    """
    t0 = time.perf_counter()
    X = np.asarray(X, dtype=np.float64)
    n, m = X.shape
    check_choice(search, "search", SEARCHES)
    check_choice(solver, "solver", SOLVERS)
    check_choice(t_policy, "t_policy", T_POLICIES)
    if scheme not in (2, 3):
        raise ParameterError(f"pair scheme must be 2 or 3; got {scheme!r}")
    max_trials = check_int(max_trials, "max_trials", low=1)
    tolerance = check_real(tolerance, "tolerance", low=0.0, high=1.0)
    protocol = reference_protocol(X, n_clusters, reference, random_state)
    K = protocol.n_clusters
    # the schemes swap cluster-indexed factors, so the paper search needs K components; the targeted
    # search works with any basis and caps the default at the table's size
    default = K if search == "paper" else min(K, n, m)
    comps = check_components(default if components is None else components, n, m)
    zero = np.flatnonzero(~X.any(axis=1))
    if len(zero):
        raise InputError(f"{len(zero)} record(s) are all zeros (first: row {zero[0] + 1}); NMF gives them no "
                         "factor vector to move; drop them first")
    sh = NonnegativeShift(shift).fit(X)
    Z = sh.transform(X)
    truth, centroids = protocol.fit(X)
    _validate(X, K, members, pairs, truth)
    confidential = sorted({r.record for r in members} | {p.x for p in pairs} | {p.y for p in pairs})
    seeds = np.random.SeedSequence(np.random.default_rng(random_state).integers(0, 2**63 - 1))  # type: ignore[arg-type]
    run = _paper if search == "paper" else _targeted
    state = run(X, Z, sh, protocol, truth, centroids, list(members), list(pairs), confidential, comps, seeds,
                solver=solver, tol=tol, max_iter=max_iter, max_trials=max_trials, tolerance=tolerance,
                scheme=scheme, t_policy=t_policy, progress=progress)
    achieved, trials, B, L, H, W, comps_used = state
    return HidingResult(
        release=B, achieved=achieved, trials=trials,
        side_effect_rate=side_effect_rate(truth, L, confidential), truth=truth, labels=L,
        confidential=confidential, search=search, seconds=time.perf_counter() - t0, components=comps_used,
        H=H, W=W, offset=sh.offset_, scale=sh.scale_, goals=_goals_met(L, truth, members, pairs),
    )


def _release(sh: NonnegativeShift, H: np.ndarray, W: np.ndarray) -> np.ndarray:
    return sh.inverse_transform(H @ W)


def _ok(L: np.ndarray, truth: np.ndarray, members: list[MemberRequest], pairs: list[PairRequest],
        confidential: list[int], tolerance: float) -> bool:
    if not all(g["achieved"] for g in _goals_met(L, truth, members, pairs)):
        return False
    return side_effect_rate(truth, L, confidential) <= tolerance + 1e-12


def _nmf(Z: np.ndarray, K: int, seeds: np.random.SeedSequence, solver: str, tol: float, max_iter: int
         ) -> tuple[np.ndarray, np.ndarray]:
    child = seeds.spawn(1)[0]
    res = factorize(Z, K, solver=solver, tol=tol, max_iter=max_iter,
                    random_state=np.random.default_rng(child))
    return res.H, res.W


def _paper(X, Z, sh, protocol, truth, centroids, members, pairs, confidential, K, seeds, *, solver, tol,
           max_iter, max_trials, tolerance, scheme, t_policy, progress):  # type: ignore[no-untyped-def]
    best = None
    for trial in range(1, max_trials + 1):
        H, W = _nmf(Z, K, seeds, solver, tol, max_iter)
        Hh = H.copy()
        for req in members:
            Hh[req.record] = scheme1(Hh[req.record])
        for p in pairs:
            Hh[p.y] = scheme2(Hh[p.x], Hh[p.y], t_policy) if scheme == 2 else scheme3(Hh[p.x], Hh[p.y])
        B = _release(sh, Hh, W)
        L = protocol.labels(B)
        if progress is not None:
            progress(trial, max_trials)
        if _ok(L, truth, members, pairs, confidential, tolerance):
            return True, trial, B, L, Hh, W, K
        score = _score(L, truth, members, pairs, confidential)
        if best is None or score < best[0]:
            best = (score, B, L, Hh, W)
    assert best is not None
    return False, max_trials, best[1], best[2], best[3], best[4], K


def _score(L, truth, members, pairs, confidential) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    missed = sum(not g["achieved"] for g in _goals_met(L, truth, members, pairs))
    return missed, side_effect_rate(truth, L, confidential)


def _nearest(rows: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    d = (rows**2).sum(axis=1)[:, None] - 2.0 * rows @ centroids.T + (centroids**2).sum(axis=1)[None, :]
    return np.argmin(d, axis=1)


def _desired(B: np.ndarray, truth: np.ndarray, centroids: np.ndarray, members: list[MemberRequest],
             pairs: list[PairRequest]) -> np.ndarray:
    """The cluster each record should end in: its own, or the requested one for confidential records."""
    want = truth.copy()

    def nearest_other(r: int, avoid: int) -> int:
        d = ((centroids - B[r]) ** 2).sum(axis=1)
        d[avoid] = np.inf
        return int(np.argmin(d))

    for req in members:
        want[req.record] = req.target if req.target is not None else nearest_other(req.record, truth[req.record])
    for p in pairs:
        was = truth[p.x] == truth[p.y]
        together = (not was) if p.together is None else p.together
        want[p.y] = want[p.x] if together else (
            nearest_other(p.y, want[p.x]) if want[p.y] == want[p.x] else want[p.y])
    return want


def _min_moves(rows: np.ndarray, H: np.ndarray, hc: np.ndarray, W: np.ndarray, want: np.ndarray,
               sh: NonnegativeShift, centroids: np.ndarray, steps: int = 30) -> np.ndarray:
    """Smallest lambda in [0, 1] per row with nearest-centroid(row of ((1-l) H + l hc[want]) W) == want.

    Returns NaN where even lambda = 1 does not reach the wanted cluster.
    """
    src, dst, w = H[rows], hc[want[rows]], want[rows]

    def hits(lam: np.ndarray) -> np.ndarray:
        moved = (1 - lam)[:, None] * src + lam[:, None] * dst
        return _nearest(sh.inverse_transform(moved @ W), centroids) == w

    lo, hi = np.zeros(len(rows)), np.ones(len(rows))
    reach = hits(hi)
    for _ in range(steps):
        mid = (lo + hi) / 2
        h = hits(mid)
        hi = np.where(h, mid, hi)
        lo = np.where(h, lo, mid)
    return np.where(reach, hi, np.nan)


def _targeted(X, Z, sh, protocol, truth, centroids, members, pairs, confidential, K, seeds, *, solver, tol,
              max_iter, max_trials, tolerance, scheme, t_policy, progress):  # type: ignore[no-untyped-def]
    n, m = X.shape
    trials = 0
    best = None
    k = K
    while trials < max_trials:
        H, W = _nmf(Z, k, seeds, solver, tol, max_iter)
        hc = nnls_rows(sh.transform(centroids).clip(min=0.0), W)  # factor vectors of the reference centroids
        B0 = _release(sh, H, W)
        want = _desired(B0, truth, centroids, members, pairs)
        lam = np.zeros(n)
        wrong = np.flatnonzero(_nearest(B0, centroids) != want)
        stuck = False
        if len(wrong):
            need = _min_moves(wrong, H, hc, W, want, sh, centroids)
            lam[wrong] = np.minimum(1.0, np.nan_to_num(need, nan=1.0) + _MARGIN)
        while trials < max_trials and not stuck:
            Hh = (1 - lam)[:, None] * H + lam[:, None] * hc[want]
            B = _release(sh, Hh, W)
            L = protocol.labels(B)
            trials += 1
            if progress is not None:
                progress(trials, max_trials)
            if _ok(L, truth, members, pairs, confidential, tolerance):
                return True, trials, B, L, Hh, W, k
            score = _score(L, truth, members, pairs, confidential)
            if best is None or score < best[0]:
                best = (score, B, L, Hh, W, k)
            off = np.flatnonzero(L != want)
            if len(off) == 0 or np.all(lam[off] >= 1.0):
                stuck = True
                break
            lam[off] = np.minimum(1.0, lam[off] + np.maximum(0.1, 0.5 * (1.0 - lam[off])))
        if stuck:
            k = min(k + 1, min(n, m))  # a richer basis can represent the target centroids better
    assert best is not None
    return False, trials, best[1], best[2], best[3], best[4], best[5]
