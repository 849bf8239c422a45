"""Publishing a set of outputs as one: a process killed at any instant leaves the old set or the new set.

A **directory** (``ppdm release -o DIR``) is built complete in a fresh sibling and swapped into place in one
step: Linux's ``renameat2(RENAME_EXCHANGE)``, or, where the file system cannot exchange, two renames (the
old directory aside, the new one in) that the next run rolls back when it finds the old one aside and none in
place. A directory that cannot be renamed (a mount point, the working directory) is filled in place through a
journal, as a set of files is.

A **set of files** in several places (a release and its state) cannot be renamed in one step: each is written
whole to a staging file beside its target, then a journal naming every move is committed (one atomic rename:
the commit point), then the moves are made, the state last. A run killed before the commit leaves the
previous outputs and some staging files; after it, the journal. The next run that writes any of those
outputs (:func:`recover`, under the outputs' locks, before it checks anything) completes a committed journal
and removes what an uncommitted one staged, so a state that matches a published release is never deleted,
and no temporary file outlives the next run. Between two moves of a killed run a reader may find a new
release beside its old state: the state's fingerprints (:mod:`ppdm.flow.artifacts`) refuse the pair.

SIGTERM, SIGINT and SIGHUP are held back while a commit and its moves run, and delivered after them.

Named points between the steps (:func:`fault_point`) let the test suite kill a real run at each one: the
environment variable ``PPDM_TEST_FAULT=NAME[@N][:TERM]`` (read by these hooks alone; unset in production)
sends SIGKILL (or SIGTERM) to the process at the N-th time it reaches point NAME; the item ``noexchange``
in it (comma-separated) makes directories publish by two renames, as on a system that cannot exchange.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ppdm.exceptions import OutputError

__all__ = ["FAULT_ENV", "FAULT_POINTS", "fault_point", "publish_files", "staging_dir", "publish_directory",
           "recover", "recover_directory", "is_stream", "fsync_dir", "published"]

FAULT_ENV = "PPDM_TEST_FAULT"
#: every named point of the output layer, in the order a publication reaches them
FAULT_POINTS = (
    "file.written",      # one output written whole to its temporary file, not yet renamed
    "set.staged",        # every output of a set staged whole; nothing committed
    "set.committed",     # the journal committed; no output moved yet
    "set.moved-first",   # the first output of a set moved into place, the others not
    "set.moved",         # every output moved; the journal not yet removed
    "dir.staged",        # a release directory complete beside the old one
    "dir.swapped",       # the new directory in place; the old one not yet removed
    "dir.aside",         # (without exchange) the old directory moved aside; none in place
    "recover.started",   # a later run has begun to finish what a killed one left
)
_reached: dict[str, int] = {}
_published: list[Path] = []


def published() -> list[Path]:
    """The outputs this process has published (sets and directories), in order."""
    return list(_published)


def _fault_items() -> list[str]:
    return [x.strip() for x in os.environ.get(FAULT_ENV, "").split(",") if x.strip()]


def fault_point(name: str) -> None:
    """A named step of the output layer (see the module docstring); nothing happens unless a test asks."""
    for item in _fault_items():
        point, _, how = item.partition(":")
        point, _, nth = point.partition("@")
        if point != name:
            continue
        _reached[name] = _reached.get(name, 0) + 1
        if _reached[name] == (int(nth) if nth.isdigit() else 1):
            os.kill(os.getpid(), signal.SIGTERM if how.upper() == "TERM" else signal.SIGKILL)


# ---------------------------------------------------------------------------------------- signals


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGTERM, SIGINT and SIGHUP wait until the block is done (a commit and its moves are never cut by a
    polite signal); then they are delivered as they came."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    held = [s for s in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)) if s is not None]
    before = {s: signal.signal(s, lambda signum, frame: got.append(signum)) for s in held}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
        for s in got:
            os.kill(os.getpid(), s)


# ------------------------------------------------------------------------------------------ files


def is_stream(p: str | os.PathLike[str]) -> bool:
    """A character device or FIFO (``/dev/stdout``, ``/dev/null``, a named pipe): written into, never replaced."""
    try:
        st = os.stat(p)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)


def fsync_dir(d: Path) -> None:
    """Make the renames in ``d`` durable (where the system allows a directory to be synced)."""
    try:
        fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _stage_of(target: Path, token: str) -> Path:
    return target.parent / f".{target.name}.{token}.stage"


def _write_json(path: Path, data: dict[str, object]) -> None:
    """``path`` created whole (a temporary file renamed onto it): it exists complete or not at all."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def publish_files(writes: Sequence[tuple[str | os.PathLike[str], Callable[[Path], None]]]) -> None:
    """Write several outputs so that they replace their predecessors together, or not at all.

    Each ``write(path)`` writes one output completely to a staging file beside its target; when every one
    is written, a journal is committed and the staging files are renamed into place in the given order
    (put the state last: it is the key to the release beside it). A failure before the commit removes the
    staging files and leaves every earlier output as it was; a kill after it is completed by the next run
    (:func:`recover`). Devices and FIFOs are written into directly.
    """
    token = secrets.token_hex(6)
    staged: list[tuple[Path, Path]] = []
    writers: list[Callable[[Path], None]] = []
    peers: list[Path] = []
    committed = False
    try:
        for target, write in writes:
            if is_stream(target):  # by its own name: /dev/stdout resolves to a pipe no path names
                write(Path(target))
                continue
            real = Path(os.path.realpath(target))
            staged.append((_stage_of(real, token), real))
            writers.append(write)
        if not staged:
            return
        journal = staged[-1][1].parent / f".{staged[-1][1].name}.{token}.journal"
        plan = {"ppdm_journal": 1, "token": token, "moves": [[str(s), str(t)] for s, t in staged]}
        for _, target in staged[:-1]:
            # beside every other target: where its journal is, so a run that names only that target finds it
            peer = target.parent / f".{target.name}.{token}.peer"
            _write_json(peer, {"ppdm_peer": 1, "journal": str(journal), "stages": plan["moves"]})
            peers.append(peer)
        for (stage, _), write in zip(staged, writers, strict=True):
            write(stage)
        fault_point("set.staged")
        with _signals_held():
            if len(staged) > 1:
                _write_json(journal, plan | {"peers": [str(p) for p in peers]})
                # committed: from here the staging files belong to the journal (a failure leaves them for the
                # next run to move into place, never removes them)
                committed = True
                fault_point("set.committed")
            _complete_moves(staged, journal if len(staged) > 1 else None, peers)
        _published.extend(t for _, t in staged)
        staged, peers = [], []
    finally:
        for stage, _ in [] if committed else staged:
            with contextlib.suppress(OSError):
                os.unlink(stage)
        for peer in [] if committed else peers:
            with contextlib.suppress(OSError):
                os.unlink(peer)


