"""Formally private synthetic tables on the adult extract: dp-aim against MST, dp-copula and per-column noise.

The bundled adult data (5,000 records): 4,000 released, the other 1,000 real records held out. Every method
gives (epsilon, 1e-9)-differential privacy (dp-copula: 1e-6, its own default) at epsilon 0.5, 1, 2 and 4, each
with three fresh keys, and is measured the same way: logistic regression (one-hot categories, standardised
numbers) trained on the release and tested on the 1,000 real records; the label signal kept is
``(acc_release - majority) / (acc_original - majority)``. The peers, run in the same process:

* ``dp-mst``: the MST recipe as its authors describe it (one-way marginals, a private maximum spanning tree of
  two-way marginals, budget in thirds, Private-PGM);
* ``dp-copula``: the DP Gaussian copula ``ppdm release`` used so far, on the whole table's design (numbers
  standardised, categories one-hot, +-4 bounds); it publishes the label and the class sizes as they are
  (outside its guarantee: it is flattered here);
* ``per-column noise``: every value of every record with Laplace noise (OpenDP's calibration), the record's
  budget split over its columns; numbers scaled to public bounds (the data's extremes, declared public:
  flattering again), each categorical column and the label as one-hot indicators read back as the largest.

Targets (the issue): dp-aim keeps >= 50 % of the label signal at epsilon 1 and >= 80 % at epsilon 4 (mean of
three keys) and beats the three peers at every epsilon. Also printed: dp-aim beside dp-copula on two numeric
tables (wdbc, wine; 30 % held out), the per-fit time of dp-aim (CPU seconds, JAX compilation included) and
an empirical audit of the whole dp-aim release on neighbouring tables.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError

EPSILONS = (0.5, 1.0, 2.0, 4.0)
KEYS = int(os.environ.get("PPDM_BENCH_KEYS", 3))


def label_signal(train: pd.DataFrame, test: pd.DataFrame, release: pd.DataFrame, label: str) -> float:
    """The share of the original's accuracy gain over the majority class that a release keeps."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    cols = [c for c in train.columns if c != label]
    cats = [c for c in cols if not pd.api.types.is_numeric_dtype(train[c])]
    nums = [c for c in cols if c not in cats]

    def ready(d: pd.DataFrame) -> pd.DataFrame:
        d = d.copy()
        for c in nums:
            d[c] = pd.to_numeric(d[c], errors="coerce").fillna(train[c].median())
        for c in [*cats, label]:
            d[c] = d[c].astype(str)
        return d

    tr, te, rr = ready(train), ready(test), ready(release)

    def accuracy(fit: pd.DataFrame) -> float:
        pre = ColumnTransformer([("c", OneHotEncoder(handle_unknown="ignore"), cats), ("n", StandardScaler(), nums)])
        model = make_pipeline(pre, LogisticRegression(max_iter=2000))
        if fit[label].nunique() < 2:
            return float((te[label] == fit[label].iloc[0]).mean())
        model.fit(fit[cols], fit[label])
        return float((model.predict(te[cols]) == te[label]).mean())

    base = float(te[label].value_counts(normalize=True).max())
    return (accuracy(rr) - base) / max(accuracy(tr) - base, 1e-9)


def _codec(train: pd.DataFrame, label: str):  # type: ignore[no-untyped-def]
    from ppdm.data.codec import TableCodec
    from ppdm.data.columns import infer_columns

    return TableCodec(infer_columns(train, label=label)).fit(train)


def synthesise(method: str, train: pd.DataFrame, label: str, eps: float, key: int) -> pd.DataFrame:
    """The release of ``train`` by a table-releasing mechanism (the path ``ppdm perturb`` publishes)."""
    from ppdm.flow.synthesis import release_frame
    from ppdm.mechanisms import DPAIM, DPMST

    codec = _codec(train, label)
    mech = (DPAIM if method == "dp-aim" else DPMST)(epsilon=eps, delta=1e-9, random_state=key)
    table, y_out, _ = release_frame(train, mech, codec, train[label].astype(str).to_numpy())
    return table.assign(**{label: y_out})


