"""``ppdm release`` of a large Parquet or CSV/TSV input on a Dask cluster, with this machine holding no table.

The workers read the input themselves (a path every worker sees: a shared file system, or the same path on
each machine) and do everything that needs the whole table:

1. **Profile** (one task): read the table, give its columns their roles, make the design, the label and
   the shown columns exactly as :func:`ppdm.release.table.prepare_table` does here; return only what is
   small: the design's fingerprint, the screening sample, the original's utility, the uniqueness of the
   shown columns, the fitted whole-table codec.
2. **Screening**: the sample's candidates as tasks, as for any large table.
3. **Confirmation** (a task per candidate): each worker makes the design again from the file, checks it
   against the fingerprint, and makes the label, the shown columns and the held-out rows from the same
   seed (:class:`TableOnWorkers`).
4. **The chosen release** (one task): a worker makes it, its record and its report, and writes them into a
   temporary directory beside the output (made here); this machine renames it into place.

The memory this machine needs is the screening sample's and the scores'; each worker needs what a release
on one machine needs (about four times the table). A worker keeps the table it made for the next task of
the same table (one table at a time) and drops it when the release is written. The files the worker writes get
this user's umask once they are here (the state stays owner-only).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ppdm.release.table import Prepared, TableSpec

__all__ = ["TableOnWorkers", "release_on_cluster"]


@dataclass(frozen=True)
class TableOnWorkers:
    """A table as the workers read it: how to read it, the configuration, and the fingerprint of its design
    (None until the profile has made it: then every worker checks the design it makes against it)."""

    spec: TableSpec
    cfg: Any
    seed: int
    screen_above: int
    rows: int
    fingerprint: str | None = None
    kind: str = "Parquet"  # what the record calls the input: Parquet, CSV or TSV
    # a release by parts (see ppdm.release.parts): this table is part ``part`` of ``parts`` of the input's
    # ``total`` rows, assigned by the hidden entropy; ``columns``: the first part's columns (name, type, role,
    # treatment) and whether it was released whole, which every other part must match
    parts: int = 1
    part: int = 0
    total: int = 0
    assignment: Any = None
    columns: tuple[Any, ...] | None = None

    def __len__(self) -> int:
        return self.rows

    def load(self) -> Prepared:
        """The table made ready on this worker (kept for the next task), checked against the fingerprint."""
        from ppdm.exceptions import InputError
        from ppdm.release.table import prepare_table

        with _LOCK:
            held = _HELD.get(self._key())
            if held is not None:
                return held
            _HELD.clear()  # one table at a time
            path = Path(str(self.spec.source))
            if not path.exists():
                raise InputError(f"a Dask worker cannot see the input '{path.name}'; give the workers a path they "
                                 "share (a shared file system, or the same path on each machine), or leave "
                                 "--backend dask out")
            # a task is one candidate: the worker's memory is checked for one at a time
            frame = whole = None
            if self.parts > 1:
                from ppdm.data.io import expand_inputs
                from ppdm.release.parts import read_part

                frame = read_part(expand_inputs(self.spec.source), self.assignment.value, self.parts, self.total,
                                  self.part)
                whole = None if self.columns is None else bool(self.columns[-1])
            prep = prepare_table(self.spec, self.cfg, seed=self.seed, screen_above=self.screen_above, workers=1,
                                 frame=frame, whole=whole)
            del frame
            if self.columns is not None and columns_of(prep) != self.columns:
                raise InputError(
                    f"part {self.part + 1} of the table has other column types or roles than its first part "
                    f"({_first_difference(columns_of(prep), self.columns)}); name the roles with --roles, or "
                    "release it with a larger --part-rows")
            if self.fingerprint is not None and prep.fingerprint != self.fingerprint:
                raise InputError(
                    f"a Dask worker read a different table from '{Path(str(self.spec.source)).name}' than the "
                    "worker that profiled it; give the workers the same file (a shared path), or leave --backend "
                    "dask out")
            for a in (prep.X, prep.y, prep.categories):
                if a is not None:  # the tasks on this worker share them: changed only in place, in turn
                    a.flags.writeable = False
            _HELD[self._key()] = prep
            return prep

    @contextlib.contextmanager
    def rows_in_place(self) -> Iterator[tuple[np.ndarray, Any, Any, Any]]:
        """What a confirmation measures, all made here: the design, the label, the shown columns and the
        held-out rows, writeable by this task alone while it holds them (a confirmation brings its training
        rows together in place instead of copying them, and puts them back before it lets go; the tasks of
        this worker that use the table take turns)."""
        with _IN_USE:
            prep = self.load()
            arrays = [a for a in (prep.X, prep.y, prep.categories) if a is not None]
            for a in arrays:
                a.flags.writeable = True
            try:
                yield prep.X, prep.y, prep.categories, prep.folds[0] if prep.folds else None
            finally:
                for a in arrays:
                    a.flags.writeable = False

    def release(self) -> Prepared:
        """The table for the chosen release, no longer kept here: its release frees it once made."""
        with _IN_USE:
            prep = self.load()
            with _LOCK:
                _HELD.clear()
        return prep

    def _key(self) -> str:
        where = None if self.assignment is None else (self.parts, self.part, self.total, self.assignment.value)
        return repr((str(self.spec), self.cfg.model_dump_json(), self.seed, self.screen_above, where))


def columns_of(prep: Prepared) -> tuple[Any, ...]:
    """A table's columns as the parts of a release by parts must agree on them, and whether it is whole."""
    return (*((i.name, i.type, i.role, i.treatment) for i in prep.infos), prep.codec is not None)


