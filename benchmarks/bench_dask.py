"""Dask backend: Parquet in, rank-10 SVD release, Parquet out, against the in-memory backend.

Target (issue 8): at 2,000,000 x 50 float64 (fits in memory), the dask backend end to end (read,
statistics, release, write) within 3x the in-memory backend, both measured in this run; the LocalCluster
start-up (including importing ppdm on the workers) is excluded and reported separately.

``--big`` adds the out-of-core run: 20,000,000 x 50 (8 GB of float64; about 8 GB of Parquet on disk,
written to a temporary directory and removed afterwards) on a 2-worker LocalCluster with a 3 GB memory
limit per worker; it reports rows/s and whether it completed. Run it with ``nice``.

``--nmf`` and ``--stream`` time NMF (``mu``, fixed iteration count) and a stream update of a partitioned
batch on both backends and report their deviation (no target: figures for the README).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

_FILE_ROWS = 125_000



def _deviation(a: Path, b: Path) -> float:
    """Largest absolute difference between two Parquet releases, relative to the first's largest value."""
    A, B = pd.read_parquet(a).to_numpy(), pd.read_parquet(b).to_numpy()
    return float(np.abs(A - B).max() / np.abs(A).max())

def _write_parts(folder: Path, n: int, m: int, seed: int = 0) -> None:
    """Low-rank-plus-noise columns on different scales, written as Parquet files of 125,000 rows."""
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(m, m))
    scale, shift = rng.uniform(0.5, 20, size=m), rng.uniform(-50, 50, size=m)
    cols = [f"x{j}" for j in range(m)]
    for i, start in enumerate(range(0, n, _FILE_ROWS)):
        rows = min(_FILE_ROWS, n - start)
        X = (rng.normal(size=(rows, m)) @ mix) * scale + shift
        pd.DataFrame(X, columns=cols).to_parquet(folder / f"part{i:05d}.parquet", index=False)


def _warm(client: object) -> None:
    client.run(lambda: __import__("ppdm.backends._blockwise"))  # type: ignore[attr-defined]


def run(n: int = 2_000_000, m: int = 50, k: int = 10) -> bool:
    from ppdm.backends import load
    from ppdm.pipeline import perturb

    dk = load("dask")
    tmp = Path(tempfile.mkdtemp(prefix="ppdm-bench-dask-"))
    try:
        data = tmp / "data"
        data.mkdir()
        _write_parts(data, n, m)
        src = str(data / "*.parquet")
        t = time.perf_counter()
        perturb(src, method="svd", params={"rank": k}, output=tmp / "numpy.parquet")
        t_np = time.perf_counter() - t
        with dk.connect(None) as conn:
            t = time.perf_counter()
            _warm(conn["client"])
            t_start = conn["seconds"] + time.perf_counter() - t
            t = time.perf_counter()
            res = dk.perturb(src, method="svd", params={"rank": k}, output=tmp / "dask")
            t_dk = time.perf_counter() - t
        dev = _deviation(tmp / "numpy.parquet", tmp / "dask")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ratio = t_dk / t_np
    print(f"{n} x {m}, rank {k}, {-(-n // _FILE_ROWS)} Parquet files in, Parquet out")
    print(f"in-memory backend (read, release, write one file): {t_np:.2f} s")
    print(f"dask backend ({conn['cluster']}, {res.summary['n_partitions']} partitions): {t_dk:.2f} s "
          f"-> {ratio:.2f}x the in-memory time (target <= 3)")
    print(f"cluster start-up incl. worker imports (excluded): {t_start:.2f} s")
    print(f"max relative deviation between the two releases: {dev:.1e} (target <= 1e-8)")
    return ratio <= 3 and dev <= 1e-8


