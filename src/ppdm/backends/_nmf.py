"""Partitioned NMF: the iteration of :func:`ppdm.mechanisms.nmf_solvers.factorize` with the record
factors kept where the rows are.

The table ``A ~ H W`` has one factor row of ``H`` per record, so ``H`` is cut like the table: each
partition keeps its block of ``A`` and of ``H^T`` in the workers' memory (the block must fit in the
cluster's memory) and, per iteration, updates its ``H`` block and returns the small reductions
``H^T H`` (K x K) and ``H^T A`` (K x m). The basis ``W`` (K x m) is updated on the client by the very
functions of the in-memory solver. Only ``W`` and ``W W^T`` travel to the workers, wrapped so that a
failing task's log does not show them.

Solvers: ``mu`` and ``als`` update every record's factors independently (one round trip per
iteration); ``hals`` stops its coordinate sweeps on a table-wide criterion, so each sweep is a round
trip. ``pg`` (Lin's projected gradients) searches one step size for the whole factor, a round trip per
trial, and is not offered here. The random initialisation draws the same numbers as the in-memory
one: partition ``p`` starting at row ``s`` advances the generator by ``s K`` draws.

Nothing here imports dask: :class:`Runner`-like objects (``map``, ``split``) come from the backend.
"""

from __future__ import annotations

import copy
import time
from typing import Any, Protocol

import numpy as np

from ppdm.backends._blockwise import Hidden
from ppdm.exceptions import InputError, ParameterError
from ppdm.mechanisms.nmf_solvers import (
    als_step,
    hals_stop,
    hals_sweep,
    hoyer_sparseness,
    mu_step,
    projgrad_sq,
    subproblem,
)

__all__ = ["DASK_SOLVERS", "fit_nmf"]

#: NMF solvers with a partitioned form (``pg`` needs a table-wide line search)
DASK_SOLVERS = ("hals", "mu", "als")
_CHECK_EVERY = 5  # as the in-memory solver
_INNER_SWEEPS = 10
_ALS_EPS = 1e-9


class Runner(Protocol):
    def map(self, fn: Any, *lists: Any, **kwargs: Any) -> list[Any]: ...

    def split(self, pairs: list[Any]) -> tuple[list[Any], list[Any]]: ...

    def gather(self, items: list[Any]) -> list[Any]: ...


# ------------------------------------------------------------------------------ partition tasks


def _scan(Z: np.ndarray) -> tuple[int, int, np.ndarray, np.ndarray]:
    """Zero rows (count, first local position) and column min/max of one block of the NMF input."""
    zero = np.flatnonzero(~Z.any(axis=1))
    m = Z.shape[1]
    lo = Z.min(axis=0) if len(Z) else np.full(m, np.inf)
    hi = Z.max(axis=0) if len(Z) else np.full(m, -np.inf)
    return len(zero), int(zero[0]) if len(zero) else -1, lo, hi


def _start(Z: np.ndarray, start: int, K: int, seed: Hidden, basis: Hidden, l1: float,
           shift: tuple[np.ndarray, np.ndarray] | None) -> tuple[dict[str, np.ndarray], tuple]:
    """Shift the block, draw its rows of the initial H and return the initial reductions."""
    A = (Z - shift[0]) / shift[1] if shift is not None else Z
    bg = np.random.PCG64(seed.value)
    bg.advance(start * K)  # the rows before this block drew start * K uniforms (one 64-bit draw each)
    Ht = np.ascontiguousarray(np.random.Generator(bg).uniform(size=(len(A), K)).T)
    W, Gw = basis.value
    grad = Gw @ Ht - (W @ A.T - l1)
    small = (float(np.einsum("ij,ij->", A, A)), Ht @ Ht.T, Ht @ A, projgrad_sq(grad, Ht),
             float(np.sum(grad**2)))
    return {"A": A, "Ht": Ht}, small


def _h_update(st: dict[str, np.ndarray], basis: Hidden, solver: str, check: bool, l1: float,
              scale: np.ndarray | None) -> tuple[dict[str, np.ndarray], tuple]:
    """One H step of ``mu``/``als`` on a block, then its ``H^T H`` and ``H^T A``."""
    W, Gw = basis.value
    A, Ht = st["A"], st["Ht"]
    if scale is not None:  # the previous W normalisation moved its scale into H
        Ht = Ht * scale[:, None]
    Rw = W @ A.T - l1
    pg_h = projgrad_sq(Gw @ Ht - Rw, Ht) if check else 0.0
    Ht = mu_step(Ht, Gw, Rw) if solver == "mu" else als_step(Gw, Rw)
    return {"A": A, "Ht": Ht}, (pg_h, Ht @ Ht.T, Ht @ A)


def _hals_first(st: dict[str, np.ndarray], basis: Hidden, check: bool,
                l1: float) -> tuple[dict[str, np.ndarray], tuple]:
    W, Gw = basis.value
    A, Ht = st["A"], st["Ht"].copy()
    Rw = W @ A.T - l1
    pg_h = projgrad_sq(Gw @ Ht - Rw, Ht) if check else 0.0
    return {"A": A, "Ht": Ht, "R": Rw}, (pg_h, hals_sweep(Ht, Gw, Rw))


