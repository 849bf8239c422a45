"""Marginal and pairwise fidelity on hand-computed examples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.metrics.fidelity import association_matrix, fidelity, marginal_fidelity


def test_total_variation_and_ks_by_hand() -> None:
    a = pd.DataFrame({"c": ["x"] * 6 + ["y"] * 4, "v": np.arange(10.0)})
    b = pd.DataFrame({"c": ["x"] * 3 + ["y"] * 5 + ["z"] * 2, "v": np.arange(10.0) + 5})
    m = marginal_fidelity(a, b, ["v"], ["c"])
    # TV = (|0.6-0.3| + |0.4-0.5| + |0-0.2|) / 2 = 0.3; KS of 0..9 against 5..14 = 0.5
    assert m["c"] == {"measure": "tv", "value": pytest.approx(0.3)}
    assert m["v"] == {"measure": "ks", "value": pytest.approx(0.5)}


def test_associations_on_their_extremes() -> None:
    n = 200
    g = np.repeat(["a", "b"], n // 2)
    df = pd.DataFrame({"x": np.where(g == "a", 0.0, 1.0), "y": np.arange(n, dtype=float),
                       "g": g, "h": np.where(g == "a", "p", "q")})
    A = association_matrix(df, ["x", "y"], ["g", "h"])
    assert A[2, 3] == pytest.approx(1.0)  # Cramer's V of two copies of one split
    assert A[0, 2] == pytest.approx(1.0)  # a number fully determined by the group: correlation ratio 1
    assert A[0, 1] == pytest.approx(abs(np.corrcoef(df["x"], df["y"])[0, 1]))
    rng = np.random.default_rng(0)
    noise = pd.DataFrame({"u": rng.choice(["a", "b"], 5000), "w": rng.choice(["c", "d"], 5000)})
    assert association_matrix(noise, [], ["u", "w"])[0, 1] < 0.05


def test_an_identical_release_changes_nothing_and_row_order_does_not_matter() -> None:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"v": rng.normal(size=300), "w": rng.normal(size=300), "c": rng.choice(list("abc"), 300)})
    f = fidelity(df, df.sample(frac=1.0, random_state=2), ["v", "w"], ["c"])
    assert f["mean_marginal_distance"] == pytest.approx(0.0)
    assert f["pairwise"]["mean_abs_difference"] == pytest.approx(0.0, abs=1e-12)
    shuffled = df.assign(c=rng.permutation(df["c"].to_numpy()), w=rng.permutation(df["w"].to_numpy()))
    assert fidelity(df, shuffled, ["v", "w"], ["c"])["mean_marginal_distance"] == pytest.approx(0.0)


def test_associations_equal_scipys_cramers_v_and_the_correlation_ratio_by_groups() -> None:
    from scipy.stats.contingency import association

    rng = np.random.default_rng(3)
    n = 900
    g = rng.choice(list("abcd"), n, p=[0.4, 0.3, 0.2, 0.1])
    df = pd.DataFrame({"x": rng.normal(size=n) + (g == "a") * 1.5, "g": g,
                       "h": np.where(rng.random(n) < 0.7, g, rng.choice(list("pqr"), n))})
    df.loc[::17, "x"] = np.nan  # gaps in the number are left out of its correlation ratio
    A = association_matrix(df, ["x"], ["g", "h"])
    assert A[1, 2] == pytest.approx(association(pd.crosstab(df["g"], df["h"]).to_numpy(), method="cramer"))
    ok = df["x"].notna()
    x, groups = df.loc[ok, "x"], df.loc[ok, "g"]
    between = sum(len(v) * (v.mean() - x.mean()) ** 2 for _, v in x.groupby(groups))
    assert A[0, 1] == pytest.approx(np.sqrt(between / ((x - x.mean()) ** 2).sum()))
