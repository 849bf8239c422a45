"""A stream's state and its transactions: the state file (factors, statistics, schema, pass-through columns),
the lock that keeps two updates apart, and the temporary-then-rename writes of one update.

One state file holds the incremental SVD factors, the preprocessing statistics, the column schema and,
for refresh-capable states, the pass-through columns (ids, labels) of every absorbed row. An update is a
transaction: every output and the new state are first written to temporary files beside their targets,
then renamed into place, the state last, through a journal that the next update completes when a process is
killed between two renames (:mod:`ppdm.data.publish`). A process killed before that leaves the previous state
valid and the previous outputs untouched; a lock (an ``flock`` that the kernel releases when its holder dies,
in the user's lock directory, never beside the state) keeps two updates from interleaving.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.schema import Schema
from ppdm.exceptions import StateError
from ppdm.mechanisms.incremental import IncrementalSVD
from ppdm.state import load_state, save_state

__all__ = ["KIND", "METHODS", "NMDS_FIXED", "StreamResult", "Stream", "Transaction", "state_lock", "write_table_to",
           "pack_columns", "unpack_columns", "concat_columns", "summary"]

PathLike = str | os.PathLike[str]
KIND = "stream"
METHODS = ("svd", "ssvd", "nmds")
NMDS_FIXED = ("NMDS streams place new rows against a fixed landmark configuration and are never refitted, so "
               "{what} is not available; start a new stream (ppdm stream init --method nmds) on the whole table")


@dataclass
class StreamResult:
    """What one streaming command did (counts and timings only: nothing secret)."""

    summary: dict[str, Any] = field(default_factory=dict)
    written: list[Path] = field(default_factory=list)


# ------------------------------------------------------------------------------------------- locking


@contextlib.contextmanager
def state_lock(state: PathLike, *, wait: float = 0.0, outputs: Sequence[PathLike | None] = ()) -> Iterator[None]:
    """Hold an exclusive lock on the state (waiting up to ``wait`` seconds), or fail cleanly; then finish what a
    killed update left beside the state and ``outputs`` (:func:`ppdm.data.publish.recover`). The lock lives in
    the user's lock directory (:mod:`ppdm.data.locks`): nothing is left beside the state."""
    from ppdm.data.locks import path_locks
    from ppdm.data.publish import recover

    p = Path(state)

    def busy(_: Path) -> StateError:
        return StateError(f"state file '{p.name}' is being updated by another process; wait for it to finish "
                          "(or pass --wait SECONDS)")

    with path_locks([p], busy=busy, wait=wait):
        recover([p, *(o for o in outputs if o is not None)])
        yield


# --------------------------------------------------------------------------------------- transaction


class Transaction:
    """The outputs of one update and the new state, published as one set (:func:`ppdm.data.io.publish_together`:
    all written whole, then renamed into place in staging order, the state last)."""

    def __init__(self) -> None:
        self.staged: list[tuple[Path, Callable[[Path], None]]] = []

    def stage(self, target: Path, write: Callable[[Path], None], mode: int | None = None) -> None:
        """Add ``target``, written by ``write(path)`` at commit (``mode``: kept for callers; a state's writer
        makes it owner-only itself)."""
        self.staged.append((target, write))

    def commit(self) -> None:
        from ppdm.data.io import publish_together

        staged, self.staged = self.staged, []
        publish_together(staged)

    def abort(self) -> None:
        self.staged = []


def write_table_to(df: pd.DataFrame, fmt: str) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            if fmt == "parquet":
                df.to_parquet(f, index=False)
            else:  # fmt 'tsv' (ppdm.data.io.output_format): tabs, as a .tsv is read back
                text = df.to_csv(index=False, lineterminator="\n", sep="\t" if fmt == "tsv" else ",")
                f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())

    return write


# ------------------------------------------------------------------------------ state (de)serialising


