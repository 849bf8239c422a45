from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ppdm.state import load_state
from tests.conftest import one_line_error
from tests.release.conftest import read_release


def test_release_end_to_end(cli, wdbc_csv: Path, small_config: Path, tmp_path: Path) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    # a known seed and the linkable layout make the run repeatable and comparable row by row (a seed beyond the
    # seed search's scan: a small one would be found and every noise candidate undone)
    code, stdout, err = cli("release", wdbc_csv, "--label", "class", "--id", "pid", "--config", small_config,
                            "-o", out, "--cache-dir", cache, "--seed", 982451653, "--keep-ids")
    assert code == 0, err
    assert {p.name for p in out.iterdir()} == {"release.csv", "release.json", "release.state", "report.html"}
    assert stat.S_IMODE(os.stat(out / "release.state").st_mode) == 0o600
    rec = json.loads((out / "release.json").read_text())
    assert len(rec["candidates"]) == 5 and sum(c["chosen"] for c in rec["candidates"]) == 1
    chosen = next(c for c in rec["candidates"] if c["chosen"])
    # the policy: highest k-NN accuracy among candidates within the limits
    feasible = [c for c in rec["candidates"]
                if c["risk"]["reidentification_excess"] <= 0.9 and c["risk"]["within_5pct"] <= 0.9]
    assert chosen["utility"]["knn_pct"] == max(c["utility"]["knn_pct"] for c in feasible)
    assert all(c["verdict"] for c in rec["candidates"])
    # the release is the chosen mechanism applied to the data; ids and labels pass through in order
    src, rel = pd.read_csv(wdbc_csv), read_release(out)
    assert rel["pid"].tolist() == src["pid"].tolist() and rel["class"].tolist() == src["class"].tolist()
    A = src.drop(columns=["pid", "class"]).to_numpy()
    B = rel.drop(columns=["pid", "class"]).to_numpy()
    assert np.linalg.norm(A - B) / np.linalg.norm(A) == pytest.approx(chosen["value"]["re"], rel=1e-9)
    # no key material in the record or the report: no value of any state array appears there
    _, arrays = load_state(out / "release.state")
    texts = (out / "release.json").read_text() + (out / "report.html").read_text()
    for name, arr in arrays.items():
        if name.startswith("mechanism.") and arr.size and arr.dtype.kind == "f":
            probe = [v for v in np.ravel(arr)[:20] if abs(v) > 1e-6]
            assert not any(repr(float(v)) in texts or f"{v:.6f}" in texts for v in probe), name
    # a second run is served from the cache and gives the same record
    code, _, err = cli("release", wdbc_csv, "--label", "class", "--id", "pid", "--config", small_config,
                       "-o", tmp_path / "out2", "--cache-dir", cache, "--seed", 982451653, "--keep-ids")
    assert code == 0, err
    rec2 = json.loads((tmp_path / "out2" / "release.json").read_text())
    assert all(c["cached"] for c in rec2["candidates"])
    assert rec2["chosen"] == rec["chosen"]
    assert (tmp_path / "out2" / "release.csv").read_bytes() == (out / "release.csv").read_bytes()


def test_print_config_round_trips(cli, tmp_path: Path) -> None:
    code, out, _ = cli("release", "--print-config")
    assert code == 0
    cfg = yaml.safe_load(out)
    assert cfg["policy"]["max_reidentification"] == 0.05 and cfg["methods"][0]["method"] == "svd"
    p = tmp_path / "c.yaml"
    p.write_text(out)
    code2, out2, _ = cli("release", "--print-config", "--config", p)
    assert out2 == out
    assert cfg["policy"]["max_attribute_inference"] == 0.1
    code3, out3, _ = cli("release", "--print-config", "--max-attribute-inference", "0.25")
    assert code3 == 0 and yaml.safe_load(out3)["policy"]["max_attribute_inference"] == 0.25
    code4, _, err4 = cli("release", "--print-config", "--max-attribute-inference", "2")
    assert code4 == 2 and "less than or equal to 1" in err4


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ("methods: [{method: nosuch}]", "unknown mechanism 'nosuch'"),
        ("methods: [{method: svd, grid: {rnk: [1]}}]", "has no parameter rnk"),
        ("methods: [{method: svd, grid: {rank: []}}]", "grid of 'rank' is empty"),
        ("methods: []", "methods is empty"),
        ("colour: blue", "colour: unknown key"),
        ("policy: {max_reidentification: 2}", "less than or equal to 1"),
        ("methods: [\n  - method: svd\n grid", "not valid YAML"),
    ],
)
def test_bad_config(cli, wdbc_csv: Path, tmp_path: Path, config: str, match: str) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(config)
    out = tmp_path / "out"
    line = one_line_error(*cli("release", wdbc_csv, "--label", "class", "--config", p, "-o", out))
    assert match in line
    assert not out.exists()


def test_unsatisfiable_policy_names_constraint_and_closest(cli, wdbc_csv: Path, tmp_path: Path) -> None:
    p = tmp_path / "strict.yaml"
    p.write_text("methods: [{method: svd, grid: {rank: [2]}}]\npolicy: {max_reidentification: 0.0, "
                 "max_within_5pct: 0.0}\nn_jobs: 1\n")
    out = tmp_path / "out"
    line = one_line_error(*cli("release", wdbc_csv, "--id", "pid", "--label", "class", "--config", p, "-o", out,
                               "--no-cache"))
    assert "no candidate satisfies" in line and "closest is svd(rank=2)" in line
    assert not out.exists() and not list(tmp_path.glob(".out.*"))


def test_refuses_previous_release_without_force(cli, wdbc_csv: Path, tmp_path: Path, small_config: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "release.csv").write_text("old")
    line = one_line_error(*cli("release", wdbc_csv, "--label", "class", "--config", small_config, "-o", out))
    assert "--force" in line and (out / "release.csv").read_text() == "old"
    code, _, err = cli("release", wdbc_csv, "--label", "class", "--config", small_config, "-o", out, "--force",
                       "--cache-dir", tmp_path / "c")
    assert code == 0, err
    assert (out / "release.csv").read_text() != "old"


def test_cache_follows_the_label_not_only_the_numbers(cli, wdbc_csv: Path, small_config: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert cli("release", wdbc_csv, "--label", "class", "--config", small_config, "-o", tmp_path / "a",
               "--cache-dir", cache)[0] == 0
    one = tmp_path / "one.csv"
    pd.read_csv(wdbc_csv).assign(**{"class": "B"}).to_csv(one, index=False)  # same numbers, another label
    code, _, err = cli("release", one, "--label", "class", "--config", small_config, "-o", tmp_path / "b",
                       "--cache-dir", cache)
    assert code == 0, err
    rec = json.loads((tmp_path / "b" / "release.json").read_text())
    assert not any(c["cached"] for c in rec["candidates"]) and "utility_note" in rec
