"""MkDocs hook: the build fails when the last recorded ``ppdm reproduce --all`` run contradicts the manifest.

``docs/reproductions/summary.json`` holds that run (written with the summary page by
``scripts/reproduce_summary.py``). An entry of the coverage manifest marked ``reproduced`` whose reproduction
failed, raised, did not run or left published values uncomputed in that run is a false claim: the build stops
and names it. The summary page must also be the rendering of that JSON, so the two cannot drift apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_DOCS = Path(__file__).resolve().parents[1]
RUN = _DOCS / "reproductions" / "summary.json"
PAGE = _DOCS / "reproductions" / "summary.md"


def problems(run_path: Path = RUN, page_path: Path = PAGE) -> list[str]:
    """What is wrong between the recorded run, its page and the manifest (empty when nothing is)."""
    from ppdm.experiments import REPRODUCTIONS
    from ppdm.experiments.faithful import contradictions
    from ppdm.experiments.runner import summary_markdown

    if not run_path.is_file():
        return [f"{run_path.name} is missing: run scripts/reproduce_summary.py"]
    run = json.loads(run_path.read_text(encoding="utf-8"))
    rows = run["rows"]
    out = contradictions(rows)
    unknown = sorted({r["id"] for r in rows} - set(REPRODUCTIONS))
    out += [f"{r}: in the recorded run but no longer registered" for r in unknown]
    if page_path.read_text(encoding="utf-8") != summary_markdown(rows, context=run.get("context", "")):
        out.append(f"{page_path.name} is not the rendering of {run_path.name}: run scripts/reproduce_summary.py "
                   "--from-json")
    return out


def on_config(config: Any) -> Any:  # noqa: ANN401 (MkDocs hook signature)
    from mkdocs.exceptions import PluginError

    found = problems()
    if found:
        raise PluginError("the reproductions summary contradicts the coverage manifest:\n  " + "\n  ".join(found))
    return config