def pack_columns(df: pd.DataFrame, cols: Sequence[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Pass-through columns as plain arrays (numbers natively, text as unicode plus a missing mask)."""
    meta: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    for i, c in enumerate(cols):
        s = df[c]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            meta[c] = {"key": f"pass_{i}", "text": False}
            arrays[f"pass_{i}"] = s.to_numpy()
        else:
            missing = s.isna().to_numpy()
            meta[c] = {"key": f"pass_{i}", "text": True}
            arrays[f"pass_{i}"] = np.where(missing, "", s.astype(str).to_numpy()).astype(str)
            arrays[f"pass_{i}_missing"] = missing
    return meta, arrays


def unpack_columns(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> pd.DataFrame:
    out = {}
    for c, info in meta.items():
        a = arrays[info["key"]]
        if info["text"]:
            a = np.where(arrays[info["key"] + "_missing"], None, a.astype(object))
        out[c] = a
    return pd.DataFrame(out)


def concat_columns(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([old, new[list(old.columns)]], ignore_index=True)


@dataclass
class Stream:
    est: Any  # IncrementalSVD, or NmdsStream for method 'nmds'
    schema: Schema
    method: str
    passthrough: pd.DataFrame | None  # None for append-only states
    #: the release key (pseudonyms and row orders of every batch come from it); None in older states
    key: Any = None
    #: the linkable layout (original ids and order), chosen at init
    keep_ids: bool = True
    #: releases written so far (each batch's row order is its own sub-stream of the key)
    batches: int = 0

    def hide(self, frame: pd.DataFrame, kind: int, keep_ids: bool | None = None) -> pd.DataFrame:
        """Pseudonymous ids and a shuffled order for one released table (unless the layout is linkable)."""
        kept = self.keep_ids if keep_ids is None else keep_ids
        if self.key is None:
            return frame
        from ppdm.keys import hide_identity

        self.batches += 1
        return hide_identity(frame, self.schema.id, self.key, keep_ids=kept, stream=(kind, self.batches))[0]

    @property
    def kept_columns(self) -> list[str]:
        return [c for c in self.schema.columns if c not in self.schema.released and c not in self.schema.dropped]

    def save(self, path: Path) -> None:
        header, arrays = self.est.to_state()
        stream: dict[str, Any] = {"method": self.method, "schema": self.schema.to_dict(),
                                  "append_only": self.passthrough is None,
                                  "rank": int(self.est.rank),
                                  "n_rows": int(self.est.n_samples_seen_),
                                  "n_columns": int(self.est.n_features_in_),
                                  "preprocess": self.est.preprocess, "update_stats": bool(self.est.update_stats),
                                  "keep_ids": bool(self.keep_ids), "batches": int(self.batches)}
        if self.key is not None:
            stream["key"] = {"entropy": str(self.key.entropy), "known": bool(self.key.known)}
        if self.passthrough is not None:
            meta, extra = pack_columns(self.passthrough, list(self.passthrough.columns))
            stream["passthrough"] = meta
            arrays = arrays | extra
        save_state(path, KIND, {"estimator": header, "stream": stream}, arrays)

    @classmethod
    def load(cls, path: PathLike) -> Stream:
        header, arrays = load_state(path, KIND)
        try:
            st = header["stream"]
            schema = Schema.from_dict(st["schema"])
            passthrough = None if st["append_only"] else unpack_columns(st.get("passthrough", {}), arrays)
            method = st["method"]
        except (KeyError, TypeError, ValueError):
            raise StateError(f"state file '{Path(path).name}' lacks the stream description; it was made by "
                             "another version") from None
        if method == "nmds":
            from ppdm.streaming.nmds import NmdsStream

            est: Any = NmdsStream.from_state(header["estimator"], arrays)
        else:
            est = IncrementalSVD.from_state(header["estimator"], arrays)
        if len(schema.released) != est.n_features_in_:
            raise StateError(f"state file '{Path(path).name}' is inconsistent (schema and factors disagree)")
        key = None
        if isinstance(st.get("key"), dict):
            from ppdm.keys import ReleaseKey

            key = ReleaseKey(int(st["key"]["entropy"]), bool(st["key"].get("known", False)))
        return cls(est, schema, method, passthrough, key, bool(st.get("keep_ids", key is None)),
                   int(st.get("batches", 0)))


def summary(stream: Stream, t0: float | None, n_new: int | None) -> dict[str, Any]:
    est = stream.est
    s: dict[str, Any] = {
        "method": stream.method,
        "mode": ("landmark placement" if stream.method == "nmds"
                 else "append-only" if stream.passthrough is None else "refresh-capable"),
        "rank": int(est.rank),
        "n_rows": int(est.n_samples_seen_),
        "n_released_columns": int(est.n_features_in_),
        "n_updates": int(est.n_updates_),
        "preprocess": est.preprocess,
        "update_stats": bool(est.update_stats),
    }
    if n_new is not None:
        s["n_new_rows"] = n_new
    if t0 is not None:
        s["seconds"] = time.perf_counter() - t0
    return s
