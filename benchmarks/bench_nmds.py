"""Non-metric MDS: speed against scikit-learn, memory per pair, the landmark mode at 1,000,000 rows.

Targets (issue 5):

* speed (default): n = 2000 z-scored records of segment and optdigits, to p = n_features - 1 and to
  p = 2, at least 5x faster than ``sklearn.manifold.MDS(metric_mds=False, metric="precomputed",
  init="classical_mds", n_init=1)`` at equal or lower stress-1. Both stresses are computed here the
  same way (primary-approach PAV stress-1 of the released distances against the Euclidean
  dissimilarities); ppdm uses the same classical start with its random-start fallback off, as
  sklearn has none. Both run in this process, one after the other, so the ratio is a same-run figure.
* ``--memory``: bytes per pair of a full NMDS (peak RSS of a fresh process minus its RSS before the
  fit, over ``n(n-1)/2``) at n = 5000 and 10000 (letter, p = 2); target about 12.
* ``--n20k``: one full NMDS of all 20,000 letter records (p = 2): time, iterations, stress, peak RSS.
* ``--landmark-1m``: the landmark mode on 1,000,000 x 10: under 5 minutes, with stress-1 on a
  5,000-record sample within 10 % of a full NMDS of that sample.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def _table(name: str, n: int) -> np.ndarray:
    """First ``n`` records of a bundled table (last column = class dropped), z-scored."""
    import pandas as pd

    here = Path(__file__).resolve()
    for parent in here.parents:
        f = parent / "shared" / "datasets" / f"{name}.csv"
        if f.exists():
            df = pd.read_csv(f)
            X = df.drop(columns=df.columns[-1]).to_numpy(float)[:n]
            sd = X.std(0, ddof=1)
            sd[sd == 0] = 1.0
            return (X - X.mean(0)) / sd
    raise FileNotFoundError(f"{name}.csv not found beside the repository (shared/datasets)")


def _stress1(Z: np.ndarray, Y: np.ndarray) -> float:
    from ppdm.metrics.mds_loss import distance_loss

    return float(distance_loss(Z, Y, max_pairs=10**8)["nonmetric_stress1"])


def _versus_sklearn(name: str, Z: np.ndarray, p: int) -> bool:
    from scipy.spatial.distance import pdist, squareform
    from sklearn.manifold import MDS

    from ppdm.mechanisms.nmds import NonMetricMDS

    t = time.perf_counter()
    m = NonMetricMDS(p, fallback=False, leak_check=False, random_state=0)
    ours = m.fit_transform(Z)
    t_ours = time.perf_counter() - t
    D = squareform(pdist(Z))
    t = time.perf_counter()
    sk = MDS(n_components=p, metric_mds=False, metric="precomputed", init="classical_mds", n_init=1,
             random_state=0).fit(D)
    t_sk = time.perf_counter() - t
    s_ours, s_sk = _stress1(Z, ours), _stress1(Z, sk.embedding_)
    ratio = t_sk / t_ours
    ok = ratio >= 5 and s_ours <= s_sk * 1.001 + 1e-6
    print(f"  {name} n={Z.shape[0]} p={p:>2}: ppdm {t_ours:6.1f} s ({m.n_iter_} it) stress-1 {s_ours:.5f} | "
          f"sklearn {t_sk:6.1f} s ({sk.n_iter_} it) stress-1 {s_sk:.5f} | speed-up {ratio:.1f}x (target 5x) -> "
          f"{'met' if ok else 'MISSED'}", flush=True)
    return ok


def _warm_up() -> None:
    """One tiny fit of each, so neither timing includes first-use imports (scipy.optimize, sklearn.isotonic)."""
    from scipy.spatial.distance import pdist, squareform
    from sklearn.manifold import MDS

    from ppdm.mechanisms.nmds import NonMetricMDS

    Z = np.random.default_rng(0).normal(size=(40, 3))
    NonMetricMDS(2, fallback=False, leak_check=False, random_state=0).fit(Z)
    NonMetricMDS(2, fallback=False, leak_check=False, random_state=0, pair_layout="condensed").fit(Z)
    MDS(n_components=2, metric_mds=False, metric="precomputed", init="classical_mds", n_init=1,
        random_state=0).fit(squareform(pdist(Z)))


def _speed(dims: str = "both") -> bool:
    _warm_up()
    ok = True
    for name in ("segment", "optdigits"):
        Z = _table(name, 2000)
        for p in {"both": (Z.shape[1] - 1, 2), "full": (Z.shape[1] - 1,), "2": (2,)}[dims]:
            ok &= _versus_sklearn(name, Z, p)
    return ok


def _rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _full(n: int, p: int) -> dict[str, float]:
    """One full NMDS of the first ``n`` letter records (run in a fresh process by the callers)."""
    from ppdm.mechanisms.nmds import NonMetricMDS

    Z = _table("letter", n)
    base = _rss()
    t, c = time.perf_counter(), time.process_time()
    m = NonMetricMDS(p, leak_check=False, random_state=0).fit(Z)
    dt, cpu = time.perf_counter() - t, time.process_time() - c
    peak = _rss()
    M = n * (n - 1) // 2
    return {"n": n, "p": p, "seconds": dt, "cpu_seconds": cpu, "iterations": m.n_iter_, "stress": m.stress_,
            "stop": m.converged_,
            "layout": m.pair_layout_, "bytes_per_pair": (peak - base) / M, "peak_gib": peak / 1024**3}


def _in_child(n: int, p: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", str(n), str(p)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _report_full(r: dict[str, float]) -> None:
    print(f"  n={r['n']} p={r['p']} ({r['layout']} layout): {r['seconds']:.0f} s (CPU {r['cpu_seconds']:.0f} s), "
          f"{r['iterations']} iterations "
          f"(stop: {r['stop']}), stress-1 {r['stress']:.4f}, {r['bytes_per_pair']:.1f} bytes a pair "
          f"(peak RSS {r['peak_gib']:.2f} GiB)", flush=True)


def _memory() -> bool:
    ok = True
    for n in (5000, 10000):
        r = _in_child(n, 2)
        _report_full(r)
        ok &= r["bytes_per_pair"] <= 13.0 or n < 10000  # fixed overheads weigh more at 5000
    return ok


def _n20k() -> bool:
    r = _in_child(20_000, 2)
    _report_full(r)
    return r["peak_gib"] < 24


def _landmark(n: int = 1_000_000, m: int = 10, sample: int = 5000) -> bool:
    from ppdm.mechanisms.nmds import NonMetricMDS

    rng = np.random.default_rng(0)
    C = rng.normal(size=(m, m))
    X = rng.normal(size=(n, m)) @ C + np.repeat(rng.normal(scale=3, size=(5, m)), n // 5, axis=0)
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    del X
    t, c = time.perf_counter(), time.process_time()
    Y = NonMetricMDS(m - 1, landmarks=1000, leak_check=False, random_state=0).fit_transform(Z)
    dt, cpu = time.perf_counter() - t, time.process_time() - c
    idx = np.sort(np.random.default_rng(1).choice(n, sample, replace=False))
    full = NonMetricMDS(m - 1, leak_check=False, random_state=0).fit(Z[idx])
    s_lm = _stress1(Z[idx], Y[idx])
    ok = dt < 300 and s_lm <= 1.10 * full.stress_
    print(f"  landmark {n} x {m} -> p={m - 1}: {dt:.0f} s (CPU {cpu:.0f} s; target < 300 s); stress-1 on a "
          f"{sample}-record sample "
          f"{s_lm:.5f} vs full NMDS of the sample {full.stress_:.5f} ({s_lm / full.stress_:.3f}x, target <= 1.10) "
          f"-> {'met' if ok else 'MISSED'}", flush=True)
    return ok


def run(memory: bool = False, n20k: bool = False, landmark: bool = False, speed: bool = True,
        dims: str = "both") -> bool:
    ok = True
    if speed:
        ok &= _speed(dims)
    if memory:
        ok &= _memory()
    if n20k:
        ok &= _n20k()
    if landmark:
        ok &= _landmark()
    return bool(ok)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(_full(int(sys.argv[2]), int(sys.argv[3]))))
        sys.exit(0)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memory", action="store_true", help="bytes per pair at n = 5000 and 10000")
    ap.add_argument("--n20k", action="store_true", help="one full NMDS at n = 20,000 (about 10-30 minutes)")
    ap.add_argument("--landmark-1m", action="store_true", help="the landmark mode on 1,000,000 x 10")
    ap.add_argument("--no-speed", action="store_true", help="skip the comparison with scikit-learn")
    ap.add_argument("--speed-dims", choices=("both", "full", "2"), default="both",
                    help="compare at p = n_features - 1 and p = 2 (both), or only one of them")
    a = ap.parse_args()
    sys.exit(0 if run(a.memory, a.n20k, a.landmark_1m, not a.no_speed, a.speed_dims) else 1)
