"""Library functions behind the NMDS commands."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ppdm.data.io import check_output_path, read_table
from ppdm.data.schema import resolve_schema
from ppdm.exceptions import ParameterError

__all__ = ["dims_sweep"]


def dims_sweep(source: str | os.PathLike[str] | pd.DataFrame, *, dissimilarity: str = "euclidean",
               max_dims: int | None = None, max_rows: int = 600, plot: str | os.PathLike[str] | None = None,
               id: str | None = None, label: str | None = None, drop: Sequence[str] = (), seed: int = 0,
               force: bool = False, sep: str | None = None) -> dict[str, Any]:
    """Stress-vs-p sweep of a table (z-scored numeric columns, or the frame for gower/huang) + PNG."""
    import numpy as np

    from ppdm.data.preprocess import Scaler
    from ppdm.distances.pairwise import MIXED
    from ppdm.mds.dims import plot_sweep, stress_sweep

    png = None
    if isinstance(source, (str, os.PathLike)):
        png = Path(plot) if plot is not None else Path(str(source) + ".mds-dims.png")
        png = check_output_path(png, inputs=[source], force=force, what="plot")
    elif plot is not None:
        png = check_output_path(Path(plot), force=force, what="plot")
    if max_dims is not None and int(max_dims) < 1:
        raise ParameterError(f"max_dims={max_dims} must be at least 1; give --max-dims 1 or more")
    df = read_table(source, sep=sep)
    schema = resolve_schema(df, id=id, label=label, drop=drop, allow_categorical=dissimilarity in MIXED)
    m = len(schema.released)
    top = max(1, m - 1) if max_dims is None else max(1, int(max_dims))
    dims = list(range(1, top + 1))
    rows = min(len(df), int(max_rows))
    from ppdm.utils.memory import check_memory

    # one NMDS of the sample: ~20 bytes a pair, plus an n x n double-centred matrix for mixed dissimilarities
    check_memory(20.0 * rows * (rows - 1) / 2 + (16.0 * rows * rows if dissimilarity != "euclidean" else 0.0),
                 f"the stress sweep on {rows} rows", "sample fewer rows: --max-rows 600 (max_rows=600 in Python)")
    frame = df[list(schema.released)].reset_index(drop=True)
    from ppdm.pipeline import check_magnitude

    check_magnitude(frame.select_dtypes("number").to_numpy(dtype=np.float64))
    if dissimilarity in MIXED:
        res = stress_sweep(None, dims, dissimilarity=dissimilarity, data=frame, max_rows=max_rows,
                           random_state=seed)
    else:
        X = schema.matrix(df)
        Z = Scaler("zscore").fit_transform(X)
        res = stress_sweep(np.asarray(Z), dims, dissimilarity=dissimilarity, max_rows=max_rows,
                           random_state=seed)
    res["default"] = max(1, m - 1)
    res["plot"] = str(plot_sweep(res, png)) if png is not None else None
    return res
