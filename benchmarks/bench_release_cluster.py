"""The main job on a cluster: `ppdm release --backend dask` of a large Parquet table, this machine holding none of it.

Measured in the same run, on a Dask cluster of two worker processes on this machine (started here, so the
``ppdm`` process is the client alone and its peak resident memory is its own): the client's peak on tables
of ``PPDM_BENCH_ROWS`` (default 1,000,000) and a quarter of that many rows, against the peak of the same
release made in memory (``--backend numpy``) of the larger table. Targets: the client's peak grows by less
than a tenth of the larger input between the two tables (no table-sized array on the client), and stays
below the in-memory release's; the workers' own peaks are reported. The release written by the worker
holds every row, and its re-identification, re-measured on 20,000 targets against every record, lies
within the interval the sweep stated. Then the larger table is released by parts of a quarter of its rows
(``--part-rows``) on fresh workers: their peaks must fall below the whole table's, the release hold every
row, and its re-identification re-measured on the whole release lie within the interval measured on the
first part.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

try:
    from bench_release_scale import _make_table, _relink, _timed
except ImportError:  # imported as benchmarks.bench_release_cluster
    from benchmarks.bench_release_scale import _make_table, _relink, _timed


def _worker_peaks(client: object) -> list[int]:
    """Each worker process's peak resident memory so far (bytes)."""

    def peak() -> int:
        import resource

        return 1024 * resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    return sorted(client.run(peak).values())  # type: ignore[attr-defined]


def run() -> bool:
    import pyarrow.parquet as pq
    from distributed import Client, LocalCluster

    n = int(os.environ.get("PPDM_BENCH_ROWS", 1_000_000))
    m = int(os.environ.get("PPDM_BENCH_COLS", 20))
    small = n // 4
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        tables = {rows: base / f"table{rows}.parquet" for rows in (small, n)}
        for rows, path in tables.items():
            _make_table(rows, m, path)
        size = tables[n].stat().st_size
        args = ["--id", "rid", "--label", "label", "--no-cache"]
        t_mem, peak_mem = _timed(["release", str(tables[n]), "-o", str(base / "here"), *args])
        client_peaks, times = {}, {}
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            for rows, path in tables.items():
                times[rows], client_peaks[rows] = _timed(
                    ["release", str(path), "-o", str(base / f"there{rows}"), *args, "--backend", "dask",
                     "--scheduler", cluster.scheduler_address])
            workers = _worker_peaks(client)
        # the larger table again, by parts of a quarter of its rows, on fresh workers (so that their peaks
        # are this release's alone)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            t_parts, client_parts = _timed(
                ["release", str(tables[n]), "-o", str(base / "parts"), *args, "--backend", "dask",
                 "--scheduler", cluster.scheduler_address, "--part-rows", str(small)])
            workers_parts = _worker_peaks(client)
        by_parts = json.loads((base / "parts" / "release.json").read_text())
        parts_written = pq.ParquetFile(base / "parts" / "release.parquet").metadata.num_rows
        parts_interval = by_parts["chosen"]["risk"].get("reidentification_interval")
        parts_relinked = _relink(tables[n], base / "parts")
        out = base / f"there{n}"
        rec = json.loads((out / "release.json").read_text())
        written = pq.ParquetFile(out / "release.parquet").metadata.num_rows
        chosen = rec["chosen"]
        interval = chosen["risk"].get("reidentification_interval")
        relinked = _relink(tables[n], out)
        here = json.loads((base / "here" / "release.json").read_text())["chosen"]
    growth = client_peaks[n] - client_peaks[small]
    mb = 2**20
    print(f"  in memory: {n:,} x {m} released in {t_mem:.0f} s, peak {peak_mem / mb:.0f} MB "
          f"({peak_mem / size:.1f}x the {size / mb:.0f} MB input); chose {here['method']} {here['params']}")
    for rows in (small, n):
        print(f"  on the cluster: {rows:,} x {m} released in {times[rows]:.0f} s, client peak "
              f"{client_peaks[rows] / mb:.0f} MB")
    print(f"  client peak grew {growth / mb:.0f} MB from {small:,} to {n:,} rows (target < a tenth of the input, "
          f"{size / 10 / mb:.0f} MB); {client_peaks[n] / peak_mem:.2f}x the in-memory release's peak; workers' "
          f"peaks {', '.join(f'{w / mb:.0f}' for w in workers)} MB")
    print(f"  chosen on the cluster {chosen['method']} {chosen['params']}: {written:,} rows written, "
          f"re-identification {chosen['risk']['reidentification']:.4f}, interval {interval}; re-measured on "
          f"20,000 targets against all rows: {relinked:.4f}")
    print(f"  by parts of {small:,} rows ({by_parts['parts']['count']} parts): released in {t_parts:.0f} s, client "
          f"peak {client_parts / mb:.0f} MB, workers' peaks {', '.join(f'{w / mb:.0f}' for w in workers_parts)} MB "
          f"({max(workers_parts) / max(workers):.2f}x the whole table's); chose {by_parts['chosen']['method']} "
          f"{by_parts['chosen']['params']}, {parts_written:,} rows written, re-identification (first part) "
          f"{by_parts['chosen']['risk']['reidentification']:.4f}, interval {parts_interval}; re-measured on the "
          f"whole release, 20,000 targets against all rows: {parts_relinked:.4f}")
    inside = interval is None or relinked <= interval[1]
    parts_inside = parts_interval is None or parts_relinked <= parts_interval[1]
    return (growth < size / 10 and client_peaks[n] < peak_mem and written == n and inside
            and parts_written == n and parts_inside and max(workers_parts) < max(workers))
