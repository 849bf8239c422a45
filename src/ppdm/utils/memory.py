"""How much memory an operation may use, and the one guard every large allocation goes through.

The budget is the memory the system reports as available (``MemAvailable`` in ``/proc/meminfo``; else
free physical pages; else a fixed 4 GiB). ``PPDM_MEMORY_LIMIT`` (bytes, or with a K/M/G/T suffix)
overrides it: to keep ppdm within a share of a shared machine, and in tests to trigger the guards on
small data.
"""

from __future__ import annotations

import os

from ppdm.exceptions import ParameterError, ResourceError

__all__ = ["ENV_LIMIT", "give_back", "quiet_worker_restarts", "available_memory", "parse_bytes", "format_bytes",
           "check_memory", "check_dense", "rows_that_fit"]

#: environment variable that overrides the detected memory budget
ENV_LIMIT = "PPDM_MEMORY_LIMIT"
_FALLBACK = 4 * 1024**3
_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def parse_bytes(text: str) -> int:
    """``'512M'`` -> 536870912; plain numbers are bytes (binary units K, M, G, T, optionally with 'iB')."""
    s = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = s[-1:] if s[-1:] in _UNITS else ""
    try:
        value = float(s[: len(s) - len(unit)])
    except ValueError:
        value = -1.0
    if not (value > 0 and value < float("inf")):
        raise ParameterError(f"{ENV_LIMIT}={text!r} is not a size; give bytes, e.g. 512M or 8G")
    return int(value * _UNITS[unit])


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _address_space_left() -> int | None:
    """What ``ulimit -v`` (RLIMIT_AS) leaves this process, or None when there is no such limit."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY or soft <= 0:
            return None
        used = 0
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
        return max(int(soft) - used, 0)
    except (OSError, ValueError, ImportError):
        return None


def available_memory() -> int:
    """Bytes one operation may use: ``PPDM_MEMORY_LIMIT`` if set, else what the system reports available.

    A ``ulimit -v`` (address-space limit) lowers either.
    """
    env = os.environ.get(ENV_LIMIT)
    left = _address_space_left()
    if env:
        return parse_bytes(env) if left is None else min(parse_bytes(env), left)
    if left is not None:
        return min(left, _meminfo_available() or left)
    found = _meminfo_available()
    if found is None:
        try:
            found = int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            found = None
    return found if found and found > 0 else _FALLBACK


def format_bytes(n: float) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def check_memory(n_bytes: float, what: str, fix: str, budget: float | None = None) -> None:
    """Refuse an allocation that would not fit, naming the option that makes the job feasible.

    Parameters
    ----------
    n_bytes : float
        Estimated peak bytes of the operation.
    what : str
        What would be built, e.g. ``"NMDS on 40000 rows"``.
    fix : str
        The option that makes it feasible, e.g. ``"use the landmark mode (-p landmarks=2000)"``.
    budget : float, optional
        A tighter cap of the caller's own (a parameter); the available memory always applies too.
    """
    limit = float(available_memory())
    if budget is not None:
        limit = min(limit, float(budget))
    if n_bytes > limit:
        raise ResourceError(f"{what} would need {format_bytes(n_bytes)} but {format_bytes(limit)} is available; {fix}")


def check_dense(n_rows: int, n_cols: int, copies: float, what: str, fix: str) -> None:
    """:func:`check_memory` for ``copies`` dense float64 ``n_rows x n_cols`` working arrays."""
    check_memory(8.0 * n_rows * max(n_cols, 1) * copies, what, fix)


def rows_that_fit(n_cols: int, copies: float) -> int:
    """Rows of ``copies`` dense float64 ``rows x n_cols`` arrays that fit, rounded down to two digits."""
    rows = int(available_memory() // (8.0 * max(n_cols, 1) * copies))
    if rows < 100:
        return max(rows, 2)
    digits = 10 ** (len(str(rows)) - 2)
    return rows // digits * digits


def give_back() -> None:
    """Return freed memory to the operating system: Arrow's allocator keeps the buffers of a table read
    from Parquet after they are freed (dropping a million-row frame's columns left 170 MB resident), and
    the C heap keeps freed blocks between large stages. Does nothing where neither applies."""
    import sys

    if "pyarrow" in sys.modules:
        try:
            sys.modules["pyarrow"].default_memory_pool().release_unused()
        except Exception:  # noqa: BLE001 (only a hint to the allocator)
            pass
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc
            pass


def quiet_worker_restarts() -> None:
    """Silence joblib's warning that one of its workers stopped while jobs were queued.

    A worker of joblib's process pool (loky) that grew by more than 300 MB since its first job ends itself
    and is replaced; its queued jobs go to the replacement and nothing is lost. The sweep of the 1,000,000-row
    benchmark table grew its workers that much (each screens candidates on samples, loading the libraries and
    keeping the compiled programs they need), and the warning, which suggests a leak, was printed at every
    run. Called by the command line's entry point (which also serves the web app), never on import.
    """
    import warnings

    warnings.filterwarnings("ignore", message="A worker stopped while some jobs were given to the executor",
                            category=UserWarning)