def _first_difference(found: tuple[Any, ...], first: tuple[Any, ...]) -> str:
    if found[-1] != first[-1]:
        return "it is released whole, the first part is not" if found[-1] else "the first part is released whole"
    mine, theirs = {c[0]: c for c in found[:-1]}, {c[0]: c for c in first[:-1]}
    for name in [*mine, *(c for c in theirs if c not in mine)]:
        a, b = mine.get(name), theirs.get(name)
        if a is None or b is None:
            return f"column '{name}' is in one of them only"
        if a != b:
            return f"column '{name}': {a[1]}, {a[3]}; in the first part {b[1]}, {b[3]}"
    return "their columns differ"


_LOCK = threading.RLock()
_IN_USE = threading.Lock()  # held by the task that changes the table in place (its training rows moved)
_HELD: dict[str, Prepared] = {}


def profile(table: TableOnWorkers, screen_size: int) -> dict[str, Any]:
    """On a worker: the table's small facts and the screening sample (see the module)."""
    from ppdm.release.scale import screen_rows
    from ppdm.release.select import passthrough_uniqueness
    from ppdm.release.table import original_utility

    prep = table.load()
    X, y = prep.X, prep.y
    rows = screen_rows(y, len(X), table.seed, size=screen_size)
    return {
        "cfg": prep.cfg, "fingerprint": prep.fingerprint, "side": prep.side, "shown": prep.shown,
        "shape": X.shape, "columns": list(prep.schema.released), "codec": prep.codec, "label_note": prep.label_note,
        "y_rows": None if y is None else len(y),
        "sample": (X[rows], None if y is None else y[rows], prep.categories[rows]),
        "original_utility": original_utility(X, y, prep.folds, table.seed, prep.codec),
        "uniqueness": passthrough_uniqueness(prep.categories),
        "column_roles": columns_of(prep),
    }