def _complete_moves(moves: Sequence[tuple[Path, Path]], journal: Path | None, peers: Sequence[Path],
                    removals: Sequence[Path] = ()) -> None:
    """The moves of a committed set (those not made yet), its removals, then its journal's own files."""
    for k, (stage, target) in enumerate(moves):
        try:
            os.replace(stage, target)
        except FileNotFoundError:  # moved before a kill
            pass
        except IsADirectoryError:
            # a directory where a file of the set goes (made after the set was written): the set can go in whole
            # only once it is moved away, and it is not ppdm's to remove
            raise OutputError(f"'{target.name}' is a directory where a finished run's output of that name goes; "
                              "move the directory away and run again (the finished run's outputs then go in "
                              "place whole)") from None
        if k == 0 and len(moves) > 1:
            fault_point("set.moved-first")
    for gone in removals:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(gone)
    for d in {t.parent for _, t in moves}:
        fsync_dir(d)
    fault_point("set.moved")
    for peer in peers:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(peer)
    if journal is not None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal)
        fsync_dir(journal.parent)


# ----------------------------------------------------------------------------------------- recovery


#: the names the output layer gives its files beside an output NAME (TOKEN: 12 hex digits; RAND: the 8 characters
#: of Python's temporary names). Exact: the leftovers of an output never match those of another one beside it
#: (``a.csv`` and ``a.csv.bak``), which another run may be writing right now.
_TOKEN, _RAND = r"[0-9a-f]{12}", r"[a-z0-9_]{8}"
_KINDS = {
    "journal": rf"\.{{n}}\.{_TOKEN}\.journal",
    "peer": rf"\.{{n}}\.{_TOKEN}\.peer",
    "stage": rf"\.{{n}}\.(?:{_TOKEN}|\d+)\.stage",  # a process id: what an earlier ppdm named them
    "tmp": rf"\.{{n}}\.{_RAND}\.tmp|\.{{n}}\.{_TOKEN}\.(?:journal|peer)\.tmp|\.\.{{n}}\.{_TOKEN}\.stage\.{_RAND}\.tmp",
    "old": rf"\.{{n}}\.{_TOKEN}\.old|\.{{n}}\.old-\d+",  # (old-PID: an earlier ppdm's)
}