def _hals_more(st: dict[str, np.ndarray], basis: Hidden) -> tuple[dict[str, np.ndarray], float]:
    _, Gw = basis.value
    Ht = st["Ht"].copy()
    return {"A": st["A"], "Ht": Ht, "R": st["R"]}, hals_sweep(Ht, Gw, st["R"])


def _reduce(st: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], tuple]:
    Ht = st["Ht"]
    return {"A": st["A"], "Ht": Ht}, (0.0, Ht @ Ht.T, Ht @ st["A"])


def _rescale(st: dict[str, np.ndarray], scale: np.ndarray) -> dict[str, np.ndarray]:
    return {"A": st["A"], "Ht": st["Ht"] * scale[:, None]}


def _abs_sums(st: dict[str, np.ndarray], order: np.ndarray) -> np.ndarray:
    return np.abs(st["Ht"][order]).sum(axis=1)


def _factors(st: dict[str, np.ndarray], order: np.ndarray, thresholds: np.ndarray | None) -> tuple[np.ndarray, tuple]:
    """The block's released factor rows (sorted, sparsified) and their sums for the Hoyer sparseness."""
    H = np.ascontiguousarray(st["Ht"].T)[:, order]
    if thresholds is not None:
        H = np.where(np.abs(H) < thresholds[None, :], 0.0, H)
    return H, (float(np.abs(H).sum()), float(np.einsum("ij,ij->", H, H)))


# ----------------------------------------------------------------------------------- the driver


def _sum(items: list[Any], i: int) -> Any:
    return sum((it[i] for it in items[1:]), start=items[0][i])


def _objective(a2: float, G0: np.ndarray, raw: np.ndarray, W: np.ndarray) -> float:
    return float(np.sqrt(max(a2 - 2.0 * float(np.sum(W * raw)) + float(np.sum(G0 * (W @ W.T))), 0.0)))


def _check(mech: Any, n: int, m: int) -> tuple[int, int]:
    K, r = mech._validate(n, m)
    if mech.solver not in DASK_SOLVERS:
        raise ParameterError(f"NMF solver '{mech.solver}' has no partitioned form (it searches one step size over "
                             f"the whole table); use --nmf-solver {', '.join(DASK_SOLVERS)} with --backend dask, "
                             "or --backend numpy")
    if mech.init != "random":
        raise ParameterError(f"NMF init '{mech.init}' needs a full SVD of the table; use init='random' with "
                             "--backend dask, or --backend numpy")
    return K, r