def dp_copula(train: pd.DataFrame, label: str, eps: float, key: int) -> pd.DataFrame:
    """dp-copula as the release sweep runs it on a whole table: the design in, the design decoded out."""
    from ppdm.mechanisms import DPGaussianCopula

    codec = _codec(train, label)
    y = train[label].astype(str).to_numpy()
    B = DPGaussianCopula(epsilon=eps, delta=1e-6, bounds=4.0, random_state=key).fit_transform(codec.encode(train), y)
    return codec.table(codec.decode_parts(B)).assign(**{label: y})


def per_column_noise(train: pd.DataFrame, label: str, eps: float) -> pd.DataFrame:
    """Each record's values with Laplace noise calibrated by OpenDP to the record's whole budget: numbers in
    [0, 1] of public bounds, categories and the label one-hot (an L1 diameter of 2 each)."""
    from ppdm.mechanisms.dp_synthetic import opendp_prelude

    dp = opendp_prelude()
    cols = list(train.columns)
    nums = [c for c in cols if pd.api.types.is_numeric_dtype(train[c]) and c != label]
    cats = [c for c in cols if c not in nums]
    lo, hi = train[nums].min(), train[nums].max()
    blocks = [sorted(train[c].astype(str).unique()) for c in cats]
    width = len(nums) + sum(len(b) for b in blocks)
    diameter = float(len(nums) + 2 * len(cats))  # one record's vector moves at most this far in L1
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False), size=width), dp.l1_distance(T=float))
    scale = dp.binary_search_param(lambda s: dp.m.make_laplace(*space, s), d_in=diameter, d_out=float(eps))
    noisy = dp.m.make_laplace(*space, scale)
    Z = np.column_stack([((train[nums] - lo) / (hi - lo).replace(0, 1)).fillna(0).to_numpy()]
                        + [(train[c].astype(str).to_numpy()[:, None] == np.array(b)[None, :]).astype(float)
                           for c, b in zip(cats, blocks, strict=True)])
    R = np.asarray([noisy(row.tolist()) for row in Z])
    out = pd.DataFrame(np.clip(R[:, :len(nums)], 0, 1) * (hi - lo).to_numpy() + lo.to_numpy(), columns=nums)
    at = len(nums)
    for c, b in zip(cats, blocks, strict=True):
        out[c] = np.asarray(b)[np.argmax(R[:, at:at + len(b)], axis=1)]
        at += len(b)
    return out[cols]


def _adult() -> tuple[pd.DataFrame, pd.DataFrame]:
    from ppdm import datasets

    df = datasets.load("adult").sample(frac=1.0, random_state=41).reset_index(drop=True)
    return df.iloc[:4000].reset_index(drop=True), df.iloc[4000:].reset_index(drop=True)


def _fresh_keys() -> list[int]:
    return [int(np.random.SeedSequence().generate_state(1)[0]) for _ in range(KEYS)]


def adult_table() -> tuple[dict[str, dict[float, list[float]]], list[float]]:
    train, test = _adult()
    runs = {m: {e: [] for e in EPSILONS} for m in ("dp-aim", "dp-mst", "dp-copula", "per-column noise")}
    seconds: list[float] = []
    for eps in EPSILONS:
        for key in _fresh_keys():
            t = time.process_time()
            runs["dp-aim"][eps].append(label_signal(train, test, synthesise("dp-aim", train, "class", eps, key),
                                                    "class"))
            seconds.append(time.process_time() - t)
            runs["dp-mst"][eps].append(label_signal(train, test, synthesise("dp-mst", train, "class", eps, key),
                                                    "class"))
            runs["dp-copula"][eps].append(label_signal(train, test, dp_copula(train, "class", eps, key), "class"))
            runs["per-column noise"][eps].append(label_signal(train, test, per_column_noise(train, "class", eps),
                                                              "class"))
            print(f"  epsilon {eps:g}: " + ", ".join(f"{m} {r[eps][-1]:.2f}" for m, r in runs.items()), flush=True)
    return runs, seconds


