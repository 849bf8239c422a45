"""Writing a release: the chosen candidate's release of the table, its state, record and report, published
as one directory in one step (built beside the output directory, then swapped into its place: see
:mod:`ppdm.data.publish`)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.release.config import ReleaseConfig, skipped_defaults
from ppdm.utils.memory import give_back

__all__ = ["PPDM_FILES", "ReleaseResult", "replace_dir", "write_outputs"]


@dataclass(frozen=True)
class ReleaseResult:
    output_dir: Path
    record: dict[str, Any]


#: the files a release directory holds; --force replaces these and nothing else
PPDM_FILES = ("release.csv", "release.parquet", "release.json", "report.html", "release.state")


def write_outputs(df, schema, design, y, cfg, threat, chosen, cands, original_utility, fp, out, force, inputs, *,  # type: ignore[no-untyped-def]
                   key, keep_ids, failed, label_note=None, escape_formulas=False, codec=None, infos=(), into=None,
                   part=0, parts=None, original_fingerprint=None, timings=None, started=None, choice=None,
                   not_measured=()):
    """Release ``design.pop()`` (the design, handed over so that it can be freed here) with the chosen
    candidate, and write the release, its state, record and report.

    ``timings``: seconds of the run's stages so far (read, sweep, ...), completed here with the chosen release's
    and the report's and kept in the record; ``started``: when the run began (``time.perf_counter()``).

    ``into``: an empty directory made for them by whoever publishes it (a Dask worker writes there and the
    machine that asked it renames it into place); otherwise a temporary directory here, renamed onto ``out``.
    A release by parts (:mod:`ppdm.release.parts`): ``part`` is this table's part (its draws and row order are
    its own) and ``parts`` what the first part's record says of them (its record and report stand for the
    release). A part after the first writes its release and state only, and returns as its record the little
    the first part's needs of it (its rows and formula-like cells). ``original_fingerprint``: the original
    table's (:func:`ppdm.data.fingerprint.table_fingerprint`), recorded in the state with the release's.
    ``choice``: the data steward's choice in place of the policy's (:func:`ppdm.release.override.apply_choice`),
    kept in the record as ``choice``.
    """
    import time
    import warnings

    from ppdm import __version__
    from ppdm.data.fingerprint import table_fingerprint
    from ppdm.data.io import write_table
    from ppdm.flow.arrays import perturb_array
    from ppdm.flow.artifacts import identity_summary, save_release_state
    from ppdm.flow.synthesis import label_values, release_frame, released_label, releases_table
    from ppdm.keys import hide_identity, release_order, shuffle_rows
    from ppdm.mechanisms.base import keep_key_secret
    from ppdm.release.candidates import build_candidate, column_treatments, describe
    from ppdm.release.summary import plot_data, summary_text
    from ppdm.report import render_report

    t_release = time.perf_counter()
    X = design.pop()
    bare = part > 0  # a part after the first: its release and state only
    stream = (part,) if part else ()
    mech_seed = key.part_seed(part)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mech = keep_key_secret(build_candidate(chosen["method"], chosen["params"], random_state=mech_seed,
                                               codec=codec))
        own = codec is not None and releases_table(mech)
        if own:
            # a synthesiser of the whole record is given the table itself and publishes its own values, gaps
            # and label (see ppdm.flow.synthesis)
            from ppdm.data.preprocess import Scaler

            synthetic, y_out, decoded = release_frame(df, mech, codec, y)
            scaler = Scaler("none").fit(np.zeros((2, 1)))
            # the figures compare designs when the table has no numbers
            B = None if codec.numeric_names else codec.encode_decoded(decoded)
        else:
            B, scaler = perturb_array(X, mech, preprocess=cfg.preprocess, y=y)
            y_out = released_label(mech, y)
    give_back()  # the mechanism's freed working memory, before the figures and the assembly beside X and B
    # the columns published beside the release's own: the original's, but a synthesised label in its place
    beside = df if y_out is y else df.assign(**{schema.label: label_values(df[schema.label], y_out)})
    if codec is not None:
        from ppdm.release.risk import draws

        gaps = codec.missing(df)  # the original's gaps, counted in the record (the release has its own)
        if not own:
            from ppdm.flow.whole import block_reading

            decoded = codec.decode_parts(B, rng=draws(mech_seed, 0, 1), reading=block_reading(mech))
        if codec.numeric_names:
            # the published table stands for the design and its release from here on (the figures read
            # its numbers): both design-sized arrays go before it is built
            X = B = None
        published = synthetic if own else codec.table(decoded)
        whole = {c: (published[c].to_numpy() if c in published.columns else beside[c].to_numpy())
                 for c in schema.columns if c not in schema.dropped}
        del published
        # views of the published columns (fresh arrays) and of the original's passed-through ones (never
        # written: identities are replaced in a copy of the rows, formulas escaped in a copy)
        assembled = pd.DataFrame(whole, index=range(len(df)), copy=False)
        del whole
        # the figures below compare numbers in their units: the published ones, as an analyst reads them (a
        # published gap as the column's median, as the original's)
        X_units, B_units = (None, None) if bare else (codec.numbers(df), codec.filled_numbers(decoded))
        del decoded
        unit_names = codec.numeric_names
    else:
        X_units, B_units, unit_names, gaps = X, B, list(schema.released), {}
    # what the record and the report need of the released numbers, taken now: the table-sized arrays are
    # dropped before the shuffled copy is made (a large release holds one copy of itself at a time)
    per_column_re = {} if bare else {
        c: float(np.linalg.norm(X_units[:, j] - B_units[:, j]) / max(np.linalg.norm(X_units[:, j]), 1e-300))
        for j, c in enumerate(unit_names)}
    plots = (None if bare else plot_data(X_units, B_units, y, unit_names, seed=0) if unit_names
             else plot_data(X, B, y, [f"d{j + 1}" for j in range(X.shape[1])], seed=0))
    in_order = False
    if codec is None:
        # the released numbers are shuffled where they are, and the frame views them: the release is held
        # once while it is assembled, shuffled and written
        order = None if keep_ids else release_order(key, len(B), stream=stream)
        if order is not None:
            shuffle_rows(B, order)
        assembled = schema.assemble(beside, B, order=order, copy=False)
        in_order = order is not None
    del B, B_units, X_units
    # each column's distribution and each pair's association, original against published (the ids play no
    # part): measured before the ids are replaced, so the original's values can go first
    fid = None if bare else fidelity_of(df, assembled, codec, schema, X)
    n_rows = int(len(df))
    del X  # the original's values are not needed past this point
    released, identity = hide_identity(assembled, schema.id, key, keep_ids=keep_ids, in_order=in_order, stream=stream)
    del assembled
    from ppdm.data import formulas

    # text that reaches the release (passed through, or released categories) is checked for formulas
    numeric_out = set(unit_names) if codec is not None else set(schema.released)
    risky = formulas.formula_cells(released, [c for c in released.columns if c not in numeric_out])
    if risky and escape_formulas:
        released = formulas.escape_formulas(released, list(risky))
    if bare:
        write_table(released, Path(into) / f"release.{cfg.output_format}")
        del released
        save_release_state(Path(into) / "release.state", mech, scaler, schema, method=chosen["method"], key=key,
                           identity=identity)
        return ReleaseResult(out, {"n_rows": n_rows, "formula_cells": risky})
    record = {
        "ppdm_version": __version__,
        "input": {"fingerprint_sha256": fp, "n_rows": n_rows if parts is None else int(sum(parts["rows"])),
                  "released_columns": list(schema.released),
                  "id": schema.id, "label": schema.label, "passthrough": list(schema.passthrough)},
        # the key regenerates the chosen mechanism's draws (noise, rotation): it stays in release.state
        "config": cfg.model_dump(mode="json", exclude={"seed"}) | {"seed": "in release.state (secret)"},
        "key": key.describe(),
        "identity": identity_summary(identity, schema.id, parts=parts is not None),
        # a table larger than a worker should hold, released a part at a time (see ppdm.release.parts)
        **({"parts": parts} if parts is not None else {}),
        "threat": {"spec": cfg.threat, "description": threat.describe()},
        "policy": cfg.policy.model_dump(mode="json"),
        "original_utility": original_utility,
        **({"utility_note": label_note} if label_note else {}),
        **({"formula_cells": {"columns": risky, "escaped": bool(escape_formulas)}} if risky else {}),
        "chosen": {k: chosen[k] for k in ("method", "params", "value", "utility", "risk", "verdict")}
        | {"preprocess": cfg.preprocess, "candidate": describe(chosen["method"], chosen["params"])},
        # a formal guarantee of the published table (dp-copula): epsilon, delta and what it does not cover
        **({"guarantee": guarantee_of(mech, cfg, schema, label_kept=y_out is y, design=codec is not None and not own)}
           if callable(getattr(mech, "guarantee", None)) else {}),
        **({"skipped_methods": skipped} if (skipped := skipped_defaults()) else {}),
        # the steward's choice, when it replaced the policy's: both candidates and the steward's reason
        **({"choice": choice} if choice else {}),
        "candidates": with_stated_guarantees(cands),
        # candidates that could not be scored, each with its one-line reason (the sweep went on without them)
        "failed_candidates": failed,
        # candidates the sweep left out because others of their family settled them, each with the reason
        **({"not_measured_candidates": list(not_measured)} if not_measured else {}),
        "per_column_re": per_column_re,
        # each column's distribution and each pair's association, original against published
        "fidelity": fid,
        # every column of the input: its type, its role and what the release did with it (which mechanism)
        "columns": synthesised_columns(column_treatments(infos, codec, chosen["method"], chosen["params"],
                                                         released=schema.released, passthrough=schema.passthrough),
                                       mech, describe(chosen["method"], chosen["params"]), schema.label,
                                       label_kept=y_out is y),
        "whole_table": None if codec is None else {
            "numbers": codec.numeric_names, "categories": codec.categorical_names,
            "design": SYNTHESIS_DESIGN if own else
                      "numbers z-scored, categories one-hot (weight 1/sqrt 2); integers rounded, values kept "
                      "within each column's original range, dates as dates, categories among the original's",
            # the original's gaps (a synthesised table has gaps of its own, drawn as values of their columns)
            "missing_cells": {c: int(m.sum()) for c, m in gaps.items()}},
        "files": {"release": f"release.{cfg.output_format}", "state": "release.state (secret)",
                  "report": "report.html"},
    }
    record["summary"] = summary_text(record)
    timings = dict(timings or {})
    timings["chosen release"] = round(time.perf_counter() - t_release, 3)
    record["timings"] = timings
    from ppdm.data.publish import staging_dir

    tmp = Path(into) if into is not None else staging_dir(out)
    try:
        write_table(released, tmp / f"release.{cfg.output_format}")
        fingerprints = {"original": original_fingerprint, "release": table_fingerprint(released)}
        del released  # the release's values (the state and the report need none of them)
        give_back()
        save_release_state(tmp / "release.state", mech, scaler, schema, method=chosen["method"], key=key,
                           identity=identity, fingerprints=fingerprints)
        t_report = time.perf_counter()
        html = render_report(record, plots)
        (tmp / "report.html").write_text(html, encoding="utf-8")
        timings["report"] = round(time.perf_counter() - t_report, 3)
        if started is not None:
            timings["total"] = round(time.perf_counter() - started, 3)
        (tmp / "release.json").write_text(json.dumps(record, indent=1, default=json_default))
        if into is not None:
            return ReleaseResult(out, record)
        replace_dir(tmp, out, force)
    except BaseException:
        if into is None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ReleaseResult(out, record)


#: how a whole table synthesised by a table-releasing mechanism (ppdm.flow.synthesis) is published
SYNTHESIS_DESIGN = ("synthesised in the columns' own units: numbers drawn within privately measured (or public) "
                    "bins, integers rounded, dates as dates, categories among the original's, gaps as a value of "
                    "their own; nothing clipped to the original's ranges")


def synthesised_columns(entries: list[dict[str, Any]], mech: Any, candidate: str, label: str | None, *,
                        label_kept: bool) -> list[dict[str, Any]]:
    """The record's column entries, saying so where a mechanism synthesised the whole record."""
    from ppdm.flow.synthesis import releases_table

    if not releases_table(mech):
        return entries
    for e in entries:
        if e.get("mechanism") is not None:
            e["treatment"] = f"synthesised by {candidate} with the rest of the record (under its guarantee)"
        if e["name"] == label and not label_kept:
            e["mechanism"] = candidate
            e["treatment"] = f"synthesised by {candidate} with the rest of the record (under its guarantee)"
    return entries


