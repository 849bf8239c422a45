"""The Dask backend: partitioned, out-of-core and distributed releases.

This module is what :func:`ppdm.backends.load` returns: it checks that dask is installed (one clear error
otherwise) and gathers the backend from its parts, the only modules that import dask: the cluster
(:mod:`~ppdm.backends.dask_cluster`), partitioned tables (:mod:`~ppdm.backends.dask_table`), fitting
(:mod:`~ppdm.backends.dask_fit`), releasing (:mod:`~ppdm.backends.dask_release`) and evaluating
(:mod:`~ppdm.backends.dask_evaluate`).


A release reads the table partition by partition, at most three times:

1. one pass of mergeable column statistics per partition (count, mean, centred cross-products,
   min, max, non-finite cells, partition lengths) -> the preprocessing and, for the SVD family, the
   ``m x m`` Gram matrix of the preprocessed data (the tall-skinny route, the same algebra as the
   in-memory backend);
2. only for column/exponential-threshold sparsified SVD (column means of ``|U|``) or a row block of a
   structural partition: one more reduction;
3. one release pass: each partition is released by a small :class:`PartitionRelease` object and
   written as one Parquet file of a temporary directory, renamed to the output when every part is done.

Only small things cross the network: the statistics back to the client, and to each worker the fitted
release object (the ``m x m`` operator, or the fitted mechanism with its key, or the noise seed).
Tasks get random keys (``pure=False``), so no key material is hashed into a task name.
"""

from __future__ import annotations

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
    import dask.dataframe  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the dask backend needs dask and distributed; install them with: pip install 'ppdm[dask]'"
    ) from e

from ppdm.backends.dask_cluster import CONNECT_TIMEOUT, compute, connect
from ppdm.backends.dask_evaluate import (
    LINKAGE_SAMPLE,
    as_array,
    evaluate,
    kmeans_accuracy,
    linkage_sample,
    lloyd_kmeans,
    value_metrics,
)
from ppdm.backends.dask_release import perturb
from ppdm.backends.dask_table import check_dask_output, column_stats, open_table, part_write, publish

__all__ = ["connect", "open_table", "perturb", "evaluate", "value_metrics", "lloyd_kmeans", "kmeans_accuracy",
           "linkage_sample", "as_array", "column_stats", "compute", "check_dask_output", "part_write", "publish",
           "LINKAGE_SAMPLE", "CONNECT_TIMEOUT"]
