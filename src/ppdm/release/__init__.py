"""``ppdm release``: sweep mechanisms and parameters, attack every candidate, pick by policy, report.

The output directory receives ``release.csv`` (or ``.parquet``), ``release.json`` (the record: choice,
parameters, versions, data fingerprint, every metric and attack result; no rows, no keys),
``release.state`` (the secret state with the seed, owner-only) and ``report.html`` (self-contained). Everything is
written into a temporary sibling directory first and swapped into place in one step when complete: a run
killed at any instant leaves the previous release or the new one, never a mix (:mod:`ppdm.data.publish`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ppdm.exceptions import OutputError
from ppdm.release.config import ReleaseConfig, config_yaml, default_config, load_config
from ppdm.release.outputs import PPDM_FILES, ReleaseResult, write_outputs
from ppdm.release.stages import candidate_jobs, mark_choice, split_failed, sweep_notes
from ppdm.release.sweep import Cache, cache_root, screen_and_confirm, sweep_backend, sweep_workers
from ppdm.utils.memory import give_back

__all__ = ["ReleaseResult", "release", "load_config", "default_config", "config_yaml", "ReleaseConfig"]


def _check_output_dir(out: Path, inputs: Sequence[Path], force: bool) -> None:
    from ppdm.data.outputs import check_disjoint

    if out.exists() and not out.is_dir():
        raise OutputError(f"'{out}' exists and is not a directory; choose an output directory")
    check_disjoint([("output directory", out)], [("input table", s) for s in inputs])
    if out.is_dir():
        foreign = sorted(e.name for e in out.iterdir() if e.name not in PPDM_FILES)
        if foreign:
            shown = ", ".join(repr(f) for f in foreign[:3]) + (" ..." if len(foreign) > 3 else "")
            raise OutputError(f"output directory '{out}' holds files ppdm did not write ({shown}); choose an empty or "
                              "new directory (--force replaces only a previous release)")
        if any(out.iterdir()) and not force:
            raise OutputError(f"output directory '{out}' already holds files (a previous release?); pass --force "
                              "to replace it or choose another directory")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise OutputError(f"cannot create '{out}': its parent directory is missing or not writable")


def _check_part_rows(part_rows: int | None, backend: str, screen_above: int, source: object) -> None:
    from ppdm.exceptions import ParameterError
    from ppdm.release.source import parquet_files

    if part_rows is None:
        return
    if backend != "dask":
        raise ParameterError("--part-rows cuts a table for a Dask cluster's workers; add --backend dask")
    if parquet_files(source) is None:
        raise ParameterError("--part-rows cuts a Parquet input (a file or a directory of them), which the workers "
                             "read a part each; convert the table to Parquet, or leave --part-rows out")
    if isinstance(part_rows, bool) or not isinstance(part_rows, int) or part_rows < 2 * screen_above:
        raise ParameterError(f"--part-rows must be an integer of at least {2 * screen_above:,} (each part is "
                             f"screened on a sample, as a table of more than {screen_above:,} rows); got {part_rows}")


def _check_choice(choose: str | None, reason: str | None) -> None:
    from ppdm.exceptions import ParameterError

    if reason is not None and choose is None:
        raise ParameterError("--reason explains a steward's --choose; give the candidate with --choose NAME")
    if choose is not None:
        from ppdm.release.override import clean_reason

        clean_reason(reason)


def release(source: str | os.PathLike[str] | pd.DataFrame, *, output_dir: str | os.PathLike[str],
            **kwargs: Any) -> ReleaseResult:
    """Choose and write a release (see :func:`_release` for the parameters and the module for the outputs).

    One writer at a time per output directory: its lock is held for the whole run, and whatever a killed
    earlier run left behind is completed, rolled back or removed first (:mod:`ppdm.data.publish`).
    """
    from ppdm.data.io import output_lock
    from ppdm.data.outputs import check_disjoint
    from ppdm.data.publish import recover_directory

    out = Path(output_dir)
    if isinstance(source, (str, os.PathLike)):
        check_disjoint([("output directory", out)], [("input table", source)])
    with output_lock(out):
        # before anything is checked: a run without --force after a killed one still finishes its work
        recover_directory(out)
        return _release(source, output_dir=out, **kwargs)


def _release(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    output_dir: str | os.PathLike[str],
    config: ReleaseConfig | None = None,
    id: str | None = None,
    label: str | None = None,
    columns: Sequence[str] | None = None,
    force: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    progress: bool = True,
    sep: str | None = None,
    keep_ids: bool = False,
    escape_formulas: bool = False,
    roles: str | dict[str, str] | None = None,
    drop: Sequence[str] = (),
    backend: str = "numpy",
    scheduler: str | None = None,
    part_rows: int | None = None,
    full_battery: bool = False,
    choose: str | None = None,
    reason: str | None = None,
) -> ReleaseResult:
    """Choose and write a release. See the module docstring for the outputs.

    A table with categorical, boolean or date columns, or with gaps, is released whole: every column that
    is not the id, the label, free text or dropped is perturbed through one design matrix
    (:class:`ppdm.data.codec.TableCodec`), and comes back in its type, units and range; gaps stay gaps.
    ``roles`` overrides the inferred roles (``"notes=drop,diagnosis=sensitive"``).

    The release key comes from OS entropy unless ``config.seed`` is set (then the record says the release
    can be undone by whoever knows the seed). Unless ``keep_ids``, the written release has its rows
    shuffled and its ids replaced by keyed pseudonyms (the mapping is in ``release.state``).

    ``full_battery``: every candidate that holds the policy after the sweep's first pass is measured by the full
    battery (by default only those that can still be chosen are; see :mod:`ppdm.release.halving`).

    ``part_rows`` (with ``backend="dask"``): a Parquet input of more rows is released by parts of about this
    many rows (default :data:`ppdm.release.parts.PART_ROWS`), each read and released by one worker; the sweep
    measures the first part (see :mod:`ppdm.release.parts`).

    ``choose``: the data steward's candidate (its name, ``mdav(k=20)``) released in place of the policy's, with
    ``reason`` in words; the record names both choices and the reason (see :mod:`ppdm.release.override`).
    """
    import time

    from ppdm.attacks import ThreatModel
    from ppdm.keys import release_key, warn_known
    from ppdm.release.scale import ONE_FINALIST_ABOVE, SCREEN_ABOVE
    from ppdm.release.table import TableSpec, prepare_table

    started = time.perf_counter()
    timings: dict[str, float] = {}
    cfg = config or default_config()
    _check_part_rows(part_rows, backend, SCREEN_ABOVE, source)
    _check_choice(choose, reason)
    out = Path(output_dir)
    inputs = [Path(source)] if isinstance(source, (str, os.PathLike)) else []
    _check_output_dir(out, inputs, force)
    threat = ThreatModel.parse(cfg.threat)
    spec = TableSpec(source, sep=sep, id=id, label=label, columns=columns, drop=tuple(drop), roles=roles)
    evaluation_seed = 0 if cfg.seed is None else cfg.seed
    cache = Cache(cache_root(cache_dir) if use_cache else None)
    key = release_key(cfg.seed)
    with contextlib.ExitStack() as on_cluster:
        where = on_cluster.enter_context(sweep_backend(backend, scheduler))
        from ppdm.release.source import estimated_text_rows, parquet_rows, text_table

        rows = parquet_rows(source) if where is not None else None
        text = text_table(source) if where is not None and rows is None else None
        # a Parquet input of more rows than --part-rows asks for is released by parts, however small
        large = ONE_FINALIST_ABOVE if part_rows is None else min(ONE_FINALIST_ABOVE, part_rows)
        if (rows or 0) > large or (text is not None and estimated_text_rows(text) > ONE_FINALIST_ABOVE):
            # a large Parquet or text input on a cluster: its workers read it, sweep and write; this machine
            # holds samples and scores only (a text table's rows are counted by the worker that reads it)
            from ppdm.release.cluster import release_on_cluster

            if choose is not None:
                from ppdm.exceptions import ParameterError

                raise ParameterError("--choose is not available for a table released by the cluster's workers; "
                                     "choose through the policy's limits (--config)")
            done = release_on_cluster(spec, cfg, key, out, force, cache=cache, progress=progress, where=where,
                                      keep_ids=keep_ids, escape_formulas=escape_formulas, rows=rows,
                                      part_rows=part_rows)
            if done is not None:
                return done
        # a small table's sweep measures the original's utility on a worker that would wait
        yardstick: dict[str, Any] = {}
        prep = prepare_table(spec, cfg, seed=evaluation_seed, screen_above=SCREEN_ABOVE)
        timings["read and schema"] = round(time.perf_counter() - started, 3)
        warn_known(key)
        cfg, X, y, codec, folds = prep.cfg, prep.X, prep.y, prep.codec, prep.folds
        from ppdm.utils.threads import small_table_threads

        on_cluster.enter_context(small_table_threads(X.size))  # see ppdm.utils.threads
        jobs = candidate_jobs(cfg, cache, shape=X.shape, codec=codec, fingerprint=prep.fingerprint, label=label,
                              shown=prep.shown, side=prep.side)
        from ppdm.keys import MECHANISM_STREAM

        holdout = folds[0] if folds else None
        context = {"key_seed": key.seed(MECHANISM_STREAM), "columns": list(prep.schema.released),
                   "shown_names": list(prep.shown), "label_name": label,
                   "categories": prep.categories, "holdout": holdout, "seed_known": key.known, "codec": codec}
        if folds and len(folds) > 1:
            context["more_folds"] = folds[1:]
        if len(X) > SCREEN_ABOVE:
            # a large table: every candidate screened on a sample, the best confirmed on every row
            everything = screen_and_confirm(X, y, jobs, cfg, cache, progress, evaluation_seed, context)
        else:
            # a first pass over every candidate, the full battery for those that can still be chosen
            from ppdm.release.halving import staged_sweep
            from ppdm.release.trial import SweepTable

            table = SweepTable(X=X, y=y, codec=codec, shown=prep.categories, folds=folds,
                               columns=list(prep.schema.released), preprocess=cfg.preprocess, threat=cfg.threat,
                               seed=evaluation_seed, key_seed=context["key_seed"], seed_known=key.known,
                               objective=cfg.policy.objective, policy=cfg.policy, shown_names=tuple(prep.shown),
                               label_name=label, repeats=prep.repeats)
            everything = staged_sweep(table, jobs, cache, workers=sweep_workers(cfg), progress=progress,
                                      full=full_battery, timings=timings, yardstick=yardstick)
            del table
    # the rungs of an epsilon ladder that its ends made needless (see ppdm.release.ladder.ladder_rungs)
    not_measured = [c for c in everything if "not_measured" in c]
    failed, cands = split_failed([c for c in everything if "not_measured" not in c])
    from ppdm.release.table import original_utility

    if "utility" in yardstick:
        original = yardstick["utility"]
        timings["original utility (on a worker)"] = yardstick["seconds"]
    else:
        t0 = time.perf_counter()
        original = original_utility(X, y, [*(folds or ()), *(prep.repeats or ())], evaluation_seed, codec)
        timings["original utility"] = round(time.perf_counter() - t0, 3)
    note = sweep_notes(prep.label_note, n=len(X), y_rows=None if y is None else len(y), where=where,
                       confirmed_here=len(X) > ONE_FINALIST_ABOVE, folds=folds, repeats=prep.repeats)
    best = mark_choice(cands, cfg, shown=prep.shown, categories=prep.categories,
                       majority_pct=original.get("majority_pct"))
    choice = None
    if choose is not None:
        from ppdm.release.override import apply_choice

        best, choice = apply_choice(cands, best, choose, reason, cfg.policy)
    # the design goes to the last stage as its only holder, which frees it once the record is made: the
    # written release is then the one table-sized array left
    design = [X]
    # row-length vectors the sweep alone needed (the shown columns as text, the held-out folds' row numbers)
    # go before the chosen release is made beside the design
    df, schema, infos, fp, read_as = prep.df, prep.schema, prep.infos, prep.fingerprint, prep.table_fingerprint
    del X, prep, folds, holdout, context
    give_back()  # the sweep's freed working memory, before the chosen release is made from all rows
    return write_outputs(df, schema, design, y, cfg, threat, cands[best], cands, original, fp, out, force, inputs,
                          key=key, keep_ids=keep_ids, failed=failed, label_note=note,
                          escape_formulas=escape_formulas, codec=codec, infos=infos, timings=timings,
                          started=started, original_fingerprint=read_as, choice=choice,
                          not_measured=not_measured)