def run_big(n: int = 20_000_000, m: int = 50, k: int = 10, workers: int = 2, memory: str = "3GB") -> bool:
    """Out-of-core: the data are several times one worker's memory limit."""
    from distributed import Client, LocalCluster

    from ppdm.backends import load

    dk = load("dask")
    tmp = Path(tempfile.mkdtemp(prefix="ppdm-bench-dask-big-"))
    try:
        data = tmp / "data"
        data.mkdir()
        t = time.perf_counter()
        _write_parts(data, n, m)
        print(f"wrote {n} x {m} as Parquet in {time.perf_counter() - t:.0f} s "
              f"({sum(f.stat().st_size for f in data.iterdir()) / 1e9:.1f} GB)")
        with LocalCluster(host="127.0.0.1", n_workers=workers, threads_per_worker=1, memory_limit=memory,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            _warm(client)
            t = time.perf_counter()
            res = dk.perturb(str(data / "*.parquet"), method="svd", params={"rank": k}, output=tmp / "release")
            dt = time.perf_counter() - t
        out_rows = len(pd.read_parquet(tmp / "release", columns=["x0"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"out-of-core: {n} x {m} on {workers} workers x {memory}: {dt:.0f} s, {n / dt:,.0f} rows/s, "
          f"{res.summary['n_partitions']} partitions, {out_rows} rows written")
    return out_rows == n


def run_nmf(n: int = 500_000, m: int = 20, k: int = 5, solver: str = "mu", iters: int = 50) -> bool:
    """NMF, the same solver and init on both backends: time and relative deviation of the releases."""
    from ppdm.backends import load
    from ppdm.pipeline import perturb

    dk = load("dask")
    params = {"components": k, "solver": solver, "max_iter": iters, "tol": 0.0}
    tmp = Path(tempfile.mkdtemp(prefix="ppdm-bench-dask-nmf-"))
    try:
        data = tmp / "data"
        data.mkdir()
        _write_parts(data, n, m)
        src = str(data / "*.parquet")
        t = time.perf_counter()
        ref = perturb(src, method="nmf", params=params, output=tmp / "numpy.parquet")
        t_np = time.perf_counter() - t
        with dk.connect(None) as conn:
            _warm(conn["client"])
            t = time.perf_counter()
            res = dk.perturb(src, method="nmf", params=params, output=tmp / "dask")
            t_dk = time.perf_counter() - t
        dev = _deviation(tmp / "numpy.parquet", tmp / "dask")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"NMF {solver}, K={k}, {iters} iterations, {n} x {m}: in-memory {t_np:.1f} s, dask {t_dk:.1f} s "
          f"({conn['cluster']}, {res.summary['n_partitions']} partitions; {t_dk / t_np:.1f}x); "
          f"iterations {ref.mechanism.n_iter_} / {res.mechanism.n_iter_}; max relative deviation {dev:.1e}")
    return dev <= 1e-8


def run_stream(n0: int = 250_000, q: int = 1_000_000, m: int = 50, k: int = 10) -> bool:
    """Stream update of a q-row Parquet batch on both backends (append-only state, z-scored)."""
    from ppdm.streaming import stream_init, stream_update

    tmp = Path(tempfile.mkdtemp(prefix="ppdm-bench-dask-stream-"))
    try:
        data = tmp / "data"
        data.mkdir()
        _write_parts(data, n0 + q, m)
        files = sorted(data.glob("*.parquet"))
        first = pd.concat([pd.read_parquet(f) for f in files[: n0 // _FILE_ROWS]])
        batch = data / "batch"
        batch.mkdir()
        for f in files[n0 // _FILE_ROWS:]:
            f.rename(batch / f.name)
        stream_init(first, state=tmp / "a.state", rank=k, params={"preprocess": "zscore"}, append_only=True)
        shutil.copy(tmp / "a.state", tmp / "b.state")
        t = time.perf_counter()
        stream_update(tmp / "a.state", str(batch / "*.parquet"), output=tmp / "numpy.parquet")
        t_np = time.perf_counter() - t
        from ppdm.backends import load

        with load("dask").connect(None) as conn:
            _warm(conn["client"])
            t = time.perf_counter()
            res = stream_update(tmp / "b.state", str(batch / "*.parquet"), output=tmp / "dask", backend="dask")
            t_dk = time.perf_counter() - t
        dev = _deviation(tmp / "numpy.parquet", tmp / "dask")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"stream update of {res.summary['n_new_rows']} x {m} (rank {k}, {n0} rows absorbed before): "
          f"in-memory {t_np:.1f} s, dask {t_dk:.1f} s "
          f"({conn['cluster']}, {res.summary['n_partitions']} partitions); max relative deviation {dev:.1e}")
    return dev <= 1e-8


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--big", action="store_true", help="also run the 20,000,000-row out-of-core release")
    ap.add_argument("--big-rows", type=int, default=20_000_000)
    ap.add_argument("--skip-small", action="store_true", help="skip the 2,000,000-row comparison")
    ap.add_argument("--nmf", action="store_true", help="also time NMF (mu) on both backends")
    ap.add_argument("--stream", action="store_true", help="also time a stream update on both backends")
    ap.add_argument("--nmf-solver", default="mu", help="NMF solver of --nmf (hals, mu, als)")
    args = ap.parse_args()
    ok = True if args.skip_small else run(args.rows)
    if args.nmf:
        ok = run_nmf(solver=args.nmf_solver) and ok
    if args.stream:
        ok = run_stream() and ok
    if args.big:
        ok = run_big(args.big_rows) and ok
    print("meets target" if ok else "MISSES target")
