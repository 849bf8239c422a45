"""``ppdm release``: sweep mechanisms and parameters, attack every candidate, pick by policy, report.

The output directory receives ``release.csv`` (or ``.parquet``), ``release.json`` (the record: choice,
parameters, versions, data fingerprint, every metric and attack result; no rows, no keys),
``release.state`` (the secret state with the seed, owner-only) and ``report.html`` (self-contained). Everything is
written into a temporary sibling directory first and renamed into place when complete.
"""

from __future__ import annotations

import contextlib
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

from ppdm.exceptions import OutputError, ParameterError
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
    from ppdm.attacks import ThreatModel
    from ppdm.keys import release_key, warn_known
    from ppdm.release.scale import ONE_FINALIST_ABOVE, SCREEN_ABOVE
    from ppdm.release.table import TableSpec, prepare_table

    cfg = config or default_config()
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
        from ppdm.release.source import parquet_rows

        if where is not None and (rows := parquet_rows(source)) is not None and rows > ONE_FINALIST_ABOVE:
            # a large Parquet input on a cluster: its workers read it, sweep and write; this machine holds
            # samples and scores only
            from ppdm.release.cluster import release_on_cluster

            warn_known(key)
            return release_on_cluster(spec, cfg, key, out, force, cache=cache, progress=progress, where=where,
                                      keep_ids=keep_ids, escape_formulas=escape_formulas, rows=rows)
        prep = prepare_table(spec, cfg, seed=evaluation_seed, screen_above=SCREEN_ABOVE)
        warn_known(key)
        cfg, X, y, codec, folds = prep.cfg, prep.X, prep.y, prep.codec, prep.folds
        jobs = candidate_jobs(cfg, cache, shape=X.shape, codec=codec, fingerprint=prep.fingerprint, label=label,
                              shown=prep.shown, side=prep.side)
        from ppdm.keys import MECHANISM_STREAM

        holdout = folds[0] if folds else None
        context = {"key_seed": key.seed(MECHANISM_STREAM), "columns": list(prep.schema.released),
                   "categories": prep.categories, "holdout": holdout, "seed_known": key.known, "codec": codec}
        if folds and len(folds) > 1:
            context["more_folds"] = folds[1:]
        if len(X) > SCREEN_ABOVE:
            # a large table: every candidate screened on a sample, the best confirmed on every row
            # on a cluster, the workers confirming a candidate read a Parquet input themselves
            from ppdm.release.source import parquet_source

            design_source = parquet_source(source, prep.schema, codec, prep.fingerprint, len(X)) \
                if where is not None else None
            everything = screen_and_confirm(X, y, jobs, cfg, cache, progress, evaluation_seed, context,
                                            source=design_source)
        else:
            everything = run_sweep(X, y, jobs, cfg, cache, progress, evaluation_seed, context)
    failed, cands = split_failed(everything)
    from ppdm.release.table import original_utility

    original = original_utility(X, y, folds, evaluation_seed, codec)
    read = any(c.get("measured_on", {}).get("design") for c in cands)
    note = sweep_notes(prep.label_note, n=len(X), y_rows=None if y is None else len(y), where=where,
                       made_here=not read and len(X) > ONE_FINALIST_ABOVE, read=read, folds=folds)
    best = mark_choice(cands, cfg, shown=prep.shown, categories=prep.categories)
    # the design goes to the last stage as its only holder, which frees it once the record is made: the
    # written release is then the one table-sized array left
    design = [X]
    # row-length vectors the sweep alone needed (the shown columns as text, the held-out folds' row numbers)
    # go before the chosen release is made beside the design
    df, schema, infos, fp = prep.df, prep.schema, prep.infos, prep.fingerprint
    del X, prep, folds, holdout, context
    give_back()  # the sweep's freed working memory, before the chosen release is made from all rows
    return _write_outputs(df, schema, design, y, cfg, threat, cands[best], cands, original, fp, out, force, inputs,
                          key=key, keep_ids=keep_ids, failed=failed, label_note=note,
                          escape_formulas=escape_formulas, codec=codec, infos=infos)


def candidate_jobs(cfg: ReleaseConfig, cache: Cache, *, shape: tuple[int, int], codec: Any, fingerprint: str,
                   label: str | None, shown: Sequence[str], side: str) -> list[tuple[str, str, dict[str, Any]]]:
    """The sweep's candidates as (cache key, method, parameters): the configured grids, less the default
    candidates that do not fit the table."""
    from ppdm import __version__
    from ppdm.release.candidates import check_method, split_method
    from ppdm.release.evaluate import SCORING_VERSION

    jobs = []
    for mg in cfg.methods:
        check_method(mg.method)
        default_grid = mg.grid == DEFAULT_GRIDS.get(mg.method)
        if default_grid and split_method(mg.method)[1] and (codec is None or not codec.categorical_names):
            continue  # a combined default candidate needs categories: on numbers alone it repeats its numeric part
        for params in mg.candidates():
            # default grids adapt to narrow tables; a grid the user wrote is checked as given
            if default_grid and isinstance(params.get("rank"), int) and params["rank"] >= min(shape):
                continue
            # a secret key is not part of the cache key: a cached score measured an equivalent draw; the
            # scores depend on the label's values and on every column shown beside the release, not only on X
            payload = {"fp": fingerprint, "method": mg.method, "params": params, "seed": cfg.seed,
                       "pre": cfg.preprocess, "threat": cfg.threat, "label": label, "shown": list(shown),
                       "side": side, "objective": cfg.policy.objective, "v": SCORING_VERSION, "ppdm": __version__,
                       "whole_table": None if codec is None else codec.names}
            jobs.append((cache.key(payload), mg.method, params))
    if not jobs:
        raise ParameterError("no candidate fits a table this small; give --methods noise,rotation or a --config grid")
    return jobs


