"""Release keys and the identity channel.

A release's random draws are its key: whoever can regenerate them can subtract the noise or invert the
rotation. By default the key is 128 bits of operating-system entropy (``numpy.random.SeedSequence()``),
stored only in the owner-only state file, so the release can be reproduced from its state and from
nothing else. A seed given by the user (``--seed``, ``random_state``) makes a run repeatable for tests
and reproductions; such a release is *undoable* by anyone who knows or guesses the seed, and every
record and report says so.

The identity channel: the original ids and the original row order link each released row to its
person. By default ids are replaced by random pseudonyms and rows are written in a random order drawn
from the key; the mapping (released row -> original row) is key material and lives in the state file.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import ParameterError, PrivacyWarning

__all__ = ["ReleaseKey", "release_key", "Identity", "hide_identity", "restore_order", "pseudonyms", "PART_BLOCK",
           "assignment_entropy", "part_identity", "part_rows", "part_sizes"]

#: sub-stream numbers spawned from a release key (never small integers used as seeds themselves)
MECHANISM_STREAM = 0
IDENTITY_STREAM = 1
EVALUATION_STREAM = 2


@dataclass(frozen=True)
class ReleaseKey:
    """The entropy of a release's randomness and whether it is known outside the state file.

    ``entropy`` seeds every random draw (through :meth:`stream` and :meth:`seed`); ``known`` is True
    when the caller chose it (a seed), i.e. when the release can be undone by whoever knows that seed.
    """

    entropy: int
    known: bool

    def stream(self, number: int) -> np.random.Generator:
        """An independent generator for one purpose (mechanism draws, identity, evaluation)."""
        return np.random.default_rng(np.random.SeedSequence(self.entropy, spawn_key=(number,)))

    def seed(self, number: int) -> int:
        """A 128-bit integer seed of sub-stream ``number`` (for APIs that take ``random_state``).

        A user-chosen seed is passed through unchanged for the mechanism stream, so that a release made
        with ``--seed N`` is the same as ``Mechanism(random_state=N)`` in Python.
        """
        if self.known and number == MECHANISM_STREAM:
            return self.entropy
        return _sub_seed(self.entropy, (number,))

    def part_seed(self, part: int) -> int:
        """The mechanism's seed for part ``part`` of a release by parts: the first part's is :meth:`seed`'s,
        every other part's is a sub-stream of its own (so a part's draws tell nothing of another's)."""
        if part == 0:
            return self.seed(MECHANISM_STREAM)
        return _sub_seed(self.entropy, (MECHANISM_STREAM, 1, part))

    def describe(self, *, kept: bool = True) -> dict[str, object]:
        """What a record may say about the key (never the key itself); ``kept``: whether a state file keeps it
        (``ppdm perturb`` without ``--state`` keeps nothing)."""
        if self.known:
            return {"source": "seed given by the user", "seed_known": True,
                    "undoable": "anyone who knows or guesses the seed can regenerate the random draws and undo "
                                "the release"}
        where = "kept only in the state file" if kept else "kept nowhere (no state file was asked for)"
        return {"source": f"operating-system entropy (128 bits), {where}", "seed_known": False}


def _sub_seed(entropy: int, spawn_key: tuple[int, ...]) -> int:
    """A 128-bit integer seed of the sub-stream ``spawn_key`` of ``entropy``."""
    words = np.random.SeedSequence(entropy, spawn_key=spawn_key).generate_state(4, np.uint32)
    return int(sum(int(w) << (32 * i) for i, w in enumerate(words)))


def release_key(seed: object = None) -> ReleaseKey:
    """The key of a new release: fresh entropy when ``seed`` is None, else the given seed (marked known)."""
    if seed is None:
        return ReleaseKey(int(np.random.SeedSequence().entropy), known=False)  # type: ignore[arg-type]
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ParameterError(f"seed must be a non-negative integer; got {type(seed).__name__}")
    if int(seed) < 0:
        raise ParameterError(f"seed must be a non-negative integer; got {int(seed)} (leave it out for a secret key)")
    return ReleaseKey(int(seed), known=True)


def warn_known(key: ReleaseKey) -> None:
    if key.known:
        warnings.warn("a release made with a known seed can be undone by anyone who knows or guesses the seed; "
                      "leave --seed out to draw a secret key", PrivacyWarning, stacklevel=3)