def _leftovers(d: Path, name: str, kind: str) -> list[Path]:
    """The output layer's files of ``kind`` beside output ``name`` in directory ``d``."""
    import re

    pattern = re.compile(_KINDS[kind].replace("{n}", re.escape(name)))
    try:
        entries = sorted(e for e in os.listdir(d) if e.startswith("."))
    except OSError:
        return []
    return [d / e for e in entries if pattern.fullmatch(e)]


def _read_json(path: Path, tag: str) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get(tag) == 1 else None


def _moves_of(plan: dict[str, object], token: str) -> list[tuple[Path, Path]]:
    """A journal's moves, each checked to move a staging file of this journal onto its own target (a journal
    planted by someone else can move nothing else)."""
    moves = []
    for pair in plan.get("moves", []):  # type: ignore[union-attr]
        stage, target = Path(pair[0]), Path(pair[1])
        ok = stage == _stage_of(target, token) or stage == target.parent / f".ppdm.{token}.stage" / target.name
        if not ok:
            raise OutputError(f"'{target.name}' has a damaged publication journal beside it; remove the hidden "
                              f".{target.name}.*.journal file (the outputs are as the journal's run left them)")
        moves.append((stage, target))
    return moves


def _finish_journal(journal: Path) -> None:
    """Complete a committed journal (idempotent: a kill meanwhile is completed by the next run)."""
    token = journal.name.rsplit(".", 2)[-2]
    plan = _read_json(journal, "ppdm_journal")
    if plan is None:
        raise OutputError(f"'{journal.name}' is not a readable ppdm journal; remove it (the outputs beside it are "
                          "as a killed run left them)")
    moves = _moves_of(plan, token)
    peers = [Path(p) for p in plan.get("peers", [])]  # type: ignore[union-attr]
    peers = [p for p in peers if p.name.endswith(f".{token}.peer")]
    removals = [Path(p) for p in plan.get("remove", [])]  # type: ignore[union-attr]
    removals = [p for p in removals if p.parent == journal.parent and p.name in plan.get("owned", [])]  # type: ignore[operator]
    _complete_moves(moves, journal, peers, removals)
    stage_dir = journal.parent / f".ppdm.{token}.stage"
    if stage_dir.is_dir():
        shutil.rmtree(stage_dir, ignore_errors=True)


