"""``perturb`` on the Dask backend: the arguments and outputs of :func:`ppdm.pipeline.perturb`, executed
partition by partition."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from ppdm.backends._blockwise import PartitionRelease, scaler_from_stats
from ppdm.backends.dask_cluster import compute, connect
from ppdm.backends.dask_fit import Fitter, fused_operator, gather_factors, linear_key
from ppdm.backends.dask_table import (
    check_dask_output,
    column_stats,
    open_table,
    part_block_stats,
    part_release,
    part_write,
    publish,
)
from ppdm.exceptions import InputError, ParameterError

__all__ = ["perturb"]


def _record_block(spec: str | None, id_col: str | None, found: dict[str, int], n: int) -> int | list[int] | None:
    """Record block of a structural partition, resolved as the in-memory backend does (ids or 1..n)."""
    if spec is None:
        return None
    spec = spec.strip()
    if id_col is None:  # records are named 1..n, as in the in-memory backend
        pos_of = {t: int(t) - 1 for t in (x.strip() for x in spec.split(","))
                  if t.isdigit() and 1 <= int(t) <= n and str(int(t)) == t}
    else:
        pos_of = found

    def known(t: str) -> bool:
        return t in pos_of
    if spec.isdigit() and not known(spec):
        return int(spec)
    pos = []
    for token in (t.strip() for t in spec.split(",") if t.strip()):
        if not known(token):
            raise InputError(f"record '{token}' is not in the table; check the names (or give a count)")
        pos.append(pos_of[token])
    return pos


def _tokens(spec: str | None) -> tuple[str, ...]:
    return tuple(t.strip() for t in spec.split(",") if t.strip()) if spec else ()


def perturb(
    source: str | os.PathLike[str] | pd.DataFrame | np.ndarray,
    *,
    method: str = "svd",
    params: dict[str, Any] | None = None,
    id: str | None = None,
    label: str | None = None,
    columns: Sequence[str] | None = None,
    drop: Sequence[str] = (),
    drop_other: bool = False,
    preprocess: str = "zscore",
    release_units: str = "original",
    partition_rows: str | None = None,
    partition_columns: str | None = None,
    output: str | os.PathLike[str] | None = None,
    state: str | os.PathLike[str] | None = None,
    force: bool = False,
    seed: int | None = 0,
    sep: str | None = None,
    scheduler: str | None = None,
    npartitions: int | None = None,
    key: Any = None,
    keep_ids: bool = True,
) -> Any:
    """Release a table on Dask; the arguments are those of :func:`ppdm.pipeline.perturb`.

    ``key`` (a :class:`ppdm.keys.ReleaseKey`) goes to the state; unless ``keep_ids``, the rows of every
    partition are shuffled and the ids replaced by keyed pseudonyms (partitions stay in order).

    The release goes to ``output`` as a directory of Parquet files (one per input partition, in row
    order). Without ``output`` the returned ``release`` is a lazy dask DataFrame.
    """
    from ppdm import registry
    from ppdm.data.columns import numbers_schema
    from ppdm.data.io import check_output_path
    from ppdm.data.preprocess import PREPROCESSING
    from ppdm.flow.arrays import check_magnitude
    from ppdm.flow.artifacts import PerturbResult, record_positions, save_release_state
    from ppdm.mechanisms.base import keep_key_secret
    from ppdm.mechanisms.noise import AdditiveNoise, MultiplicativeNoise
    from ppdm.utils.validation import check_choice

    check_choice(preprocess, "preprocess", PREPROCESSING)
    check_choice(release_units, "release_units", ("original", "preprocessed"))
    out_path = check_dask_output(output, source, force) if output is not None else None
    inputs = [source] if isinstance(source, (str, os.PathLike)) else []
    state_path = check_output_path(state, inputs=inputs, force=force, what="state file") if state else None
    if out_path is not None and state_path is not None and out_path.resolve() == state_path.resolve():
        raise ParameterError("the release and the state file must be different paths")
    from ppdm.data.io import output_lock

    # one writer at a time per output set, as in memory
    with output_lock(out_path, state_path), connect(scheduler) as conn:
        t0 = time.perf_counter()
        client = conn["client"]
        ddf, head = open_table(source, sep=sep, npartitions=npartitions)
        # the schema's treatment, judged on the first rows: free text and identifiers dropped (stderr says why)
        schema, say = numbers_schema(head, columns=columns, id=id, label=label, drop=drop, drop_other=drop_other,
                                     how="the dask backend releases numbers only")
        released = list(schema.released)
        mech = keep_key_secret(registry.build(method, params, random_state=seed))
        tokens = _tokens(partition_rows) if schema.id is not None else ()
        need = released + ([schema.id] if tokens and schema.id not in released else [])
        res, total = column_stats(ddf[need].to_delayed(), released, schema.id, tokens, client,
                                  hint=", or leave them out with --drop")
        lengths = [r[0].n for r in res]
        n, m = total.n, len(released)
        if n < 2:
            raise InputError(f"the table has {n} data row; a release needs at least two rows")
        check_magnitude(np.vstack([total.lo, total.hi]), released)
        starts = list(np.cumsum([0, *lengths[:-1]]).astype(int))
        scaler = scaler_from_stats(preprocess, total)

        from ppdm.mechanisms.partition import StructuralPartition

        top = mech
        rows_all: np.ndarray | None = None
        cols = np.arange(m)
        wrap = partition_rows is not None or partition_columns is not None
        if wrap and isinstance(mech, StructuralPartition):
            raise ParameterError("method 'partition' already names its block; drop --partition-rows/--partition-"
                                 "columns or choose the inner method with --method")
        if wrap or isinstance(mech, StructuralPartition):
            if wrap:
                found: dict[str, int] = {}
                for (_, where), s0 in zip(res, starts, strict=True):
                    found.update({t: s0 + i for t, i in where.items()})
                r = _record_block(partition_rows, schema.id, found, n)
                c = record_positions(partition_columns, released, "column")
                scheme = "both" if r is not None and c is not None else ("rows" if r is not None else "columns")
                top = StructuralPartition(mech, scheme=scheme, rows=r, columns=c)
            top._resolve(n, m)
            scheme = top.scheme
            top.n_rows_, top.n_features_in_ = n, m
            cols = top.columns_
            if scheme != "columns":
                rows_all = top.rows_
            mech = top._inner()
        local_rows: list[np.ndarray | None] = [None] * len(lengths)
        if rows_all is None:
            block, block_lengths = total.subset(cols), lengths
        else:
            local_rows = [rows_all[np.searchsorted(rows_all, s0):np.searchsorted(rows_all, s0 + L)] - s0
                          for s0, L in zip(starts, lengths, strict=True)]
            tasks = [dask.delayed(part_block_stats, pure=False)(p, released, lr, cols)
                     for p, lr in zip(ddf[released].to_delayed(), local_rows, strict=True)]
            stats = compute(tasks, "block statistics", client)
            block = stats[0]
            for s_ in stats[1:]:
                block = block.merge(s_)
            block_lengths = [len(lr) for lr in local_rows]  # type: ignore[arg-type]
        fitter = Fitter(ddf[released].to_delayed(), released, starts, local_rows, client)
        mech = fitter.fit(mech, block, cols, scaler.offset_[cols], scaler.scale_[cols], block_lengths)
        if top is not mech:
            top.mechanism_ = mech

        from ppdm.keys import release_key

        key = key if key is not None else release_key(seed)
        rel = PartitionRelease(schema, scaler, release_units, mechanism=mech,
                               columns=None if top is mech else cols, identity_key=None if keep_ids else key)
        if isinstance(mech, (AdditiveNoise, MultiplicativeNoise)):
            rel.noise_seed = int(mech.seed_)
        elif top is mech and (P := linear_key(mech)) is not None:
            rel.operator = fused_operator(P, scaler.offset_, scaler.scale_, release_units)
            rel.mechanism = None
        facs: list[Any] = [None] * len(lengths)
        if fitter.factors is not None:  # NMF releases its own factor rows, which stay per partition
            from ppdm.backends._nmf import without_factors

            rel.mechanism = without_factors(mech)
            if out_path is None or state_path is not None:
                mech.factors_ = gather_factors(fitter.factors, client, block.n, mech.components_.shape[0])
                # a lazy release must outlive a local cluster: its tasks get the rows' factors themselves
                if out_path is None:
                    facs = np.split(mech.factors_, np.cumsum(block_lengths)[:-1])
            if out_path is not None:
                facs = fitter.factors
        parts = ddf.to_delayed()
        if len(parts) != len(lengths):
            raise InputError("the input's partitions changed between two passes (was it modified while ppdm read "
                             "it?); rerun on a stable copy")
        from ppdm.keys import Identity

        # the within-partition permutations are regenerated from the key; ids align through the pseudonyms
        identity = Identity(np.zeros(0, dtype=np.int64), kept=True) if keep_ids else None
        summary: dict[str, Any] = {"method": method, "backend": "dask", "cluster": conn["cluster"],
                                   "cluster_seconds": conn["seconds"], "n_rows": n, "n_released_columns": m,
                                   "n_partitions": len(parts), "preprocess": preprocess, "re": None,
                                   "key": key.describe(),
                                   "identity": {"layout": "linkable: original ids in the original row order "
                                                          "(--keep-ids)" if keep_ids else
                                                "rows shuffled within each partition"
                                                + (f", ids in '{schema.id}' replaced by keyed pseudonyms"
                                                   if schema.id else "") + "; the mapping is in the state file only"}}
        release: Any
        if out_path is None:
            meta = schema.assemble(head.iloc[:2].reset_index(drop=True), np.zeros((min(2, len(head)), m)))
            release = dd.from_delayed([dask.delayed(part_release, pure=False)(p, s0, L, lr, rel, f)
                                       for p, s0, L, lr, f in zip(parts, starts, lengths, local_rows, facs,
                                                                  strict=True)],
                                      meta=meta.iloc[:0])
        else:
            stage: Path | None = None
            tmp = Path(tempfile.mkdtemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent))
            try:
                from ppdm.data.io import dir_mode

                os.chmod(tmp, dir_mode())  # the user's umask, like any new directory
                tasks = [dask.delayed(part_write, pure=False)(p, s0, L, lr, rel, str(tmp), i, f)
                         for i, (p, s0, L, lr, f) in enumerate(zip(parts, starts, lengths, local_rows, facs,
                                                                   strict=True))]
                ss = np.sum(compute(tasks, "release", client), axis=0)
                if ss[2] > 0:
                    raise InputError("the release has non-finite values (the input is too close to overflow); "
                                     "rescale it")
                # the state (the key) is staged in full, the release put in place, and only then the state
                # replaces its predecessor: a failure leaves the earlier release and its state as they were
                if state_path is not None:
                    stage = state_path.with_name(f".{state_path.name}.{os.getpid()}.stage")
                    save_release_state(stage, top, scaler, schema, method=method, key=key, identity=identity)
                publish(tmp, out_path)
                if stage is not None:
                    os.replace(stage, state_path)
                    stage = None
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
                if stage is not None and stage.exists():
                    stage.unlink()
            summary["re"] = float(np.sqrt(ss[0] / ss[1])) if ss[1] > 0 else 0.0
            release = dd.read_parquet(str(out_path))  # lazy: nothing is read until used
        if out_path is None and state_path is not None:
            save_release_state(state_path, top, scaler, schema, method=method, key=key, identity=identity)
        summary["seconds"] = time.perf_counter() - t0
    say()  # what was dropped or passed through, once the release is made (a refusal stays one line)
    return PerturbResult(release, top, scaler, schema, summary, out_path, state_path)
