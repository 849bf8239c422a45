"""Listeners of long work's progress beside its terminal bar (the web application's progress page).

A listener is set for the current thread's context by :func:`listening`; the sweep's bar tells it how many of
its stages are done (:func:`notify`). A listener may raise to stop the work (a cancelled run): the exception
travels out of the sweep as any failure does, and nothing is published.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["listening", "notify"]

_LISTENER: ContextVar[Callable[..., None] | None] = ContextVar("ppdm_progress_listener", default=None)


@contextlib.contextmanager
def listening(listener: Callable[..., None]) -> Iterator[None]:
    """Send the progress of the work run inside this block (in this thread) to ``listener(**counts)``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def notify(**counts: Any) -> None:
    """Tell the current listener, if any, where the work stands (for example ``first_done=3, first=8``)."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(**counts)
