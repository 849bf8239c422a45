"""Execution backends: ``'numpy'`` (in memory, the default) and ``'dask'`` (partitioned, out of core, or on a
cluster).

This module never imports dask; :func:`load` imports :mod:`ppdm.backends._dask` on demand and raises an
``ImportError`` naming the extra (``pip install 'ppdm[dask]'``) when dask is missing.

What the dask backend covers today: thin SVD (blockwise Gram reduction for tall-skinny data, TSQR or
compressed randomized SVD otherwise), sparsified SVD, structural partition, additive and
multiplicative noise, column projections and rotation, NMF (``hals``, ``mu``, ``als``;
:mod:`ppdm.backends._nmf`), stream updates of append-only and refresh-capable states
(:mod:`ppdm.backends._stream`), K-means, the value distortion metrics and record linkage on a seeded
sample (:func:`ppdm.backends._dask.evaluate`).

Extending it (the pattern every partitioned mechanism follows): a pass is a list of per-partition
tasks ``f(partition_df, ...)`` returning small mergeable results, combined on the client; the release
is one :class:`ppdm.backends._blockwise.PartitionRelease` applied to each partition with the global
position of its first row. Iterative methods keep per-partition state on the workers (futures, as the
NMF factor rows) and exchange only small reductions per iteration.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from ppdm.exceptions import ParameterError

__all__ = ["BACKENDS", "check_backend", "dask_available", "load"]

BACKENDS = ("numpy", "dask")


def check_backend(name: object) -> str:
    """The backend name, or a :class:`ParameterError` naming the choices."""
    if name not in BACKENDS:
        raise ParameterError(f"backend must be one of {', '.join(BACKENDS)}; got {name!r}")
    return str(name)


def dask_available() -> bool:
    """True when dask (array and dataframe) and distributed can be imported."""
    return all(importlib.util.find_spec(m) is not None for m in ("dask", "distributed", "pyarrow"))


def load(name: str) -> ModuleType:
    """The implementation module of a non-numpy backend (imported now)."""
    check_backend(name)
    if name == "numpy":
        raise ParameterError("the numpy backend is the in-memory code itself (ppdm.pipeline); nothing to load")
    try:
        return importlib.import_module("ppdm.backends._dask")
    except ImportError as e:
        raise ImportError(
            f"backend='dask' needs dask and distributed ({e}); install them with: pip install 'ppdm[dask]'"
        ) from None