def write_release(table: TableOnWorkers, into: str, out: str, chosen: dict[str, Any], cands: list[dict[str, Any]],
                  original: dict[str, float], failed: list[dict[str, Any]], note: str | None, key: Any,
                  keep_ids: bool, escape_formulas: bool, parts: dict[str, Any] | None = None) -> dict[str, Any]:
    """On a worker: make the chosen release from the table read here and write it, its state, record and
    report into ``into`` (an empty directory the asking machine made beside the output); the record.

    A part of a release by parts after the first writes its release and state only (see
    :func:`ppdm.release.outputs.write_outputs`); ``parts``: what the first part's record says of them."""
    from ppdm.attacks import ThreatModel
    from ppdm.exceptions import OutputError
    from ppdm.release.outputs import write_outputs

    if not Path(into).is_dir():
        raise OutputError(f"a Dask worker cannot see the output directory's parent '{Path(into).parent.name}'; "
                          "write the release to a path the workers share (as the input), or leave --backend dask "
                          "out")
    prep = table.release()
    if table.parts > 1 and prep.schema.id is not None:
        id_buckets(prep.df[prep.schema.id], key.value, table.parts, Path(into))
    # the design goes to the release as its only holder, which frees it once the record is made
    design = [prep.X]
    df, y, cfg, schema, codec, infos = prep.df, prep.y, prep.cfg, prep.schema, prep.codec, prep.infos
    read_as = prep.table_fingerprint if table.parts <= 1 else None  # a part's is not the table's
    del prep
    res = write_outputs(df, schema, design, y, cfg, ThreatModel.parse(cfg.threat), chosen, cands, original,
                         table.fingerprint, Path(out), True, [], key=key.value, keep_ids=keep_ids, failed=failed,
                         label_note=note, escape_formulas=escape_formulas, codec=codec, infos=infos, into=Path(into),
                         part=table.part, parts=parts, original_fingerprint=read_as)
    return res.record


def id_buckets(ids: Any, key: Any, buckets: int, into: Path) -> None:
    """On a worker: a part's ids as keyed 64-bit hashes (their pseudonyms), in ``buckets`` files by hash, so
    that each bucket of every part can be checked for a repeated id by one task (:func:`repeated_ids`)."""
    from ppdm.keys import pseudonyms

    hashes = []
    for start in range(0, len(ids), 65_536):
        text = "".join(pseudonyms(key, ids.iloc[start:start + 65_536]))
        hashes.append(np.frombuffer(bytes.fromhex(text), dtype=">u8").astype(np.uint64))
    h = np.concatenate(hashes) if hashes else np.zeros(0, dtype=np.uint64)
    where = h % np.uint64(buckets)
    for b in range(buckets):
        np.save(into / f"ids.{b}.npy", h[where == b], allow_pickle=False)


def repeated_ids(dirs: list[str], bucket: int) -> int:
    """On a worker: how many ids of one bucket repeat one in another part (each part has checked its own)."""
    h = np.concatenate([np.load(Path(d) / f"ids.{bucket}.npy", allow_pickle=False) for d in dirs])
    return int(len(h) - len(np.unique(h)))


