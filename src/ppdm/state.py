"""State files: the secret part of a release (keys, factors, seeds), without pickle.

A state file is a zip archive holding ``header.json`` (format version, kind, schema, parameters,
counts, and a SHA-256 checksum of every array) and one ``.npy`` member per array, loaded with
``allow_pickle=False``. It is written to a temporary file with owner-only permissions (0600) and
renamed into place, so a crash leaves the previous state intact. Truncated or tampered files fail the
checksum test with a clear error.

The checksums detect accidents, not forgery: whoever can write the file can recompute them. An owner
who keeps a secret outside the state (``PPDM_STATE_KEY``, or ``PPDM_STATE_KEY_FILE`` naming an owner-only
file) gets states sealed with an HMAC-SHA256 of the header (which lists every array's checksum); with the
key set, a state without a valid seal is refused. A state that others can read is used with a warning,
as ``ssh`` does for keys. Array shapes are checked against the memory budget and against the archive before
any array is read.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ppdm.data.io import atomic_write
from ppdm.exceptions import StateError

__all__ = ["FORMAT_VERSION", "save_state", "load_state", "read_header", "verify_state", "copy_states"]

FORMAT_VERSION = 1
_MAGIC = "ppdm-state"


def _digest(a: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update(str(a.dtype).encode())
    h.update(str(a.shape).encode())
    h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _header_digest(header: dict[str, Any]) -> str:
    body = {k: v for k, v in header.items() if k not in ("header_sha256", "seal")}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


KEY_ENV, KEY_FILE_ENV = "PPDM_STATE_KEY", "PPDM_STATE_KEY_FILE"


def _owner_key() -> bytes | None:
    """The owner's sealing key, kept outside every state (None when the owner keeps none)."""
    import os
    import stat as _stat

    value = os.environ.get(KEY_ENV)
    if value:
        return value.encode()
    path = os.environ.get(KEY_FILE_ENV)
    if not path:
        return None
    try:
        st = os.stat(path)
        if st.st_mode & 0o077:
            raise StateError(f"{KEY_FILE_ENV} names a key file that others can read; chmod 600 it")
        if not _stat.S_ISREG(st.st_mode):
            raise StateError(f"{KEY_FILE_ENV} does not name a regular file")
        key = Path(path).read_bytes().strip()
    except OSError as e:
        raise StateError(f"cannot read the key file of {KEY_FILE_ENV} ({e.strerror})") from None
    if len(key) < 16:
        raise StateError(f"the key of {KEY_FILE_ENV} is shorter than 16 bytes; use a long random key")
    return key


def _seal(key: bytes, digest: str) -> str:
    import hmac

    return hmac.new(key, digest.encode(), hashlib.sha256).hexdigest()