def recover(paths: Sequence[str | os.PathLike[str]]) -> None:
    """Finish what killed runs left beside these outputs (called under their locks, before anything else).

    A committed journal is completed (its outputs were all written: the new set goes in place whole); what
    an uncommitted one staged is removed, with the temporary files of interrupted writes.
    """
    fault_point("recover.started")
    for p in paths:
        real = Path(os.path.realpath(p))
        d, name = real.parent, real.name
        for journal in _leftovers(d, name, "journal"):
            _finish_journal(journal)
        for peer in _leftovers(d, name, "peer"):
            info = _read_json(peer, "ppdm_peer")
            journal = Path(str(info["journal"])) if info is not None else None
            if journal is not None and journal.exists():
                _finish_journal(journal)  # committed: the set goes in whole, from whichever output names it
            else:
                token = peer.name.rsplit(".", 2)[-2]
                for pair in (info or {}).get("stages", []):  # type: ignore[union-attr]
                    stage = Path(pair[0])
                    if stage == _stage_of(Path(pair[1]), token):
                        with contextlib.suppress(OSError):
                            os.unlink(stage)
            with contextlib.suppress(OSError):
                os.unlink(peer)
        # staging files no journal names, and the temporary files of writes that were cut
        for junk in (*_leftovers(d, name, "stage"), *_leftovers(d, name, "tmp")):
            if junk.is_dir() and not junk.is_symlink():
                shutil.rmtree(junk, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(junk)


# ---------------------------------------------------------------------------------------- directories


def _in_place(real: Path) -> bool:
    """A directory that cannot be swapped by renames: a mount point, or the working directory or one above
    it (a swap would leave the shell of whoever runs ppdm in a removed directory)."""
    if not real.is_dir():
        return False
    if os.path.ismount(real):
        return True
    try:
        here = Path(os.getcwd()).resolve()
    except OSError:
        return False
    return here == real or real in here.parents


def staging_dir(out: str | os.PathLike[str]) -> Path:
    """A new, empty, owner-only directory in which a run builds the directory it will publish as ``out``
    (:func:`publish_directory`): a hidden sibling of ``out``, or, for a directory that is filled in place,
    a hidden directory inside it."""
    import tempfile

    real = Path(os.path.realpath(out))
    if _in_place(real):
        d = real / f".ppdm.{secrets.token_hex(6)}.stage"
        d.mkdir(mode=0o700)
        return d
    return Path(tempfile.mkdtemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent))


def publish_directory(staged: Path, out: str | os.PathLike[str], *, owned: Sequence[str], force: bool,
                      mode: int) -> None:
    """Put the complete directory ``staged`` (from :func:`staging_dir`) in the place of ``out`` as one step.

    ``owned``: the names ppdm writes there; a previous directory holding anything else is not replaced
    (``--force`` replaces only what ppdm wrote), and an entry that appeared in it while the run worked is
    carried over into the new one. ``mode``: the new directory's mode (a replaced directory's own mode and
    group are kept).
    """
    real = Path(os.path.realpath(out))
    if staged.parent == real:
        _fill_in_place(staged, real, owned, force)
        return
    if not real.exists():
        os.chmod(staged, mode)
        fault_point("dir.staged")
        with _signals_held():
            if not _rename_noreplace(staged, real):
                raise OutputError(f"output directory '{real.name}' appeared while running; pass --force to replace it")
            _published.append(real)
        fsync_dir(real.parent)
        return
    _check_replaceable(real, owned, force)
    st = os.stat(real)
    os.chmod(staged, stat.S_IMODE(st.st_mode))
    with contextlib.suppress(OSError):
        os.chown(staged, -1, st.st_gid)
    fault_point("dir.staged")
    with _signals_held():
        if _exchange(staged, real):
            old = staged  # the swap left the previous directory where the new one was built
            fault_point("dir.swapped")
        else:
            old = real.parent / f".{real.name}.{secrets.token_hex(6)}.old"
            os.rename(real, old)
            fault_point("dir.aside")
            os.rename(staged, real)
            fault_point("dir.swapped")
        fsync_dir(real.parent)
        _carry_over(old, real, owned)
        _published.append(real)
    shutil.rmtree(old, ignore_errors=True)


def _check_replaceable(real: Path, owned: Sequence[str], force: bool) -> None:
    entries = [e.name for e in real.iterdir()]
    if entries and not force:
        raise OutputError(f"output directory '{real.name}' appeared while running; pass --force to replace it")
    foreign = [e for e in entries if e not in owned and not e.startswith(".ppdm.")]
    if foreign:
        raise OutputError(f"output directory '{real.name}' gained files ppdm did not write while running "
                          f"('{foreign[0]}'); nothing was replaced")