def release_on_cluster(spec: TableSpec, cfg: Any, key: Any, out: Path, force: bool, *, cache: Any,
                       progress: bool, where: str, keep_ids: bool, escape_formulas: bool, rows: int | None,
                       part_rows: int | None = None) -> Any:
    """The release of a large input, its table read by the cluster's workers (see the module).

    ``rows``: a Parquet input's rows (from its footers); None for a text table, whose rows the worker that
    profiles it counts. A text table that turns out to have no more than
    :data:`~ppdm.release.scale.SCREEN_ABOVE` rows is left to this machine (None is returned, nothing written):
    such a table is swept on every row, not screened on a sample.

    A Parquet input of more than ``part_rows`` rows (None: :data:`~ppdm.release.parts.PART_ROWS`) is released by
    parts (:mod:`ppdm.release.parts`): the sweep reads and measures its first part, and each part is released
    and written by a worker that reads that part only.
    """
    from distributed import get_client

    from ppdm.backends._blockwise import Hidden
    from ppdm.data.columns import parse_roles
    from ppdm.data.io import dir_mode, text_columns
    from ppdm.data.schema import check_named
    from ppdm.exceptions import InputError
    from ppdm.keys import MECHANISM_STREAM, assignment_entropy, part_sizes, warn_keep_ids, warn_known
    from ppdm.release.outputs import ReleaseResult, replace_dir
    from ppdm.release.parts import PART_ROWS, part_count
    from ppdm.release.scale import SCREEN_ABOVE, SCREEN_ROWS
    from ppdm.release.source import input_kind, parquet_columns
    from ppdm.release.stages import candidate_jobs, mark_choice, split_failed, sweep_notes
    from ppdm.release.sweep import screen_and_confirm

    # the options that name columns are checked here, against the file's schema (no row is read), so a
    # misspelt name gets the same one-line answer as a release made here
    if rows is not None:  # Parquet: its rows came from its footers
        kind, names = "Parquet", parquet_columns(spec.source)
    else:
        kind, names = input_kind(spec.source), text_columns(spec.source, spec.sep)
    check_named(names, id=spec.id, label=spec.label, columns=spec.columns, drop=spec.drop)
    unknown = [c for c in parse_roles(spec.roles) if c not in names]
    if unknown:
        raise InputError(f"--roles names column '{unknown[0]}', which the table does not have; check the name")
    client = get_client()
    try:
        seed = 0 if cfg.seed is None else cfg.seed
        table = TableOnWorkers(replace(spec, source=str(Path(str(spec.source)).resolve())), cfg, seed, SCREEN_ABOVE,
                               0 if rows is None else rows, kind=kind)
        sizes = None
        if rows is not None and rows > (part_rows or PART_ROWS):
            # a release by parts: the rows' parts come from the key (no row is read to size them)
            entropy = assignment_entropy(key)
            sizes = part_sizes(entropy, part_count(rows, part_rows or PART_ROWS), rows)
            table = replace(table, parts=len(sizes), total=rows, assignment=Hidden(entropy), rows=sizes[0])
        facts = _on_a_worker(client, progress, "reading the table on a worker" if sizes is None else
                             f"reading the first of {len(sizes)} parts on a worker", profile, table, SCREEN_ROWS)
        rows = int(facts["shape"][0])
        if rows <= SCREEN_ABOVE and sizes is None:
            return None  # swept on every row here (the worker's copy goes in the finally below)
        warn_known(key)
        if keep_ids:
            warn_keep_ids()  # here, where the user sees it (the worker that writes the release warns in its log)
        cfg = facts["cfg"]
        # from here on every worker checks that it reads the table the profile read (each other part, that
        # its columns are the first part's)
        table = replace(table, rows=rows, fingerprint=facts["fingerprint"],
                        columns=None if sizes is None else facts["column_roles"])
        jobs = candidate_jobs(cfg, cache, shape=facts["shape"], codec=facts["codec"], fingerprint=facts["fingerprint"],
                              label=spec.label, shown=facts["shown"], side=facts["side"])
        context = {"key_seed": key.seed(MECHANISM_STREAM), "columns": facts["columns"], "categories": None,
                   "holdout": None, "seed_known": key.known, "codec": facts["codec"], "shown_names": facts["shown"],
                   "label_name": spec.label}
        everything = screen_and_confirm(None, None, jobs, cfg, cache, progress, seed, context, source=table,
                                        sample=facts.pop("sample"), n_rows=rows)
        # the rungs of an epsilon ladder its ends settled are left out (ppdm.release.ladder.ladder_rungs)
        failed, cands = split_failed([c for c in everything if "not_measured" not in c])
        note = sweep_notes(facts["label_note"], n=rows, y_rows=facts["y_rows"], where=where, on_workers=kind,
                           parts=sizes)
        best = mark_choice(cands, cfg, shown=facts["shown"], uniqueness=facts["uniqueness"],
                           majority_pct=facts["original_utility"].get("majority_pct"))
        from ppdm.data.publish import staging_dir

        tmp = staging_dir(out)
        try:
            os.chmod(tmp, dir_mode())  # the user's umask, like any new directory
            args = (cands[best], cands, facts["original_utility"], failed, note, Hidden(key), keep_ids,
                    escape_formulas)
            if sizes is None:
                record = _on_a_worker(client, progress, "making the chosen release on a worker", write_release, table,
                                      str(tmp), str(out), *args)
            else:
                record = _release_parts(client, progress, table, sizes, tmp, out, cfg.output_format, args)
            _follow_umask(tmp)
            replace_dir(tmp, out, force)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return ReleaseResult(out, record)
    finally:
        with contextlib.suppress(Exception):  # a cluster gone meanwhile has nothing left to drop
            client.run(_forget)  # the workers' copies of the table: not kept past this release


