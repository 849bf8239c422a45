"""Write the documentation page that summarises a ``ppdm reproduce --all`` run.

Either run every reproduction here (in this process, timing each) or read the JSON that
``ppdm reproduce --all --json`` printed; the page lists every reproduction with its checked cells
held / checked, its seconds and the failing cells, and says on what machine the run was made.

    python scripts/reproduce_summary.py [--from-json run.json] [--note TEXT] [--out docs/reproductions/summary.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from-json", type=Path, help="the output of `ppdm reproduce --all --json`")
    ap.add_argument("--note", default="", help="a sentence on the run (e.g. the load of the machine)")
    ap.add_argument("--out", type=Path, default=Path("docs/reproductions/summary.md"))
    a = ap.parse_args(argv)
    from ppdm.experiments.runner import run_with_progress, select, summary_markdown

    if a.from_json is not None:
        rows = json.loads(a.from_json.read_text(encoding="utf-8"))
        how = "`ppdm reproduce --all --json`"
        wall = None
    else:
        t0 = time.perf_counter()
        rows = [s.to_dict() for s in run_with_progress(select(False), show=False)]
        wall = time.perf_counter() - t0
        how = "`python scripts/reproduce_summary.py` (every reproduction in one process, as `--all`)"
    day = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    context = (f"Run of {day} with {how} on {os.cpu_count()} CPU cores ({platform.machine()}, Python "
               f"{platform.python_version()}). Times are wall-clock seconds of each reproduction and depend on "
               "the machine and on what else runs on it.")
    if wall is not None:
        context += f" Wall time of the whole run: {wall / 60:.1f} min."
    if a.note:
        context += " " + a.note
    a.out.write_text(summary_markdown(rows, context=context), encoding="utf-8")
    print(f"wrote {a.out} ({len(rows)} reproductions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
