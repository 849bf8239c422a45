"""Running the candidates of a release sweep: cached, in parallel, with progress; two stages on large tables."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ppdm.release.config import ReleaseConfig

__all__ = ["Cache", "cache_root", "screen_and_confirm", "sweep_backend", "sweep_workers"]


def cache_root(explicit: str | os.PathLike[str] | None) -> Path:
    if explicit is not None:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ppdm" / "release"


class Cache:
    """Scores of candidates keyed by (data fingerprint, mechanism, parameters, seed, settings)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        if root is not None:
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError:
                self.root = None

    def key(self, payload: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        if self.root is None:
            return None
        f = self.root / f"{key}.json"
        try:
            return json.loads(f.read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        if self.root is None:
            return
        from ppdm.data.io import atomic_write

        try:
            with atomic_write(self.root / f"{key}.json", mode=0o600) as fh:
                fh.write(json.dumps(value).encode())
        except OSError:
            pass


@contextlib.contextmanager
def sweep_backend(backend: str, scheduler: str | None) -> Iterator[str | None]:
    """Where the candidates are scored: here (``numpy``: worker processes of this machine) or, with
    ``dask``, as tasks on a Dask cluster (``scheduler``: its address; None: a local cluster).

    Yields a description of the cluster, or None when the candidates run here.
    """
    from ppdm.backends import check_backend, dask_available
    from ppdm.exceptions import ParameterError

    check_backend(backend)
    if backend == "numpy":
        if scheduler is not None:
            raise ParameterError("--scheduler applies to the dask backend; add --backend dask")
        yield None
        return
    if not dask_available():
        raise ParameterError("the dask backend needs the dask extra: pip install 'ppdm[dask]'")
    from joblib import parallel_config

    from ppdm.backends.dask_cluster import connect

    with connect(scheduler) as info:
        if info["client"] is None:  # dask's local schedulers: nothing to distribute to
            yield None
            return
        # every joblib batch of candidates becomes tasks of the cluster (the table is scattered once)
        with parallel_config(backend="dask", n_jobs=-1):
            yield str(info["cluster"])


def _on_cluster() -> bool:
    """The candidates are tasks of a Dask cluster (see :func:`sweep_backend`)."""
    from joblib.parallel import get_active_backend

    return type(get_active_backend()[0]).__name__ == "DaskDistributedBackend"


def _workers(cfg: ReleaseConfig, todo: int) -> int | None:
    """Worker processes for ``todo`` candidates: the configured number here, every worker of a cluster."""
    if todo <= 1:
        return 1
    from ppdm.release.scheduler import local_workers

    return None if _on_cluster() else local_workers(cfg.n_jobs)


def sweep_workers(cfg: ReleaseConfig) -> int | None:
    """Worker processes for a sweep's stages: the configured number here (at most one per core), every worker
    of a cluster (None)."""
    from ppdm.release.scheduler import local_workers

    return None if _on_cluster() else local_workers(cfg.n_jobs)


def _score_jobs(X: np.ndarray, y: np.ndarray | None, jobs: list[tuple[str, str, dict[str, Any]]], cache: Cache,
                progress: bool, title: str, fn: Any, kw: dict[str, Any], workers: Any,
                steps: bool = False) -> list[dict[str, Any]]:
    """``fn(X, y, method, params, **kw)`` for every job not in the cache, over ``workers(len(todo))`` workers,
    with a bar; one result per job, in order (``cached`` says where it came from).

    ``steps``: ``fn`` takes ``on_step(what, done)`` and ``sole_user`` (as
    :func:`~ppdm.release.scale.score_at_scale`); when the jobs run one at a time in this process, a second
    bar follows the running candidate's steps, with its own ETA, and each candidate is told it is the table's
    sole user while it runs.
    """
    from joblib import Parallel, delayed

    from ppdm.release.candidates import describe
    from ppdm.utils.memory import give_back

    results: dict[int, dict[str, Any]] = {}
    todo = []
    for i, (key, _, _) in enumerate(jobs):
        hit = cache.get(key)
        if hit is not None:
            results[i] = hit | {"cached": True}
        else:
            todo.append(i)
    with _bar(title, progress) as bar:
        task = bar.add_task(title, total=len(jobs), completed=len(results), unit=_count(len(results), len(jobs)))
        if todo:
            n_workers = workers(len(todo))
            follow = steps and n_workers == 1 and progress
            own = bar.add_task("", total=100, visible=False, unit="") if follow else None
            calls = []
            for i in todo:
                name = f"  {describe(jobs[i][1], jobs[i][2])}"
                extra = {"on_step": _candidate_steps(bar, own, name)} if follow else {}
                if steps and n_workers == 1:
                    # one at a time in this process: the candidate is the table's only user while it runs
                    extra["sole_user"] = True
                calls.append(delayed(indexed)(i, fn, X, y, jobs[i][1], jobs[i][2], **kw, **extra))
            # one worker: here, in order (never a pool's process or a cluster's thread)
            par = Parallel(n_jobs=n_workers, return_as="generator_unordered") if n_workers != 1 else _here
            for i, res in par(calls):
                if "failed" not in res:
                    cache.put(jobs[i][0], res)
                results[i] = res | {"cached": False}
                if n_workers == 1:
                    give_back()  # a candidate scored here freed its table-sized arrays: hand them back
                bar.advance(task)
                bar.update(task, unit=_count(len(results), len(jobs)))
    return [results[i] for i in range(len(jobs))]


def _here(calls: list[Any]) -> Iterator[Any]:
    """Run joblib's delayed calls one after the other in this process."""
    for fn, args, kwargs in calls:
        yield fn(*args, **kwargs)


def _count(done: int, total: int) -> str:
    return f"{done}/{total} candidates"


def _candidate_steps(bar: Any, task: Any, name: str) -> Any:
    """``on_step(what, done)`` for one candidate's steps on ``task``. The candidate starts when the in-process
    generator reaches it, so its first step restarts the bar (its elapsed time and ETA)."""
    started = False

    def on_step(what: str, done: float) -> None:
        nonlocal started
        if not started:
            started = True
            bar.reset(task, total=100, description=name, visible=True)
        bar.update(task, completed=100 * done, unit=what)

    return on_step


def _bar(title: str, progress: bool) -> Any:
    """A transient progress bar counting candidates, with the elapsed time and an ETA."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[unit]}"),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), transient=True,
                    disable=not progress)


def indexed(i: int, fn: Any, *args: Any, **kwargs: Any) -> tuple[int, Any]:
    """Run one candidate; a failure is recorded with its one-line reason and never stops the sweep."""
    try:
        return i, fn(*args, **kwargs)
    except MemoryError:
        raise
    except Exception as e:  # noqa: BLE001 (any failure of one candidate is that candidate's verdict)
        from ppdm.exceptions import PPDMError

        reason = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        what = reason if isinstance(e, PPDMError) else f"{type(e).__name__}: {reason}"
        return i, {"method": args[2], "params": args[3], "failed": what}




def screen_and_confirm(X: np.ndarray | None, y: np.ndarray | None, jobs: list[tuple[str, str, dict[str, Any]]],
                       cfg: ReleaseConfig, cache: Cache, progress: bool, seed: int,
                       context: dict[str, Any], *, source: Any = None, sample: Any = None,
                       n_rows: int | None = None) -> list[dict[str, Any]]:
    """The two-stage sweep of a large table (see :mod:`ppdm.release.scale`): one result per job.

    Every job is screened on a sample; those that meet the policy there are confirmed on every row, best
    screening utility first, :data:`~ppdm.release.scale.FINALISTS` at a time (one above
    :data:`~ppdm.release.scale.ONE_FINALIST_ABOVE` rows), until one holds the policy on the whole table and
    no candidate left could beat it (its screening estimate is not higher than the best confirmed value by
    more than :data:`~ppdm.release.scale.SCREEN_MARGIN`), at most three rounds. With none meeting it on the
    sample, the safest ones are confirmed until one holds it. A result from the screening alone carries
    ``measured_on.stage == "screening"`` and can never be chosen.

    Where the table is not here (``X`` is None), ``sample`` is the screening sample made where it is (its
    rows, label and shown columns), ``n_rows`` the table's rows and ``source`` where the workers read it.
    """
    from ppdm.release.halving import first_passes
    from ppdm.release.scale import FINALISTS, ONE_FINALIST_ABOVE, SCREEN_MARGIN, score_at_scale, screen_rows
    from ppdm.release.select import meets_policy, risk_score
    from ppdm.release.trial import SweepTable
    from ppdm.release.utility import holdout_split, random_folds

    if sample is None:
        n_rows = len(X)
        rows = screen_rows(y, n_rows, seed)
        sample = (X[rows], None if y is None else y[rows], context["categories"][rows])
    X_sample, ys, shown_sample = sample
    assert n_rows is not None
    # screening ranks by the objective and rejects on risk: the first pass of every candidate on the sample
    if ys is not None:
        split = holdout_split(ys, seed=seed)
        folds = None if split is None else [split]
    else:  # without a label, a random split still holds out the control of the tests of anonymisation
        folds = random_folds(len(X_sample), seed=seed, many=False)
    table = SweepTable(X=X_sample, y=ys, codec=context.get("codec"), shown=shown_sample,
                       folds=folds, columns=list(context["columns"]),
                       preprocess=cfg.preprocess, threat=cfg.threat, seed=seed, key_seed=context.get("key_seed"),
                       seed_known=bool(context.get("seed_known")), objective=cfg.policy.objective,
                       policy=cfg.policy, shown_names=tuple(context.get("shown_names", ())),
                       label_name=context.get("label_name"))
    size = len(X_sample)
    salted = [(hashlib.sha256(f"screen:{size}:{k}".encode()).hexdigest(), m, p) for k, m, p in jobs]
    screened = first_passes(table, salted, cache, workers=sweep_workers(cfg), progress=progress,
                            title=f"screening on {size:,} rows")
    del table
    del X_sample, ys, shown_sample, sample
    note = (f"screened on a seeded sample of {size:,} of {n_rows:,} rows (risk on a sample is higher than "
            "on the whole table, so screening only rejects)")
    for c in screened:
        if "not_measured" not in c:
            c["stage"] = "screening"
            c["measured_on"] = {"stage": "screening", "rows": int(size), "note": note}
    obj = cfg.policy.objective
    ok = [i for i, c in enumerate(screened) if "failed" not in c and "not_measured" not in c]
    passing = sorted((i for i in ok if meets_policy(screened[i], cfg.policy)),
                     key=lambda i: -float(screened[i]["utility"].get(obj, float("-inf"))))
    queue = passing or sorted(ok, key=lambda i: risk_score(screened[i]))
    results = list(screened)
    per_round = 1 if n_rows > ONE_FINALIST_ABOVE else FINALISTS
    best: float | None = None  # the best objective among the confirmed candidates that hold the policy
    for start in range(0, min(len(queue), 3 * per_round), per_round):
        batch = queue[start:start + per_round]
        confirm = [(hashlib.sha256(f"confirm:{jobs[i][0]}".encode()).hexdigest(), jobs[i][1], jobs[i][2])
                   for i in batch]
        done = _confirm(X, y, confirm, cfg, cache, progress, seed, context, score_at_scale, source=source,
                        n_rows=n_rows)
        for i, res in zip(batch, done, strict=True):
            if "failed" not in res:
                res["measured_on"]["screening"] = {"met_policy": i in passing,
                                                   obj: screened[i]["utility"].get(obj)}
            results[i] = res
        held = [float(r["utility"].get(obj, float("-inf"))) for r in done
                if "failed" not in r and meets_policy(r, cfg.policy)]
        best = max([*held, *([] if best is None else [best])], default=None)
        if best is None:
            continue
        # a further candidate is confirmed only while its screening estimate could still beat the best one
        # confirmed (a sample's estimate can be far off: the first to hold the policy is not always the best)
        upcoming = queue[start + per_round:start + 2 * per_round]
        if not passing or not upcoming or all(
                float(screened[i]["utility"].get(obj, float("-inf"))) <= best + SCREEN_MARGIN for i in upcoming):
            break
    return results


def _confirm(X: np.ndarray | None, y: np.ndarray | None, jobs: list[tuple[str, str, dict[str, Any]]],
             cfg: ReleaseConfig, cache: Cache, progress: bool, seed: int, context: dict[str, Any], fn: Any, *,
             source: Any = None, n_rows: int) -> list[dict[str, Any]]:
    """Confirm candidates on the whole table: side by side when the table is small enough for a worker each
    (up to :data:`~ppdm.release.scale.ONE_FINALIST_ABOVE` rows), else one after the other (each holds the
    table's copies in memory). With the table on a Dask cluster's workers (``source``, a
    :class:`~ppdm.release.cluster.TableOnWorkers`; ``X`` is None), the workers confirm them side by side, each
    reading the table from the file itself."""
    from ppdm.release.scale import ONE_FINALIST_ABOVE

    kw = {"preprocess": cfg.preprocess, "threat": cfg.threat, "seed": seed,
          "max_reidentification": cfg.policy.max_reidentification,
          "singling_out_control": cfg.policy.singling_out_control, **context}
    if source is not None:
        return _score_jobs(source, y, jobs, cache, progress, f"confirming on all {n_rows:,} rows (on the cluster)",
                           fn, kw, lambda todo: None, steps=True)
    return _score_jobs(X, y, jobs, cache, progress, f"confirming on all {n_rows:,} rows", fn, kw,
                       lambda todo: _workers(cfg, todo) if n_rows <= ONE_FINALIST_ABOVE else 1, steps=True)
