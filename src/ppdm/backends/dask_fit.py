"""Fitting a mechanism on partitioned data: SVD factors from a Gram matrix or dask's SVD, and the linear
operators and keys the partitions are then released with."""

from __future__ import annotations

from typing import Any

import dask
import dask.array as da
import numpy as np

from ppdm.backends._blockwise import ColumnStats, Hidden, scaled_gram
from ppdm.backends.dask_cluster import compute
from ppdm.backends.dask_table import Runner, part_abs_u, part_block_matrix
from ppdm.exceptions import ParameterError

__all__ = ["Fitter", "fused_operator", "gather_factors", "linear_key"]


_GRAM_SIDE = 4096  # as the in-memory backend: the Gram route while the small side stays below this


def _svd_factors(G: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    from ppdm.utils.linalg import svd_flip_v

    w, V = np.linalg.eigh(G)
    w, V = w[::-1][:k], V[:, ::-1][:, :k]
    _, Vt = svd_flip_v(V.T)
    return np.sqrt(np.clip(w, 0.0, None)), Vt


def _dask_svd(Z: da.Array, k: int, solver: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """TSQR (``exact``) or compressed randomized SVD of a lazy matrix; signs as the in-memory backend."""
    from ppdm.utils.linalg import svd_flip_v

    if solver == "exact":
        _, s, Vt = da.linalg.svd(Z.rechunk({1: -1}))
    else:
        _, s, Vt = da.linalg.svd_compressed(Z, k, n_power_iter=4, seed=seed % 2**32)
    s, Vt = dask.compute(s[:k], Vt[:k])
    _, Vt = svd_flip_v(np.asarray(Vt))
    return np.asarray(s), Vt


class Fitter:
    """Fits a mechanism from the statistics of its block (and, when needed, extra passes)."""

    def __init__(self, parts: list[Any], released: list[str], starts: list[int], local_rows: list[Any],
                 client: Any) -> None:
        self.parts, self.released, self.starts, self.local_rows, self.client = parts, released, starts, \
            local_rows, client
        self.factors: list[Any] | None = None  # NMF: per-partition handles of the released factor rows

    def block_array(self, cols: np.ndarray, offset: np.ndarray, scale: np.ndarray, lengths: list[int]) -> da.Array:
        m = len(cols)
        blocks = [da.from_delayed(dask.delayed(part_block_matrix, pure=False)(p, self.released, r, cols, offset,
                                                                            scale), shape=(n, m), dtype=float)
                  for p, r, n in zip(self.parts, self.local_rows, lengths, strict=True) if n > 0]
        return da.concatenate(blocks, axis=0)

    def svd(self, mech: Any, st: ColumnStats, cols: np.ndarray, offset: np.ndarray, scale: np.ndarray,
            lengths: list[int]) -> tuple[np.ndarray, np.ndarray, str, np.ndarray]:
        from ppdm.mechanisms.base import seed_from
        from ppdm.utils.linalg import SVD_SOLVERS
        from ppdm.utils.validation import check_choice, check_rank

        n, m = st.n, len(cols)
        k = check_rank(mech.rank, n, m)
        solver = check_choice(mech.solver, "solver", SVD_SOLVERS)
        G = scaled_gram(st, offset, scale)
        if solver == "auto":
            solver = "gram" if m <= _GRAM_SIDE and n >= m else "randomized"
        if solver == "gram":
            s, Vt = _svd_factors(G, k)
            return s, Vt, "gram", G
        Z = self.block_array(cols, offset, scale, lengths)
        used = "exact" if solver == "exact" else "randomized"
        s, Vt = _dask_svd(Z, k, used, seed_from(mech.random_state))
        return s, Vt, f"dask-{'tsqr' if used == 'exact' else 'compressed'}", G

    def fit(self, mech: Any, st: ColumnStats, cols: np.ndarray, offset: np.ndarray, scale: np.ndarray,
            lengths: list[int]) -> Any:
        from ppdm.mechanisms.nmf import NMF
        from ppdm.mechanisms.noise import AdditiveNoise, MultiplicativeNoise
        from ppdm.mechanisms.projection import RandomProjection, RandomRotation
        from ppdm.mechanisms.sparsified import SparsifiedSVD
        from ppdm.mechanisms.svd import ThinSVD

        m = len(cols)
        if isinstance(mech, ThinSVD):
            s, Vt, used, G = self.svd(mech, st, cols, offset, scale, lengths)
            if used == "gram":
                return mech.fit_from_gram(G, st.n)
            mech.n_features_in_, mech.components_, mech.singular_values_, mech.solver_ = m, Vt, s, used
            return mech
        if isinstance(mech, SparsifiedSVD):
            return self._fit_sparsified(mech, st, cols, offset, scale, lengths)
        if isinstance(mech, NMF):
            return self._fit_nmf(mech, st, cols, offset, scale, lengths)
        if isinstance(mech, RandomProjection) and mech.kind in ("rpa", "rpoa"):
            raise ParameterError(f"projection kind '{mech.kind}' mixes records (an n x n matrix) and has no "
                                 "partitioned form; use kind='arp' or 'arpo', or --backend numpy")
        if isinstance(mech, (RandomProjection, RandomRotation, AdditiveNoise, MultiplicativeNoise)):
            # these draw their key from the seed and the column count only
            mech.fit(np.zeros((2, m)))
            if isinstance(mech, RandomProjection):
                mech.n_rows_ = st.n
            return mech
        raise ParameterError(f"{type(mech).__name__} has no Dask implementation yet; use --backend numpy")

    def _fit_nmf(self, mech: Any, st: ColumnStats, cols: np.ndarray, offset: np.ndarray, scale: np.ndarray,
                 lengths: list[int]) -> Any:
        from ppdm.backends._nmf import fit_nmf
        from ppdm.mechanisms.base import seed_from

        run = Runner(self.client)
        # the preprocessed block stays in the workers' memory for the iterations
        Z = run.persist([dask.delayed(part_block_matrix, pure=False)(p, self.released, r, cols, offset, scale)
                         for p, r in zip(self.parts, self.local_rows, strict=True)])
        starts = [int(s) for s in np.cumsum([0, *lengths[:-1]])]
        self.factors = fit_nmf(mech, run, Z, starts, st.n, len(cols), seed_from(mech.random_state))
        return mech

    def _fit_sparsified(self, mech: Any, st: ColumnStats, cols: np.ndarray, offset: np.ndarray,
                        scale: np.ndarray, lengths: list[int]) -> Any:
        from ppdm.mechanisms.sparsified import STRATEGIES, column_thresholds, sparsify
        from ppdm.utils.validation import check_choice, check_real

        check_choice(mech.strategy, "strategy", STRATEGIES)
        eps_u = check_real(mech.eps_u, "eps_u", low=0.0, high=1.0, high_open=True)
        eps_v = check_real(mech.eps_v, "eps_v", low=0.0, high=1.0, high_open=True)
        s, Vt, used, _ = self.svd(mech, st, cols, offset, scale, lengths)
        k = len(s)
        alpha = 1.0 / k if mech.alpha is None else check_real(mech.alpha, "alpha", low=0.0, low_open=True)
        mean_abs_u = np.zeros(k)
        if mech.strategy != "sts":
            tasks = [dask.delayed(part_abs_u, pure=False)(p, self.released, r, cols, offset, scale,
                                                                   Hidden((Vt, s)))
                     for p, r in zip(self.parts, self.local_rows, strict=True)]
            mean_abs_u = np.sum(compute(tasks, "column means of |U|", self.client), axis=0) / st.n
        mech.n_features_in_ = len(cols)
        mech.components_, mech.singular_values_, mech.solver_ = Vt, s, used
        # thresholds of a matrix whose column means of |.| are mean_abs_u: the in-memory formula, reused
        mech.u_thresholds_ = column_thresholds(mean_abs_u[None, :], eps_u, mech.strategy, alpha)
        mech.v_thresholds_ = column_thresholds(Vt.T, eps_v, mech.strategy, alpha)
        mech.sparse_components_ = sparsify(Vt.T, mech.v_thresholds_).T
        return mech


def gather_factors(handles: list[Any], client: Any, n: int, k: int) -> np.ndarray:
    """Every row's NMF factors on the client (for the state file or a lazy release): ``8 n k`` bytes."""
    from ppdm.utils.validation import check_memory

    check_memory(8.0 * n * k, f"the NMF factors of {n} rows", "write the release with -o and no --state")
    return np.vstack(Runner(client).gather(handles))


def fused_operator(P: np.ndarray, offset: np.ndarray, scale: np.ndarray, units: str) -> tuple[np.ndarray, np.ndarray]:
    """``((X - off) / sc) @ P`` (mapped back with ``* sc + off``) as ``X @ M + b``; as ppdm.pipeline."""
    if units == "original":
        M = (P / scale[:, None]) * scale[None, :]
        return M, offset - offset @ M
    M = P / scale[:, None]
    return M, -(offset / scale) @ P


def linear_key(mech: Any) -> np.ndarray | None:
    from ppdm.mechanisms.projection import RandomProjection

    if isinstance(mech, RandomProjection):
        return mech.projection_
    op = getattr(mech, "linear_operator", None)
    return op() if op is not None else None
