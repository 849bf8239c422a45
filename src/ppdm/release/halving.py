"""The sweep in stages (successive halving): a first pass over every candidate, the full battery only for
those that can still be chosen.

1. **First pass** (:mod:`ppdm.release.first_pass`) for every candidate, in parallel. A candidate that
   breaks a limit of the policy there breaks it for good (the full battery keeps every measurement of the
   first pass and can only add risk): its verdict is final.
2. **Full battery** (:mod:`ppdm.release.full_battery`) for the others, best first-pass utility first, a batch
   of as many candidates as there are workers at a time. Once one holds the policy, a candidate goes on
   only if it could still beat the best so far: the difference of their first-fold utilities, compared
   record by record on the same held-out records, is not below zero at the 95 % level (its paired interval
   reaches above the best's). The candidates on the first pass's Pareto front (risk against utility) that
   hold the policy there are measured fully too, so that the report's front is fully measured.

A candidate stopped after its first pass says why in its verdict, and can never be chosen. With
``full=True`` every candidate that holds the policy after its first pass gets the full battery: the choice
the staged sweep must reproduce.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ppdm.release.trial import SweepTable

__all__ = ["SCORING_VERSION", "FULL_WEIGHT", "staged_sweep", "first_passes", "could_beat"]

#: bump when the scoring changes, so cached results are recomputed
SCORING_VERSION = 10
#: a full battery's cost in first passes (its share of the progress bar's work)
FULL_WEIGHT = 3
#: without per-record hits (an objective measured on the release itself), a candidate can still beat the
#: best when its first-pass utility is within this many points of the best's
FALLBACK_MARGIN = 2.0
#: the one-sided normal quantile of the paired comparison (a 95 % two-sided interval's upper end)
Z = 1.96


def staged_sweep(table: SweepTable, jobs: list[tuple[str, str, dict[str, Any]]], cache: Any, *, workers: int | None,
                 progress: bool, title: str = "release sweep", full: bool = False,
                 timings: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """One record per job, in order: the full battery's for the candidates measured fully, the first pass's
    (with ``stopped``: why) for the others. ``jobs`` are (cache key, method, parameters); ``timings`` receives
    each stage's wall-clock seconds."""
    import time

    from ppdm.release.select import meets_policy, pareto_front

    timings = {} if timings is None else timings
    ladders = [] if full else epsilon_ladders(jobs)  # every candidate measured fully: no rung left out
    with _Progress(title, progress, len(jobs) - sum(len(lad) - 2 for lad in ladders)) as bar:
        t0 = time.perf_counter()
        first = _first_stage(table, jobs, cache, workers, bar, ladders)
        timings["first pass"] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()
        results = list(first)
        obj = table.objective
        alive = [i for i, c in enumerate(first) if "failed" not in c and "not_measured" not in c
                 and meets_policy(c, table.policy) and obj in c["utility"]]
        alive.sort(key=lambda i: -float(first[i]["utility"][obj]))
        front = set(pareto_front([first[i] for i in alive], obj))
        on_front = {alive[j] for j in front}
        best: int | None = None
        queue = list(alive)
        batch_size = max(1, workers or 1)
        while queue:
            batch = [i for i in queue if full or i in on_front or could_beat(first[i], _at(results, best), obj)]
            batch = batch[:batch_size] if not full else batch
            queue = [i for i in queue if i not in batch]
            if not batch:
                break
            bar.expect(len(batch) * FULL_WEIGHT)
            done = _run(table, [jobs[i] for i in batch], cache, "full", workers, bar, [first[i] for i in batch])
            for i, res in zip(batch, done, strict=True):
                results[i] = res
                if "failed" not in res and meets_policy(res, table.policy) and (
                        best is None or _objective(res, obj) > _objective(results[best], obj)):
                    best = i
        for i in queue:
            results[i]["stopped"] = _why_stopped(first[i], _at(results, best), obj)
        timings["full battery"] = round(time.perf_counter() - t0, 3)
    return [_public(r) for r in results]


def epsilon_ladders(jobs: list[tuple[str, str, dict[str, Any]]]) -> list[list[int]]:
    """The jobs of one formally private mechanism that differ only in ``epsilon`` (three or more), each
    ladder's job indices from the largest epsilon to the smallest."""
    from ppdm.release.trial import synthesises_records

    groups: dict[str, list[int]] = {}
    for i, (_, method, params) in enumerate(jobs):
        if "epsilon" in params and synthesises_records(method):
            rest = {k: v for k, v in params.items() if k != "epsilon"}
            groups.setdefault(f"{method}:{sorted(rest.items())!r}", []).append(i)
    return [sorted(g, key=lambda i: -float(jobs[i][2]["epsilon"])) for g in groups.values() if len(g) >= 3]


