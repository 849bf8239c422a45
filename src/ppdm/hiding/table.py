"""Hiding on a table: record names, column roles, release assembly, outputs and the summary.

Records are named by the id column when there is one, else by their 1-based row number; clusters are
numbered 1..K in the order of their seed rows. Nothing is written unless the request is achieved.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.columns import numbers_schema
from ppdm.data.io import check_table_output, output_set, read_table
from ppdm.exceptions import InputError, ParameterError
from ppdm.hiding.search import HidingResult, MemberRequest, PairRequest, hide_patterns

__all__ = ["hide_table", "parse_member", "parse_pair"]

PathLike = str | os.PathLike[str]


def _record_index(df: pd.DataFrame, id: str | None) -> tuple[dict[str, int], list[object]]:
    if id is None:
        names: list[object] = list(range(1, len(df) + 1))
        return {str(i): i - 1 for i in range(1, len(df) + 1)}, names
    if df[id].duplicated().any():
        raise InputError(f"id column '{id}' has duplicate values; record names must be unique")
    names = [v.item() if hasattr(v, "item") else v for v in df[id].tolist()]
    return {str(v): i for i, v in enumerate(names)}, names


def _lookup(token: str, index: dict[str, int], id: str | None) -> int:
    t = token.strip()
    if t not in index:
        # ids read as numbers may be written differently on the command line ("7" vs "7.0")
        try:
            f = float(t)
            alt = str(int(f)) if f.is_integer() else t
        except ValueError:
            alt = t
        if alt not in index:
            where = f"id column '{id}'" if id else "row numbers"
            raise InputError(f"record '{t}' is not in the table ({where}); check the record names")
        t = alt
    return index[t]


def parse_member(spec: str, index: dict[str, int], id: str | None, n_clusters: int) -> MemberRequest:
    """``ID`` or ``ID:TARGET`` (TARGET a cluster number 1..K)."""
    rec, sep, tgt = spec.rpartition(":")
    if not sep:
        rec, tgt = spec, ""
    target = None
    if tgt.strip():
        try:
            target = int(tgt)
        except ValueError:
            raise ParameterError(f"--hide-member '{spec}': the target must be a cluster number 1..{n_clusters}"
                                 ) from None
        if not 1 <= target <= n_clusters:
            raise ParameterError(f"--hide-member '{spec}': cluster {target} does not exist; clusters are "
                                 f"1..{n_clusters}")
        target -= 1
    return MemberRequest(_lookup(rec, index, id), target)


def parse_pair(spec: str, index: dict[str, int], id: str | None, together: bool | None = None) -> PairRequest:
    """``ID1,ID2``."""
    parts = spec.split(",")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise ParameterError(f"a pair must be written ID1,ID2; got '{spec}'")
    return PairRequest(_lookup(parts[0], index, id), _lookup(parts[1], index, id), together)


def hide_table(
    source: PathLike | pd.DataFrame,
    *,
    clusters: int,
    hide_member: Sequence[str] = (),
    negate_pair: Sequence[str] = (),
    join_pair: Sequence[str] = (),
    separate_pair: Sequence[str] = (),
    id: str | None = None,
    label: str | None = None,
    columns: Sequence[str] | None = None,
    drop: Sequence[str] = (),
    output: PathLike | None = None,
    state: PathLike | None = None,
    force: bool = False,
    seed: int | None = None,
    sep: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    keep_ids: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Hide memberships/relations in a table and (when achieved) write the release.

    ``options`` go to :func:`ppdm.hiding.hide_patterns` (search, scheme, t_policy, components, solver,
    max_trials, tolerance, reference, shift). Returns a JSON-able summary without key material.
    ``seed`` None draws a secret key from OS entropy (see :mod:`ppdm.keys`). Success is checked on the
    release in the original row order; unless ``keep_ids``, the written release has its rows shuffled and
    its ids pseudonymised like every release (the mapping is in the state).
    """
    from ppdm.keys import release_key, warn_known

    check_table_output(output)
    key = release_key(seed)
    warn_known(key)
    inputs = [("input table", source)] if isinstance(source, (str, os.PathLike)) else []
    # guarded (no output is an input), locked (one writer at a time) and recovered (what a killed run left)
    with output_set([("output", output), ("state file", state or None)], inputs, force=force) as paths:
        return _hide(source, paths, key=key, clusters=clusters, hide_member=hide_member, negate_pair=negate_pair,
                     join_pair=join_pair, separate_pair=separate_pair, id=id, label=label, columns=columns,
                     drop=drop, sep=sep, progress=progress, keep_ids=keep_ids, **options)