#: ids turned into pseudonyms at a time
_PSEUDONYM_CHUNK = 65_536


def pseudonyms(key: ReleaseKey, ids: object) -> np.ndarray:
    """Keyed pseudonyms of ids: 16 hex digits of a keyed BLAKE2b hash of each id's text.

    Without the key they carry no information about the ids (and cannot be recomputed from them); with the
    state, the owner maps every pseudonym back by hashing the original ids again. Ids compare as text, so
    the same id gets the same pseudonym in every batch of one release.
    """
    secret = np.random.SeedSequence(key.entropy, spawn_key=(IDENTITY_STREAM, 1)).generate_state(8, np.uint32)
    k = secret.tobytes()
    ids = pd.Series(ids)
    out = np.empty(len(ids), dtype=object)
    for start in range(0, len(ids), _PSEUDONYM_CHUNK):  # a million ids' text is never held at once
        text = ids.iloc[start:start + _PSEUDONYM_CHUNK].astype(str)
        out[start:start + len(text)] = [hashlib.blake2b(v.encode(), key=k, digest_size=8).hexdigest() for v in text]
    return out


@dataclass(frozen=True)
class Identity:
    """How released rows map to original rows (key material: state file only).

    ``order[j]`` is the original row of released row ``j``; ``kept`` is True for the linkable layout
    (``--keep-ids``). Pseudonymous ids are recomputed from the key (:func:`pseudonyms`).
    """

    order: np.ndarray
    kept: bool

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"identity.order": np.asarray(self.order, dtype=np.int64)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], kept: bool) -> Identity | None:
        if "identity.order" not in arrays:
            return None
        return cls(np.asarray(arrays["identity.order"], dtype=np.int64), kept)


def warn_keep_ids(stacklevel: int = 3) -> None:
    warnings.warn("--keep-ids publishes the original ids in the original row order: every row is linkable to its "
                  "record; use it only for releases that stay inside the organisation", PrivacyWarning,
                  stacklevel=stacklevel)


def hide_identity(frame: pd.DataFrame, id_column: str | None, key: ReleaseKey, *, keep_ids: bool = False,
                  stream: tuple[int, ...] = (), in_order: bool = False) -> tuple[pd.DataFrame, Identity]:
    """Shuffle the released rows and replace the ids by keyed pseudonyms (unless ``keep_ids``).

    The permutation comes from the key's identity stream (``stream`` spawns one per partition or batch),
    so the state reproduces it. ``in_order``: ``frame``'s rows are already in :func:`release_order`
    (a large release shuffled in place, see :func:`shuffle_rows`); only the ids are replaced.
    """
    n = len(frame)
    if keep_ids:
        warn_keep_ids(stacklevel=4)
        return frame, Identity(np.arange(n, dtype=np.int64), kept=True)
    order = release_order(key, n, stream=stream)
    out = frame if in_order else _rows_in_order(frame, order)
    if id_column is not None and id_column in out.columns:
        out[id_column] = pseudonyms(key, out[id_column])
    return out, Identity(order, kept=False)


def release_order(key: ReleaseKey, n: int, *, stream: tuple[int, ...] = ()) -> np.ndarray:
    """The released position's original row: the permutation :func:`hide_identity` applies (key material)."""
    rng = np.random.default_rng(np.random.SeedSequence(key.entropy, spawn_key=(IDENTITY_STREAM, 0, *stream)))
    return rng.permutation(n).astype(np.int64)


def shuffle_rows(A: np.ndarray, order: np.ndarray) -> None:
    """``A[:] = A[order]`` in place, a column at a time: a table-sized array is shuffled with one column of
    working memory."""
    for j in range(A.shape[1]):
        A[:, j] = A[order, j]


