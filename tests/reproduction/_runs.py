"""One run per reproduction for the whole test session: a reproduction the manifest claims is run once, and
both the manifest's test (tests/reproduction/test_faithful.py) and the reproduction's own test read it."""

from __future__ import annotations

import functools

from ppdm.experiments.runner import RunSummary, run_one


@functools.cache
def claimed_run(rid: str) -> RunSummary:
    """``ppdm reproduce RID``'s summary (its report under ``report``), run once per session."""
    return run_one(rid)
