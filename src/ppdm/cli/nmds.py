"""NMDS commands: ``ppdm mds-dims`` (stress vs p, Kruskal quality labels, elbow, plot)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ppdm.cli.options import DropOpt, ForceOpt, IdOpt, LabelOpt, SeedOpt, SepOpt, split_list


def register(app: typer.Typer) -> None:
    app.command("mds-dims")(mds_dims)


def mds_dims(
    input: Annotated[str, typer.Argument(help="Table (CSV/TSV/Parquet).")],
    dissimilarity: Annotated[str, typer.Option(help="Dissimilarity (see `ppdm perturb --help`).")] = "euclidean",
    max_dims: Annotated[int | None, typer.Option(help="Largest p to try (default n_features - 1).")] = None,
    max_rows: Annotated[int, typer.Option(help="Rows sampled for the sweep (NMDS is O(n^2)).")] = 600,
    plot: Annotated[Path | None, typer.Option(help="PNG of stress vs p (default <input>.mds-dims.png).")] = None,
    id: IdOpt = None,
    label: LabelOpt = None,
    drop: DropOpt = None,
    seed: SeedOpt = 0,
    force: ForceOpt = False,
    sep: SepOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the sweep as JSON.")] = False,
) -> None:
    """NMDS stress for p = 1 .. n_features - 1 with Kruskal's quality labels, the elbow, and a plot."""
    from ppdm.pipeline import dims_sweep

    res = dims_sweep(input, dissimilarity=dissimilarity, max_dims=max_dims, max_rows=max_rows, plot=plot,
                     id=id, label=label, drop=split_list(drop) or (), seed=seed, force=force, sep=sep)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    from rich.table import Table

    t = Table(title=f"NMDS stress-1 vs p ({res['rows_used']} of {res['rows']} rows, {dissimilarity})")
    for c in ("p", "stress-1", "quality", ""):
        t.add_column(c)
    for p, s, q in zip(res["dims"], res["stress"], res["quality"], strict=True):
        t.add_row(str(p), f"{s:.4f}", q, "<- elbow" if p == res["elbow"] else "")
    from ppdm.cli.console import plain_console

    c = plain_console()
    c.print(t)
    c.print(f"elbow p = {res['elbow']} (--dims auto); thesis default p = n_features - 1 = {res['default']}; "
            f"plot -> {res['plot']}")