def _carry_over(old: Path, new: Path, owned: Sequence[str]) -> None:
    """Entries that appeared in the previous directory while the run worked go on into the new one."""
    for e in old.iterdir():
        if e.name not in owned and not (new / e.name).exists():
            with contextlib.suppress(OSError):
                os.rename(e, new / e.name)


def _fill_in_place(staged: Path, real: Path, owned: Sequence[str], force: bool) -> None:
    """A directory that cannot be swapped gets the staged files through a journal (see the module docstring)."""
    token = staged.name.split(".")[2]
    new = sorted((e.name for e in staged.iterdir()), key=lambda n: n == "release.state")
    stale = [n for n in owned if n not in new and (real / n).exists()]
    entries = [e.name for e in real.iterdir() if e != staged]
    if not force and any(not n.startswith(".ppdm.") for n in entries):
        raise OutputError(f"output directory '{real.name}' appeared while running; pass --force to replace it")
    moves = [(staged / n, real / n) for n in new]
    journal = real / f".ppdm.{token}.journal"
    fault_point("dir.staged")
    with _signals_held():
        _write_json(journal, {"ppdm_journal": 1, "token": token, "moves": [[str(s), str(t)] for s, t in moves],
                              "remove": [str(real / n) for n in stale], "owned": list(owned)})
        fault_point("set.committed")
        _complete_moves(moves, journal, (), [real / n for n in stale])
        _published.append(real)
    shutil.rmtree(staged, ignore_errors=True)


def recover_directory(out: str | os.PathLike[str]) -> None:
    """Finish or roll back what a killed run left of a directory's publication (called under its lock).

    A previous directory moved aside with none in place is put back; every other leftover (a directory
    being built, a previous one swapped out) is removed; a journal of a directory filled in place is
    completed. None of these holds the state of the release in place.
    """
    fault_point("recover.started")
    real = Path(os.path.realpath(out))
    d, name = real.parent, real.name
    aside = [p for p in _leftovers(d, name, "old") if p.is_dir()]
    for old in aside:
        if not real.exists():
            os.rename(old, real)  # the run died between its two renames: the previous directory goes back
        else:
            shutil.rmtree(old, ignore_errors=True)
    for tmp in _leftovers(d, name, "tmp"):
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
    if real.is_dir():
        import re

        inside = [real / e for e in sorted(os.listdir(real))
                  if re.fullmatch(rf"\.ppdm\.{_TOKEN}\.(?:stage|journal|journal\.tmp)", e)]
        for journal in (p for p in inside if p.name.endswith(".journal")):
            _finish_journal(journal)
        for p in inside:
            if not p.exists():
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(p)


# ------------------------------------------------------------------------------------------ renames


def _renameat2(a: Path, b: Path, flags: int) -> bool | None:
    """``renameat2(a, b, flags)``: True when done, None where the system has no such call or the file system
    refuses the flag (the caller falls back)."""
    import ctypes
    import errno
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):
        return None
    at_cwd = -100
    if call(at_cwd, os.fsencode(str(a)), at_cwd, os.fsencode(str(b)), ctypes.c_uint(flags)) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return None
    raise OSError(err, os.strerror(err), str(b))


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one step (False where the system cannot: the caller uses two renames)."""
    if "noexchange" in _fault_items():
        return False  # the test suite's way to run the two-rename path on a system that exchanges
    return _renameat2(a, b, 2) is True  # RENAME_EXCHANGE


def _rename_noreplace(a: Path, b: Path) -> bool:
    """Rename ``a`` to ``b`` unless ``b`` exists (False then)."""
    import errno

    try:
        done = _renameat2(a, b, 1)  # RENAME_NOREPLACE
    except FileExistsError:
        return False
    except OSError as e:
        if e.errno in (errno.EEXIST, errno.ENOTEMPTY):
            return False
        raise
    if done:
        return True
    if b.exists():
        return False
    os.rename(a, b)
    return True
