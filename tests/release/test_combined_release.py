"""Whole-table candidates that combine a numeric and a categorical mechanism, end to end."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import ParameterError
from ppdm.release import load_config, release
from ppdm.release.candidates import describe


def _table(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    cls = rng.choice(["yes", "no"], n)
    return pd.DataFrame({
        "pid": np.arange(1, n + 1),
        "age": np.where(cls == "yes", rng.integers(40, 90, n), rng.integers(18, 60, n)),
        "hours": rng.integers(10, 60, n),
        "sex": rng.choice(["F", "M"], n),
        "region": rng.choice(["north", "south", "east", "west"], n),
        "job": rng.choice(["a", "b", "c"], n),
        "class": cls,
    })


def _release(tmp_path, methods: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    df = _table()
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    cfg = load_config(None, {"methods": methods, "threat": "population", "n_jobs": 1,
                             "policy": {"max_reidentification": 1.0, "max_within_5pct": 1.0,
                                 "max_singling_out": 1.0, "max_linkability": 1.0, "max_membership_outliers": 1.0,
                                        "max_attribute_inference": 1.0}})
    res = release(src, output_dir=tmp_path / "out", config=cfg, id="pid", label="class", keep_ids=True,
                  use_cache=False, progress=False, roles="job=sensitive")
    return df, pd.read_csv(tmp_path / "out" / "release.csv"), res.record


def test_mdav_with_pram_is_one_candidate_and_every_column_says_what_touched_it(tmp_path) -> None:
    df, rel, rec = _release(tmp_path, [{"method": "mdav+pram", "grid": {"k": [10], "pram.pd": [0.3]}}])
    assert rec["chosen"]["method"] == "mdav+pram"
    assert rec["chosen"]["params"] == {"k": 10, "pram.pd": 0.3}
    assert rec["chosen"]["candidate"] == "mdav(k=10)+pram(pd=0.3)"
    assert "Released with mdav(k=10)+pram(pd=0.3)" in rec["summary"][0]
    cols = {c["name"]: c for c in rec["columns"]}
    for c in ("age", "hours"):
        assert cols[c]["mechanism"] == "mdav(k=10)"
    for c in ("sex", "region", "job"):
        assert cols[c]["mechanism"] == "pram(pd=0.3)"
        assert "post-randomised" in cols[c]["treatment"]
        assert set(rel[c].dropna()) <= set(df[c])
    assert cols["class"]["treatment"].startswith("released as it is")
    assert cols["pid"].get("mechanism") is None
    # rows kept in order (keep_ids): the numbers are group means, so fewer distinct rows than records
    assert len(rel[["age", "hours"]].drop_duplicates()) <= len(df) // 10


def test_local_suppression_blanks_only_quasi_identifiers(tmp_path) -> None:
    df, rel, rec = _release(tmp_path, [{"method": "mdav+suppress", "grid": {"k": [10], "suppress.k": [5]}}])
    cols = {c["name"]: c for c in rec["columns"]}
    assert cols["job"]["mechanism"] is None  # a sensitive column is no quasi-identifier
    assert rel["job"].notna().all() and (rel["job"] == df["job"]).all()
    assert rel[["sex", "region"]].isna().any().any()
    assert cols["sex"]["mechanism"] == "suppress(k=5)"


def test_combined_names_and_parameters_are_checked() -> None:
    with pytest.raises(ParameterError, match="categorical mechanism 'swap'"):
        load_config(None, {"methods": [{"method": "mdav+swap"}]})
    with pytest.raises(ParameterError, match="pram.q"):
        load_config(None, {"methods": [{"method": "mdav+pram", "grid": {"pram.q": [1]}}]})
    assert describe("noise+recode", {"scale": 1.0, "recode.min_share": 0.02}) == \
        "noise(scale=1.0)+recode(min_share=0.02)"


def test_combined_default_candidates_skip_numeric_tables(tmp_path) -> None:
    from ppdm.release.config import DEFAULT_GRIDS

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    df["class"] = rng.choice(["x", "y"], 60)
    methods = [{"method": "mdav", "grid": {"k": [5]}}, {"method": "mdav+pram", "grid": DEFAULT_GRIDS["mdav+pram"]},
               {"method": "mdav+recode", "grid": {"k": [5]}}]
    cfg = load_config(None, {"methods": methods, "n_jobs": 1,
                             "policy": {"max_reidentification": 1.0, "max_within_5pct": 1.0,
                                 "max_singling_out": 1.0, "max_linkability": 1.0, "max_membership_outliers": 1.0,
                                        "max_attribute_inference": 1.0}})
    res = release(df, output_dir=tmp_path / "o", config=cfg, label="class", use_cache=False, progress=False)
    assert {c["method"] for c in res.record["candidates"]} == {"mdav"}
    cols = {c["name"]: c for c in res.record["columns"]}
    assert [cols[c]["mechanism"] for c in "abc"] == ["mdav(k=5)"] * 3
    assert cols["class"].get("mechanism") is None
    # a grid the user wrote is tried as given: on numbers alone it fails with its reason
    (failed,) = res.record["failed_candidates"]
    assert failed["method"] == "mdav+recode" and "categorical columns" in failed["failed"]


def test_a_combined_release_state_reloads_as_the_same_mechanism(tmp_path) -> None:
    from ppdm.flow import load_release_state
    from ppdm.mechanisms import MDAV
    from ppdm.mechanisms.categorical import PRAM
    from ppdm.mechanisms.combined import Combined

    _release(tmp_path, [{"method": "mdav+pram", "grid": {"k": [10], "pram.pd": [0.3]}}])
    mech, _, _, header = load_release_state(tmp_path / "out" / "release.state")
    assert isinstance(mech, Combined) and isinstance(mech.numeric, MDAV) and isinstance(mech.categorical, PRAM)
    assert mech.numeric.k == 10 and mech.categorical.pd == 0.3
    assert mech.numeric.groups_.shape == (300,)  # the fitted groups came back (key material)
    assert isinstance(mech.categorical.random_state, int)


def test_a_reloaded_combined_mechanism_releases_the_same_table() -> None:
    from ppdm.mechanisms import MDAV
    from ppdm.mechanisms.categorical import PRAM
    from ppdm.mechanisms.combined import Combined

    rng = np.random.default_rng(2)
    n = 200
    cats = rng.integers(0, 3, n)
    X = np.column_stack([rng.normal(size=(n, 2)), np.eye(3)[cats]])
    y = rng.choice(["a", "b"], n)
    mech = Combined(MDAV(k=5), PRAM(pd=0.5, random_state=9), numeric_columns=[0, 1], blocks=[[2, 3, 4]])
    first = mech.fit_transform(X, y)
    header, arrays = mech.to_state()
    again = Combined.from_state(header, arrays)
    assert np.array_equal(again.numeric.groups_, mech.numeric.groups_)
    assert np.array_equal(again.fit_transform(X, y), first)
    # the categorical draws are those of its seed: another seed changes some of them
    other = Combined(MDAV(k=5), PRAM(pd=0.5, random_state=10), numeric_columns=[0, 1], blocks=[[2, 3, 4]])
    assert not np.array_equal(other.fit_transform(X, y), first)
