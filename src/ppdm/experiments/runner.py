"""Running many reproductions (``ppdm reproduce --all``) and showing the coverage manifest."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ppdm.experiments.base import ReproductionReport

__all__ = ["RunSummary", "select", "run_one", "chains", "run_chain", "run_with_progress", "coverage_table",
           "coverage_json", "summary_table", "summary_markdown", "coverage_markdown"]


@dataclass
class RunSummary:
    """Outcome of one reproduction in a batch run."""

    id: str
    title: str
    held: int
    checked: int
    seconds: float
    failed_cells: list[str]
    error: str = ""
    report: ReproductionReport | None = None
    #: why it did not run (a data set it needs is not in ``--data-dir``); empty when it ran
    skipped: str = ""
    #: CPU seconds of the process while it ran (all threads): what it costs whatever else the machine runs
    cpu_seconds: float = 0.0
    #: published values of the reference tables it read that the report does not show
    uncomputed: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.error and not self.failed_cells

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "held": self.held, "checked": self.checked,
                "seconds": round(self.seconds, 2), "passed": self.passed, "failed_cells": self.failed_cells,
                "error": self.error, "uncomputed": self.uncomputed, "skipped": self.skipped,
                "cpu_seconds": round(self.cpu_seconds, 2)}


def select(quick: bool) -> list[str]:
    """Ids of the registered reproductions; ``quick`` keeps those not marked slow."""
    from ppdm.experiments import REPRODUCTIONS

    return [k for k, r in REPRODUCTIONS.items() if not (quick and r.slow)]


def run_one(id: str, *, data_dir: Path | None = None, trials: int | None = None,
            blas_threads: int | None = 1) -> RunSummary:
    """Run one reproduction, passing only the options it declares; an exception becomes ``error``.

    The summary also lists the published values of the reference tables the run read that its report
    does not show (:func:`ppdm.experiments.faithful.uncomputed_cells`).
    """
    from ppdm.experiments import REPRODUCTIONS, run_reproduction
    from ppdm.experiments.base import reference_reads
    from ppdm.experiments.faithful import uncomputed_cells

    r = REPRODUCTIONS[id]
    opts = {k: v for k, v in (("data_dir", data_dir), ("trials", trials)) if k in r.options and v is not None}
    missing = _missing_data(r.needs, data_dir)
    if missing:
        return RunSummary(id, r.title, 0, 0, 0.0, [], skipped=f"needs {missing} in --data-dir")
    reference_reads(reset=True)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        rep = run_reproduction(id, blas_threads=blas_threads, **opts)
    except Exception as exc:  # noqa: BLE001 - a batch run reports a crash and goes on
        return RunSummary(id, r.title, 0, 0, time.perf_counter() - t0, [], f"{type(exc).__name__}: {exc}",
                          cpu_seconds=time.process_time() - c0)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    failed = [f"{c.row} / {c.column}: {c.computed:.4g} vs {c.published:.4g}" for c in rep.failed]
    return RunSummary(id, r.title, len(rep.checked) - len(rep.failed), len(rep.checked), dt, failed, report=rep,
                      uncomputed=uncomputed_cells(rep, reference_reads(reset=True)), cpu_seconds=cpu)


def _missing_data(needs: tuple[str, ...], data_dir: Path | None) -> str:
    """The published files of the UCI sets in ``needs`` that ``data_dir`` lacks, or ''."""
    from ppdm.datasets.uci import UCI_SETS, find_file

    lacking = [UCI_SETS[k].files[0] for k in needs if data_dir is None or find_file(k, data_dir) is None]
    return ", ".join(lacking)


#: modules whose reproductions share in-process caches (deterministic releases, Appendix A's rows): a
#: parallel run keeps each group in one worker, so the cache is filled once
_CACHE_GROUPS = {
    **dict.fromkeys(("alotaibi2015_sweeps", "alotaibi2015_structure", "alotaibi2015_clustering",
                     "alotaibi2015_classification", "alotaibi2015_attacks", "alotaibi2015_figures"),
                    "alotaibi2015 releases"),
    **dict.fromkeys(("wang2008", "wang2008_wdbc"), "wang2008 appendix A"),
    # Figs 4.11 and 4.15 release the same 1000 x 100 synthetic set by NMDS at p = 10, 20, ..., 90
    **dict.fromkeys(("alotaibi2015_known_points", "alotaibi2015_distance_error"), "alotaibi2015 synthetic"),
}


def chains(ids: Iterable[str]) -> list[list[str]]:
    """``ids`` cut into the chains a parallel run hands to its workers, the longest first.

    Reproductions of one cache group (:data:`_CACHE_GROUPS`) form one chain, in the given order; every
    other reproduction is a chain of its own. Chains holding more slow reproductions come first, so the
    long ones start at once and the quick ones fill the gaps.
    """
    from ppdm.experiments import REPRODUCTIONS

    by_key: dict[str, list[str]] = {}
    for i in ids:
        module = REPRODUCTIONS[i].run.__module__.rsplit(".", 1)[-1]
        by_key.setdefault(_CACHE_GROUPS.get(module, i), []).append(i)
    return sorted(by_key.values(), key=lambda c: -sum(REPRODUCTIONS[i].slow for i in c))


def run_chain(ids: list[str], data_dir: Path | None, trials: int | None,
              blas_threads: int | None) -> list[RunSummary]:
    """Run ``ids`` in turn in this process (a worker's share of a parallel run)."""
    return [run_one(i, data_dir=data_dir, trials=trials, blas_threads=blas_threads) for i in ids]


def run_with_progress(ids: Iterable[str], *, console: Any = None, show: bool = True,
                      on_report: Callable[[ReproductionReport], None] | None = None,
                      on_summary: Callable[[RunSummary], None] | None = None,
                      data_dir: Path | None = None, trials: int | None = None,
                      blas_threads: int | None = 1, jobs: int = 1) -> list[RunSummary]:
    """Run each reproduction under one progress bar, in this process or in ``jobs`` worker processes.

    Parameters
    ----------
    ids : iterable of str
        Reproduction ids; the summaries come back in this order.
    console : rich.console.Console, optional
        Where the progress bar is drawn.
    show : bool
        Draw the progress bar (off for JSON output).
    on_report : callable, optional
        Called with each finished report (e.g. to write its tables and figures).
    on_summary : callable, optional
        Called with each finished summary, as soon as it is known (e.g. to log it).
    data_dir, trials
        Passed to the reproductions that declare them.
    blas_threads : int or None
        BLAS threads while each runs (see :func:`ppdm.experiments.run_reproduction`).
    jobs : int
        Worker processes. Above 1 the reproductions run in :func:`chains`, one chain at a time per
        worker; each reproduction's time is still its own wall-clock time in its worker.

    Returns
    -------
    list of RunSummary
    """
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    ids = list(ids)
    done: dict[str, RunSummary] = {}

    def finish(s: RunSummary) -> None:
        if on_report is not None and s.report is not None:
            on_report(s.report)
        if on_summary is not None:
            on_summary(s)
        done[s.id] = s

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=True, disable=not show) as bar:
        task = bar.add_task("reproductions", total=len(ids))
        if jobs <= 1:
            for i in ids:
                bar.update(task, description=f"reproduce {i}")
                finish(run_one(i, data_dir=data_dir, trials=trials, blas_threads=blas_threads))
                bar.advance(task)
        else:
            _run_parallel(ids, jobs, finish, lambda n, what: bar.update(task, advance=n, description=what),
                          data_dir=data_dir, trials=trials, blas_threads=blas_threads)
    return [done[i] for i in ids]