def split_failed(everything: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The candidates that failed and those scored; refuses a sweep in which every one failed."""
    failed = [c for c in everything if "failed" in c]
    cands = [c for c in everything if "failed" not in c]
    if not cands:
        c = failed[0]
        raise ParameterError(f"every candidate failed; the first, {c['method']} {c['params']}: {c['failed']}")
    return failed, cands


def sweep_notes(label_note: str | None, *, n: int, y_rows: int | None, where: str | None, made_here: bool,
                read: bool, folds: Any, on_worker: bool = False) -> str | None:
    """What the record says about how the sweep measured (samples, folds, where it ran), in one note.

    ``made_here``: the confirmations ran on this machine; ``read``: the workers read the Parquet input
    themselves; ``on_worker``: a worker also made and wrote the chosen release.
    """
    from ppdm.release.evaluate import SVM_SAMPLE, TSTR_TRAIN_SAMPLE, UTILITY_SAMPLE
    from ppdm.release.scale import SCREEN_ABOVE, SCREEN_ROWS

    notes = [label_note] if label_note else []
    if y_rows is not None and y_rows > SVM_SAMPLE:
        # estimates, not exhaustive computation: say on how many rows each was measured
        rows = f"a seeded stratified sample of {UTILITY_SAMPLE} of {y_rows} rows" if y_rows > UTILITY_SAMPLE else (
            f"all {y_rows} rows")
        notes.append(f"cross-validated k-NN and K-means on {rows} (95 % interval about +-1.4 points at 5,000), the "
                     f"RBF SVM on {SVM_SAMPLE} of them (about +-2.2 points); train-on-release models learn from at "
                     f"most {TSTR_TRAIN_SAMPLE} released rows")
    if where is not None:
        here = ("the chosen release was made and written by a worker from the Parquet input; this machine held "
                "samples and scores only" if on_worker else
                "the confirmations on every row and the chosen release were computed here" if made_here else
                "the chosen release was computed here")
        notes.append(f"the candidates were scored as tasks on a Dask cluster ({where})"
                     + ("; its workers read the Parquet input themselves to confirm candidates on every row"
                        if read else "") + f"; {here}")
    if folds and len(folds) > 1:
        notes.append(f"train-on-release accuracy is pooled over {len(folds)} disjoint held-out folds "
                     f"({sum(len(te) for _, te in folds):,} real records tested, each against a release of the "
                     "other rows)")
    if n > SCREEN_ABOVE:
        notes.append(f"{n:,} rows: every candidate was screened on a seeded sample of {SCREEN_ROWS:,} rows and "
                     "the best were confirmed on every row, attacked on a seeded sample of targets against all "
                     "records (each candidate's 'measured_on' says which)")
    return "; ".join(notes) if notes else None


def mark_choice(cands: list[dict[str, Any]], cfg: ReleaseConfig, *, shown: Sequence[str], categories: Any = None,
                uniqueness: dict[str, Any] | None = None) -> int:
    """Choose by the policy; every candidate gets its verdict, whether it is on the Pareto front and chosen."""
    from ppdm.release.select import choose, pareto_front

    best, reasons = choose(cands, cfg.policy, shown=shown, categories=categories, uniqueness=uniqueness)
    front = set(pareto_front(cands, cfg.policy.objective))
    for i, c in enumerate(cands):
        c["pareto"] = i in front
        c["verdict"] = reasons[i]
        c["chosen"] = i == best
    return best

def _write_outputs(df, schema, design, y, cfg, threat, chosen, cands, original_utility, fp, out, force, inputs, *,  # type: ignore[no-untyped-def]
                   key, keep_ids, failed, label_note=None, escape_formulas=False, codec=None, infos=(), into=None):
    """Release ``design.pop()`` (the design, handed over so that it can be freed here) with the chosen
    candidate, and write the release, its state, record and report.

    ``into``: an empty directory made for them by whoever publishes it (a Dask worker writes there and the
    machine that asked it renames it into place); otherwise a temporary directory here, renamed onto ``out``.
    """
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
    tmp = Path(into) if into is not None else Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    try:
        write_table(released, tmp / f"release.{cfg.output_format}")
        del released  # the release's values (the state and the report need none of them)
        give_back()
        save_release_state(tmp / "release.state", mech, scaler, schema, method=chosen["method"], key=key,
                           identity=identity)
        (tmp / "release.json").write_text(json.dumps(record, indent=1, default=_json_default))
        html = render_report(record, plots)
        (tmp / "report.html").write_text(html, encoding="utf-8")
        if into is not None:
            return ReleaseResult(out, record)
        from ppdm.data.io import dir_mode

        os.chmod(tmp, dir_mode())  # the user's umask, like any new directory
        _replace_dir(tmp, out, force)
    except BaseException:
        if into is None:
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
