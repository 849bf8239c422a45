"""The sweep in stages (successive halving): a first pass over every candidate, the full battery only for
those that can still be chosen.

1. **First pass** (:mod:`ppdm.release.first_pass`) for every candidate, in parallel. A candidate that
   breaks a limit of the policy there breaks it for good (the full battery keeps every measurement of the
   first pass and can only add risk): its verdict is final. Except where it breaks only singling out or
   linkability, within the test's 95 % interval of the limit, on one fold (:func:`open_on_every_fold`): that
   reading is the fold's draw as much as the candidate's, so the candidate goes on like one that holds the
   policy, and the full battery measures the test on every fold's release, whose mean decides.
2. **Full battery** (:mod:`ppdm.release.full_battery`) for the others, best first-pass utility first, one
   candidate per free worker. Once one holds the policy, a candidate goes on only if it could still beat the
   best so far: the difference of their first-fold utilities, compared
   record by record on the same held-out records, is not below zero at the 95 % level (its paired interval
   reaches above the best's). The candidates on the first pass's Pareto front (risk against utility) that
   hold the policy there are measured fully too, so that the report's front is fully measured.

An **epsilon ladder** (one formally private synthesiser at several epsilons) is climbed down from its top, the
most useful rung in expectation (the next rung measured: the bottom, or the rung below the top when the top
came near to holding the policy): the moment a rung's first pass ends, the rungs below it that the measured ones
leave open (:func:`ladder_rungs`) run next, ahead of any other work, unless a candidate that holds the policy
after its first pass outclasses the rungs measured (they could not beat it, as for stopping a candidate): those
rungs then wait for the best candidate measured fully, which leaves them out when it outclasses them too. When
the top holds the policy no other rung is fitted (each fit costs more than the rest of a small table's sweep). A
worker with nothing else to do fits the next middle rung beside the one being fitted (a fit takes about one
core). The work is ordered by :class:`StagedRun`: the full batteries run beside a ladder's fits, not after them.

A candidate stopped after its first pass says why in its verdict, and can never be chosen. With
``full=True`` every candidate that holds the policy after its first pass gets the full battery: the choice
the staged sweep must reproduce.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from ppdm.release.ladder import epsilon_ladders, ladder_rungs, near_the_policy, not_measured_record
from ppdm.release.trial import SweepTable

__all__ = ["SCORING_VERSION", "FULL_WEIGHT", "staged_sweep", "first_passes", "could_beat", "open_on_every_fold"]

#: bump when the scoring changes, so cached results are recomputed
SCORING_VERSION = 26
#: a full battery's cost in first passes (its share of the progress bar's work)
FULL_WEIGHT = 3
#: without per-record hits (an objective measured on the release itself), a candidate can still beat the
#: best when its first-pass utility is within this many points of the best's
FALLBACK_MARGIN = 2.0
#: the one-sided normal quantile of the paired comparison (a 95 % two-sided interval's upper end)
Z = 1.96


def staged_sweep(table: SweepTable, jobs: list[tuple[str, str, dict[str, Any]]], cache: Any, *, workers: int | None,
                 progress: bool, title: str = "release sweep", full: bool = False,
                 timings: dict[str, float] | None = None,
                 yardstick: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One record per job, in order: the full battery's for the candidates measured fully, the first pass's
    (with ``stopped``: why) for the others, ``not_measured`` (why) for the rungs of an epsilon ladder left out.
    ``jobs`` are (cache key, method, parameters); ``timings`` receives each stage's wall-clock seconds.

    ``yardstick``: given, it receives the original table's utility (``utility``,
    :func:`~ppdm.release.table.original_utility`) and its ``seconds``, measured by a worker that would
    otherwise wait (as the sweep's last candidates end, one worker has nothing to do)."""
    import time

    timings = {} if timings is None else timings
    ladders = [] if full else epsilon_ladders(jobs)  # every candidate measured fully: no rung left out
    with _Progress(title, progress, len(jobs) - sum(len(lad) - 1 for lad in ladders)) as bar:
        t0 = time.perf_counter()
        run = _staged(table, jobs, cache, workers, bar, ladders, full, yardstick)
        first_end = run.first_done_at or time.perf_counter()
        # the stages overlap (full batteries run beside an epsilon ladder's fits): the first pass until the
        # order of the full batteries was set, the full battery from there to the end
        timings["first pass"] = round(first_end - t0, 3)
        timings["full battery"] = round(time.perf_counter() - first_end, 3)
    results = run.results
    for i in run.stopped:
        results[i]["stopped"] = _why_stopped(run.first[i], _at(results, run.best), table.objective)
    compare_with_most_useful(results, table.policy, table.tested_rows())
    return [_public(r) for r in results]