def _run_parallel(ids: list[str], jobs: int, finish: Callable[[RunSummary], None],
                  progress: Callable[[int, str], None], **kw: Any) -> None:
    """Hand the chains of ``ids`` to ``jobs`` fresh worker processes; ``finish`` each summary as it comes."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    todo = chains(ids)
    # fresh interpreters: no BLAS pool, lock or cache inherited from this process
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        running = {pool.submit(run_chain, c, kw["data_dir"], kw["trials"], kw["blas_threads"]): c for c in todo}
        progress(0, f"reproduce: {len(todo)} chains on {jobs} workers")
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in finished:
                chain = running.pop(f)
                for s in f.result():
                    finish(s)
                progress(len(chain), f"reproduce: done {chain[-1]}")


def summary_table(summaries: list[RunSummary]) -> Any:
    """A rich table: id, held / checked, time, result."""
    from rich.table import Table

    t = Table(title="ppdm reproduce --all")
    for col, just in (("id", "left"), ("held / checked", "right"), ("time (s)", "right"), ("result", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for s in summaries:
        if s.skipped:
            result = f"[dim]skipped[/] {s.skipped}"
        elif s.error:
            result = f"[red]ERROR[/] {s.error}"
        elif s.failed_cells:
            shown = "; ".join(s.failed_cells[:3]) + (f"; ... ({len(s.failed_cells)} in all)"
                                                    if len(s.failed_cells) > 3 else "")
            result = f"[red]FAIL[/] {shown}"
        else:
            result = "[green]held[/]"
        t.add_row(s.id, f"{s.held}/{s.checked}", f"{s.seconds:.1f}", result)
    held = sum(s.passed for s in summaries)
    t.caption = f"{held} of {len(summaries)} reproductions hold in full; {sum(s.seconds for s in summaries):.0f} s"
    return t


def summary_markdown(rows: list[dict[str, Any]], *, context: str = "") -> str:
    """The ``--all`` summary as a Markdown page: one row per reproduction, then the totals.

    Parameters
    ----------
    rows : list of dict
        :meth:`RunSummary.to_dict` of each reproduction (what ``ppdm reproduce --all --json`` prints).
    context : str
        A sentence on where and how the run was made (machine, date, command), printed above the table.

    Returns
    -------
    str
        Markdown with a trailing newline.
    """
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["# `ppdm reproduce --all`: summary of a run", ""]
    if context:
        lines += [context, ""]
    lines += ["| id | held / checked | time (s) | CPU (s) | result |", "|---|---:|---:|---:|---|"]
    for r in rows:
        if r.get("skipped"):
            result = "skipped: " + cell(str(r["skipped"]))
        elif r.get("error"):
            result = "**error** " + cell(str(r["error"]))
        elif r["failed_cells"]:
            shown = "; ".join(cell(c) for c in r["failed_cells"][:3])
            more = f"; ... ({len(r['failed_cells'])} in all)" if len(r["failed_cells"]) > 3 else ""
            result = f"does not hold in full: {shown}{more}"
        elif r["checked"] == 0:
            result = "nothing checked (values shown only)"
        else:
            result = "held"
        cpu = f"{float(r['cpu_seconds']):.1f}" if "cpu_seconds" in r else "-"
        lines.append(f"| `{r['id']}` | {r['held']}/{r['checked']} | {r['seconds']:.1f} | {cpu} | {result} |")
    total = sum(float(r["seconds"]) for r in rows)
    cpu_total = sum(float(r.get("cpu_seconds", 0.0)) for r in rows)
    skipped = sum(bool(r.get("skipped")) for r in rows)
    held = sum(bool(r["passed"]) and not r.get("skipped") for r in rows)
    cells = sum(int(r["held"]) for r in rows), sum(int(r["checked"]) for r in rows)
    ran = (f"{held} of {len(rows) - skipped} reproductions run hold in full ({skipped} skipped)" if skipped
           else f"{held} of {len(rows)} reproductions hold in full")
    lines += ["", f"{ran}; {cells[0]} of {cells[1]} checked cells hold; "
              f"{total / 60:.1f} min in all (the sum of the times above)"
              + (f"; {cpu_total / 60:.1f} min of CPU." if cpu_total else ".")]
    return "\n".join(lines) + "\n"


def coverage_markdown(document: str) -> str:
    """The coverage block of a document's page: the count line and one table row per manifest entry.

    Parameters
    ----------
    document : str
        A key of :data:`ppdm.experiments.manifest.DOCUMENTS`.

    Returns
    -------
    str
        ``Coverage: ...`` line, a blank line and the Markdown table (no trailing newline).
    """
    from ppdm.experiments.manifest import MANIFEST, STATUSES, coverage_counts

    counts = coverage_counts()[document]
    parts = ", ".join(f"{counts[k]} {k}" for k in STATUSES if counts[k])
    lines = [f"Coverage: {parts} ({sum(counts.values())} entries).", "",
             "| label | what | status | reproduction | reason / what is not covered |", "|---|---|---|---|---|"]
    for e in MANIFEST:
        if e.document == document:
            reps = ", ".join(f"`{r}`" for r in e.reproductions)
            lines.append(f"| {e.label} | {e.caption} | {e.status} | {reps} | {e.reason} |")
    return "\n".join(lines)


def coverage_json() -> dict[str, Any]:
    """The manifest with per-document counts, as plain data."""
    from ppdm.experiments.manifest import DOCUMENTS, MANIFEST, coverage_counts

    return {"documents": DOCUMENTS, "counts": coverage_counts(), "entries": [e.to_dict() for e in MANIFEST]}


def coverage_table() -> Any:
    """A rich table of the manifest, one row per entry."""
    from rich.table import Table

    from ppdm.experiments.manifest import MANIFEST, coverage_counts

    colour = {"reproduced": "green", "partial": "yellow", "open": "red", "not-reproducible": "magenta",
              "not-a-result": "dim"}
    t = Table(title="coverage of the source documents")
    for col in ("document", "label", "caption", "status", "reproduction / reason"):
        t.add_column(col, overflow="fold")
    for e in MANIFEST:
        what = ", ".join(e.reproductions)
        if e.reason:
            what = f"{what} ({e.reason})" if what else e.reason
        t.add_row(e.document, e.label, e.caption, f"[{colour[e.status]}]{e.status}[/]", what)
    total = coverage_counts()["total"]
    t.caption = ", ".join(f"{k}: {v}" for k, v in total.items()) + f"; {sum(total.values())} entries"
    return t