def _hide(source: PathLike | pd.DataFrame, paths: list[Path | None], *, key: Any, clusters: int,
          hide_member: Sequence[str], negate_pair: Sequence[str], join_pair: Sequence[str],
          separate_pair: Sequence[str], id: str | None, label: str | None, columns: Sequence[str] | None,
          drop: Sequence[str], sep: str | None, progress: Callable[[int, int], None] | None, keep_ids: bool,
          **options: Any) -> dict[str, Any]:
    """:func:`hide_table` once its outputs are guarded and locked (``paths``: the release's and the state's)."""
    from ppdm.data.fingerprint import table_fingerprint
    from ppdm.keys import MECHANISM_STREAM, hide_identity

    out_path, state_path = paths
    df = read_table(source, sep=sep)
    read_as = table_fingerprint(df) if state_path is not None else None
    schema, say = numbers_schema(df, columns=columns, id=id, label=label, drop=drop,
                                 how="hiding releases numbers only")
    from ppdm.utils.memory import check_dense

    # the table, its shifted copy, the NMF product of each trial and the release frame (the search
    # needs every record: no sample can stand in for the rows whose clusters it changes)
    check_dense(len(df), len(schema.released), 6, f"hiding patterns in {len(df)} x {len(schema.released)}",
                "release fewer columns with --columns (hiding needs every row in memory)")
    X = schema.matrix(df)
    from ppdm.flow.arrays import check_magnitude

    check_magnitude(X, schema.released)
    if isinstance(clusters, bool) or not isinstance(clusters, int) or clusters < 1:
        raise ParameterError(f"--clusters must be a positive integer; got {clusters!r}")
    if clusters > len(X):
        raise ParameterError(f"--clusters {clusters} exceeds the {len(X)} records; use fewer clusters")
    index, names = _record_index(df, id)
    members = [parse_member(s, index, id, clusters) for s in hide_member]
    pairs = [parse_pair(s, index, id) for s in negate_pair]
    pairs += [parse_pair(s, index, id, True) for s in join_pair]
    pairs += [parse_pair(s, index, id, False) for s in separate_pair]
    res = hide_patterns(X, clusters, members, pairs, random_state=key.seed(MECHANISM_STREAM), progress=progress,
                        **options)
    summary = summarize(res, X, names, schema.released)
    summary["key"] = key.describe()
    say()  # what was dropped or passed through, once the search ran (a refusal stays one line)
    if res.achieved:
        from ppdm.flow.artifacts import publish_release

        released, identity = hide_identity(schema.assemble(df, res.release), schema.id, key, keep_ids=keep_ids)
        # the release and its state as one set, the state last
        publish_release(released, out_path, state_path,
                        lambda p, fps: _save_state(p, res, schema, key, identity, fps), read_as)
        summary |= {"state": str(state_path)} if state_path is not None else {}
        summary |= {"output": str(out_path)} if out_path is not None else {}
    return summary


def summarize(res: HidingResult, X: np.ndarray, names: Sequence[object], columns: Sequence[str]
              ) -> dict[str, Any]:
    from ppdm.metrics.information import entropy_distortion, mutual_information_vector
    from ppdm.metrics.value import value_metrics

    def name(i: int) -> object:
        return names[i]

    goals = []
    for g in res.goals:
        if g["kind"] == "member":
            goals.append({"kind": "member", "record": name(g["record"]), "from": g["from"] + 1, "to": g["to"] + 1,
                          "target": None if g["target"] is None else g["target"] + 1, "achieved": g["achieved"]})
        else:
            goals.append({"kind": "pair", "x": name(g["x"]), "y": name(g["y"]),
                          "together_before": g["together_before"], "together_after": g["together_after"],
                          "achieved": g["achieved"]})
    conf = set(res.confidential)
    changes = res.changes(names)
    side = [c for i, c in zip(np.flatnonzero(res.truth != res.labels), changes, strict=True) if i not in conf]
    mi = mutual_information_vector(X, res.release)
    ed = entropy_distortion(X, res.release)
    # Wang (2008) counts values after rounding them to integers (its tables are reproduced so): a column whose
    # values all lie below 1 in magnitude rounds to -1, 0 and 1 at most, so its entropy and mutual information
    # say little or nothing (0 bits for values below 0.5), whatever the release did to it
    small = [str(c) for c, peak in zip(columns, np.abs(X).max(axis=0) if X.size else [], strict=True) if peak < 1]
    ed_note = None
    if not np.isfinite(ed):
        ed_note = ("undefined: every column of the original rounds to one integer, so its entropies are all 0; "
                   "rescale the columns (integer units) to measure it")
    return {
        "achieved": res.achieved,
        "trials": res.trials,
        "side_effect_rate": res.side_effect_rate,
        "side_effects": side,
        "moved": changes,
        "goals": goals,
        "search": res.search,
        "components": res.components,
        "seconds": res.seconds,
        "n_rows": int(X.shape[0]),
        "cluster_sizes": np.bincount(res.truth, minlength=int(max(res.truth.max(), res.labels.max()) + 1)).tolist(),
        "value": value_metrics(X, res.release),
        "mutual_information": {c: float(v) for c, v in zip(columns, mi, strict=True)},
        "entropy_distortion": float(ed) if ed_note is None else None,
        "entropy_distortion_note": ed_note,
        "information_rounding": "values rounded to integers before counting (Wang 2008's convention)",
        "information_unmeasured_columns": small,
    }


def _save_state(path: Path, res: HidingResult, schema: Any, key: Any, identity: Any,
                fingerprints: dict[str, str | None]) -> None:
    from ppdm import __version__
    from ppdm.state import save_state

    header = {"method": "nmf-hiding", "key": {"entropy": str(key.entropy), "known": bool(key.known)},
              "ppdm_version": __version__, "schema": schema.to_dict(), "search": res.search,
              "components": res.components, "identity": {"kept": bool(identity.kept)},
              "fingerprints": fingerprints}
    arrays = {"factors": res.H, "components": res.W, "offset": res.offset, "scale": res.scale,
              **identity.to_arrays()}
    save_state(path, "hiding", header, arrays)