def compare_with_most_useful(results: list[dict[str, Any]], policy: Any, tested: np.ndarray | None = None) -> None:
    """Give every candidate measured fully its utility's difference from the most useful candidate that holds
    the policy (``utility_vs_best``: points, their standard error and the records compared), record by record
    on the held-out records both were tested on: the choice's one-standard-error rule reads it
    (:func:`ppdm.release.select.choose`). Only the difference and its error reach the record, never the hits.

    ``tested``: the record of each prediction (:meth:`SweepTable.tested_rows`). A record predicted on several
    splits (a small table's repeats) counts once, with the mean of its differences: its predictions are not
    independent of each other, and counted apart they would shrink the standard error."""
    from ppdm.release.first_pass import unpack_hits
    from ppdm.release.select import candidate_label, fully_measured, most_useful

    top = most_useful(results, policy)
    if top is None or "hits_pooled" not in results[top]:
        return
    ref = unpack_hits(results[top]["hits_pooled"], int(results[top]["hits_pooled_rows"])).astype(float)
    for r in results:
        if "hits_pooled" not in r or "failed" in r or not fully_measured(r):
            continue
        mine = unpack_hits(r["hits_pooled"], int(r["hits_pooled_rows"])).astype(float)
        # a synthesiser is tested on the first fold alone, whose records come first in every candidate's hits
        n = min(len(mine), len(ref))
        d = mine[:n] - ref[:n]
        if tested is not None and len(tested) >= n:
            times = np.bincount(tested[:n])
            d = np.bincount(tested[:n], weights=d)[times > 0] / times[times > 0]
            n = len(d)
        r["utility_vs_best"] = {"objective": policy.objective, "against": candidate_label(results[top]),
                                "difference": round(100.0 * float(d.mean()), 4),
                                "se": round(100.0 * float(d.std(ddof=1) / np.sqrt(n)), 4) if n > 1 else 0.0,
                                "records": int(n)}


def _staged(table: SweepTable, jobs: list[tuple[str, str, dict[str, Any]]], cache: Any, workers: int | None,
            bar: _Progress, ladders: list[list[int]], full: bool | None,
            yardstick: dict[str, Any] | None = None) -> Any:
    """The sweep's work, run as workers become free (:class:`StagedRun`); every rung of a ladder left
    out recorded with ``not_measured`` (why)."""
    from ppdm.release.scheduler import run_pulled

    run = StagedRun(table, jobs, cache, bar, ladders, full, yardstick)
    run_pulled(run.pick, run.done, workers)
    for ladder in ladders:
        for pos, i in enumerate(ladder):
            if i in run.outclassed:
                run.first[i] = run.results[i] = {"method": jobs[i][1], "params": jobs[i][2],
                                                 "not_measured": run.outclassed[i]}
            elif not run.first[i]:
                run.first[i] = run.results[i] = not_measured_record(
                    jobs[i], [run.first[j] for j in ladder[:pos]], [run.first[j] for j in ladder[pos + 1:]],
                    table.policy, outclassed=run._outclassed(i))
    return run