def ladder_rungs(ladder: list[int], first: list[dict[str, Any]], policy: Any) -> list[int]:
    """The middle rungs of an epsilon ladder worth a first pass, given its two ends'.

    A smaller epsilon adds more noise: in expectation it gives less utility and discloses less. So when the
    largest epsilon holds the policy, a smaller one can only be less useful, and when the smallest breaks it,
    a larger one breaks it too; only between a largest that breaks the policy and a smallest that holds it
    can a middle rung be the most useful one that holds.
    """
    from ppdm.release.select import meets_policy

    top, bottom = first[ladder[0]], first[ladder[-1]]
    if "failed" in top or "failed" in bottom:  # an end that could not be measured says nothing of the others
        return ladder[1:-1]
    return ladder[1:-1] if (not meets_policy(top, policy) and meets_policy(bottom, policy)) else []


def _not_measured(job: tuple[str, str, dict[str, Any]], top: dict[str, Any], bottom: dict[str, Any],
                  policy: Any) -> dict[str, Any]:
    """The record of a middle rung of an epsilon ladder left out (see :func:`ladder_rungs`)."""
    from ppdm.release.select import meets_policy

    _, method, params = job
    if "failed" not in top and meets_policy(top, policy):
        why = (f"epsilon {top['params']['epsilon']:g} of the same mechanism holds the policy, and a smaller "
               "epsilon is no more useful in expectation")
    else:
        why = (f"epsilon {bottom['params']['epsilon']:g} of the same mechanism breaks the policy, and a larger "
               "epsilon discloses no less in expectation")
    return {"method": method, "params": params, "not_measured": why}


def first_passes(table: SweepTable, jobs: list[tuple[str, str, dict[str, Any]]], cache: Any, *,
                 workers: int | None, progress: bool, title: str) -> list[dict[str, Any]]:
    """Every job's first pass and nothing more (a large table's screening on its sample); the middle rungs of
    an epsilon ladder only where its ends leave them open (:func:`ladder_rungs`)."""
    ladders = epsilon_ladders(jobs)
    with _Progress(title, progress, len(jobs) - sum(len(lad) - 2 for lad in ladders)) as bar:
        return [_public(r) for r in _first_stage(table, jobs, cache, workers, bar, ladders)]


def _first_stage(table: SweepTable, jobs: list[tuple[str, str, dict[str, Any]]], cache: Any,
                 workers: int | None, bar: _Progress, ladders: list[list[int]]) -> list[dict[str, Any]]:
    """The first passes of ``jobs``: the ends of each epsilon ladder with every other job, then the middle rungs
    their ends leave open; a rung left out is recorded with ``not_measured`` (why)."""
    middle = {i for ladder in ladders for i in ladder[1:-1]}
    ends = [i for i in range(len(jobs)) if i not in middle]
    first: list[dict[str, Any]] = [{} for _ in jobs]
    for i, res in zip(ends, _run(table, [jobs[i] for i in ends], cache, "first", workers, bar, None), strict=True):
        first[i] = res
    rungs = [i for ladder in ladders for i in ladder_rungs(ladder, first, table.policy)]
    if rungs:
        bar.expect(len(rungs))
        for i, res in zip(rungs, _run(table, [jobs[i] for i in rungs], cache, "first", workers, bar, None),
                          strict=True):
            first[i] = res
    for ladder in ladders:
        for i in ladder[1:-1]:
            if not first[i]:
                first[i] = _not_measured(jobs[i], first[ladder[0]], first[ladder[-1]], table.policy)
    return first


