"""The main job on the tables people have most: default `ppdm release` against one `ppdm perturb --method mdav`.

Three small tables, each written to CSV with an id and a class column and released with the default config
(``--no-cache``) in a process of its own, timed against one ``ppdm perturb --method mdav`` of the same file in
the same run (absolute times drift on a shared machine; the ratio is what counts):

* ``census``: a seeded sample of 3,000 records of the bundled adult extract (6 numbers, 8 categories);
* ``categorical``: a seeded 2,000 x 22 table of categories only (a perturb that refuses it is reported so);
* ``numeric``: a seeded 5,000 x 40 table of numbers (four classes in a low-rank space, with noise).

``--big`` adds the 1,000,000 x 20 numeric Parquet table of ``bench_release_scale`` (minutes): its time, its
ratio to one perturb, and the release's peak resident memory against the input, which here means the 20
numeric columns as float64 (1,000,000 x 20 x 8 bytes = 160 MB: what the release must hold at least once); the
same peak against the Parquet file and the peak of a process that only imports what ``ppdm release`` imports
(the floor no table size changes) are reported beside it.

Targets (issue: the main job in under a minute): every small table released in under 60 s and within 20x one
perturb; the 1,000,000-row release within 20x one perturb and its peak at most 2x the input.

Usage: ``python benchmarks/bench_release_small.py [--big] [--json out.json]``; ``--docs out.json`` prints the
table of docs/benchmarks.md from a saved run, and ``--update-docs out.json`` writes it there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_release_scale import _make_table, _timed  # noqa: E402

#: the modules ``ppdm release`` loads before it reads a row (their resident memory is the floor of any run)
IMPORTS = "import ppdm.cli.app, ppdm.release, ppdm.attacks, ppdm.report, sklearn.neighbors, pyarrow.parquet"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench_release_small:begin -->", "<!-- bench_release_small:end -->"


def census(path: Path) -> str:
    """3,000 records of the bundled adult extract, seeded, with an id."""
    from ppdm.datasets import load

    df = load("adult").sample(3000, random_state=5).reset_index(drop=True)
    df.insert(0, "rid", np.arange(1, len(df) + 1))
    df.to_csv(path, index=False)
    return "census extract (bundled adult), mixed"


def categorical(path: Path, n: int = 2000, m: int = 22) -> str:
    """``n`` x ``m`` categories (3 to 8 levels a column) drawn from four latent classes, and the class."""
    import pandas as pd

    rng = np.random.default_rng(22)
    z = rng.integers(0, 4, n)
    cols = {"rid": np.arange(1, n + 1)}
    for j in range(m):
        levels = np.array([f"v{i}" for i in range(int(rng.integers(3, 9)))])
        p = rng.dirichlet(np.full(len(levels), 0.7), size=4)  # each class its own distribution
        u = rng.random(n)
        cols[f"c{j + 1}"] = levels[(u[:, None] > np.cumsum(p[z], axis=1)).sum(axis=1).clip(0, len(levels) - 1)]
    cols["class"] = np.where(rng.random(n) < 0.85, z, rng.integers(0, 4, n)).astype(str)
    pd.DataFrame(cols).to_csv(path, index=False)
    return "all-categorical, generated"


def numeric(path: Path, n: int = 5000, m: int = 40) -> str:
    """``n`` x ``m`` numbers: four classes in a 6-dimensional space seen through a random map, with noise."""
    import pandas as pd

    rng = np.random.default_rng(40)
    z = rng.integers(0, 4, n)
    latent = rng.normal(0, 1.5, (4, 6))[z] + rng.normal(size=(n, 6))
    X = 60 + 20 * (latent @ rng.normal(0, 0.5, (6, m)) + 0.5 * rng.normal(size=(n, m)))
    df = pd.DataFrame(X.round(1), columns=[f"x{j + 1}" for j in range(m)])
    df.insert(0, "rid", np.arange(1, n + 1))
    df["class"] = z
    df.to_csv(path, index=False)
    return "numeric, generated"


SMALL = (("census", census, 3000, 14), ("categorical", categorical, 2000, 22), ("numeric", numeric, 5000, 40))


def _perturb(src: Path, tmp: Path, label: str) -> tuple[float | None, int | None, str]:
    """One ``ppdm perturb --method mdav`` of ``src``: seconds and peak bytes, or None and its refusal."""
    try:
        t, peak = _timed(["perturb", str(src), "--method", "mdav", "--id", "rid", "--label", label, "-o",
                          str(tmp / f"one{src.suffix}"), "--state", str(tmp / "one.state")])
    except RuntimeError as e:
        return None, None, str(e).rsplit("failed: ", 1)[-1].strip().splitlines()[-1][:160]
    return t, peak, ""


def _release(src: Path, tmp: Path, label: str) -> tuple[float, int, dict[str, Any]]:
    out = tmp / "release"
    t, peak = _timed(["release", str(src), "--id", "rid", "--label", label, "-o", str(out), "--no-cache"])
    rec = json.loads((out / "release.json").read_text())
    return t, peak, {"candidate": rec["chosen"]["candidate"], "timings": rec.get("timings", {})}


def measure_small(name: str, make: Any, rows: int, cols: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        src = tmp / f"{name}.csv"
        what = make(src)
        t_one, _, refused = _perturb(src, tmp, "class")
        t_rel, peak, chosen = _release(src, tmp, "class")
    return {"table": name, "what": what, "rows": rows, "columns": cols, "release_s": round(t_rel, 1),
            "perturb_s": None if t_one is None else round(t_one, 2), "perturb_refused": refused,
            "ratio": None if t_one is None else round(t_rel / t_one, 1), "peak_mib": round(peak / 2**20),
            "chosen": chosen["candidate"], "timings": chosen["timings"]}


def _floor() -> int:
    """Peak resident bytes of a process that imports what ``ppdm release`` imports and does nothing else."""
    p = subprocess.Popen([sys.executable, "-c", IMPORTS])
    _, _, usage = os.wait4(p.pid, 0)
    return 1024 * usage.ru_maxrss


def measure_big(n: int = 1_000_000, m: int = 20) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        src = tmp / "table.parquet"
        _make_table(n, m, src)
        size = src.stat().st_size
        floor = _floor()
        t_one, peak_one, refused = _perturb(src, tmp, "label")
        t_rel, peak, chosen = _release(src, tmp, "label")
    held = 8 * n * m
    return {"table": "big", "what": "numeric Parquet, generated (bench_release_scale)", "rows": n, "columns": m,
            "release_s": round(t_rel, 1), "perturb_s": None if t_one is None else round(t_one, 2),
            "perturb_refused": refused, "ratio": None if t_one is None else round(t_rel / t_one, 1),
            "peak_mib": round(peak / 2**20), "perturb_peak_mib": None if peak_one is None else round(peak_one / 2**20),
            "input_mib": round(held / 2**20), "parquet_mib": round(size / 2**20), "floor_mib": round(floor / 2**20),
            "peak_vs_input": round(peak / held, 2), "peak_vs_parquet": round(peak / size, 2),
            "working_vs_input": round((peak - floor) / held, 2), "chosen": chosen["candidate"],
            "timings": chosen["timings"]}


def docs_table(result: dict[str, Any]) -> str:
    """The section of docs/benchmarks.md for one saved run (``--json``)."""
    note = f" {result['note']}" if result.get("note") else ""  # what the run left out, and why
    lines = [BEGIN, f"Run of {result['date']} on {result['machine']}; load average at the start "
             f"{result['load'][0]}, at the end {result['load'][1]}.{note}",
             "",
             "| table | records x columns | default release | one `ppdm perturb --method mdav` | ratio | chosen |",
             "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        one = f"{r['perturb_s']} s" if r["perturb_s"] is not None else f"refused: \"{r['perturb_refused']}\""
        ratio = f"{r['ratio']}x" if r["ratio"] is not None else "n/a"
        lines.append(f"| {r['what']} | {r['rows']:,} x {r['columns']} | {r['release_s']} s | {one} | {ratio} | "
                     f"{r['chosen']} |")
    big = [r for r in result["rows"] if r["table"] == "big"]
    for r in big:
        lines += ["", f"1,000,000 x 20: peak resident memory of the release {r['peak_mib']:,} MiB = "
                  f"**{r['peak_vs_input']}x the input** ({r['input_mib']} MiB as float64), {r['peak_vs_parquet']}x "
                  f"the {r['parquet_mib']} MiB Parquet file; a process that only imports what `ppdm release` imports "
                  f"peaks at {r['floor_mib']} MiB, so the release's own working memory is {r['working_vs_input']}x "
                  f"the input; one perturb peaks at {r['perturb_peak_mib']} MiB."]
    return "\n".join([*lines, END])


def update_docs(result: dict[str, Any]) -> None:
    text = DOCS.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    DOCS.write_text(text[:start] + docs_table(result) + text[end:])


def run(big: bool = False, json_path: Path | None = None) -> bool:
    load_start = os.getloadavg()[0]
    rows = [measure_small(*spec) for spec in SMALL]
    if big:
        rows.append(measure_big())
    result = {"date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cores, {platform.machine()}",
              "load": [round(load_start, 2), round(os.getloadavg()[0], 2)], "rows": rows}
    for r in rows:
        one = f"{r['perturb_s']} s" if r["perturb_s"] is not None else f"refused ({r['perturb_refused']})"
        print(f"  {r['table']} {r['rows']:,} x {r['columns']}: release {r['release_s']} s, one perturb {one}"
              + (f" = {r['ratio']}x" if r["ratio"] is not None else "") + f"; chosen {r['chosen']}")
        if r["table"] == "big":
            print(f"  peak {r['peak_mib']} MiB = {r['peak_vs_input']}x the {r['input_mib']} MiB input, "
                  f"{r['peak_vs_parquet']}x the Parquet file; import floor {r['floor_mib']} MiB "
                  f"(working memory {r['working_vs_input']}x the input)")
    if json_path is not None:
        json_path.write_text(json.dumps(result, indent=1))
    ok = all(r["release_s"] < 60 and (r["ratio"] is None or r["ratio"] <= 20) for r in rows if r["table"] != "big")
    return ok and all(r["ratio"] is not None and r["ratio"] <= 20 and r["peak_vs_input"] <= 2
                      for r in rows if r["table"] == "big")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="add the 1,000,000 x 20 table (minutes)")
    ap.add_argument("--json", type=Path, help="save the run's figures here")
    ap.add_argument("--docs", type=Path, help="print the docs table of a saved run and stop")
    ap.add_argument("--update-docs", type=Path, help="write the docs table of a saved run into docs/benchmarks.md")
    a = ap.parse_args(argv)
    if a.docs or a.update_docs:
        saved = json.loads((a.docs or a.update_docs).read_text())
        print(docs_table(saved)) if a.docs else update_docs(saved)
        return 0
    return 0 if run(a.big, a.json) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