def _alive(first: list[dict[str, Any]], idx: list[int], table: SweepTable, *, near: bool = False) -> list[int]:
    """The candidates of ``idx`` that hold the policy after their first pass (with ``near``, also those that break
    it only by a test within its interval of the limit, :func:`open_on_every_fold`), best first-pass utility
    first."""
    from ppdm.release.select import meets_policy

    obj = table.objective
    out = [i for i in idx if "failed" not in first[i] and "not_measured" not in first[i]
           and obj in first[i]["utility"]
           and (meets_policy(first[i], table.policy) or near and open_on_every_fold(first[i], table))]
    return sorted(out, key=lambda i: -float(first[i]["utility"][obj]))


def open_on_every_fold(c: dict[str, Any], table: SweepTable) -> bool:
    """Whether a candidate that breaks the policy after its first pass breaks it only by singling out or
    linkability within its interval of the limit, measured on the first fold alone: the full battery measures
    those on every fold's release (:func:`ppdm.release.criteria.every_fold_tests`), whose mean decides. Not a
    synthesiser of whole records (each fold's release would be one more fit of its model)."""
    from ppdm.release.criteria import repeated_tests
    from ppdm.release.select import policy_violations

    repeat = repeated_tests(table, c["method"], c["held_out"]["tests"]) if "held_out" in c else set()
    if not repeat:
        return False
    others = {**c, "risk": {k: v for k, v in c["risk"].items() if k not in repeat}}
    return not policy_violations(others, table.policy)


def first_passes(table: SweepTable, jobs: list[tuple[str, str, dict[str, Any]]], cache: Any, *,
                 workers: int | None, progress: bool, title: str) -> list[dict[str, Any]]:
    """Every job's first pass and nothing more (a large table's screening on its sample); the rungs of an
    epsilon ladder below its top only where the rungs measured leave them open (:func:`ladder_rungs`)."""
    ladders = epsilon_ladders(jobs)
    with _Progress(title, progress, len(jobs) - sum(len(lad) - 1 for lad in ladders)) as bar:
        return [_public(r) for r in _staged(table, jobs, cache, workers, bar, ladders, None).first]


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
    return {k: v for k, v in c.items()
            if k not in ("hits", "hits_rows", "hits_pooled", "hits_pooled_rows", "held_out", "fold0")}


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


#: the task that measures the original's utility (see :func:`staged_sweep`)
YARDSTICK = ("original", -1)


def _yardstick(table: SweepTable) -> dict[str, Any]:
    import time

    from ppdm.release.table import original_utility

    t0 = time.perf_counter()
    utility = original_utility(table.X, table.y, table.utility_folds, table.seed, table.codec)
    return {"utility": utility, "seconds": round(time.perf_counter() - t0, 3)}


def _first(table: SweepTable, method: str, params: dict[str, Any], _: Any) -> dict[str, Any]:
    from ppdm.release.first_pass import first_pass

    return first_pass(table, method, params)


def _full(table: SweepTable, method: str, params: dict[str, Any], first: dict[str, Any]) -> dict[str, Any]:
    from ppdm.release.full_battery import full_battery

    out = full_battery(table, method, params, first)
    out["first_utility"] = dict(first["utility"])
    return out


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

    def expect_first(self, n: int) -> None:
        """``n`` more first passes (the rungs of an epsilon ladder its measured ones left open)."""
        if n:
            self.first += n
            self.bar.update(self.task, total=self.first + self.full * FULL_WEIGHT, unit=self._unit())
            self._tell()

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