def with_stated_guarantees(cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every formally private candidate with its guarantee in words (from its parameters)."""
    from ppdm.registry import MECHANISMS

    for c in cands:
        entry = MECHANISMS.get(c["method"])
        stated = getattr(entry.load(), "stated_guarantee", None) if entry is not None else None
        if stated is not None:
            c["guarantee"] = stated(c["params"])
    return cands


def guarantee_of(mech: Any, cfg: ReleaseConfig, schema: Any = None, *, label_kept: bool = True,
                 design: bool = False) -> dict[str, Any]:
    """The mechanism's own guarantee, with what the release around it adds outside the guarantee (``design``:
    the mechanism released a whole table's design, made and decoded with the table's own statistics)."""
    g = dict(mech.guarantee())
    extra = ["the scores in this record and the choice among the candidates (computed on the original table; "
             "the published table is a fresh fit of the chosen parameters)"]
    if design:
        extra.insert(0, "the whole table's design: numbers standardised with the table's means and deviations and "
                        "published within each column's observed range, categories among the table's (a gap is "
                        "one of its column's values, released by the mechanism like the others)")
    if schema is not None and schema.passthrough:
        extra.insert(0, f"the columns passed through unchanged ({', '.join(schema.passthrough)})")
    if schema is not None and schema.label and label_kept and getattr(mech, "_releases_label", False):
        extra.insert(0, f"the label '{schema.label}' (released as it is: it could not be synthesised, see the "
                        "utility note)")
    if cfg.preprocess != "none" and not getattr(mech, "_scale_free", False):
        extra.insert(0, f"the per-column statistics of the preprocessing ({cfg.preprocess}), computed on the table "
                        "and used to map the synthetic records back to its units")
    g["not_covered"] = [*g.get("not_covered", []), *extra]
    return g


def fidelity_of(df: pd.DataFrame, released: pd.DataFrame, codec: Any, schema: Any,
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


def json_default(o: Any) -> Any:
    if isinstance(o, (np.integer, np.floating, np.bool_)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def replace_dir(tmp: Path, out: Path, force: bool) -> None:
    """Publish the finished directory ``tmp`` (from :func:`ppdm.data.publish.staging_dir`) as ``out`` in one
    step: a new directory by one rename, a previous release swapped out whole (its own mode kept). Only ppdm's
    files of a previous release are replaced; a file that appeared beside them meanwhile is kept."""
    from ppdm.data.io import dir_mode
    from ppdm.data.publish import publish_directory

    publish_directory(tmp, out, owned=PPDM_FILES, force=force, mode=dir_mode())
