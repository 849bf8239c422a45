"""The report opens in a real browser (headless Chromium): no console errors, every plot decodes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _find() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def chromium() -> str:
    path = _find()
    if path is None and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        # the test setup installs Debian's chromium where it is missing
        env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, timeout=900)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env, capture_output=True, timeout=1800)
        path = _find()
    if path is None:
        pytest.skip("no Chromium and no way to install it here")
    return path


def _run(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"]
    return subprocess.run([chromium, *flags, *args], capture_output=True, text=True, timeout=180)


def test_report_renders_in_chromium(cli, chromium: str, wdbc_csv: Path, small_config: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = cli("release", wdbc_csv, "--label", "class", "--config", small_config, "-o", out,
                       "--cache-dir", tmp_path / "cache")
    assert code == 0, err
    report = out / "report.html"
    html = report.read_text()
    assert not re.findall(r"""(?:src|href)=["'](?:https?:)?//""", html), "report must not reference the network"
    url = report.resolve().as_uri()
    dom = _run(chromium, tmp_path / "p1", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-500:]
    n = re.search(r'data-images="(\d+)"', dom.stdout)
    ok = re.search(r'data-images-ok="(\d+)"', dom.stdout)
    assert n and ok, "the page's load handler did not run"
    assert int(n.group(1)) >= 5 and ok.group(1) == n.group(1), (n.group(1), ok.group(1))
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console[:5]
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    res = _run(chromium, tmp_path / "p2", f"--screenshot={shot}", "--window-size=1100,3000", url)
    assert res.returncode == 0 and shot.exists() and shot.stat().st_size > 10_000
