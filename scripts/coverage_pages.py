"""Rewrite the coverage block (count line and table) of each document's page from the manifest.

Each page under ``docs/reproductions/`` holds, from its ``Coverage:`` line to the end of the table that
follows, what :func:`ppdm.experiments.runner.coverage_markdown` renders; the prose around it is kept.

    python scripts/coverage_pages.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PAGES = {"wang2008": "wang2008.md", "alotaibi2015": "alotaibi2015.md", "xu2006": "xu2006.md",
         "wang2008grc": "wang2008grc.md", "wang2007icdmw": "wang2007icdmw.md"}
DOCS = Path(__file__).resolve().parents[1] / "docs" / "reproductions"


def rewrite(text: str, block: str) -> str:
    """``text`` with its coverage block (``Coverage:`` line through the table's last row) replaced."""
    lines = text.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Coverage: "))
    end = start + 2  # the table header
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join([*lines[:start], block, *lines[end:]])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report pages that differ (exit 1)")
    a = ap.parse_args(argv)
    from ppdm.experiments.runner import coverage_markdown

    stale = []
    for doc, name in PAGES.items():
        path = DOCS / name
        old = path.read_text(encoding="utf-8")
        new = rewrite(old, coverage_markdown(doc))
        if new != old:
            stale.append(name)
            if not a.check:
                path.write_text(new, encoding="utf-8")
    if a.check and stale:
        print("coverage block out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    print(("rewrote " if stale else "up to date: ") + ", ".join(stale or PAGES.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
