"""The staged sweep as one stream of tasks: what runs next whenever a worker is free.

:func:`ppdm.release.halving.staged_sweep` holds the rules (which candidates get a full battery, how an epsilon
ladder is climbed); this module orders the work so that no core waits for a stage to end:

1. the rungs of an epsilon ladder that a rung's result has just opened (they are the sweep's longest chain);
2. the first passes not yet started, the costliest first;
3. once every first pass but an epsilon ladder's has ended (the Pareto front and the order by first-pass
   utility are known), the full batteries, best first-pass utility first, each only if the candidate could
   still beat the best measured fully by then (or is on the front). A rung of a ladder that ends later joins
   them in its place (the front without it holds every candidate the front with it holds, and more).

So the full batteries run beside a ladder's fits instead of after them. The results are the same as stage by
stage: the decisions read the same measurements, only the order of the work differs.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Hashable
from typing import Any

from ppdm.release.trial import SweepTable

__all__ = ["StagedRun"]


class StagedRun:
    """The state of one staged sweep: every result so far and the work left.

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
                 ladders: list[list[int]], full: bool | None) -> None:
        from ppdm.release.trial import synthesises_records

        self.table, self.jobs, self.cache, self.bar, self.full = table, jobs, cache, bar, full
        self.ladders = ladders
        self.ladder_of = {i: ladder for ladder in ladders for i in ladder}
        below = {i for ladder in ladders for i in ladder[1:]}
        # the costliest first, so that no worker is left with one at the end while the others idle: the
        # synthesisers of whole records (a model's fit a release), then the other formally private mechanisms
        # (each release measures the table through OpenDP), then the rest in the config's order
        def cost_rank(i: int) -> int:
            return 0 if synthesises_records(jobs[i][1]) else 1 if "epsilon" in jobs[i][2] else 2

        self.waiting = deque(sorted((i for i in range(len(jobs)) if i not in below), key=cost_rank))
        self.opened: deque[int] = deque()
        self.sent: set[int] = set(self.waiting)
        self.running_first: set[int] = set()
        self.first: list[dict[str, Any]] = [{} for _ in jobs]
        self.results: list[dict[str, Any]] = [{} for _ in jobs]
        self.queue: list[int] | None = None  # the full batteries' order, once the first passes allow it
        self.front: set[int] = set()
        self.best: int | None = None
        self.stopped: list[int] = []
        self.first_done_at: float | None = None

    # -- what runs next --------------------------------------------------------------------------------------

    def pick(self) -> tuple[Hashable, Any, tuple[Any, ...]] | None:
        """The next task for a free worker (results already in the cache are taken on the way), or None."""
        while True:
            if self.opened or self.waiting:
                i, stage = (self.opened or self.waiting).popleft(), "first"
                self.running_first.add(i)
            else:
                i, stage = self._next_full(), "full"
                if i is None:
                    return None
            hit = self.cache.get(self._key(stage, i))
            if hit is not None:
                self.done((stage, i), (i, hit | {"cached": True}))
                continue
            from ppdm.release.halving import _first, _full, _guarded

            fn = _first if stage == "first" else _full
            return (stage, i), _guarded, (i, fn, self.table, self.jobs[i][1], self.jobs[i][2],
                                          None if stage == "first" else self.first[i])

    def _next_full(self) -> int | None:
        from ppdm.release.halving import FULL_WEIGHT, _at, could_beat

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

        from ppdm.release.halving import _alive
        from ppdm.release.select import pareto_front

        self.first_done_at = time.perf_counter()
        alive = _alive(self.first, [i for i, f in enumerate(self.first) if f], self.table)
        # the report's front (risk against utility) is measured fully too
        self.front = {alive[j] for j in pareto_front([self.first[i] for i in alive], self.table.objective)}
        self.queue = alive

    # -- what a result opens ---------------------------------------------------------------------------------

    def done(self, key: Hashable, out: tuple[int, dict[str, Any]]) -> None:
        """Record a task's result (a first pass or a full battery; ``out`` is its index and record) and what it
        opens."""
        from ppdm.release.halving import FULL_WEIGHT, _alive, _objective, ladder_rungs
        from ppdm.release.select import meets_policy

        stage, i = key  # type: ignore[misc]
        res = out[1]
        if not res.get("cached"):
            if "failed" not in res:
                self.cache.put(self._key(stage, i), res)
            res = res | {"cached": False}
        if stage == "first":
            self.running_first.discard(i)
            self.first[i] = self.results[i] = res
            self.bar.advance(1)
            if i in self.ladder_of:
                more = [j for j in ladder_rungs(self.ladder_of[i], self.first, self.table.policy)
                        if j not in self.sent]
                self.sent.update(more)
                self.opened.extend(more)
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
