"""Resource guards: every command refuses work that cannot fit, with one line naming the option that fits.

``PPDM_MEMORY_LIMIT`` stands in for the available memory, so the guards trip on small tables. Each case:
exit code 2, one stderr line naming the fix, no output or temporary file written, inputs byte-identical.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import ParameterError
from ppdm.utils.memory import ENV_LIMIT, available_memory, parse_bytes
from tests.robustness.test_bad_input_newer import _check

N, M = 400, 6


def _table(path: Path, n: int = N, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) @ rng.normal(size=(2, M)) + rng.normal(scale=0.3, size=(n, M)) + 5.0
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(M)])
    df.insert(0, "id", np.arange(1, n + 1))
    df["cls"] = np.where(X[:, 0] > np.median(X[:, 0]), "a", "b")
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return _table(tmp_path / "data.csv")


# (name, limit, args after the data paths are filled in, text the message must hold)
CASES = [
    ("perturb-dense", "50K", ["perturb", "{d}", "--id", "id", "--label", "cls", "--rank", 2, "-o", "{o}",
                              "--state", "{s}"], "--backend dask"),
    ("perturb-nmds", "500K", ["perturb", "{d}", "--id", "id", "--label", "cls", "-m", "nmds", "--dims", 2,
                              "-o", "{o}"], "landmarks="),
    ("perturb-left-projection", "500K", ["perturb", "{d}", "--id", "id", "--label", "cls", "-m", "projection",
                                         "--kind", "rpa", "-o", "{o}"], "--kind arp"),
    ("evaluate", "50K", ["evaluate", "{d}", "{d}", "--id", "id", "--label", "cls"], "--sample"),
    ("attack", "50K", ["attack", "{d}", "{d}", "--id", "id", "--label", "cls", "--threat", "population",
                       "--json", "{o}"], "--sample"),
    ("attack-distance", "1M", ["attack", "{d}", "{d}", "--id", "id", "--label", "cls", "--threat", "known-io:150",
                               "--attacks", "distance", "--json", "{o}"], "known-io:"),
    ("hide", "50K", ["hide", "{d}", "--id", "id", "--label", "cls", "-k", 2, "--hide-member", 1, "-o", "{o}",
                     "--state", "{s}"], "--columns"),
    ("release-one-worker", "200K", ["release", "{d}", "--id", "id", "--label", "cls", "-o", "{dir}", "--jobs", 1,
                                    "--no-cache"], "--backend dask"),
    ("release-workers", "500K", ["release", "{d}", "--id", "id", "--label", "cls", "-o", "{dir}", "--jobs", 2,
                                 "--no-cache"], "--jobs 1"),
    ("mds-dims", "500K", ["mds-dims", "{d}", "--id", "id", "--label", "cls", "--max-rows", N, "--plot", "{png}"],
     "--max-rows"),
    ("stream-init", "50K", ["stream", "init", "{d}", "--id", "id", "--label", "cls", "--rank", 2, "--state", "{s}",
                            "-o", "{o}"], "ppdm stream update"),
    ("datasets-export", "1M", ["datasets", "export", "low_rank", "--n", 100_000, "--m", 10, "-o", "{o}"], "--n"),
]


@pytest.mark.parametrize(("name", "limit", "template", "fix"), CASES, ids=[c[0] for c in CASES])
def test_guard_names_the_fix(cli, tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                             limit: str, template: list[object], fix: str) -> None:
    paths = {"{d}": data, "{o}": tmp_path / "out.csv", "{s}": tmp_path / "out.state",
             "{dir}": tmp_path / "outdir", "{png}": tmp_path / "sweep.png"}
    args = [paths.get(a, a) if isinstance(a, str) else a for a in template]
    monkeypatch.setenv(ENV_LIMIT, limit)
    err = _check(cli, args, [data], list(paths.values())[1:])
    assert err.startswith("ppdm: error: ") and "is available" in err, err
    assert fix in err, err


def _suggested_sample(err: str) -> int:
    found = re.search(r"--sample (\d+)", err)
    assert found is not None, err
    return int(found.group(1))


@pytest.mark.parametrize("command", ["evaluate", "attack"])
def test_suggested_sample_runs(cli, tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch,
                               command: str) -> None:
    """The sample size the message suggests runs under the same limit, and the result says it sampled."""
    monkeypatch.setenv(ENV_LIMIT, "100K")
    out = tmp_path / "attack.json"
    args: list[object] = [command, data, data, "--id", "id", "--label", "cls"]
    if command == "attack":
        args += ["--threat", "population", "--attacks", "linkage", "--json", out]
    k = _suggested_sample(_check(cli, args, [data], [out]))
    assert 2 <= k < N
    code, stdout, err = cli(*args, "--sample", k)
    assert code == 0, err
    if command == "evaluate":
        code, stdout, err = cli(*args, "--sample", k, "--json")
        res = json.loads(stdout)
    else:
        res = json.loads(out.read_text())
    assert res["n_rows"] == k
    assert res["sample"] == f"seeded sample of {k} of {N} rows"


def test_evaluate_sample_matches_rows_by_id(cli, tmp_path: Path, data: Path) -> None:
    """A sample of the release is compared with the same records of the original (shuffled release)."""
    shuffled = tmp_path / "shuffled.csv"
    pd.read_csv(data).sample(frac=1.0, random_state=3).to_csv(shuffled, index=False)
    code, stdout, err = cli("evaluate", data, shuffled, "--id", "id", "--sample", 50, "--json", "--utility", "kmeans")
    assert code == 0, err
    res = json.loads(stdout)
    assert res["n_rows"] == 50 and res["value"]["re"] < 1e-12  # the same records (up to CSV rounding)
    code, stdout, err = cli("evaluate", data, shuffled, "--sample", 50, "--json", "--utility", "kmeans")
    assert code == 0, err
    assert json.loads(stdout)["value"]["re"] > 0.05  # matched by position, the shuffled rows differ


def test_stream_update_guards(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch too large for memory, and a refresh of a table too large, change nothing."""
    full = pd.read_csv(_table(tmp_path / "all.csv", n=700))
    hist, small, big = tmp_path / "hist.csv", tmp_path / "small.csv", tmp_path / "big.csv"
    full.iloc[:300].to_csv(hist, index=False)
    full.iloc[300:320].to_csv(small, index=False)
    full.iloc[320:].to_csv(big, index=False)
    state = tmp_path / "r.state"
    assert cli("stream", "init", hist, "--id", "id", "--label", "cls", "--rank", 2, "--state", state)[0] == 0
    out, everything = tmp_path / "new.csv", tmp_path / "everything.csv"
    monkeypatch.setenv(ENV_LIMIT, "50K")
    err = _check(cli, ["stream", "update", state, big, "-o", out], [state, big], [out])
    assert "split the batch" in err
    monkeypatch.setenv(ENV_LIMIT, "20K")
    err = _check(cli, ["stream", "update", state, small, "-o", out, "--refresh-all", everything],
                 [state, small], [out, everything])
    assert "drop --refresh-all" in err
    assert cli("stream", "update", state, small, "-o", out)[0] == 0  # the batch alone fits
    extra = tmp_path / "extra.csv"
    pd.DataFrame({"id": full["id"].iloc[:320], "z": np.arange(320.0)}).to_csv(extra, index=False)
    err = _check(cli, ["stream", "add-columns", state, extra, "--refresh-all", everything],
                 [state, extra], [everything])
    assert "drop --refresh-all" in err


