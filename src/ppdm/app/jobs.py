"""One release run at a time, in a background thread, with its progress and a cancel button.

The run is :func:`ppdm.release.release` itself, as ``ppdm release`` calls it: the same readers, guards, output
layer and lock. Its sweep tells a listener how many stages are done (:mod:`ppdm.utils.progress`); the listener
keeps the counts for the progress page and, once cancel is asked, raises :class:`Cancelled` at the next stage
that ends: the run stops there, and nothing is published (outputs appear whole or not at all).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Cancelled", "Job", "JobBusy", "Runner"]


class Cancelled(Exception):  # noqa: N818 (what happened, as the page says it)
    """The steward cancelled the run."""


class JobBusy(Exception):  # noqa: N818
    """A run is under way: a second one (another tab, a double click) is refused."""


@dataclass
class Job:
    """What the pages show of a run: its stage, its counts, its end (never a value of the table)."""

    kind: str  # "sweep" or "choice"
    started: float = field(default_factory=time.monotonic)
    stage: str = "reading the table and its schema"
    counts: dict[str, int] = field(default_factory=dict)
    state: str = "running"  # running, done, failed, cancelled
    message: str = ""
    finished: float | None = None
    cancel_asked: bool = False
    record: dict[str, Any] | None = None
    sweep_started: float | None = None

    def units(self) -> tuple[int, int]:
        """Work done and work known so far, a full battery counted as its weight in first passes."""
        c, w = self.counts, self.counts.get("weight", 1)
        done = c.get("first_done", 0) + w * c.get("full_done", 0)
        return done, c.get("first", 0) + w * c.get("full", 0)

    def eta_seconds(self) -> float | None:
        """Seconds left for the work known so far, at the pace of the work done (None before any is done)."""
        done, total = self.units()
        if not done or self.sweep_started is None or self.state != "running":
            return None
        elapsed = time.monotonic() - self.sweep_started
        return max(0.0, elapsed / done * (total - done))

    def public(self) -> dict[str, Any]:
        """The job as the progress page's JSON."""
        done, total = self.units()
        end = self.finished or time.monotonic()
        eta = self.eta_seconds()
        c = self.counts
        detail = ""
        if c:
            detail = f"first pass {c.get('first_done', 0)}/{c.get('first', 0)}"
            if c.get("full"):
                detail += f", full battery {c.get('full_done', 0)}/{c.get('full', 0)}"
        return {"kind": self.kind, "state": self.state, "stage": self.stage, "detail": detail, "done": done,
                "total": total, "elapsed": round(end - self.started, 1),
                "eta": None if eta is None else round(eta, 1), "message": self.message,
                "cancel_asked": self.cancel_asked}


class Runner:
    """Holds the one job of the workbench; starts, reports on and cancels it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.job: Job | None = None
        self._thread: threading.Thread | None = None

    def busy(self) -> bool:
        return self.job is not None and self.job.state == "running"

    def start(self, kind: str, work: Callable[[], dict[str, Any]],
              on_done: Callable[[Job], None] | None = None) -> Job:
        """Run ``work`` (a release; it returns the record) in a thread; :class:`JobBusy` if one is running."""
        with self._lock:
            if self.busy():
                raise JobBusy("a run is under way; wait for it to finish or cancel it first")
            job = Job(kind)
            self.job = job
            self._thread = threading.Thread(target=self._run, args=(job, work, on_done), name="ppdm-release",
                                            daemon=True)
            self._thread.start()
            return job

    def cancel(self) -> bool:
        """Ask the running job to stop at its next stage; False when nothing runs."""
        if not self.busy():
            return False
        assert self.job is not None
        self.job.cancel_asked = True
        self.job.message = "cancelling: the run stops when its current candidate is done"
        return True

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the thread (the server's shutdown: a cancelled run removes what it was writing)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self, job: Job, work: Callable[[], dict[str, Any]], on_done: Callable[[Job], None] | None) -> None:
        from ppdm.exceptions import PPDMError
        from ppdm.utils.progress import listening

        def listen(**counts: Any) -> None:
            if job.cancel_asked:
                raise Cancelled
            if job.sweep_started is None:
                job.sweep_started = time.monotonic()
            job.counts.update({k: v for k, v in counts.items() if isinstance(v, int)})
            done, total = job.units()
            job.stage = ("measuring the candidates" if total == 0 or done < total
                         else "making the chosen release, its record and report")

        try:
            with listening(listen):
                job.record = work()
            job.state, job.stage = "done", "published"
        except Cancelled:
            job.state, job.stage, job.message = "cancelled", "cancelled", "cancelled: nothing was published"
        except PPDMError as e:
            job.state, job.stage, job.message = "failed", "stopped", str(e).splitlines()[0] if str(e) else "failed"
        except Exception as e:  # noqa: BLE001 (an unexpected failure ends the run, never the server)
            job.state, job.stage = "failed", "stopped"
            job.message = f"internal error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        finally:
            job.finished = time.monotonic()
        if on_done is not None and job.state == "done":
            on_done(job)