class StagedRun:
    """The state of one staged sweep: every result so far, the work left, and what runs next whenever a worker
    is free (:mod:`ppdm.release.scheduler`):

    1. the rungs of an epsilon ladder that a rung's result has opened (they are the sweep's longest chain),
       unless they wait for the best measured fully (:meth:`_open`);
    2. the first passes not yet started, the costliest first;
    3. once every first pass but an epsilon ladder's has ended (the Pareto front and the order by first-pass
       utility are known), the full batteries, best first-pass utility first (those that broke a limit only
       within its interval on the first fold after the others), each only if the candidate could still beat
       the best measured fully by then (or is on the front). A rung of a ladder that ends later
       joins them in its place (the front without it holds every candidate the front with it holds, and more).

    The decisions read the same measurements as stage by stage; only the order of the work differs.

    Parameters
    ----------
    table : SweepTable
    jobs : list of (cache key, method, parameters)
    cache : the sweep's result cache (``get``/``put``)
    bar : the sweep's progress bar
    ladders : list of list of int
        The epsilon ladders (job indices, largest epsilon first): only each top starts with the others.
    full : bool
        Every candidate that holds the policy after its first pass gets the full battery (None: no full
        batteries at all, a large table's screening).
    """

    def __init__(self, table: SweepTable, jobs: list[tuple[str, str, dict[str, Any]]], cache: Any, bar: Any,
                 ladders: list[list[int]], full: bool | None, yardstick: dict[str, Any] | None = None) -> None:
        from ppdm.release.criteria import keeps_no_row
        from ppdm.release.trial import synthesises_records

        self.table, self.jobs, self.cache, self.bar, self.full = table, jobs, cache, bar, full
        self.ladders = ladders
        self.ladder_of = {i: ladder for ladder in ladders for i in ladder}
        below = {i for ladder in ladders for i in ladder[1:]}
        # the costliest first, so that no worker is left with one at the end while the others idle: the
        # synthesisers of whole records (a model's fit a release), then the other formally private mechanisms
        # (each release measures the table through OpenDP), then the rest in the config's order, those that
        # publish group centroids first (cheap, and the usual choice: an epsilon ladder's top, ending, is
        # compared with them, see _open)
        def cost_rank(i: int) -> int:
            if synthesises_records(jobs[i][1]):
                return 0
            return 1 if "epsilon" in jobs[i][2] else 2 if keeps_no_row(jobs[i][1], jobs[i][2]) else 3

        self.waiting = deque(sorted((i for i in range(len(jobs)) if i not in below), key=cost_rank))
        self.opened: deque[int] = deque()
        # rungs a rung's result opened that wait for the best measured fully: a candidate holding the policy after
        # its first pass outclasses the rungs above them (see _open)
        self.deferred: list[int] = []
        self.sent: set[int] = set(self.waiting)
        self.running_first: set[int] = set()
        self.running = 0  # tasks handed out and not yet done
        self.first: list[dict[str, Any]] = [{} for _ in jobs]
        self.results: list[dict[str, Any]] = [{} for _ in jobs]
        self.queue: list[int] | None = None  # the full batteries' order, once the first passes allow it
        self.front: set[int] = set()
        self.best: int | None = None
        self.stopped: list[int] = []
        self.outclassed: dict[int, str] = {}  # rungs of a ladder left out as no more useful than one beaten
        self.first_done_at: float | None = None
        self.yardstick = yardstick
        self.yardstick_sent = yardstick is None

    # -- what runs next --------------------------------------------------------------------------------------

    def pick(self) -> tuple[Hashable, Any, tuple[Any, ...]] | None:
        """The next task for a free worker (results already in the cache are taken on the way), or None."""
        while True:
            self._release()
            if self.opened or self.waiting:
                i, stage = (self.opened or self.waiting).popleft(), "first"
                if i in self.ladder_of and (why := self._outclassed(i)):
                    self.outclassed[i] = why
                    self.bar.advance(1)
                    continue
                self.running_first.add(i)
            else:
                i, stage = self._next_full(), "full"
                if i is None:
                    if self.deferred and not self.running:  # nothing else left: the rungs kept back run now
                        self._release(now=True)
                        continue
                    if (spare := self._spare_rung()) is not None:
                        self.sent.add(spare)
                        self.opened.append(spare)
                        self.bar.expect_first(1)
                        continue
                    if not self.yardstick_sent:  # a worker with nothing else to do measures the original
                        self.yardstick_sent = True
                        self.running += 1
                        return YARDSTICK, _yardstick, (self.table,)
                    return None
            hit = self.cache.get(self._key(stage, i))
            if hit is not None:
                self.running += 1  # handed out and done at once
                self.done((stage, i), (i, hit | {"cached": True}))
                continue
            fn = _first if stage == "first" else _full
            self.running += 1
            return (stage, i), _guarded, (i, fn, self.table, self.jobs[i][1], self.jobs[i][2],
                                          None if stage == "first" else self.first[i])

    def _spare_rung(self) -> int | None:
        """A middle rung of an epsilon ladder for a worker that has nothing else to do: the next one below the
        rungs being fitted, where the top breaks the policy and the bottom holds it (or, the top near the policy,
        is climbed down to, see :func:`ladder_rungs`). The rungs above it may yet
        hold the policy and make it needless, but a fit on a worker that would idle costs no time, and the ladder
        (one fit after another) is then often the sweep's last work."""
        from ppdm.release.select import meets_policy

        for ladder in self.ladders:
            top, bottom = self.first[ladder[0]], self.first[ladder[-1]]
            if not top or "failed" in top or meets_policy(top, self.table.policy) \
                    or any(j in self.deferred for j in ladder):
                continue
            # climbed from the top down (the top came near the policy): any rung below may be the answer
            down = not bottom and near_the_policy(top, self.table.policy)
            if not down and (not bottom or "failed" in bottom or "not_measured" in bottom
                             or not meets_policy(bottom, self.table.policy)):
                continue
            for i in ladder[1:] if down else ladder[1:-1]:
                done = self.first[i]
                if i not in self.sent:
                    return i
                if done and "failed" not in done and "not_measured" not in done \
                        and meets_policy(done, self.table.policy):
                    break  # a larger epsilon holds: the rest are settled
        return None

    def _open(self, rungs: list[int]) -> None:
        """Send on the rungs of a ladder that a rung's result opened, or keep them back.

        When a candidate that holds the policy after its first pass outclasses the rungs above them (they could
        not beat its first-fold utility, the rule that stops a candidate after its first pass), they wait for the
        best candidate measured fully, which decides (:meth:`_outclassed`); a smaller epsilon is no more useful
        in expectation. Only the order of the work changes: a rung the best does not outclass is fitted, and one
        kept back is fitted once nothing else is left."""
        for i in rungs:
            held = self.full is not None and self._provisionally_outclassed(i)
            (self.deferred if held else self.opened).append(i)

    def _release(self, *, now: bool = False) -> None:
        """The rungs kept back go on once the best measured fully can decide them (:meth:`_outclassed`), or
        ``now``."""
        if self.deferred and (now or self.best is not None):
            self.opened.extend(self.deferred)
            self.deferred.clear()

    def _provisionally_outclassed(self, i: int) -> bool:
        """Whether a larger epsilon of rung ``i``'s ladder, measured, could not beat a candidate (not of a ladder)
        that holds the policy after its first pass."""
        holding = _alive(self.first, [j for j, f in enumerate(self.first) if f and j not in self.ladder_of],
                         self.table)
        return any(self._beaten_above(i, self.first[j]) is not None for j in holding)

    def _beaten_above(self, i: int, reference: dict[str, Any]) -> dict[str, Any] | None:
        """A measured rung of rung ``i``'s ladder with a larger epsilon that could not beat ``reference`` (its
        first-fold utility below the reference's at the 95 % level, as for stopping a candidate after its first
        pass), if there is one."""
        obj = self.table.objective
        eps = float(self.jobs[i][2]["epsilon"])
        for j in self.ladder_of[i]:
            above = self.first[j]
            if (float(self.jobs[j][2]["epsilon"]) > eps and above and "failed" not in above
                    and "not_measured" not in above and obj in above.get("utility", {})
                    and not could_beat(above, reference, obj)):
                return above
        return None

    def _outclassed(self, i: int) -> str | None:
        """Why rung ``i`` of an epsilon ladder cannot be chosen, if it cannot: a larger epsilon of its ladder,
        measured, could not beat the best candidate measured fully that holds the policy, and a smaller epsilon is
        no more useful in expectation."""
        if self.best is None or (above := self._beaten_above(i, self.results[self.best])) is None:
            return None
        return (f"epsilon {above['params']['epsilon']:g} of the same mechanism could not be chosen (on the first "
                f"held-out fold its {self.table.objective} is below the best's at the 95 % level, record by record), "
                "and a smaller epsilon is no more useful in expectation")

    def _next_full(self) -> int | None:
        if self.full is None:
            return None
        if self.queue is None:
            if any(i not in self.ladder_of for i in self.running_first):
                return None  # the order and the front wait for every first pass but an epsilon ladder's
            self._open_queue()
        assert self.queue is not None
        while self.queue:
            i = self.queue.pop(0)
            if self.full or i in self.front or could_beat(self.first[i], _at(self.results, self.best),
                                                         self.table.objective):
                self.bar.expect(FULL_WEIGHT)
                return i
            self.stopped.append(i)
        return None

    def _open_queue(self) -> None:
        import time

        from ppdm.release.select import pareto_front, utility_floor
        from ppdm.release.table import majority_pct

        self.first_done_at = time.perf_counter()
        measured = [i for i, f in enumerate(self.first) if f]
        alive = _alive(self.first, measured, self.table, near=True)
        holding = _alive(self.first, measured, self.table)
        # the report's front (risk against utility) is measured fully too, of the candidates that hold the policy
        t = self.table
        floor = utility_floor(t.objective, majority_pct(t.y, t.folds) if t.y is not None and t.folds else None)
        self.front = {holding[j] for j in pareto_front([self.first[i] for i in holding], t.objective, floor=floor)}
        # the front is measured fully whatever the others show: its costliest candidates first (a first pass's
        # seconds foretell its full battery's), so that the sweep does not end on one long battery while the
        # other workers idle; the rest, most useful first, then meet the best measured fully by the front
        front = sorted((i for i in alive if i in self.front), key=lambda i: -float(self.first[i].get("seconds", 0.0)))
        # those that broke a limit only within its interval on the first fold come last: most break it on the
        # mean too, and by then the best that holds the policy stops the ones that could not beat it anyway
        held = set(holding)
        self.queue = (front + [i for i in alive if i not in self.front and i in held]
                      + [i for i in alive if i not in held])

    # -- what a result opens ---------------------------------------------------------------------------------

    def done(self, key: Hashable, out: tuple[int, dict[str, Any]]) -> None:
        """Record a task's result (a first pass or a full battery; ``out`` is its index and record) and what it
        opens."""
        from ppdm.release.select import meets_policy

        if key == YARDSTICK:
            self.running -= 1
            assert self.yardstick is not None
            self.yardstick.update(out)  # type: ignore[arg-type]
            return
        stage, i = key  # type: ignore[misc]
        res = out[1]
        self.running -= 1
        if not res.get("cached"):
            if "failed" not in res:  # a synthesiser's release stays in memory: the cache keeps measurements only
                self.cache.put(self._key(stage, i), {k: v for k, v in res.items() if k != "fold0"})
            res = res | {"cached": False}
        if stage == "first":
            self.running_first.discard(i)
            self.first[i] = self.results[i] = res
            self.bar.advance(1)
            if i in self.ladder_of:
                more = [j for j in ladder_rungs(self.ladder_of[i], self.first, self.table.policy)
                        if j not in self.sent]
                self.sent.update(more)
                self._open(more)
                self.bar.expect_first(len(more))
            if self.queue is not None and _alive(self.first, [i], self.table):  # a rung after the order was set
                obj = self.table.objective
                at = next((k for k, j in enumerate(self.queue) if _objective(self.first[j], obj)
                           < _objective(res, obj)), len(self.queue))
                self.queue.insert(at, i)
            return
        self.results[i] = res
        self.bar.advance(FULL_WEIGHT)
        obj = self.table.objective
        if "failed" not in res and meets_policy(res, self.table.policy) and (
                self.best is None or _objective(res, obj) > _objective(self.results[self.best], obj)):
            self.best = i

    def _key(self, stage: str, i: int) -> str:
        return hashlib.sha256(f"{stage}:{self.jobs[i][0]}".encode()).hexdigest()
