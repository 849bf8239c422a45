"""What a command may write, and how: the guard between its inputs and its outputs, modes, locks, atomic files.

Every command names the paths it reads and the paths it writes, and :func:`check_outputs` refuses, before
any work, an output that is one of its inputs (the same path, the same file through a symbolic or a hard
link, or a directory that holds one), an output named twice, an output that exists without ``force`` and
an output whose directory is missing or not writable. Outputs are written to a temporary file beside them
and renamed into place (:func:`atomic_write`), or published as a set (:mod:`ppdm.data.publish`).
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from ppdm.data.publish import fault_point, is_stream, publish_files, recover
from ppdm.exceptions import OutputError

__all__ = ["check_output_path", "check_outputs", "atomic_write", "output_lock", "output_set", "file_mode",
           "dir_mode", "current_umask", "is_stream", "publish_together"]

PathLike = str | os.PathLike[str]
#: the inputs or outputs of a command: (what it is, its path), a path None when the option is not given
Named = Sequence[tuple[str, PathLike | None]]

publish_together = publish_files


def current_umask() -> int:
    """The process's umask (read without changing it for longer than one call)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(secret: bool = False) -> int:
    """Mode of a new output file: the user's umask applied to 0666; secrets (states) always 0600."""
    return 0o600 if secret else 0o666 & ~current_umask()


def dir_mode() -> int:
    """Mode of a new output directory: the user's umask applied to 0777."""
    return 0o777 & ~current_umask()


# --------------------------------------------------------------------------------------------- guard


def _files_of(source: PathLike) -> list[Path]:
    """The files an input names: itself, what a glob matches, or what a directory holds."""
    s = str(source)
    if any(ch in s for ch in "*?["):
        return [Path(f) for f in glob.glob(s)] or [Path(s)]
    p = Path(s)
    if p.is_dir():
        found = [p]
        for root, _, names in os.walk(p):
            found += [Path(root) / n for n in names]
        return found
    return [p]


def _entries(d: Path, most: int = 1000) -> list[Path]:
    """The files directly in directory ``d`` (at most ``most``: an output directory is a release, not a tree)."""
    try:
        with os.scandir(d) as it:
            return [Path(e.path) for _, e in zip(range(most), it, strict=False)]
    except OSError:
        return []


def _identity(p: Path) -> tuple[str, tuple[int, int] | None]:
    """A path's real path (symbolic links followed) and, when it exists, its file (device and inode: hard
    links are one file)."""
    try:
        real = os.path.realpath(p)
    except (OSError, RuntimeError):  # a symbolic link loop
        raise OutputError(f"'{p.name}' is a symbolic link loop (or cannot be resolved); check the path") from None
    try:
        st = os.stat(real)
    except OSError:
        return real, None
    return real, (st.st_dev, st.st_ino)


def _meets(out: tuple[str, tuple[int, int] | None], src: tuple[str, tuple[int, int] | None]) -> bool:
    (o_real, o_file), (s_real, s_file) = out, src
    if o_real == s_real or (o_file is not None and o_file == s_file):
        return True
    return s_real.startswith(o_real.rstrip(os.sep) + os.sep)  # an output directory that holds the input


def check_disjoint(outputs: Named, inputs: Named) -> None:
    """Refuse an output that is one of the inputs (path, symbolic or hard link, or a directory holding one),
    and an output named twice."""
    srcs = [(what, f, _identity(f)) for what, s in inputs if s is not None for f in _files_of(s)]
    seen: list[tuple[str, tuple[str, tuple[int, int] | None]]] = []
    for what, p in outputs:
        if p is None:
            continue
        path = Path(p)
        if is_stream(path):
            continue  # a device or FIFO is written into, never replaced (and read by no command)
        ident = _identity(path)
        # an output directory replaces the files in it: none of them may be an input either (a hard link)
        within = [_identity(f) for f in _entries(path)] if path.is_dir() else []
        for in_what, f, src in srcs:
            if _meets(ident, src) or any(w[1] is not None and w[1] == src[1] for w in within):
                same = "is" if ident[0] == src[0] or (ident[1] is not None and ident[1] == src[1]) else "holds"
                raise OutputError(f"{what} '{path.name}' {same} the {in_what} '{f.name}' this command reads; an "
                                  "output never replaces an input: choose another path")
        for other_what, other in seen:
            if other[0] == ident[0] or (ident[1] is not None and other[1] == ident[1]):
                raise OutputError(f"{what} '{path.name}' is also the {other_what}; give each output its own path")
        seen.append((what, ident))


