"""The table a release sweep works on: read, its columns' roles, its design matrix, its label and shown columns.

:func:`prepare_table` is the first step of ``ppdm release`` wherever it runs: on this machine, or on a Dask
worker that reads a large Parquet input itself (then only its small results travel back; see
:mod:`ppdm.release.cluster`). Both make the same :class:`Prepared` from the same file and arguments.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Prepared", "TableSpec", "check_sweep_memory", "label_text", "original_utility", "majority_pct",
           "prepare_table", "shown_text", "side_digest"]


@dataclass(frozen=True)
class TableSpec:
    """How to read a table and give its columns roles: the arguments of ``ppdm release`` that do so."""

    source: Any
    sep: str | None = None
    id: str | None = None
    label: str | None = None
    columns: Sequence[str] | None = None
    drop: Sequence[str] = ()
    roles: str | dict[str, str] | None = None


@dataclass
class Prepared:
    """A table made ready for the sweep.

    ``df``: what is left of the frame (a numeric table's released columns live on in ``X`` only); ``X``: the
    design; ``y``: the label as text (None when it cannot be measured: ``label_note`` says why);
    ``categories``: the columns shown unperturbed beside the release, as text; ``side``: a digest of both;
    ``folds``: real records held out for the train-on-release test (None: none); ``repeats``: a small table's
    further splits of every row for that test (:func:`~ppdm.release.utility.repeat_folds`); ``cfg``: the
    configuration as the table adapts it (its objective, the preprocessing of a whole table).
    """

    df: pd.DataFrame
    infos: Any
    codec: Any
    schema: Any
    X: np.ndarray
    y: np.ndarray | None
    label_note: str | None
    cfg: Any
    shown: list[str]
    categories: np.ndarray
    fingerprint: str
    side: str
    folds: list[tuple[np.ndarray, np.ndarray]] | None
    table_fingerprint: dict[str, Any] | None = None  # the table as read (the state records it)
    repeats: list[tuple[np.ndarray, np.ndarray]] | None = None


#: the fewest records any sweep can hold out folds of (a rank-one SVD of a fold needs four)
MIN_RELEASE_ROWS = 4


def check_release_rows(n: int, policy: Any) -> None:
    """Refuse a table too small for the policy's limits to be measured on it.

    One record re-identified or linked is ``1 / n`` of the table: below ``1 / limit`` records no measurement can
    show that a release holds the limit (a release of 5 records met the default 5 % limits, every number in it a
    real person's), and below :data:`MIN_RELEASE_ROWS` every candidate fails.
    """
    from math import ceil

    from ppdm.exceptions import InputError

    limits = {"re-identification": policy.max_reidentification, "linkability": policy.max_linkability}
    what, limit = min(limits.items(), key=lambda kv: kv[1])
    need = max(MIN_RELEASE_ROWS, ceil(1.0 / limit - 1e-9) if limit > 0 else MIN_RELEASE_ROWS)
    if n >= need:
        return
    if need == MIN_RELEASE_ROWS or limit <= 0:
        raise InputError(f"the table has {n} records; a release needs at least {MIN_RELEASE_ROWS}")
    raise InputError(f"the table has {n} records: one of them is {1 / n:.0%} of the table, above the policy's "
                     f"{limit:.0%} limit on {what}, so no measurement can show that a release holds it; release "
                     f"at least {need} records, or relax the limits (--max-reid and --max-linkability, or "
                     "policy.max_* in --config)")


def prepare_table(spec: TableSpec, cfg: Any, *, seed: int, screen_above: int, workers: int | None = None,
                  frame: pd.DataFrame | None = None, whole: bool | None = None) -> Prepared:
    """Read ``spec.source`` and make everything the sweep needs of it.

    ``seed``: the evaluation seed (the held-out folds); ``screen_above``: above this many rows one split holds
    out the test records, below it disjoint folds are pooled (passed in, so that a worker decides as the
    machine that asked it). A table the sweep's workers cannot hold is refused: ``workers`` candidates at a
    time (None: ``cfg.n_jobs`` worker processes of this machine). ``frame``: the table already read (a part
    of a release by parts, see :mod:`ppdm.release.parts`), taken over as it is instead of reading ``spec.source``;
    ``whole``: whether the table is released whole (through the codec) as its first part was (None: decided
    here).
    """
    from ppdm.data.columns import (
        announce_columns,
        check_cells,
        dropped_columns,
        infer_columns,
        is_whole_table,
        parse_roles,
    )
    from ppdm.data.io import read_table
    from ppdm.data.schema import resolve_schema
    from ppdm.release.source import design_fingerprint
    from ppdm.release.utility import holdout_folds, holdout_split, random_folds, repeat_folds
    from ppdm.utils.memory import give_back

    df = read_table(spec.source, sep=spec.sep) if frame is None else frame
    from ppdm.data.fingerprint import table_fingerprint

    read_as = table_fingerprint(df)  # before a numeric table's columns leave the frame
    id, label = spec.id, spec.label
    infos = infer_columns(df, id=id, label=label, drop=spec.drop, roles=parse_roles(spec.roles))
    check_cells(df, infos)
    if frame is None:  # a part of a release by parts is one of many: the whole table was checked
        check_release_rows(len(df), cfg.policy)
    codec = None
    whole_here = spec.columns is None and is_whole_table(df, infos)
    if whole is False and whole_here:
        from ppdm.exceptions import InputError

        raise InputError("a part of the table needs the whole-table release (it has gaps) where its first part "
                         "did not (a column with very few gaps); release it with a larger --part-rows, or fill "
                         "those gaps first")
    if spec.columns is None and (whole_here if whole is None else whole):
        from ppdm.data.codec import TableCodec
        from ppdm.data.schema import Schema, check_unique_ids

        check_unique_ids(df, id)  # a repeated id would get one pseudonym for two records
        with np.errstate(over="ignore", invalid="ignore"):  # huge values: refused by name just below
            codec = TableCodec(infos).fit(df)
        from ppdm.utils.validation import check_magnitude

        check_magnitude(codec.numbers(df), codec.numeric_names)  # named here; the sweep sees a z-scored design
        kept = {i.name for i in codec.infos}
        schema = Schema(tuple(map(str, df.columns)), tuple(c for c in map(str, df.columns) if c in kept), id, label,
                        (), tuple(c for c in map(str, df.columns) if c not in kept and c not in (id, label)))
        X = codec.encode(df)
        # the codec z-scores the numbers and weights the indicators itself: the mechanisms see its design as is
        cfg = cfg.model_copy(update={"preprocess": "none"})
        check_sweep_memory(len(df), X.shape[1], cfg.n_jobs if workers is None else workers)
    else:
        # free text and identifiers other than --id never reach a release (the column list says why)
        dropped = dropped_columns(infos, spec.drop)
        schema = resolve_schema(df, columns=spec.columns, id=id, label=label, drop=dropped)
        check_sweep_memory(len(df), len(schema.released), cfg.n_jobs if workers is None else workers)
        # the released numbers live on in X: the frame keeps only what reaches the release unchanged (each
        # column leaves it as it is copied, so a million-row table is held once, not twice, meanwhile)
        X = schema.matrix(df, consume=True)
        give_back()  # the consumed columns' buffers
        from ppdm.utils.validation import check_magnitude

        check_magnitude(X, schema.released)
    announce_columns(infos, len(X))  # once the table is accepted: a refusal stays one line
    y = label_text(df[label]) if label else None
    label_note = None
    if y is not None:
        counts = pd.Series(y).value_counts()
        if len(counts) < 2 or counts.min() < 2:
            why = "has one class" if len(counts) < 2 else "has classes with a single record"
            label_note = (f"the label '{label}' {why}: class-based utility is not measurable, so nearest-neighbour "
                          "preservation is the objective (the label is released as it is)")
            y = None
    policy = cfg.policy
    if policy.objective == "tstr":
        # the train-on-release measure that suits the table: logistic regression on one-hot categories and
        # standardised numbers for whole tables, k-NN for numeric ones
        policy = policy.model_copy(update={"objective": "tstr_logreg_pct" if codec is not None and
                                           codec.categorical_names else "tstr_knn_pct"})
    if policy.objective != "neighbour_pct" and y is None:  # no label: no classifier to measure
        policy = policy.model_copy(update={"objective": "neighbour_pct"})
    # every column that reaches the release unperturbed (passed through, and the label) is attacked too
    shown = [c for c in (*schema.passthrough, *([schema.label] if schema.label else [])) if c in df.columns]
    categories = shown_text(df, shown)
    # real records held out of a second fit of each candidate: utility as an analyst gets it; on a large
    # table one split holds out thousands of records, a small one pools disjoint folds
    folds = repeats = None
    if y is not None and len(X) <= screen_above:
        folds = holdout_folds(y, seed=seed)
        repeats = repeat_folds(y, folds, seed=seed)
    elif y is not None and (split := holdout_split(y, seed=seed)) is not None:
        folds = [split]
    elif y is None:
        # no label to train on, but the tests of anonymisation still need real people outside a release
        folds = random_folds(len(X), seed=seed, many=len(X) <= screen_above)
    if not folds and policy.objective in ("tstr_knn_pct", "tstr_logreg_pct"):
        policy = policy.model_copy(update={"objective": "knn_pct" if y is not None else "neighbour_pct"})
    return Prepared(df=df, infos=infos, codec=codec, schema=schema, X=X, y=y, label_note=label_note,
                    cfg=cfg.model_copy(update={"policy": policy}), shown=shown, categories=categories,
                    fingerprint=design_fingerprint(X, schema.released),
                    side=side_digest(y, categories).hexdigest(), folds=folds or None, table_fingerprint=read_as,
                    repeats=repeats)


def original_utility(X: np.ndarray, y: np.ndarray | None, folds: Any, seed: int, codec: Any) -> dict[str, float]:
    """The utility of the original table itself, measured as every candidate's is (the yardstick)."""
    from ppdm.release.utility import pooled, utility_scores

    scores = utility_scores(X, y, seed=seed) if y is not None else {}
    scores["neighbour_pct"] = 100.0
    if folds and y is not None:
        numeric = None if codec is None else codec.numeric_index_
        scores.update(pooled([(len(te), _original_tstr(X, y, tr, te, seed, numeric)) for tr, te in folds]))
        scores["majority_pct"] = majority_pct(y, folds)
    return scores


def majority_pct(y: np.ndarray, folds: Any) -> float:
    """The share of the commonest class among the folds' held-out records (in %): what always guessing it
    scores, the floor of a label's accuracy."""
    tested = np.concatenate([te for _, te in folds])
    return 100.0 * float(pd.Series(np.asarray(y)[tested].astype(str)).value_counts(normalize=True).max())


def _original_tstr(X: np.ndarray, y: Any, train: np.ndarray, test: np.ndarray, seed: int,
                   numeric: np.ndarray | None) -> dict[str, float]:
    """The train-on-release models trained on the original's ``train`` rows: the rows they learn from are
    taken first (at most ``TSTR_TRAIN_SAMPLE``), not a copy of every training row."""
    from ppdm.release.utility import TSTR_TRAIN_SAMPLE, stratified_sample, tstr_scores

    fit = stratified_sample(y[train], TSTR_TRAIN_SAMPLE, seed)
    rows = train if fit is None else train[fit]
    return tstr_scores(X[rows], y[rows], X[test], y[test], seed=seed, numeric=numeric)


def label_text(col: pd.Series) -> np.ndarray:
    """The label as fixed-width text (each class's name as ``str`` gives it): a million labels of a few
    classes take a few MB, where Python strings take a hundred."""
    if col.dtype == object:  # text as pandas writes it (None as 'None')
        col = col.astype(str)
    codes, classes = pd.factorize(col, use_na_sentinel=False)
    return np.asarray([str(c) for c in classes], dtype=str)[codes]


def shown_text(df: pd.DataFrame, shown: Sequence[str]) -> np.ndarray:
    """``df[shown].astype(str).to_numpy()``, each distinct value one shared ``str``: a million rows of a few
    values take 8 bytes a cell, not a Python string each."""
    out = np.empty((len(df), len(shown)), dtype=object)
    for j, c in enumerate(shown):
        col = df[c].astype(str) if df[c].dtype == object else df[c]  # None and NaN stay apart ('None', 'nan')
        codes, uniques = pd.factorize(col, use_na_sentinel=False)
        out[:, j] = pd.Series(uniques, dtype=col.dtype).astype(str).to_numpy(dtype=object)[codes]
    return out


def side_digest(y: np.ndarray | None, categories: np.ndarray) -> Any:
    """A digest of the label and the columns shown beside the release, a column at a time (a million
    rows' values are never joined into one text)."""
    h = hashlib.sha256(json.dumps([y is None, list(categories.shape)]).encode())
    for col in ([] if y is None else [y]) + [categories[:, j] for j in range(categories.shape[1])]:
        h.update("\x1f".join(map(str, col)).encode())
        h.update(b"\x1e")
    return h


#: dense n x m working arrays per sweep worker (a candidate release, its attacks and utility scores)
_WORKER_COPIES = 14


def check_sweep_memory(n: int, m: int, n_jobs: int) -> None:
    """Every sweep worker holds a candidate and its attacks: refuse a sweep that cannot fit, naming the fix."""
    from ppdm.exceptions import ResourceError
    from ppdm.release.scheduler import local_workers
    from ppdm.utils.memory import check_dense

    workers = local_workers(n_jobs)
    fix = ("release on fewer workers: --jobs 1" if workers > 1 else
           "the sweep holds every candidate in memory; release this table with ppdm perturb --backend dask")
    try:
        check_dense(n, m, 2 + _WORKER_COPIES * workers, f"a release sweep of {n} x {m} on {workers} worker(s)", fix)
    except ResourceError:
        if workers == 1:
            raise
        # one worker may still fit: then --jobs 1 is the fix, otherwise only dask is
        check_dense(n, m, 2 + _WORKER_COPIES, f"a release sweep of {n} x {m}",
                    "the sweep holds every candidate in memory; release this table with ppdm perturb --backend dask")
        raise
