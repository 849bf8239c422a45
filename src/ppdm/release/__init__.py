"""``ppdm release``: sweep mechanisms and parameters, attack every candidate, pick by policy, report.

The output directory receives ``release.csv`` (or ``.parquet``), ``release.json`` (the record: choice,
parameters, versions, data fingerprint, every metric and attack result; no rows, no keys),
``release.state`` (the secret state with the seed, owner-only) and ``report.html`` (self-contained). Everything is
written into a temporary sibling directory first and renamed into place when complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import OutputError, ParameterError, ResourceError
from ppdm.release.config import (
    DEFAULT_GRIDS,
    ReleaseConfig,
    config_yaml,
    default_config,
    load_config,
    skipped_defaults,
)
from ppdm.release.sweep import Cache, cache_root, run_sweep, screen_and_confirm, sweep_backend
from ppdm.utils.memory import give_back

__all__ = ["ReleaseResult", "release", "load_config", "default_config", "config_yaml", "ReleaseConfig"]


@dataclass(frozen=True)
class ReleaseResult:
    output_dir: Path
    record: dict[str, Any]


#: the files a release directory holds; --force replaces these and nothing else
PPDM_FILES = ("release.csv", "release.parquet", "release.json", "report.html", "release.state")


def _check_output_dir(out: Path, inputs: Sequence[Path], force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"'{out}' exists and is not a directory; choose an output directory")
    for src in inputs:
        if out.resolve() == src.resolve() or out.resolve() in src.resolve().parents:
            raise OutputError(f"output directory '{out}' holds the input file; choose another directory")
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


def _recover(out: Path) -> None:
    """Finish or roll back what a killed run left (called under the output's lock, so nobody else writes).

    Temporary directories of this output hold secrets (a state): they are removed. A previous release
    moved aside by a run that died before publishing the new one is put back.
    """
    parent = out.parent if str(out.parent) else Path(".")
    for tmp in parent.glob(f".{out.name}.*.tmp"):
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
    for old in sorted(parent.glob(f".{out.name}.old-*")):
        if old.is_dir() and not out.exists():
            os.replace(old, out)
        elif old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def _label_text(col: pd.Series) -> np.ndarray:
    """The label as fixed-width text (each class's name as ``str`` gives it): a million labels of a few
    classes take a few MB, where Python strings take a hundred."""
    if col.dtype == object:  # text as pandas writes it (None as 'None')
        col = col.astype(str)
    codes, classes = pd.factorize(col, use_na_sentinel=False)
    return np.asarray([str(c) for c in classes], dtype=str)[codes]


def _shown_text(df: pd.DataFrame, shown: Sequence[str]) -> np.ndarray:
    """``df[shown].astype(str).to_numpy()``, each distinct value one shared ``str``: a million rows of a few
    values take 8 bytes a cell, not a Python string each."""
    out = np.empty((len(df), len(shown)), dtype=object)
    for j, c in enumerate(shown):
        col = df[c].astype(str) if df[c].dtype == object else df[c]  # None and NaN stay apart ('None', 'nan')
        codes, uniques = pd.factorize(col, use_na_sentinel=False)
        out[:, j] = pd.Series(uniques, dtype=col.dtype).astype(str).to_numpy(dtype=object)[codes]
    return out


def _side_digest(y: np.ndarray | None, categories: np.ndarray) -> Any:
    """A digest of the label and the columns shown beside the release, a column at a time (a million
    rows' values are never joined into one text)."""
    h = hashlib.sha256(json.dumps([y is None, list(categories.shape)]).encode())
    for col in ([] if y is None else [y]) + [categories[:, j] for j in range(categories.shape[1])]:
        h.update("\x1f".join(map(str, col)).encode())
        h.update(b"\x1e")
    return h


def release(source: str | os.PathLike[str] | pd.DataFrame, *, output_dir: str | os.PathLike[str],
            **kwargs: Any) -> ReleaseResult:
    """Choose and write a release (see :func:`_release` for the parameters and the module for the outputs).

    One writer at a time per output directory: a lock beside it is held for the whole run, and whatever a
    killed earlier run left behind is cleaned or rolled back first.
    """
    from ppdm.data.io import output_lock

    out = Path(output_dir)
    with output_lock(out):
        _recover(out)
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
) -> ReleaseResult:
    """Choose and write a release. See the module docstring for the outputs.

    A table with categorical, boolean or date columns, or with gaps, is released whole: every column that
    is not the id, the label, free text or dropped is perturbed through one design matrix
    (:class:`ppdm.data.codec.TableCodec`), and comes back in its type, units and range; gaps stay gaps.
    ``roles`` overrides the inferred roles (``"notes=drop,diagnosis=sensitive"``).

    The release key comes from OS entropy unless ``config.seed`` is set (then the record says the release
    can be undone by whoever knows the seed). Unless ``keep_ids``, the written release has its rows
    shuffled and its ids replaced by keyed pseudonyms (the mapping is in ``release.state``).
    """
    from ppdm import __version__
    from ppdm.data.io import read_table
    from ppdm.data.schema import resolve_schema
    from ppdm.release.evaluate import (
        SCORING_VERSION,
        SVM_SAMPLE,
        TSTR_TRAIN_SAMPLE,
        UTILITY_SAMPLE,
        holdout_folds,
        holdout_split,
        pooled,
        utility_scores,
    )
    from ppdm.release.select import choose, pareto_front

    cfg = config or default_config()
    out = Path(output_dir)
    inputs = [Path(source)] if isinstance(source, (str, os.PathLike)) else []
    _check_output_dir(out, inputs, force)
    from ppdm.attacks import ThreatModel

    threat = ThreatModel.parse(cfg.threat)
    df = read_table(source, sep=sep)
    from ppdm.data.columns import infer_columns, is_whole_table, parse_roles

    infos = infer_columns(df, id=id, label=label, drop=drop, roles=parse_roles(roles))
    codec = None
    if columns is None and is_whole_table(df, infos):
        from ppdm.data.codec import TableCodec
        from ppdm.data.schema import Schema

        codec = TableCodec(infos).fit(df)
        kept = {i.name for i in codec.infos}
        schema = Schema(tuple(map(str, df.columns)), tuple(c for c in map(str, df.columns) if c in kept), id, label,
                        (), tuple(c for c in map(str, df.columns) if c not in kept and c not in (id, label)))
        X = codec.encode(df)
        # the codec z-scores the numbers and weights the indicators itself: the mechanisms see its design as is
        cfg = cfg.model_copy(update={"preprocess": "none"})
        _check_sweep_memory(len(df), X.shape[1], cfg.n_jobs)
    else:
        # free text and identifiers other than --id never reach a release (the column list says why)
        dropped = tuple(dict.fromkeys([*drop, *(i.name for i in infos if i.treatment.startswith("dropped"))]))
        schema = resolve_schema(df, columns=columns, id=id, label=label, drop=dropped)
        _check_sweep_memory(len(df), len(schema.released), cfg.n_jobs)
        # the released numbers live on in X: the frame keeps only what reaches the release unchanged (each
        # column leaves it as it is copied, so a million-row table is held once, not twice, meanwhile)
        X = schema.matrix(df, consume=True)
        give_back()  # the consumed columns' buffers
    y = _label_text(df[label]) if label else None
    label_note = None
    if y is not None:
        counts = pd.Series(y).value_counts()
        if len(counts) < 2 or counts.min() < 2:
            why = "has one class" if len(counts) < 2 else "has classes with a single record"
            label_note = (f"the label '{label}' {why}: class-based utility is not measurable, so nearest-neighbour "
                          "preservation is the objective (the label is released as it is)")
            y = None
    if cfg.policy.objective == "tstr":
        # the train-on-release measure that suits the table: logistic regression on one-hot categories and
        # standardised numbers for whole tables, k-NN for numeric ones
        auto = "tstr_logreg_pct" if codec is not None else "tstr_knn_pct"
        cfg = cfg.model_copy(update={"policy": cfg.policy.model_copy(update={"objective": auto})})
    if cfg.policy.objective != "neighbour_pct" and y is None:  # no label: no classifier to measure
        cfg = cfg.model_copy(update={"policy": cfg.policy.model_copy(update={"objective": "neighbour_pct"})})
    from ppdm.release.source import design_fingerprint, parquet_source

    fp = design_fingerprint(X, schema.released)
    from ppdm.keys import release_key, warn_known

    key = release_key(cfg.seed)
    warn_known(key)
    # every column that reaches the release unperturbed (passed through, and the label) is attacked too
    shown = [c for c in (*schema.passthrough, *([schema.label] if schema.label else [])) if c in df.columns]
    categories = _shown_text(df, shown)
    cache = Cache(cache_root(cache_dir) if use_cache else None)
    # the scores depend on the label's values and on every column shown beside the release, not only on X
    side = _side_digest(y, categories)
    jobs = []
    from ppdm.release.candidates import check_method, split_method

    for mg in cfg.methods:
        check_method(mg.method)
        default_grid = mg.grid == DEFAULT_GRIDS.get(mg.method)
        if default_grid and split_method(mg.method)[1] and (codec is None or not codec.categorical_names):
            continue  # a combined default candidate needs categories: on numbers alone it repeats its numeric part
        for params in mg.candidates():
            # default grids adapt to narrow tables; a grid the user wrote is checked as given
            if default_grid and isinstance(params.get("rank"), int) and params["rank"] >= min(X.shape):
                continue
            # a secret key is not part of the cache key: a cached score measured an equivalent draw
            payload = {"fp": fp, "method": mg.method, "params": params, "seed": cfg.seed, "pre": cfg.preprocess,
                       "threat": cfg.threat, "label": label, "shown": shown, "side": side.hexdigest(),
                       "objective": cfg.policy.objective, "v": SCORING_VERSION, "ppdm": __version__,
                       "whole_table": None if codec is None else codec.names}
            jobs.append((cache.key(payload), mg.method, params))
    if not jobs:
        raise ParameterError("no candidate fits a table this small; give --methods noise,rotation or a --config grid")
    from ppdm.keys import MECHANISM_STREAM

    evaluation_seed = 0 if cfg.seed is None else cfg.seed
    # real records held out of a second fit of each candidate: utility as an analyst gets it
    from ppdm.release.scale import SCREEN_ABOVE, SCREEN_ROWS

    # on a large table one split holds out thousands of records; a small one pools disjoint folds
    folds = split = None
    if y is not None and len(X) <= SCREEN_ABOVE:
        folds = holdout_folds(y, seed=evaluation_seed)
    elif y is not None and (split := holdout_split(y, seed=evaluation_seed)) is not None:
        folds = [split]
    holdout = folds[0] if folds else None
    if holdout is None and cfg.policy.objective in ("tstr_knn_pct", "tstr_logreg_pct"):
        cfg = cfg.model_copy(update={"policy": cfg.policy.model_copy(
            update={"objective": "knn_pct" if y is not None else "neighbour_pct"})})
    context = {"key_seed": key.seed(MECHANISM_STREAM), "columns": list(schema.released), "categories": categories,
               "holdout": holdout, "seed_known": key.known, "codec": codec}
    if folds and len(folds) > 1:
        context["more_folds"] = folds[1:]
    with sweep_backend(backend, scheduler) as where:
        if len(X) > SCREEN_ABOVE:
            # a large table: every candidate screened on a sample, the best confirmed on every row
            # on a cluster, the workers confirming a candidate read a Parquet input themselves
            design_source = parquet_source(source, schema, codec, fp, len(X)) if where is not None else None
            everything = screen_and_confirm(X, y, jobs, cfg, cache, progress, evaluation_seed, context,
                                            source=design_source)
        else:
            everything = run_sweep(X, y, jobs, cfg, cache, progress, evaluation_seed, context)
    failed = [c for c in everything if "failed" in c]
    cands = [c for c in everything if "failed" not in c]
    if not cands:
        c = failed[0]
        raise ParameterError(f"every candidate failed; the first, {c['method']} {c['params']}: {c['failed']}")
    original_utility = utility_scores(X, y, seed=evaluation_seed) if y is not None else {}
    original_utility["neighbour_pct"] = 100.0
    if folds:
        numeric = None if codec is None else codec.numeric_index_
        original_utility.update(pooled([(len(te), _original_tstr(X, y, tr, te, evaluation_seed, numeric))
                                        for tr, te in folds]))
        tested = np.concatenate([te for _, te in folds])
        original_utility["majority_pct"] = 100.0 * float(
            pd.Series(np.asarray(y)[tested].astype(str)).value_counts(normalize=True).max())
    notes = [label_note] if label_note else []
    if y is not None and len(y) > SVM_SAMPLE:
        # estimates, not exhaustive computation: say on how many rows each was measured
        rows = f"a seeded stratified sample of {UTILITY_SAMPLE} of {len(y)} rows" if len(y) > UTILITY_SAMPLE else (
            f"all {len(y)} rows")
        notes.append(f"cross-validated k-NN and K-means on {rows} (95 % interval about +-1.4 points at 5,000), the "
                     f"RBF SVM on {SVM_SAMPLE} of them (about +-2.2 points); train-on-release models learn from at "
                     f"most {TSTR_TRAIN_SAMPLE} released rows")
    if where is not None:
        from ppdm.release.scale import ONE_FINALIST_ABOVE

        # above ONE_FINALIST_ABOVE rows the confirmations run here unless the workers read a Parquet input
        read = any(c.get("measured_on", {}).get("design") for c in cands)
        here = "the chosen release was" if read or len(X) <= ONE_FINALIST_ABOVE else (
            "the confirmations on every row and the chosen release were")
        notes.append(f"the candidates were scored as tasks on a Dask cluster ({where})"
                     + ("; its workers read the Parquet input themselves to confirm candidates on every row"
                        if read else "") + f"; {here} computed here")
    if folds and len(folds) > 1:
        notes.append(f"train-on-release accuracy is pooled over {len(folds)} disjoint held-out folds "
                     f"({sum(len(te) for _, te in folds):,} real records tested, each against a release of the "
                     "other rows)")
    if len(X) > SCREEN_ABOVE:
        notes.append(f"{len(X):,} rows: every candidate was screened on a seeded sample of {SCREEN_ROWS:,} rows and "
                     "the best were confirmed on every row, attacked on a seeded sample of targets against all "
                     "records (each candidate's 'measured_on' says which)")
    label_note = "; ".join(notes) if notes else None
    objective = cfg.policy.objective
    best, reasons = choose(cands, cfg.policy, shown=shown, categories=categories)
    front = set(pareto_front(cands, objective))
    for i, c in enumerate(cands):
        c["pareto"] = i in front
        c["verdict"] = reasons[i]
        c["chosen"] = i == best
    chosen = cands[best]
    # the design goes to the last stage as its only holder, which frees it once the record is made: the
    # written release is then the one table-sized array left
    design = [X]
    # row-length vectors the sweep alone needed (the shown columns as text, the held-out folds' row numbers)
    # go before the chosen release is made beside the design
    del X, categories, folds, split, holdout, context
    give_back()  # the sweep's freed working memory, before the chosen release is made from all rows
    return _write_outputs(df, schema, design, y, cfg, threat, chosen, cands, original_utility, fp, out, force, inputs,
                          key=key, keep_ids=keep_ids, failed=failed, label_note=label_note,
                          escape_formulas=escape_formulas, codec=codec, infos=infos)


def _original_tstr(X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray, seed: int,
                   numeric: np.ndarray | None) -> dict[str, float]:
    """The train-on-release models trained on the original's ``train`` rows: the rows they learn from are
    taken first (at most ``TSTR_TRAIN_SAMPLE``), not a copy of every training row."""
    from ppdm.release.evaluate import TSTR_TRAIN_SAMPLE, stratified_sample, tstr_scores

    fit = stratified_sample(y[train], TSTR_TRAIN_SAMPLE, seed)
    rows = train if fit is None else train[fit]
    return tstr_scores(X[rows], y[rows], X[test], y[test], seed=seed, numeric=numeric)


#: dense n x m working arrays per sweep worker (a candidate release, its attacks and utility scores)
_WORKER_COPIES = 14


def _check_sweep_memory(n: int, m: int, n_jobs: int) -> None:
    """Every sweep worker holds a candidate and its attacks: refuse a sweep that cannot fit, naming the fix."""
    from joblib import effective_n_jobs

    from ppdm.utils.memory import check_dense

    workers = max(1, int(effective_n_jobs(n_jobs)))
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


def _write_outputs(df, schema, design, y, cfg, threat, chosen, cands, original_utility, fp, out, force, inputs, *,  # type: ignore[no-untyped-def]
                   key, keep_ids, failed, label_note=None, escape_formulas=False, codec=None, infos=()):
    """Release ``design.pop()`` (the design, handed over so that it can be freed here) with the chosen
    candidate, and write the release, its state, record and report."""
    import warnings

    from ppdm import __version__
    from ppdm.data.io import write_table
    from ppdm.flow.arrays import perturb_array
    from ppdm.flow.artifacts import identity_summary, save_release_state
    from ppdm.keys import MECHANISM_STREAM, hide_identity, release_order, shuffle_rows
    from ppdm.release.candidates import build_candidate, column_treatments, describe
    from ppdm.release.summary import plot_data, summary_text
    from ppdm.report import render_report

    X = design.pop()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mech = build_candidate(chosen["method"], chosen["params"], random_state=key.seed(MECHANISM_STREAM),
                               codec=codec)
        B, scaler = perturb_array(X, mech, preprocess=cfg.preprocess, y=y)
    give_back()  # the mechanism's freed working memory, before the figures and the assembly beside X and B
    if codec is not None:
        from ppdm.data.codec import mask_gaps

        gaps = codec.missing(df)
        from ppdm.release.evaluate import draws

        decoded = codec.decode_parts(B, rng=draws(key.seed(MECHANISM_STREAM), 0, 1))
        if codec.numeric_names:
            # the published table stands for the design and its release from here on (the figures read
            # its numbers): both design-sized arrays go before it is built
            X = B = None
        published = mask_gaps(codec.table(decoded), gaps, copy=False)
        whole = {c: (published[c].to_numpy() if c in published.columns else df[c].to_numpy())
                 for c in schema.columns if c not in schema.dropped}
        del published
        # views of the published columns (fresh arrays) and of the original's passed-through ones (never
        # written: identities are replaced in a copy of the rows, formulas escaped in a copy)
        assembled = pd.DataFrame(whole, index=range(len(df)), copy=False)
        del whole
        # the figures below compare numbers in their units: the published ones, as an analyst reads them (a
        # published gap as the column's median, as the original's)
        X_units, B_units = codec.numbers(df), codec.filled_numbers(decoded, gaps)
        del decoded
        unit_names = codec.numeric_names
    else:
        X_units, B_units, unit_names, gaps = X, B, list(schema.released), {}
    # what the record and the report need of the released numbers, taken now: the table-sized arrays are
    # dropped before the shuffled copy is made (a large release holds one copy of itself at a time)
    per_column_re = {c: float(np.linalg.norm(X_units[:, j] - B_units[:, j])
                              / max(np.linalg.norm(X_units[:, j]), 1e-300)) for j, c in enumerate(unit_names)}
    plots = (plot_data(X_units, B_units, y, unit_names, seed=0) if unit_names
             else plot_data(X, B, y, [f"d{j + 1}" for j in range(X.shape[1])], seed=0))
    in_order = False
    if codec is None:
        # the released numbers are shuffled where they are, and the frame views them: the release is held
        # once while it is assembled, shuffled and written
        order = None if keep_ids else release_order(key, len(B))
        if order is not None:
            shuffle_rows(B, order)
        assembled = schema.assemble(df, B, order=order, copy=False)
        in_order = order is not None
    del B, B_units, X_units
    # each column's distribution and each pair's association, original against published (the ids play no
    # part): measured before the ids are replaced, so the original's values can go first
    fid = _fidelity(df, assembled, codec, schema, X)
    n_rows = int(len(df))
    del X  # the original's values are not needed past this point
    released, identity = hide_identity(assembled, schema.id, key, keep_ids=keep_ids, in_order=in_order)
    del assembled
    from ppdm.data import formulas

    # text that reaches the release (passed through, or released categories) is checked for formulas
    numeric_out = set(unit_names) if codec is not None else set(schema.released)
    risky = formulas.formula_cells(released, [c for c in released.columns if c not in numeric_out])
    if risky and escape_formulas:
        released = formulas.escape_formulas(released, list(risky))
    record = {
        "ppdm_version": __version__,
        "input": {"fingerprint_sha256": fp, "n_rows": n_rows, "released_columns": list(schema.released),
                  "id": schema.id, "label": schema.label, "passthrough": list(schema.passthrough)},
        # the key regenerates the chosen mechanism's draws (noise, rotation): it stays in release.state
        "config": cfg.model_dump(mode="json", exclude={"seed"}) | {"seed": "in release.state (secret)"},
        "key": key.describe(),
        "identity": identity_summary(identity, schema.id),
        "threat": {"spec": cfg.threat, "description": threat.describe()},
        "policy": cfg.policy.model_dump(mode="json"),
        "original_utility": original_utility,
        **({"utility_note": label_note} if label_note else {}),
        **({"formula_cells": {"columns": risky, "escaped": bool(escape_formulas)}} if risky else {}),
        "chosen": {k: chosen[k] for k in ("method", "params", "value", "utility", "risk", "verdict")}
        | {"preprocess": cfg.preprocess, "candidate": describe(chosen["method"], chosen["params"])},
        # a formal guarantee of the published table (dp-copula): epsilon, delta and what it does not cover
        **({"guarantee": _guarantee(mech, cfg)} if callable(getattr(mech, "guarantee", None)) else {}),
        **({"skipped_methods": skipped} if (skipped := skipped_defaults()) else {}),
        "candidates": cands,
        # candidates that could not be scored, each with its one-line reason (the sweep went on without them)
        "failed_candidates": failed,
        "per_column_re": per_column_re,
        # each column's distribution and each pair's association, original against published
        "fidelity": fid,
        # every column of the input: its type, its role and what the release did with it (which mechanism)
        "columns": column_treatments(infos, codec, chosen["method"], chosen["params"],
                                     released=schema.released, passthrough=schema.passthrough),
        "whole_table": None if codec is None else {
            "numbers": codec.numeric_names, "categories": codec.categorical_names,
            "design": "numbers z-scored, categories one-hot (weight 1/sqrt 2); integers rounded, values kept "
                      "within each column's original range, dates as dates, categories among the original's",
            "missing_cells": {c: int(m.sum()) for c, m in gaps.items()}},
        "files": {"release": f"release.{cfg.output_format}", "state": "release.state (secret)",
                  "report": "report.html"},
    }
    record["summary"] = summary_text(record)
    parent = out.parent if str(out.parent) else Path(".")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    try:
        write_table(released, tmp / f"release.{cfg.output_format}")
        del released  # the release's values (the state and the report need none of them)
        give_back()
        save_release_state(tmp / "release.state", mech, scaler, schema, method=chosen["method"], key=key,
                           identity=identity)
        (tmp / "release.json").write_text(json.dumps(record, indent=1, default=_json_default))
        html = render_report(record, plots)
        (tmp / "report.html").write_text(html, encoding="utf-8")
        from ppdm.data.io import dir_mode

        os.chmod(tmp, dir_mode())  # the user's umask, like any new directory
        _replace_dir(tmp, out, force)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ReleaseResult(out, record)


def _guarantee(mech: Any, cfg: ReleaseConfig) -> dict[str, Any]:
    """The mechanism's own guarantee, with what the release around it adds outside the guarantee."""
    g = dict(mech.guarantee())
    extra = ["the scores in this record and the choice among the candidates (computed on the original table; "
             "the published table is a fresh fit of the chosen parameters)"]
    if cfg.preprocess != "none":
        extra.insert(0, f"the per-column statistics of the preprocessing ({cfg.preprocess}), computed on the table "
                        "and used to map the synthetic records back to its units")
    g["not_covered"] = [*g.get("not_covered", []), *extra]
    return g


def _fidelity(df: pd.DataFrame, released: pd.DataFrame, codec: Any, schema: Any,
              X: np.ndarray) -> dict[str, Any] | None:
    """Marginal and pairwise fidelity of the released columns (the label too, where there is one).

    A numeric table's frame no longer holds the released columns: their original values are ``X``'s.
    """
    from ppdm.metrics.fidelity import fidelity

    if codec is not None:
        numeric, categorical = list(codec.numeric_names), list(codec.categorical_names)
    else:
        numeric, categorical = list(schema.released), []
        original = pd.DataFrame(X, columns=numeric)
        if schema.label is not None:
            original[schema.label] = df[schema.label].to_numpy()
        df = original
    if schema.label is not None:
        categorical.append(schema.label)
    return fidelity(df, released, numeric, categorical)


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer, np.floating, np.bool_)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _replace_dir(tmp: Path, out: Path, force: bool) -> None:
    """Publish the finished directory: a new one by one rename; over a previous release, file by file.

    Over a previous release (with --force) each new file replaces its namesake by rename, the state last
    (it is the key to the release beside it); ppdm's own files of the old release that the new one does
    not have are removed after that. Nothing else in the directory is touched.
    """
    if not out.exists():
        os.replace(tmp, out)
        return
    if not force and any(out.iterdir()):
        raise OutputError(f"output directory '{out}' appeared while running; pass --force to replace it")
    new = [n for n in PPDM_FILES if (tmp / n).exists()]
    for name in sorted(new, key=lambda n: n == "release.state"):
        os.replace(tmp / name, out / name)
    for name in PPDM_FILES:
        if name not in new and (out / name).exists():
            (out / name).unlink()
    shutil.rmtree(tmp, ignore_errors=True)
