"""What a release run produces and reads back, whatever executed it: the result, the state file (mechanism,
preprocessing, schema, key, identity mapping), the row alignment that the state allows, and the structural
partition a run may ask for.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ppdm import registry
from ppdm.data.preprocess import Scaler
from ppdm.data.schema import Schema
from ppdm.exceptions import InputError, ParameterError, StateError

__all__ = ["PerturbResult", "record_positions", "wrap_partition", "identity_summary", "save_release_state",
           "load_release_state", "align_with_state", "check_fingerprints", "publish_release"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True, repr=False)
class PerturbResult:
    """What ``perturb`` produced: the release and the fitted pieces (which hold key material).

    Its ``repr`` (a notebook cell, ``print``, a log line) shows the release's shape and the mechanism with its
    seed hidden: the seed is the key, with which anyone could redraw the noise and undo the release."""

    release: pd.DataFrame
    mechanism: Any
    scaler: Scaler
    schema: Schema
    summary: dict[str, Any] = field(default_factory=dict)
    output: Path | None = None
    state: Path | None = None

    def __repr__(self) -> str:
        rows, cols = self.release.shape
        where = "".join(f", {k}={str(v)!r}" for k, v in (("output", self.output), ("state", self.state)) if v)
        return f"PerturbResult(release=<{rows} rows x {cols} columns>, mechanism={self.mechanism!r}{where})"


def record_positions(spec: str | None, labels: Sequence[object], what: str) -> int | list[int] | None:
    """A block given as a count ('467') or as comma-separated names/ids -> count or positions."""
    if spec is None:
        return None
    spec = spec.strip()
    if spec.isdigit() and spec not in {str(x) for x in labels}:
        return int(spec)
    index = {str(v): i for i, v in enumerate(labels)}
    pos = []
    for token in (t.strip() for t in spec.split(",") if t.strip()):
        if token not in index:
            raise InputError(f"{what} '{token}' is not in the table; check the names (or give a count)")
        pos.append(index[token])
    return pos


def identity_summary(identity: Any, id_column: str | None, *, parts: bool = False,
                     kept: bool = True) -> dict[str, Any]:
    """What the record says of the released rows' link to the original's (``parts``: a release by parts,
    whose rows come part after part; ``kept``: whether a state file keeps the mapping)."""
    if identity.kept:
        if parts:
            return {"layout": "linkable: original ids (--keep-ids), in the original order within each part; every "
                              "row is linkable to its record"}
        return {"layout": "linkable: original ids in the original row order (--keep-ids); every row is linkable "
                          "to its record"}
    return {"layout": ("rows shuffled within each part (parts assigned by the key)" if parts else "rows shuffled")
            + (f", ids in '{id_column}' replaced by keyed pseudonyms" if id_column is not None else "")
            + ("; the mapping is in the state file only" if kept else "; the mapping is kept nowhere (no state "
               "file was asked for)")}


def wrap_partition(mech: Any, df: pd.DataFrame, schema: Schema, rows: str | None, cols: str | None) -> Any:
    from ppdm.mechanisms.partition import StructuralPartition

    ids = df[schema.id].tolist() if schema.id else [str(i + 1) for i in range(len(df))]
    r = record_positions(rows, ids, "record")
    c = record_positions(cols, list(schema.released), "column")
    scheme = "both" if r is not None and c is not None else ("rows" if r is not None else "columns")
    return StructuralPartition(mech, scheme=scheme, rows=r, columns=c)


def save_release_state(path: PathLike, mech: Any, scaler: Scaler, schema: Schema, *, method: str,
                       key: Any, identity: Any = None, fingerprints: dict[str, Any] | None = None) -> Path:
    """Write the mechanism, preprocessing, schema, key and identity mapping to an owner-only state file.

    ``fingerprints``: of the original table and of the release written with this state
    (:func:`ppdm.data.fingerprint.table_fingerprint`); commands that pair the state with tables check them.
    """
    from ppdm import __version__
    from ppdm.state import save_state

    mh, ma = mech.to_state()
    sh, sa = scaler.to_state()
    # the key's entropy is a 128-bit integer: JSON keeps it exactly as a string
    header = {"method": method, "key": {"entropy": str(key.entropy), "known": bool(key.known)},
              "ppdm_version": __version__, "schema": schema.to_dict(), "mechanism": mh, "preprocess": sh,
              "identity": {"kept": bool(identity.kept) if identity is not None else False}}
    if fingerprints:
        header["fingerprints"] = dict(fingerprints)
    arrays = {f"mechanism.{k}": v for k, v in ma.items()} | {f"preprocess.{k}": v for k, v in sa.items()}
    if identity is not None:
        arrays |= identity.to_arrays()
    return save_state(path, "release", header, arrays)


def publish_release(out_df: pd.DataFrame, out_path: Path | None, state_path: Path | None,
                    save_state: Any, original_fingerprint: dict[str, Any] | None) -> None:
    """Write a release and its state as one set (:func:`ppdm.data.io.publish_together`), the state last and
    with the fingerprints of the original and of the release (``save_state(path, fingerprints)``)."""
    from ppdm.data.fingerprint import table_fingerprint
    from ppdm.data.io import output_format, publish_together, write_table

    writes: list[tuple[Path, Any]] = []
    if out_path is not None:
        writes.append((out_path, lambda p: write_table(out_df, p, fmt=output_format(out_path))))
    if state_path is not None:
        fps = {"original": original_fingerprint, "release": table_fingerprint(out_df) if out_path else None}
        writes.append((state_path, lambda p: save_state(p, fps)))
    publish_together(writes)


def load_release_state(path: PathLike) -> tuple[Any, Scaler, Schema, dict[str, Any]]:
    from ppdm.state import load_state

    header, arrays = load_state(path, "release")
    cls = registry.class_by_name(header["mechanism"]["class"])
    mech = cls.from_state(header["mechanism"], {k[10:]: v for k, v in arrays.items() if k.startswith("mechanism.")})
    scaler = Scaler.from_state(header["preprocess"], {k[11:]: v for k, v in arrays.items()
                                                      if k.startswith("preprocess.")})
    return mech, scaler, Schema.from_dict(header["schema"]), header


def check_fingerprints(header: dict[str, Any], state: PathLike, original: pd.DataFrame | None,
                       release: pd.DataFrame | None, id: str | None = None) -> None:
    """Refuse a state paired with tables it was not written with (their fingerprints differ from those it
    recorded: :mod:`ppdm.data.fingerprint`); a state that records none (an older one, a stream's) is not
    checked.

    The original is compared on the columns the state's schema names (a copy of it with more columns is the
    same table). The release is compared whole when its rows align by position; when they carry the state's
    pseudonyms in ``id``, those pair each row with its record (a subset or a reordering of the release
    aligns, another release's pseudonyms do not), and the release may be any part of it.
    """
    from ppdm.data.fingerprint import same_table
    from ppdm.exceptions import StateError

    fps = header.get("fingerprints")
    if not isinstance(fps, dict):
        return
    name = Path(state).name
    by_position = id is None or release is None or id not in release.columns
    if by_position and release is not None and fps.get("release") is not None \
            and not same_table(fps["release"], release):
        raise StateError(f"state file '{name}' was written with another release than this one (their "
                         f"fingerprints differ){_interrupted(state)}; give the state written with this release")
    columns = list(header.get("schema", {}).get("columns", []))
    if original is not None and fps.get("original") is not None:
        table = original[columns] if columns and set(columns) <= set(original.columns) else original
        if not same_table(fps["original"], table):
            raise StateError(f"state file '{name}' was written for another original table than this one (their "
                             "fingerprints differ); give the table the release was made from, as it was then")


def _interrupted(state: PathLike) -> str:
    """A note when a killed run left this state's publication half-done (its journal is still there)."""
    import glob

    p = Path(os.path.realpath(state))
    pending = glob.glob(str(p.parent / f".{glob.escape(p.name)}.*.journal"))
    return ("; a ppdm run that wrote it was killed while publishing: run any ppdm command that writes this "
            "state again to complete it" if pending else "")


def align_with_state(original: pd.DataFrame, release: pd.DataFrame, state: PathLike | None,
                     id: str | None) -> pd.DataFrame:
    """The release in the original's row order, with the original ids, from its state (key and mapping).

    Without a state the release is returned as it is (a linkable layout, or another tool's release). A state
    that records fingerprints is checked against both tables first.
    """
    if state is None:
        return release
    from ppdm.keys import Identity, ReleaseKey, restore_order
    from ppdm.state import load_state

    header, arrays = load_state(state)
    check_fingerprints(header, state, original, release, id)
    info = header.get("key")
    kept = bool(header.get("identity", {}).get("kept", True))
    if header.get("kind") == "stream":
        # a stream's releases are aligned through their pseudonyms (one row order per batch)
        st = header.get("stream", {})
        info, kept = st.get("key"), bool(st.get("keep_ids", True))
        arrays = {}
    if not isinstance(info, dict) or "entropy" not in info:
        return release  # a state written before releases were pseudonymous: the layout is linkable
    if kept and "parts" not in header:
        return release
    key = ReleaseKey(int(info["entropy"]), bool(info.get("known", False)))
    if "parts" in header:
        # a release by parts: each part's rows (from the key) in that part's released order, part after part
        from ppdm.keys import part_identity

        identity: Identity | None = Identity(part_identity(header, arrays, key), kept=False)
    else:
        identity = Identity.from_arrays(arrays, kept=False)
    # kept ids (a release by parts with --keep-ids) are not pseudonyms: its rows align by the parts' order
    ids = original[id] if id is not None and id in original.columns and not kept else None
    try:
        return restore_order(release, identity, key, original_ids=ids, id_column=id)
    except ParameterError as e:
        # a state whose publication a killed run left half-done says so, with what completes it
        hint = _interrupted(state)
        if hint:
            raise StateError(f"{e}{hint}") from None
        raise