def could_beat(c: dict[str, Any], best: dict[str, Any] | None, objective: str) -> bool:
    """Whether candidate ``c`` (a first pass) could still have a higher objective than ``best`` (measured
    fully): its first-fold utility, compared with the best's record by record on the same held-out records,
    is not below the best's at the 95 % level."""
    if best is None:
        return True
    if "hits" in c and "hits" in best and c.get("hits_rows") == best.get("hits_rows"):
        from ppdm.release.first_pass import unpack_hits

        n = int(c["hits_rows"])
        d = unpack_hits(c["hits"], n).astype(float) - unpack_hits(best["hits"], n).astype(float)
        se = float(d.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
        return 100.0 * (d.mean() + Z * se) >= 0.0
    first_best = float(best.get("first_utility", {}).get(objective, _objective(best, objective)))
    return _objective(c, objective) >= first_best - FALLBACK_MARGIN


def _why_stopped(c: dict[str, Any], best: dict[str, Any] | None, objective: str) -> str:
    if best is None:
        return "stopped after the first pass"
    mine, theirs = _objective(c, objective), float(best.get("first_utility", {}).get(objective, 0.0))
    return (f"stopped after the first pass: on the first held-out fold its {objective} ({mine:.2f}) is below the "
            f"chosen candidate's ({theirs:.2f}) at the 95 % level, record by record, so it could not be chosen")


def _objective(c: dict[str, Any], objective: str) -> float:
    return float(c["utility"].get(objective, float("-inf")))


def _at(results: list[dict[str, Any]], i: int | None) -> dict[str, Any] | None:
    return None if i is None else results[i]


def _public(c: dict[str, Any]) -> dict[str, Any]:
    """A candidate's record without what only the sweep needed (per-record hits, raw held-out results)."""
    return {k: v for k, v in c.items() if k not in ("hits", "hits_rows", "held_out")}


def _run(table: SweepTable, jobs: list[tuple[str, str, dict[str, Any]]], cache: Any, stage: str,
         workers: int | None, bar: _Progress, firsts: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """One stage for ``jobs`` (cached results read back), over ``workers`` processes; results in order."""
    from joblib import Parallel, delayed

    weight = 1 if stage == "first" else FULL_WEIGHT
    keys = [hashlib.sha256(f"{stage}:{key}".encode()).hexdigest() for key, _, _ in jobs]
    results: dict[int, dict[str, Any]] = {}
    todo = []
    for i, key in enumerate(keys):
        hit = cache.get(key)
        if hit is not None:
            results[i] = hit | {"cached": True}
            bar.advance(weight)
        else:
            todo.append(i)
    # the costliest candidates first, so that no worker is left with one at the end while the others idle
    from ppdm.release.trial import synthesises_records

    todo.sort(key=lambda i: not synthesises_records(jobs[i][1]))
    fn = _first if stage == "first" else _full
    calls = [delayed(_guarded)(i, fn, table, jobs[i][1], jobs[i][2], None if firsts is None else firsts[i])
             for i in todo]
    n_jobs = 1 if len(todo) <= 1 else workers
    runner: Callable[[list[Any]], Iterator[Any]] = (
        _here if n_jobs == 1 else Parallel(n_jobs=n_jobs, return_as="generator_unordered"))
    for i, res in runner(calls):
        if "failed" not in res:
            cache.put(keys[i], res)
        results[i] = res | {"cached": False}
        bar.advance(weight)
    return [results[i] for i in range(len(jobs))]


def _guarded(i: int, fn: Callable[..., dict[str, Any]], table: SweepTable, method: str, params: dict[str, Any],
             first: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
    """Run one candidate's stage; a failure is recorded with its one-line reason and never stops the sweep."""
    try:
        return i, fn(table, method, params, first)
    except MemoryError:
        raise
    except Exception as e:  # noqa: BLE001 (any failure of one candidate is that candidate's verdict)
        from ppdm.exceptions import PPDMError

        reason = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        return i, {"method": method, "params": params,
                   "failed": reason if isinstance(e, PPDMError) else f"{type(e).__name__}: {reason}"}


def _first(table: SweepTable, method: str, params: dict[str, Any], _: Any) -> dict[str, Any]:
    from ppdm.release.first_pass import first_pass

    return first_pass(table, method, params)


def _full(table: SweepTable, method: str, params: dict[str, Any], first: dict[str, Any]) -> dict[str, Any]:
    from ppdm.release.full_battery import full_battery

    out = full_battery(table, method, params, first)
    out["first_utility"] = dict(first["utility"])
    return out


def _here(calls: list[Any]) -> Iterator[Any]:
    """Run joblib's delayed calls one after the other in this process."""
    for fn, args, kwargs in calls:
        yield fn(*args, **kwargs)


class _Progress:
    """A transient bar over the sweep's work: a first pass counts one unit, a full battery
    :data:`FULL_WEIGHT`; the total grows as candidates are sent to their full battery, so the ETA counts
    stages, not candidates."""

    def __init__(self, title: str, show: bool, first: int) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[unit]}"),
                            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), transient=True,
                            disable=not show)
        self.first, self.full, self.done_first, self.done_full, self.title = first, 0, 0, 0, title
        self.task = self.bar.add_task(title, total=first, unit=self._unit())

    def _unit(self) -> str:
        text = f"first pass {self.done_first}/{self.first}"
        return text + (f", full battery {self.done_full}/{self.full}" if self.full else "")

    def expect(self, units: int) -> None:
        self.full += units // FULL_WEIGHT
        self.bar.update(self.task, total=self.first + self.full * FULL_WEIGHT, unit=self._unit())
        self._tell()

    def advance(self, units: int) -> None:
        if units == 1:
            self.done_first += 1
        else:
            self.done_full += 1
        self.bar.advance(self.task, units)
        self.bar.update(self.task, unit=self._unit())
        self._tell()

    def _tell(self) -> None:
        """The counts to whoever listens beside the bar (:mod:`ppdm.utils.progress`); it may stop the sweep."""
        from ppdm.utils.progress import notify

        notify(title=self.title, first_done=self.done_first, first=self.first, full_done=self.done_full,
               full=self.full, weight=FULL_WEIGHT)

    def __enter__(self) -> _Progress:
        self.bar.__enter__()
        self._tell()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)