def test_bad_limit_is_a_usage_error(cli, tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LIMIT, "lots")
    err = _check(cli, ["evaluate", data, data], [data], [])
    assert ENV_LIMIT in err


def test_parse_bytes_and_available_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_bytes("512M") == 512 * 1024 * 1024
    assert parse_bytes("2GiB") == 2 * 1024**3
    assert parse_bytes("1.5K") == 1536
    assert parse_bytes("1000") == 1000
    for bad in ("", "-1G", "0", "12Q", "G"):
        with pytest.raises(ParameterError):
            parse_bytes(bad)
    monkeypatch.setenv(ENV_LIMIT, "3M")
    assert available_memory() == 3 * 1024**2
    monkeypatch.delenv(ENV_LIMIT)
    assert available_memory() > 0


def test_guard_uses_the_real_available_memory(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No override: a 300,000 x 300,000 row projection is refused against what the system reports."""
    monkeypatch.delenv(ENV_LIMIT, raising=False)
    big = tmp_path / "big.csv"
    big.write_text("a,b\n" + "1,2\n3,5\n" * 150_000)
    err = _check(cli, ["perturb", big, "-m", "projection", "--kind", "rpa", "-o", tmp_path / "o.csv"],
                 [big], [tmp_path / "o.csv"])
    assert "would need 1341.1 GiB" in err and "--kind arp" in err  # 2 x 8 bytes x 300,000^2 (key + its copy)


def test_available_memory_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without /proc/meminfo the free physical pages count; without those a fixed 4 GiB."""
    import os

    from ppdm.utils import memory

    monkeypatch.delenv(ENV_LIMIT, raising=False)
    monkeypatch.setattr(memory, "_meminfo_available", lambda: None)
    monkeypatch.setattr(os, "sysconf", {"SC_AVPHYS_PAGES": 1000, "SC_PAGE_SIZE": 4096}.__getitem__)
    assert memory.available_memory() == 4_096_000
    monkeypatch.setattr(os, "sysconf", lambda name: (_ for _ in ()).throw(ValueError(name)))
    assert memory.available_memory() == 4 * 1024**3
