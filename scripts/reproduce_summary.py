"""Write the documentation page that summarises a ``ppdm reproduce --all`` run.

Either run every reproduction here (in this process, timing each) or read the JSON that
``ppdm reproduce --all --json`` printed; the page lists every reproduction with its checked cells
held / checked, its seconds and the failing cells, and says on what machine the run was made.

    python scripts/reproduce_summary.py [--from-json run.json] [--log run.jsonl] [--note TEXT] [--jobs N]
                                        [--out docs/reproductions/summary.md]

``--log`` appends each reproduction's summary as one JSON line as soon as it finishes, so a long run
leaves its partial results; ``--from-json`` reads either a JSON list or such JSON lines. The rows are also
written beside the page (``summary.json``), where the documentation build checks that no entry of the
coverage manifest marked ``reproduced`` names a reproduction that failed in the run
(``docs/hooks/reproductions.py``).
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
    ap.add_argument("--log", type=Path, help="append each finished reproduction's summary here (JSON lines)")
    ap.add_argument("--note", default="", help="a sentence on the run (e.g. the load of the machine)")
    ap.add_argument("--out", type=Path, default=Path("docs/reproductions/summary.md"))
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="worker processes")
    a = ap.parse_args(argv)
    from ppdm.experiments.runner import run_with_progress, select, summary_markdown

    if a.from_json is not None:
        text = a.from_json.read_text(encoding="utf-8").strip()
        rows = json.loads(text) if text.startswith("[") else [json.loads(ln) for ln in text.splitlines() if ln]
        if isinstance(rows, dict):  # a summary.json written here before
            rows = rows["rows"]
        how = "`ppdm reproduce --all --json`, or this script's `--log`"
        wall = None
    else:
        def log(s: object) -> None:
            if a.log is not None:
                with a.log.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(s.to_dict()) + "\n")  # type: ignore[attr-defined]

        t0 = time.perf_counter()
        rows = [s.to_dict() for s in run_with_progress(select(False), show=False, on_summary=log, jobs=a.jobs)]
        wall = time.perf_counter() - t0
        how = (f"`python scripts/reproduce_summary.py --jobs {a.jobs}` (every registered reproduction, in "
               f"{a.jobs} worker process{'es' if a.jobs > 1 else ''}, as `ppdm reproduce --all -j {a.jobs}` runs "
               "them)")
    day = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    machine = f"{os.cpu_count()} CPU cores ({platform.machine()}, Python {platform.python_version()})"
    if wall is None:
        context = (f"Written on {day} from the results of one run ({how}). Times are wall-clock seconds of "
                   "each reproduction and depend on the machine and on what else runs on it.")
    else:
        context = (f"Run of {day} with {how} on {machine}. Times are wall-clock seconds of each reproduction "
                   f"and depend on the machine and on what else runs on it. Wall time of the whole run: "
                   f"{wall / 60:.1f} min.")
    if a.note:
        context += " " + a.note
    a.out.write_text(summary_markdown(rows, context=context), encoding="utf-8")
    # the run itself, beside the page: the documentation build checks the manifest against it
    run = a.out.with_suffix(".json")
    run.write_text(json.dumps({"context": context, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {a.out} and {run.name} ({len(rows)} reproductions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
