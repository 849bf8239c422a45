"""Attack strength: for every registered mechanism, ppdm's worst case is at least what simple attacks get.

The simple attacks are written here, independently of ppdm's attack code (numpy, scipy and scikit-learn
only). Each one is a known way to undo a class of mechanisms; ppdm's reported worst re-identification and
value disclosure (beyond the median guess) must not fall more than 0.02 below the best of them. A new
mechanism enters this table by entering the registry.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist

from ppdm.attacks import run_attacks_named
from ppdm.pipeline import perturb
from ppdm.registry import MECHANISMS

MARGIN = 0.02


def _table(n: int = 240, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    centres = rng.normal(0, 2.0, (3, 6))
    X = centres[y] + rng.normal(size=(n, 6)) @ rng.normal(0, 0.6, (6, 6))
    X = X * [1, 3, 10, 0.5, 2, 7] + [5, 50, 100, 3, 20, 60]
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    df["site"] = rng.choice(["north", "south", "east", "west"], n)
    df["y"] = y
    return df


def _z(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu, sd = A.mean(0), A.std(0, ddof=1)
    sd = np.where(sd == 0, 1.0, sd)
    return (A - mu) / sd, (B - mu) / sd


def _rate(pick: np.ndarray) -> float:
    return float(np.mean(pick == np.arange(len(pick))))


def simple_linkages(A: np.ndarray, B: np.ndarray, sites: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Population-z nearest neighbour, norms, k-NN profiles, one-to-one matching, categories + numbers."""
    out: dict[str, float] = {}
    Za = _z(A, A)[0]
    if B.shape[1] == A.shape[1]:
        _, Zb = _z(A, B)
        out["population_z"] = _rate(cKDTree(Za).query(Zb)[1])
        na, nb = np.linalg.norm(Za, axis=1), np.linalg.norm(Zb, axis=1)
        out["norm"] = _rate(np.abs(nb[:, None] - na[None, :]).argmin(1))
        perm = np.random.default_rng(0).permutation(len(B))
        r, c = linear_sum_assignment(cdist(Zb[perm], Za, "sqeuclidean"))
        pick = np.empty(len(B), dtype=int)
        pick[perm[r]] = c
        out["assignment"] = _rate(pick)
        key_a = np.char.add(sites.astype(str), y.astype(str))
        hits = 0
        rng = np.random.default_rng(1)
        for i in range(len(B)):
            cand = np.flatnonzero(key_a == key_a[i])
            d = ((Za[cand] - Zb[i]) ** 2).sum(1)
            hits += rng.choice(cand[d == d.min()]) == i
        out["mixed"] = hits / len(B)
        Zb_own = Zb
    else:
        Zb_own = B
    # sorted distances to the 10 nearest others, each table in units of its median nearest distance
    da = np.sort(cKDTree(Za).query(Za, k=11)[0][:, 1:], axis=1)
    db = np.sort(cKDTree(Zb_own).query(Zb_own, k=11)[0][:, 1:], axis=1)
    if B.shape[1] != A.shape[1]:  # an embedding has its own units
        da, db = da / np.median(da[:, 0]), db / max(np.median(db[:, 0]), 1e-12)
    out["profile"] = _rate(cKDTree(da).query(db)[1])
    return out


def simple_value_disclosure(A: np.ndarray, B: np.ndarray) -> float:
    """Wiener estimate from the population and release covariances; share within 5 % among values the
    column median misses."""
    if B.shape != A.shape:
        return 0.0
    Za, Zb = _z(A, B)
    W = np.cov(Za.T) @ np.linalg.pinv(np.cov(Zb.T))
    mu, sd = A.mean(0), A.std(0, ddof=1)
    Xh = ((Zb - Zb.mean(0)) @ W.T) * sd + mu
    miss = np.abs(np.median(A, 0) - A) > 0.05 * np.abs(A)
    return float((np.abs(Xh - A) <= 0.05 * np.abs(A))[miss].mean())


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_ppdm_is_at_least_as_strong_as_simple_attacks(name: str) -> None:
    if MECHANISMS[name].requires:
        pytest.importorskip(MECHANISMS[name].requires)
    df = _table()
    params = dict(MECHANISMS[name].test_params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = perturb(df, method=name, params=params, label="y", keep_ids=True, columns=[f"x{j}" for j in range(6)])
    cols = [f"x{j}" for j in range(6)]
    A = df[cols].to_numpy(float)
    rel = res.release
    new_cols = [c for c in rel.columns if c not in ("site", "y")]
    B = rel[new_cols].to_numpy(float)
    cats = df[["site", "y"]].astype(str).to_numpy()
    got = run_attacks_named(A, B, "population", random_state=0, n_seeds=1, categories=(cats, cats))
    reid = max((r.reidentification_rate or 0.0) for r in got)
    value = max((r.within_5pct_beyond_baseline or 0.0) for r in got)
    theirs = simple_linkages(A, B, df["site"].to_numpy(), df["y"].to_numpy())
    assert reid >= max(theirs.values()) - MARGIN, (name, reid, theirs)
    assert value >= simple_value_disclosure(A, B) - MARGIN, (name, value)