def fit_nmf(mech: Any, run: Runner, Z: list[Any], starts: list[int], n: int, m: int, seed: int) -> list[Any]:
    """Fit an :class:`ppdm.mechanisms.nmf.NMF` on the partitioned input blocks ``Z`` (handles).

    ``starts`` are the blocks' first positions among the ``n`` factorised rows. Sets the mechanism's
    fitted attributes except ``factors_`` and returns the per-block handles of the released factor rows.
    """
    from ppdm.mechanisms.sparsified import column_thresholds

    K, r = _check(mech, n, m)
    tol, max_iter, limit = float(mech.tol), int(mech.max_iter), float(mech.time_limit)
    l1, l2, solver = float(mech.l1), float(mech.l2), mech.solver
    scans = run.gather(run.map(_scan, Z))
    zeros = [(s0 + sc[1]) for sc, s0 in zip(scans, starts, strict=True) if sc[0]]
    if zeros:
        raise InputError(f"{sum(sc[0] for sc in scans)} row(s) are all zeros (first: row {zeros[0] + 1}); NMF gives "
                         "them no factor vector; drop those rows first")
    lo = np.min([sc[2] for sc in scans], axis=0)
    hi = np.max([sc[3] for sc in scans], axis=0)
    shift = None
    mech.offset_, mech.scale_, mech.shifted_ = np.zeros(m), np.ones(m), bool((lo < 0).any())
    if mech.shifted_:  # as NonnegativeShift
        if not mech.shift:
            raise InputError("the table has negative values and NMF needs nonnegative data; "
                             "enable the shift (shift=True) or shift the columns first")
        span = hi - lo
        mech.offset_, mech.scale_ = lo, np.where(span == 0, 1.0, span)
        shift = (mech.offset_, mech.scale_)

    t0 = time.perf_counter()
    bg = np.random.PCG64(seed)
    bg.advance(n * K)  # W0 follows the n x K uniforms of H0 in the in-memory draw
    W = np.random.Generator(bg).uniform(size=(K, m))
    eye = l2 * np.eye(K)
    Gw = W @ W.T + eye
    st, small = run.split(run.map(_start, Z, starts, K=K, seed=Hidden(seed), basis=Hidden((W, Gw)), l1=l1,
                                  shift=shift))
    small = run.gather(small)
    a2 = sum(s_[0] for s_ in small)
    G0, raw = _sum(small, 1), _sum(small, 2)
    Gh, Rh = G0 + eye, raw - l1
    initial_objective = _objective(a2, G0, raw, W)
    grad_sq = projgrad_sq(Gh @ W - Rh, W) + sum(s_[3] for s_ in small)
    init_full = float(np.sqrt(np.sum((Gh @ W - Rh) ** 2) + sum(s_[4] for s_ in small)))
    init_grad = init_full if init_full > 0 else 1.0
    tol_w = max(0.001, tol) * init_grad
    pg = float(np.sqrt(grad_sq))
    prev_obj = initial_objective
    scale: np.ndarray | None = None
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        if pg < tol * init_grad or time.perf_counter() - t0 > limit:
            n_iter -= 1
            break
        check = n_iter % _CHECK_EVERY == 0
        key = Hidden((W, Gw))
        if solver == "hals":
            st, small = run.split(run.map(_hals_first, st, basis=key, check=check, l1=l1))
            small = run.gather(small)
            pg_h = sum(s_[0] for s_ in small)
            first = moved = sum(s_[1] for s_ in small)
            sweeps = 1
            while not hals_stop(moved, first) and sweeps < _INNER_SWEEPS:
                st, moves = run.split(run.map(_hals_more, st, basis=key))
                moved, sweeps = sum(run.gather(moves)), sweeps + 1
            st, small = run.split(run.map(_reduce, st))
            small = run.gather(small)
        else:
            st, small = run.split(run.map(_h_update, st, basis=key, solver=solver, check=check, l1=l1, scale=scale))
            small = run.gather(small)
            pg_h = sum(s_[0] for s_ in small)
            scale = None
        G0, raw = _sum(small, 1), _sum(small, 2)
        Gh, Rh = G0 + eye, raw - l1
        pg_w = projgrad_sq(Gh @ W - Rh, W) if check else 0.0
        W, tol_w = subproblem(solver, W, Gh, Rh, tol_w, _INNER_SWEEPS)
        if solver == "mu":
            s = W.sum(axis=1)
            s[s == 0] = 1.0
            W /= s[:, None]  # rows of W sum to 1; H absorbs the scale (on the workers, next step)
            scale = s
            G0, raw = G0 * np.outer(s, s), raw * s[:, None]
            Gh, Rh = G0 + eye, raw - l1
        elif solver == "als":
            norms = np.linalg.norm(W, axis=1)
            norms[norms == 0] = 1.0
            W = np.maximum(W / norms[:, None], _ALS_EPS)
        Gw = W @ W.T + eye
        if check:
            pg = float(np.sqrt(pg_h + pg_w))
            if solver in ("hals", "als"):
                obj = _objective(a2, G0, raw, W)
                if prev_obj - obj <= tol * prev_obj:
                    break
                prev_obj = obj
    final_obj = _objective(a2, G0, raw, W)
    if scale is not None:
        st = run.map(_rescale, st, scale=scale)

    # components by energy ||H_k|| ||W_k||, as the in-memory mechanism
    order = np.argsort(-(np.sqrt(np.diag(G0)) * np.linalg.norm(W, axis=1)), kind="stable")
    W = W[order]
    thresholds = None
    if mech.sparsify is not None:
        from ppdm.mechanisms.sparsified import sparsify
        from ppdm.utils.validation import check_real

        alpha = 1.0 / K if mech.alpha is None else check_real(mech.alpha, "alpha", low=0.0, low_open=True)
        mean_abs = np.zeros(K)
        if mech.sparsify != "sts":
            mean_abs = np.sum(run.gather(run.map(_abs_sums, st, order=order)), axis=0) / n
        mech.h_thresholds_ = column_thresholds(mean_abs[None, :], float(mech.eps_h), mech.sparsify, alpha)
        mech.w_thresholds_ = column_thresholds(W.T, float(mech.eps_w), mech.sparsify, alpha)
        W = sparsify(W.T, mech.w_thresholds_).T
        thresholds = mech.h_thresholds_
    H, sums = run.split(run.map(_factors, st, order=order, thresholds=thresholds))
    sums = run.gather(sums)
    l1_h, l2_h = sum(s_[0] for s_ in sums), float(np.sqrt(sum(s_[1] for s_ in sums)))
    size = n * K
    mech.sparseness_h_ = (0.0 if size < 2 or l2_h == 0
                          else float((np.sqrt(size) - l1_h / l2_h) / (np.sqrt(size) - 1)))
    mech.components_, mech.n_features_in_ = W, m
    mech.objective_, mech.initial_objective_, mech.n_iter_ = final_obj, initial_objective, n_iter
    mech.keep_, mech.solver_ = r, solver
    mech.sparseness_w_ = hoyer_sparseness(W)
    return H


def without_factors(mech: Any) -> Any:
    """A copy of a fitted NMF for the workers: the basis only (the factor rows travel per partition)."""
    lite = copy.copy(mech)
    lite.__dict__.pop("factors_", None)
    return lite