def check_output_path(path: PathLike, *, inputs: Sequence[PathLike | None] = (), force: bool = False,
                      what: str = "output", directory: bool = False) -> Path:
    """Check, before any work, that ``path`` may be written; return it as a Path (see :func:`check_outputs`;
    ``directory``: the output is a directory, replaced whole)."""
    return check_outputs([(what, path)], [("input", s) for s in inputs], force=force,  # type: ignore[return-value]
                         directories=directory)[0]


def check_outputs(outputs: Named, inputs: Named, *, force: bool = False,
                  directories: bool = False) -> list[Path | None]:
    """The one guard of every command's outputs (see the module docstring); the outputs as Paths.

    They are files unless ``directories``: an existing directory is refused as a file's path, with ``--force``
    too (a file cannot replace it, and a run that tried left a set it could never complete)."""
    check_disjoint(outputs, inputs)
    out: list[Path | None] = []
    for what, p in outputs:
        if p is None:
            out.append(None)
            continue
        q = Path(p)
        if not directories and q.is_dir():
            raise OutputError(f"{what} '{q.name}' is a directory; give a file's path (e.g. "
                              f"'{q.name}/{'release.state' if 'state' in what else 'release.csv'}')")
        if q.exists() and not force and not is_stream(q):
            raise OutputError(f"{what} '{q.name}' already exists; pass --force to overwrite it or choose another path")
        parent = q.parent if str(q.parent) else Path(".")
        if not parent.is_dir():
            raise OutputError(f"directory of {what} '{q}' does not exist; create it first")
        if not os.access(parent, os.W_OK):
            raise OutputError(f"directory of {what} '{q}' is not writable; choose another path")
        out.append(q)
    return out


# --------------------------------------------------------------------------------------------- locks


def _busy(real: Path) -> OutputError:
    return OutputError(f"another ppdm run is writing '{real.name}' right now; wait for it to finish or choose "
                       "another output")


@contextlib.contextmanager
def output_lock(*paths: PathLike | None) -> Iterator[None]:
    """Hold an exclusive lock per output for the whole run; a second writer of the same output is refused.

    Locks are taken on the resolved real paths (a symlink cannot fork them) in the user's lock directory
    (:mod:`ppdm.data.locks`): nothing is created beside the outputs, and the kernel drops a lock when its
    process dies, however it dies.
    """
    from ppdm.data.locks import path_locks

    reals = [p for p in paths if p is not None and not is_stream(p)]
    with path_locks(reals, busy=_busy):
        yield


@contextlib.contextmanager
def output_set(outputs: Named, inputs: Named, *, force: bool = False) -> Iterator[list[Path | None]]:
    """The outputs of one run, guarded, locked and recovered: inputs and outputs never meet, no other run
    writes them meanwhile, and what a killed run left beside them is completed or removed (before a run
    without ``force`` is refused for outputs that exist). Yields the outputs as Paths."""
    check_disjoint(outputs, inputs)
    named = [p for _, p in outputs if p is not None]
    with output_lock(*named):
        recover([p for p in named if not is_stream(p)])
        yield check_outputs(outputs, inputs, force=force)


# --------------------------------------------------------------------------------------------- files


@contextlib.contextmanager
def atomic_write(path: PathLike, *, mode: int | None = None, binary: bool = True) -> Iterator[io.IOBase]:
    """Open a temporary file beside ``path``; on success fsync and rename it to ``path``.

    On any exception the temporary file is removed and ``path`` is left as it was. The file gets ``mode``
    (default: 0666 less the user's umask). A symlink is followed (its target is replaced, the link kept); a
    character device or FIFO is written into as a stream, never replaced.
    """
    text = {} if binary else {"encoding": "utf-8", "newline": ""}
    if is_stream(path):  # by its own name: /dev/stdout resolves to a pipe no path names
        with open(path, "wb" if binary else "w", **text) as f:  # type: ignore[call-overload]
            yield f
            f.flush()
        return
    p = Path(os.path.realpath(path))
    mode = file_mode() if mode is None else mode
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb" if binary else "w", **text) as f:  # type: ignore[call-overload]
            yield f
            f.flush()
            os.fsync(f.fileno())
        fault_point("file.written")
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
