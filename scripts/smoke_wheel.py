"""The package a user installs is the package that is tested.

Builds the wheel, installs it into a fresh virtual environment in a temporary directory (no editable
install, no repository on the path), and runs every command once from a directory outside the checkout.
Exit 0 when every step works; the failing steps are named otherwise. Run by ``make test``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: fast reproductions, one per source document family, that need only the package's own data
QUICK_REPRODUCTIONS = ("wang2008-table-2-1", "wang2008-table-2-2", "alotaibi2015-table-3-5",
                       "alotaibi2015-distance-attack", "wang2008-iris-clustering")


def _run(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def main() -> int:
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ppdm-wheel-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        p = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(ROOT)], work)
        wheels = sorted((work / "dist").glob("ppdm-*.whl"))
        if p.returncode != 0 or not wheels:
            print(f"smoke: building the wheel failed: {p.stderr[-500:]}")
            return 1
        venv = work / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        p = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheels[0])], work)
        if p.returncode != 0:
            print(f"smoke: installing the wheel failed: {p.stderr[-500:]}")
            return 1
        print(f"smoke: wheel {wheels[0].name} installed in a fresh environment ({time.perf_counter() - t0:.0f} s)")
        ppdm = str(venv / "bin" / "ppdm")
        run = work / "run"
        run.mkdir()
        # two batches of one table for the stream commands: the first 400 records, then the rest
        lines = None
        steps: list[tuple[str, list[str]]] = [
            ("version", [ppdm, "--version"]),
            ("list", [ppdm, "list"]),
            ("datasets export", [ppdm, "datasets", "export", "wdbc", "-o", "wdbc.csv", "--with-id"]),
            ("datasets export iris", [ppdm, "datasets", "export", "iris", "-o", "iris.csv", "--with-id"]),
            ("perturb", [ppdm, "perturb", "wdbc.csv", "--method", "svd", "--rank", "4", "--id", "id", "--label",
                         "class", "-o", "svd.csv", "--state", "svd.state"]),
            ("inspect", [ppdm, "inspect", "svd.state"]),
            ("evaluate", [ppdm, "evaluate", "wdbc.csv", "svd.csv", "--id", "id", "--label", "class",
                          "--state", "svd.state"]),
            ("attack", [ppdm, "attack", "wdbc.csv", "svd.csv", "--id", "id", "--label", "class",
                        "--state", "svd.state", "--threat", "population"]),
            ("release (the demo)", [ppdm, "release", "wdbc.csv", "--id", "id", "--label", "class", "-o", "out",
                                    "--no-cache"]),
            ("stream init", [ppdm, "stream", "init", "first.csv", "--method", "svd", "--rank", "4", "--id", "id",
                             "--label", "class", "--state", "s.state", "-o", "s0.csv"]),
            ("stream update", [ppdm, "stream", "update", "s.state", "rest.csv", "-o", "s1.csv"]),
            ("stream status", [ppdm, "stream", "status", "s.state"]),
            ("hide", [ppdm, "hide", "iris.csv", "--id", "id", "--label", "class", "--clusters", "3",
                      "--hide-member", "50", "-o", "hidden.csv"]),
            ("mds-dims", [ppdm, "mds-dims", "iris.csv", "--id", "id", "--label", "class"]),
        ]
        steps += [(f"reproduce {r}", [ppdm, "reproduce", r]) for r in QUICK_REPRODUCTIONS]
        for name, args in steps:
            if name == "stream init" and lines is None:
                lines = (run / "wdbc.csv").read_text().splitlines(keepends=True)
                (run / "first.csv").write_text("".join(lines[:401]))
                (run / "rest.csv").write_text("".join(lines[:1] + lines[401:]))
            t = time.perf_counter()
            p = _run(args, run)
            dt = time.perf_counter() - t
            ok = p.returncode == 0 and "internal error" not in p.stderr
            print(f"smoke: {'ok  ' if ok else 'FAIL'} {name} ({dt:.1f} s)")
            if not ok:
                failures.append(f"{name}: rc={p.returncode} {(p.stderr or p.stdout).strip()[-300:]}")
    for f in failures:
        print(f"smoke: {f}")
    print(f"smoke: {len(steps) - len(failures)} of {len(steps)} commands work from the installed wheel")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
