"""Locks that keep two ppdm runs from writing the same output, and leave nothing beside the outputs.

A lock is an ``flock`` on a small file named by a digest of the output's real path, in a lock directory of
the user's own (``$XDG_RUNTIME_DIR/ppdm-locks``, else ``ppdm-locks-UID`` in the system's temporary
directory, else ``~/.cache/ppdm/locks``; each used only when it is a directory owned by the user and
writable by nobody else). The kernel drops an ``flock`` when its holder dies, however it dies, so a lock
never outlives its run; the lock file is removed when the run ends, and one left by a killed run is empty,
names no output, sits outside the user's directories and is reused by the next run. Nothing is ever
created beside an output (a ``.NAME.lock`` there outlived every SIGKILL).

The lock of a path that is replaced by renames (an output, a stream's state) is the path's, not its
file's: a file renamed into place is still under the lock of its name. Runs of one user on one machine
are kept apart; two users, or two machines sharing a file system, are not (each has its own lock
directory).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ppdm.exceptions import OutputError, PPDMError

__all__ = ["lock_directory", "path_locks"]


def _usable(d: Path) -> bool:
    """``d`` is (or has just been made) a directory of this user's that nobody else may write into."""
    try:
        d.mkdir(mode=0o700, parents=False, exist_ok=True)
        st = os.lstat(d)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def lock_directory() -> Path:
    """The user's lock directory (see the module docstring); created on first use."""
    uid = os.getuid()
    candidates = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        candidates.append(Path(runtime) / "ppdm-locks")
    candidates.append(Path(tempfile.gettempdir()) / f"ppdm-locks-{uid}")
    with contextlib.suppress(RuntimeError):  # no home directory
        cache = Path.home() / ".cache" / "ppdm"
        with contextlib.suppress(OSError):
            cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        candidates.append(cache / "locks")
    for d in candidates:
        if _usable(d):
            return d
    raise OutputError("cannot make a lock directory of this user's (checked $XDG_RUNTIME_DIR, the temporary "
                      "directory and ~/.cache/ppdm); set TMPDIR to a directory you own")


def _lock_name(real: str) -> str:
    return hashlib.sha256(os.fsencode(real)).hexdigest()[:40] + ".lock"


@contextlib.contextmanager
def path_locks(paths: Sequence[str | os.PathLike[str]], *, busy: Callable[[Path], PPDMError],
               wait: float = 0.0) -> Iterator[None]:
    """Hold an exclusive lock on every path (by its real path) for the block; ``busy(path)`` is raised for a
    path another run holds after ``wait`` seconds. Locks are taken in a fixed order, so two runs that name
    the same outputs never wait on each other in a cycle."""
    import fcntl

    reals = sorted({os.path.realpath(p) for p in paths})
    held: list[tuple[int, Path]] = []
    try:
        if reals:
            where = lock_directory()
            for real in reals:
                held.append(_acquire(where / _lock_name(real), Path(real), busy, wait, fcntl))
        yield
    finally:
        for fd, lock in reversed(held):
            # removed while still held: a run that opened it meanwhile finds it gone once it gets the lock,
            # and takes the file that is there then (see _acquire)
            with contextlib.suppress(OSError):
                os.unlink(lock)
            with contextlib.suppress(OSError):
                os.close(fd)


def _acquire(lock: Path, real: Path, busy: Callable[[Path], PPDMError], wait: float, fcntl) -> tuple[int, Path]:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + max(wait, 0.0)
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as e:
            raise OutputError(f"cannot lock '{real.name}' ({e.strerror}); check the lock directory "
                              f"{lock.parent}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                raise OutputError(f"cannot lock '{real.name}' ({e.strerror})") from None
            if time.monotonic() >= deadline:
                raise busy(real) from None
            time.sleep(0.05)
            continue
        # the previous holder may have removed the file between our open and our lock: hold the file that
        # is there now, not an orphan
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd, lock
        os.close(fd)
