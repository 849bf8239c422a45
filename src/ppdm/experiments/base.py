"""Reproduction reports: computed next to published values, pass/fail per cell."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any

import numpy as np

__all__ = ["Cell", "Reproduction", "ReproductionReport", "reference_rows", "reference_reads", "reference_json",
           "mean_ci"]


@dataclass(frozen=True)
class Cell:
    """One compared value.

    ``kind`` is ``'exact'`` (deterministic; a failure fails the reproduction), ``'statistical'``
    (random: checked against a tolerance derived from repeated seeds; also fails the reproduction) or
    ``'info'`` (shown, not checked: e.g. SVMlight accuracies whose C and folds are unknown).
    """

    row: str
    column: str
    computed: float
    published: float | None
    tol: float | None
    kind: str = "exact"
    note: str = ""

    @property
    def passed(self) -> bool | None:
        if self.kind == "info" or self.published is None or self.tol is None:
            return None
        return abs(self.computed - self.published) <= self.tol


@dataclass
class ReproductionReport:
    id: str
    title: str
    cells: list[Cell] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: extra outputs written by ``ppdm reproduce --out DIR``: file name -> tidy table / PNG bytes
    tables: dict[str, Any] = field(default_factory=dict)
    figures: dict[str, bytes] = field(default_factory=dict)
    #: findings: (row, column) of a cell found not to agree with the document when the reproduction was
    #: measured -> why (a misprint shown by the data, a claim that does not hold). Such a cell is shown
    #: (``info``) with that reason instead of being checked; the manifest's reason names it.
    findings: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, row: str, column: str, computed: float, published: float | None, tol: float | None,
            kind: str = "exact", note: str = "") -> None:
        why = self.findings.get((row, column))
        if why is not None and kind != "info":
            kind, tol, note = "info", None, "does not hold as measured; " + why + (f"; {note}" if note else "")
        self.cells.append(Cell(row, column, float(computed), None if published is None else float(published),
                               tol, kind, note))

    def add_claim(self, row: str, column: str, computed: float, published: float | None, tol: float | None,
                  note: str = "", *, held: bool = True) -> None:
        """A claim of the source text as a cell: checked (``statistical``) while ``held``.

        A claim found not to hold when the reproduction was measured is passed with ``held=False``: it
        is shown (``info``) with what was measured, and the note says so.
        """
        if held and published is not None and tol is not None:
            self.add(row, column, computed, published, tol, "statistical", note)
        else:
            self.add(row, column, computed, published, None, "info",
                     ("does not hold as measured; " if not held else "") + note)

    @property
    def checked(self) -> list[Cell]:
        return [c for c in self.cells if c.passed is not None]

    @property
    def failed(self) -> list[Cell]:
        return [c for c in self.cells if c.passed is False]

    @property
    def passed(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "passed": self.passed,
            "n_checked": len(self.checked),
            "n_failed": len(self.failed),
            "notes": self.notes,
            "cells": [asdict(c) | {"passed": c.passed} for c in self.cells],
        }

    def print(self, console: Any) -> None:
        from rich.table import Table

        t = Table(title=f"{self.id}: {self.title}")
        for col in ("row", "column", "computed", "published", "tol", "kind", "result"):
            t.add_column(col, justify="right" if col in ("computed", "published", "tol") else "left")
        for c in self.cells:
            mark = {True: "[green]pass[/]", False: "[red]FAIL[/]", None: "-"}[c.passed]
            t.add_row(c.row, c.column, f"{c.computed:.4f}", "" if c.published is None else f"{c.published:.4f}",
                      "" if c.tol is None else f"{c.tol:g}", c.kind, mark + (f" {c.note}" if c.note else ""))
        console.print(t)
        for n in self.notes:
            console.print(f"note: {n}")
        n_ok = len(self.checked) - len(self.failed)
        colour = "green" if self.passed else "red"
        console.print(f"[{colour}]{self.id}: {n_ok}/{len(self.checked)} checked cells pass[/]")


@dataclass(frozen=True)
class Reproduction:
    id: str
    title: str
    run: Callable[..., ReproductionReport]
    slow: bool = False
    #: keyword options ``run`` accepts (``ppdm reproduce --data-dir/--trials``)
    options: tuple[str, ...] = ()
    #: UCI sets (keys of :data:`ppdm.datasets.uci.UCI_SETS`) it cannot run without: read from ``--data-dir``
    needs: tuple[str, ...] = ()


def _ref(name: str):  # type: ignore[no-untyped-def]
    return resources.files("ppdm.experiments").joinpath("reference", name)


#: names of the reference CSVs read since the last :func:`reference_reads` reset (what a run compared against)
_READS: list[str] = []


def reference_reads(*, reset: bool = False) -> list[str]:
    """Reference CSVs read by :func:`reference_rows` so far, in order (``reset``: start a new list)."""
    out = list(dict.fromkeys(_READS))
    if reset:
        _READS.clear()
    return out


def reference_rows(name: str, *, record: bool = True) -> list[dict[str, str]]:
    """Rows of a bundled reference CSV (published values, transcribed from the papers).

    ``record``: count the read among those of the running reproduction (see :func:`reference_reads`).
    """
    if record:
        _READS.append(name)
    with _ref(name).open("r", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def reference_json(key: str) -> Any:
    with _ref("worked_examples.json").open("r", encoding="utf-8") as f:
        return json.load(f)[key]


def mean_ci(values: Any) -> tuple[float, float, float]:
    """Mean of ``values`` and its two-sided 95 % t-interval (the mean twice for fewer than two values).

    The interval the claims of the reproductions are checked with: over seeded trials, or over the paired
    differences of two methods measured on the same trials.
    """
    from ppdm.attacks._result import t_interval

    v = np.asarray(values, dtype=float).ravel()
    lo, hi = t_interval(list(v)) or (float(v.mean()), float(v.mean()))
    return float(v.mean()), float(lo), float(hi)


def figure_png(fig: Any, dpi: int = 90) -> bytes:
    """A reproduction's matplotlib figure as PNG bytes; the figure is closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()