def numeric_tables() -> dict[str, dict[str, dict[float, list[float]]]]:
    """dp-aim beside dp-copula where dp-copula was made for: numeric tables."""
    from ppdm import datasets

    out = {}
    for name in ("wdbc", "wine"):
        df = datasets.load(name).sample(frac=1.0, random_state=3).reset_index(drop=True)
        cut = int(0.7 * len(df))
        train, test = df.iloc[:cut].reset_index(drop=True), df.iloc[cut:].reset_index(drop=True)
        res = {m: {e: [] for e in (1.0, 4.0)} for m in ("dp-aim", "dp-copula")}
        for eps in (1.0, 4.0):
            for key in _fresh_keys():
                try:
                    aim = label_signal(train, test, synthesise("dp-aim", train, "class", eps, key), "class")
                except InputError:  # a range the noise hides on a few hundred records: the fit stops, says why
                    aim = float("nan")
                res["dp-aim"][eps].append(aim)
                res["dp-copula"][eps].append(label_signal(train, test, dp_copula(train, "class", eps, key),
                                                          "class"))
        out[name] = res
    return out


def audit(runs: int = 60) -> tuple[float, float, int, int]:
    """Whole dp-aim releases of D (its one record of class 'b' with x = 2 removed) and D' (with it), ``runs``
    each at epsilon 1: the distinguisher says D' when the release holds a record (x = 2, class 'b').
    Returns the claimed epsilon, the 95 % lower bound of the loss it shows (see tests), and the hits."""
    from scipy.stats import beta

    from ppdm.mechanisms import DPAIM

    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 200).astype(float)
    y = np.where(x == 1, "a", "b")
    D, yD = x[:, None], y
    Dp, yDp = np.vstack([D, [[2.0]]]), np.append(y, "b")
    hits = []
    for X, yy in ((D, yD), (Dp, yDp)):
        n_hit = 0
        for _ in range(runs):
            mech = DPAIM(epsilon=1.0, delta=1e-9, kinds=["categorical"], levels=[3], rounds=1, per_round=1)
            out = mech.fit_transform(X, yy)
            n_hit += bool(np.any((out[:, 0] == 2) & (mech.released_label_ == "b")))
        hits.append(n_hit)
    p_lo = beta.ppf(0.025, hits[1], runs - hits[1] + 1) if hits[1] else 0.0
    q_hi = beta.ppf(0.975, hits[0] + 1, runs - hits[0]) if hits[0] < runs else 1.0
    return 1.0, float(np.log(max(p_lo - 1e-9, 1e-12) / q_hi)), hits[0], hits[1]


def _row(name: str, r: dict[float, list[float]]) -> str:
    """A method's mean (min..max) at each epsilon; a fit refused (NaN) is counted, not averaged."""
    def cell(v: list[float]) -> str:
        kept = [x for x in v if not np.isnan(x)]
        refused = f", {len(v) - len(kept)} of {len(v)} refused" if len(kept) < len(v) else ""
        if not kept:
            return f"  refused ({len(v)} of {len(v)})"
        return f"{np.mean(kept):>8.2f} ({min(kept):.2f}..{max(kept):.2f}{refused})"

    return f"  {name:<17}" + "".join(cell(r[e]) for e in r)


def run() -> bool:
    warnings.simplefilter("ignore")
    runs, seconds = adult_table()
    print(f"  label signal kept on adult (4,000 released, 1,000 real tested), mean (min..max) of {KEYS} keys at "
          "epsilon " + ", ".join(f"{e:g}" for e in EPSILONS))
    for m, r in runs.items():
        print(_row(m, r))
    aim = {e: float(np.mean(runs["dp-aim"][e])) for e in EPSILONS}
    beats = {e: all(aim[e] > np.mean(runs[m][e]) for m in runs if m != "dp-aim") for e in EPSILONS}
    for e in EPSILONS:
        ratio = ", ".join(f"{m} {aim[e] - np.mean(runs[m][e]):+.2f}" for m in runs if m != "dp-aim")
        print(f"  epsilon {e:g}: dp-aim minus peers: {ratio}")
    print(f"  dp-aim fit + draw: {np.median(seconds):.1f} s CPU median ({min(seconds):.1f}..{max(seconds):.1f}), one "
          "process, JAX compilation included (the first fit also pays the imports)")
    for name, res in numeric_tables().items():
        print(f"  numeric table {name}: label signal kept at epsilon 1, 4")
        for m, r in res.items():
            print(_row(m, r))
    eps, shown, h0, h1 = audit()
    print(f"  audit of whole dp-aim releases (60 each of D and D'): the record shows up in {h0} releases of D and {h1} "
          f"of D'; loss shown at 95 % confidence <= {shown:.2f}, claimed {eps:g}")
    return aim[1.0] >= 0.5 and aim[4.0] >= 0.8 and all(beats.values()) and shown <= eps
