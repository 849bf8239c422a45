"""Run every benchmark (or the ones named on the command line) and print their ratios.

Each benchmark measures ppdm and the peer it must beat in the same run, because absolute times drift
on shared machines; the ratios are what counts.
"""

from __future__ import annotations

import importlib
import sys
import time

BENCHMARKS = ["bench_svd", "bench_attacks", "bench_nmf", "bench_dask", "bench_nmds", "bench_stream", "bench_mdav",
              "bench_release_scale", "bench_release_cluster", "bench_release_mixed", "bench_dp",
              "bench_release_small"]


def main(argv: list[str]) -> int:
    names = argv or BENCHMARKS
    failed = 0
    for name in names:
        mod = importlib.import_module(f"benchmarks.{name}" if __package__ else name)
        print(f"== {name}: {mod.__doc__.strip().splitlines()[0]}")
        t = time.perf_counter()
        ok = mod.run()
        print(f"== {name}: {'meets target' if ok else 'MISSES target'} ({time.perf_counter() - t:.0f} s)\n")
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    sys.exit(main(sys.argv[1:]))