def save_state(path: str | Path, kind: str, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """Write a state file atomically with mode 0600."""
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    for k, a in arrays.items():
        if a.dtype == object:
            raise StateError(f"state array '{k}' has dtype object, which cannot be stored without pickle")
    full = {
        "magic": _MAGIC,
        "format_version": FORMAT_VERSION,
        "kind": kind,
        **header,
        "arrays": {k: {"sha256": _digest(a), "shape": list(a.shape), "dtype": str(a.dtype)} for k, a in arrays.items()},
    }
    full["header_sha256"] = _header_digest(full)
    key = _owner_key()
    if key is not None:
        full["seal"] = {"hmac_sha256": _seal(key, full["header_sha256"])}
    p = Path(path)
    with atomic_write(p, mode=0o600) as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr("header.json", json.dumps(full, indent=1, sort_keys=True))
            for k, a in arrays.items():
                buf = io.BytesIO()
                np.save(buf, a, allow_pickle=False)
                z.writestr(f"{k}.npy", buf.getvalue())
    return p


def read_header(path: str | Path, kind: str | None = None) -> dict[str, Any]:
    """Read and verify only the JSON header of a state file (no key material)."""
    with _open(path) as z:
        return _header(z, path, kind)


def verify_state(path: str | Path, kind: str | None = None) -> dict[str, Any]:
    """Check the header and every array against its checksum (nothing unpickled); return the header.

    Arrays are checked one at a time and dropped, so this holds at most one array in memory. A member
    that the header does not list is an error too: nothing but the listed arrays belongs in a state file.
    """
    name = Path(path).name
    with _open(path) as z:
        header = _header(z, path, kind)
        listed = {"header.json"} | {f"{k}.npy" for k in header["arrays"]}
        extra = sorted(set(z.namelist()) - listed)
        if extra:
            raise StateError(f"state file '{name}' holds an unlisted member '{extra[0]}'; it was modified")
        for k, meta in header["arrays"].items():
            _check_array(z, name, k, meta)
    return header


def _check_array(z: zipfile.ZipFile, name: str, k: str, meta: dict[str, Any]) -> np.ndarray:
    try:
        raw = io.BytesIO(z.read(f"{k}.npy"))
    except (KeyError, zipfile.BadZipFile, OSError, EOFError):
        raise StateError(f"state file '{name}' fails its checksum (array '{k}' damaged or truncated)") from None
    _check_member_header(raw, name, k, meta)
    try:
        a = np.load(raw, allow_pickle=False)
    except ValueError:
        raise StateError(f"state file '{name}' holds pickled objects, which ppdm never loads") from None
    except (OSError, EOFError):
        raise StateError(f"state file '{name}' fails its checksum (array '{k}' damaged or truncated)") from None
    if _digest(a) != meta["sha256"]:
        raise StateError(f"state file '{name}' fails its checksum (array '{k}'); it was modified or truncated")
    return a


def _check_member_header(raw: io.BytesIO, name: str, k: str, meta: dict[str, Any]) -> None:
    """The array member's own header (shape, type) must be the one the state's header lists, and its bytes
    exactly that many: checked before ``np.load`` allocates what the member claims (a damaged member claiming
    a 10^6 x 10^6 array is a damaged state, not a request for 8 TB)."""
    from numpy.lib import format as npy

    damaged = StateError(f"state file '{name}' is damaged (array '{k}' does not match its description)")
    try:
        version = npy.read_magic(raw)
        read = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}.get(version)
        if read is None:
            raise damaged
        shape, _, dtype = read(raw, max_header_size=10_000)
    except (ValueError, OSError, EOFError, TypeError):
        raise damaged from None
    if dtype.hasobject:
        raise StateError(f"state file '{name}' holds pickled objects, which ppdm never loads")
    if list(shape) != [int(d) for d in meta.get("shape", [])] or str(dtype) != str(meta.get("dtype")):
        raise damaged
    size = len(raw.getbuffer()) - raw.tell()
    if size != int(np.prod(shape, dtype=np.float64)) * dtype.itemsize:
        raise damaged
    raw.seek(0)


def load_state(path: str | Path, kind: str | None = None) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Load and verify a state file; return ``(header, arrays)``."""
    name = Path(path).name
    with _open(path) as z:
        header = _header(z, path, kind)
        _check_sizes(z, name, header)
        arrays: dict[str, np.ndarray] = {}
        for k, meta in header["arrays"].items():
            arrays[k] = _check_array(z, name, k, meta)
    # only a state that is one holds keys worth warning about; a damaged file gets its one error line
    _warn_if_shared(Path(path))
    return header, arrays


def copy_states(path: str | Path, kind: str, header: dict[str, Any],
                members: list[tuple[str | Path, str, str]]) -> Path:
    """Write a state file of ``header`` whose arrays are copied from other state files, one at a time and
    with their checksums (each checked first): ``members`` lists ``(state file, its array, the name here)``.
    A release by parts is one state made from its parts' states without holding them all."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        opened: dict[str, tuple[zipfile.ZipFile, dict[str, Any]]] = {}
        for src, _, _ in members:
            if str(src) not in opened:
                z = stack.enter_context(_open(src))
                opened[str(src)] = (z, _header(z, src, kind))
        listed = {new: opened[str(src)][1]["arrays"][old] for src, old, new in members}
        full = {"magic": _MAGIC, "format_version": FORMAT_VERSION, "kind": kind, **header, "arrays": listed}
        full["header_sha256"] = _header_digest(full)
        key = _owner_key()
        if key is not None:
            full["seal"] = {"hmac_sha256": _seal(key, full["header_sha256"])}
        p = Path(path)
        with atomic_write(p, mode=0o600) as f, zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as out:
            out.writestr("header.json", json.dumps(full, indent=1, sort_keys=True))
            for src, old, new in members:
                z, h = opened[str(src)]
                _check_array(z, Path(src).name, old, h["arrays"][old])
                out.writestr(f"{new}.npy", z.read(f"{old}.npy"))
    return p