def _release_parts(client: Any, progress: bool, table: TableOnWorkers, sizes: list[int], tmp: Path, out: Path,
                   fmt: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """Each part released and written by a worker into a directory of its own inside ``tmp``, the first
    part last (its record says what the others found), then streamed into one release and one state in
    ``tmp``; the record."""
    from distributed import as_completed

    from ppdm.data.io import dir_mode
    from ppdm.release.parts import concat_releases, describe, merge_states

    dirs = [tmp / f"part-{j + 1}" for j in range(len(sizes))]
    for d in dirs:
        d.mkdir()
        os.chmod(d, dir_mode())  # as the directory around it (the workers write there); each state is owner-only
    later = [client.submit(write_release, replace(table, part=j, rows=sizes[j], fingerprint=None), str(dirs[j]),
                           str(out), *args, pure=False) for j in range(1, len(sizes))]
    others = []
    try:
        with _counting(progress, f"releasing parts 2-{len(sizes)} on the workers", len(later)) as done:
            for future in as_completed(later):
                others.append(future.result())
                done()
    except BaseException:
        client.cancel(later)  # a part that failed (or an interrupt) stops the others: nothing will be published
        raise
    info = describe(len(sizes), sizes)
    elsewhere: dict[str, int] = {}
    for r in others:
        for c, k in (r.get("formula_cells") or {}).items():
            elsewhere[c] = elsewhere.get(c, 0) + int(k)
    if elsewhere:
        info["formula_cells_in_other_parts"] = elsewhere
    record = _on_a_worker(client, progress, "releasing the first part on a worker", write_release, table,
                          str(dirs[0]), str(out), *args, info)
    if table.spec.id is not None:
        # an id in two parts: each bucket of the ids' keyed hashes checked across the parts by one task
        from ppdm.data.schema import check_unique_ids

        checks = [client.submit(repeated_ids, [str(d) for d in dirs], b, pure=False) for b in range(len(sizes))]
        check_unique_ids(None, table.spec.id, sum(client.gather(checks)))  # the buckets go with the parts' dirs
    concat_releases([d / f"release.{fmt}" for d in dirs], tmp / f"release.{fmt}", fmt)
    merge_states([d / "release.state" for d in dirs], tmp / "release.state",
                 {k: v for k, v in info.items() if k in ("count", "rows", "block")})
    for name in ("release.json", "report.html"):
        os.replace(dirs[0] / name, tmp / name)
    for d in dirs:
        shutil.rmtree(d)
    return record


@contextlib.contextmanager
def _counting(progress: bool, what: str, total: int) -> Iterator[Any]:
    """A bar of ``total`` tasks with its ETA on a terminal (nothing elsewhere); yields the call that counts one."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if not (progress and console.is_terminal):
        yield lambda: None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(what, total=total)
        yield lambda: bar.advance(task)


def _follow_umask(directory: Path) -> None:
    """The files a worker wrote get this user's umask (the state stays owner-only). A worker running as
    another user leaves its own modes: changing them is its owner's right only."""
    from ppdm.data.io import file_mode

    for f in directory.iterdir():
        try:
            os.chmod(f, file_mode(secret=f.name == "release.state"))
        except OSError:
            pass


def _forget() -> None:
    """On a worker: drop the table kept for the next task."""
    with _LOCK:
        _HELD.clear()


def _on_a_worker(client: Any, progress: bool, what: str, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` as one task of the cluster, with a spinner meanwhile."""
    from rich.console import Console

    future = client.submit(fn, *args, pure=False)
    console = Console(stderr=True)
    with console.status(what, spinner="dots") if progress and console.is_terminal else contextlib.nullcontext():
        return future.result()
