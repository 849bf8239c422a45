"""SIGKILL in the middle of a command leaves previous outputs intact (old bytes or the complete new ones)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd


def _ppdm(*args: object) -> list[str]:
    return [sys.executable, "-m", "ppdm", *map(str, args)]


def _kill_after(cmd: list[str], delay: float) -> int:
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    return p.wait()


def test_sigkill_during_perturb_keeps_previous_output(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    src = tmp_path / "big.csv"
    pd.DataFrame(rng.normal(size=(60_000, 20)), columns=[f"c{j}" for j in range(20)]).to_csv(src, index=False)
    out = tmp_path / "release.csv"
    subprocess.run(_ppdm("perturb", src, "--rank", 2, "-o", out, "--seed", 1), check=True, capture_output=True)
    old = out.read_bytes()
    new_ref = tmp_path / "ref.csv"
    subprocess.run(_ppdm("perturb", src, "--rank", 3, "-o", new_ref, "--seed", 2), check=True, capture_output=True)
    new = new_ref.read_bytes()
    for delay in (0.5, 1.2, 2.0):
        _kill_after(_ppdm("perturb", src, "--rank", 3, "-o", out, "--force", "--seed", 2), delay)
        now = out.read_bytes()
        assert now in (old, new), f"output corrupted after SIGKILL at {delay}s"
        old = now
    # and the next run works
    r = subprocess.run(_ppdm("perturb", src, "--rank", 3, "-o", out, "--force", "--seed", 2), capture_output=True)
    assert r.returncode == 0 and out.read_bytes() == new


def test_sigkill_during_release_keeps_previous_release(tmp_path: Path) -> None:
    from ppdm import datasets

    src = tmp_path / "wdbc.csv"
    datasets.load("wdbc").to_csv(src, index=False)
    out = tmp_path / "out"
    config = tmp_path / "release.yaml"  # a fixed small grid: the test's cost must not follow the defaults
    config.write_text("methods:\n- method: svd\n  grid: {rank: [2]}\n- method: noise\n  grid: {scale: [1.0]}\n")
    base = ["release", src, "--label", "class", "-o", out, "--config", config, "--no-cache", "-j", "1",
            "--max-reid", "1", "--max-within-5pct", "1", "--max-singling-out", "1", "--max-linkability", "1",
            "--max-membership-outliers", "1"]
    subprocess.run(_ppdm(*base), check=True, capture_output=True)
    snapshot = {p.name: p.read_bytes() for p in out.iterdir()}
    for delay in (1.5, 5.0):
        _kill_after(_ppdm(*base, "--force", "--seed", 7), delay)
        files = {p.name: p.read_bytes() for p in out.iterdir()}
        assert set(files) == set(snapshot)
        if files != snapshot:  # the new release finished before the kill: it must be complete
            assert pd.read_csv(out / "release.csv").shape == pd.read_csv(src).shape
            snapshot = files
    r = subprocess.run(_ppdm(*base, "--force"), capture_output=True)
    assert r.returncode == 0