def _open(path: str | Path) -> zipfile.ZipFile:
    p = Path(path)
    if not p.exists():
        raise StateError(f"state file '{p}' does not exist; check the path")
    if p.is_dir():
        # named as given: the name of '.' is empty
        raise StateError(f"'{p}' is a directory, not a ppdm state file; give the path of the state file itself")
    try:
        return zipfile.ZipFile(p, "r")
    except (zipfile.BadZipFile, OSError):
        raise StateError(f"'{p.name}' is not a ppdm state file (truncated or another format)") from None


def _header(z: zipfile.ZipFile, path: str | Path, kind: str | None) -> dict[str, Any]:
    name = Path(path).name
    try:
        header = json.loads(z.read("header.json"))
    except (KeyError, ValueError, zipfile.BadZipFile, OSError, EOFError):
        raise StateError(f"'{name}' is not a ppdm state file (no readable header)") from None
    if not isinstance(header, dict) or header.get("magic") != _MAGIC:
        raise StateError(f"'{name}' is not a ppdm state file")
    if header.get("header_sha256") != _header_digest(header):
        raise StateError(f"state file '{name}' fails its header checksum; it was modified")
    if header.get("format_version") != FORMAT_VERSION:
        raise StateError(
            f"state file '{name}' has format version {header.get('format_version')}, this ppdm reads "
            f"{FORMAT_VERSION}; use the ppdm version that wrote it"
        )
    if kind is not None and header.get("kind") != kind:
        raise StateError(f"state file '{name}' is a '{header.get('kind')}' state, not '{kind}'")
    key = _owner_key()
    if key is not None:
        import hmac

        seal = header.get("seal", {}).get("hmac_sha256") if isinstance(header.get("seal"), dict) else None
        if seal is None:
            raise StateError(f"state file '{name}' is not sealed, but {KEY_ENV} is set; it was not written with your "
                             "key (unset the key to read it as an unsealed state)")
        if not hmac.compare_digest(str(seal), _seal(key, header["header_sha256"])):
            raise StateError(f"state file '{name}' fails its seal: it was modified, or sealed with another key")
    return header


def _warn_if_shared(p: Path) -> None:
    import os
    import warnings

    from ppdm.exceptions import PrivacyWarning

    try:
        mode = os.stat(p).st_mode
    except OSError:
        return
    if mode & 0o077:
        warnings.warn(f"state file '{p.name}' is readable by others (mode {oct(mode & 0o777)}); it holds the keys of "
                      "its release: chmod 600 it", PrivacyWarning, stacklevel=3)


def _check_sizes(z: zipfile.ZipFile, name: str, header: dict[str, Any]) -> None:
    """Refuse arrays the archive cannot hold or the memory cannot, before reading any of them."""
    from ppdm.utils.memory import check_memory

    total = 0.0
    archive = _archive_size(z)
    for k, meta in header.get("arrays", {}).items():
        try:
            shape = [int(d) for d in meta["shape"]]
            itemsize = np.dtype(meta["dtype"]).itemsize
            info = z.getinfo(f"{k}.npy")
            stored = info.file_size
        except (KeyError, TypeError, ValueError):
            raise StateError(f"state file '{name}' is damaged (array '{k}' is missing or badly described)") from None
        if info.compress_type == zipfile.ZIP_STORED and (stored != info.compress_size or stored > archive):
            # ppdm stores arrays uncompressed: a member that claims more bytes than it (or the file) holds is damaged
            raise StateError(f"state file '{name}' is damaged (array '{k}' claims more bytes than the file holds)")
        if any(d < 0 for d in shape):
            raise StateError(f"state file '{name}' is damaged (array '{k}' has a negative dimension)")
        nbytes = float(np.prod(shape, dtype=np.float64)) * itemsize
        if nbytes > stored:
            raise StateError(f"state file '{name}' is damaged: array '{k}' claims {int(nbytes)} bytes but holds "
                             f"{stored}")
        total += nbytes
    check_memory(total, f"loading state '{name}'", "load it on a machine with more memory")


def _archive_size(z: zipfile.ZipFile) -> float:
    """The bytes of the file behind an open archive (infinite when unknown)."""
    import os

    try:
        return float(os.fstat(z.fp.fileno()).st_size) if z.fp is not None else float("inf")
    except (OSError, AttributeError, ValueError):
        return float("inf")