def _rows_in_order(frame: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """``frame.iloc[order].reset_index(drop=True)``, a column at a time: a large release is copied once,
    not twice, and the unshuffled frame can go as soon as this returns."""
    if frame.columns.has_duplicates:
        return frame.iloc[order].reset_index(drop=True)
    columns = {c: frame[c].array.take(order) for c in frame.columns}
    return pd.DataFrame(columns, index=pd.RangeIndex(len(order)), copy=False)


def restore_order(release: pd.DataFrame, identity: Identity | None, key: ReleaseKey, *,
                  original_ids: pd.Series | None = None, id_column: str | None = None) -> pd.DataFrame:
    """Put a released table back in the original row order (and ids), from the state.

    With an id column, rows are matched through the pseudonyms (so a release that was filtered or
    reordered after publication still aligns); otherwise by the stored permutation.
    """
    if identity is not None and identity.kept:
        return release
    if original_ids is not None and id_column is not None and id_column in release.columns:
        hashed = pseudonyms(key, original_ids)
        where = pd.Index(hashed).get_indexer(release[id_column].astype(str))
        if (where < 0).any():
            raise ParameterError(f"{int((where < 0).sum())} released id(s) are not pseudonyms of this state's ids; "
                                 "check that the state belongs to this release and the original")
        out = release.copy()
        out[id_column] = original_ids.to_numpy()[where]
        out.index = where
        return out.sort_index().reset_index(drop=True)
    if identity is None:
        raise ParameterError("this state holds no row mapping; give --id to align by the pseudonymous ids")
    if len(release) != len(identity.order):
        raise ParameterError(f"the release has {len(release)} rows and its state maps {len(identity.order)}; check "
                             "that the state belongs to this release (or give --id)")
    out = release.copy()
    out.index = identity.order
    return out.sort_index().reset_index(drop=True)


# A release by parts (a table larger than one worker should hold): each row goes to a part by a keyed draw,
# a block of rows at a time, so a part is read with the key and the row count, never a permutation of every row.

#: rows whose parts are drawn together (a block's draws depend on the assignment's entropy and its number only)
PART_BLOCK = 65_536


def assignment_entropy(key: ReleaseKey) -> int:
    """The entropy of the rows' assignment to parts: a sub-stream of the release key (key material)."""
    return _sub_seed(key.entropy, (IDENTITY_STREAM, 2))


def _part_block(entropy: int, parts: int, b: int) -> np.ndarray:
    rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(b,)))
    return rng.integers(0, parts, size=PART_BLOCK, dtype=np.int32)


def _parts_assigned(entropy: int, parts: int, n: int) -> Iterator[tuple[int, np.ndarray]]:
    """Each block's first row and its rows' parts, in order."""
    for b in range(-(-n // PART_BLOCK)):
        start = b * PART_BLOCK
        yield start, _part_block(entropy, parts, b)[:min(PART_BLOCK, n - start)]


def part_sizes(entropy: int, parts: int, n: int) -> list[int]:
    """The rows of each part (from the key alone: no row is read)."""
    sizes = np.zeros(parts, dtype=np.int64)
    for _, a in _parts_assigned(entropy, parts, n):
        sizes += np.bincount(a, minlength=parts)
    return [int(s) for s in sizes]


def part_rows(entropy: int, parts: int, n: int, part: int) -> np.ndarray:
    """The table's rows (0-based, increasing) that belong to ``part``."""
    found = [start + np.flatnonzero(a == part) for start, a in _parts_assigned(entropy, parts, n)]
    return np.concatenate(found).astype(np.int64) if found else np.zeros(0, dtype=np.int64)


def part_identity(header: dict[str, Any], arrays: dict[str, np.ndarray], key: ReleaseKey) -> np.ndarray:
    """The released row's original row for a release by parts: its parts' rows (from the key) in each
    part's released order, part after part."""
    info = header["parts"]
    parts, n = int(info["count"]), int(sum(info["rows"]))
    out = []
    # every part's rows from one pass over the blocks' draws (not one pass per part)
    for j, rows in enumerate(_rows_by_part(assignment_entropy(key), parts, n)):
        order = arrays.get("identity.order" if j == 0 else f"part{j}.identity.order")
        out.append(rows if order is None else rows[order])
    return np.concatenate(out)


def _rows_by_part(entropy: int, parts: int, n: int) -> list[np.ndarray]:
    """Each part's rows (0-based, increasing), as :func:`part_rows` gives them, all in one pass."""
    found: list[list[np.ndarray]] = [[] for _ in range(parts)]
    for start, a in _parts_assigned(entropy, parts, n):
        bounds = np.cumsum(np.bincount(a, minlength=parts))[:-1]
        for j, rows in enumerate(np.split(start + np.argsort(a, kind="stable"), bounds)):
            found[j].append(rows)
    return [np.concatenate(f).astype(np.int64) if f else np.zeros(0, dtype=np.int64) for f in found]
