"""``ppdm attack``: run attacks on a release under a threat model (a thin shell over ppdm.attacks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ppdm.cli.options import (
    ColumnsOpt,
    ForceOpt,
    IdOpt,
    LabelOpt,
    SampleOpt,
    SeedOpt,
    SepOpt,
    StateInOpt,
    split_list,
)


def _fmt(v: object, pct: bool = True) -> str:
    if v is None:
        return "-"
    return f"{100 * float(v):.1f} %" if pct else f"{float(v):.4g}"  # type: ignore[arg-type]


def attack(
    original: Annotated[str, typer.Argument(help="The original (confidential) table.")],
    release: Annotated[str, typer.Argument(help="The released table (from ppdm or any other tool).")],
    threat: Annotated[str | None, typer.Option(
        "--threat", help="What the attacker knows, e.g. known-io:20, known-sample:0.1, population, "
                         "known-columns:a,b, joined by '+'; or a preset (outsider, sample, insider, population, "
                         "default, strongest).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Run every attack that applies to the threat.")] = False,
    attacks: Annotated[str | None, typer.Option("--attacks", help="Comma-separated attack names.")] = None,
    id: IdOpt = None,
    label: LabelOpt = None,
    columns: ColumnsOpt = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the results as JSON to this file.")] = None,
    sample: SampleOpt = None,
    state: StateInOpt = None,
    seed: SeedOpt = 0,
    force: ForceOpt = False,
    sep: SepOpt = None,
) -> None:
    """Attack a release: what can an attacker with the given knowledge recover? (success vs two baselines)"""
    from ppdm.attacks import ThreatModel, attack_tables
    from ppdm.data.io import atomic_write, output_set

    t = ThreatModel.parse(threat)
    from rich.progress import Progress, SpinnerColumn, TextColumn

    reads = [("original table", original), ("release", release), ("state file", state)]
    with output_set([("JSON report", json_out)], reads, force=force) as (out,):
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), transient=True) as prog:
            task = prog.add_task("attacking", total=None)
            res = attack_tables(original, release, threat=t, attacks=split_list(attacks), targeted=not all_, id=id,
                                label=label, columns=split_list(columns), seed=seed, sep=sep, sample=sample,
                                state=state, progress=lambda a: prog.update(task, description=f"attack: {a}"))
        if out is not None:
            with atomic_write(out, binary=False) as f:
                f.write(json.dumps(res, indent=2))
    from rich.console import Console
    from rich.table import Table

    tab = Table(title=f"attacks on the release ({res.get('sample', str(res['n_rows']) + ' rows')}) - "
                      f"threat: {res['threat']}")
    for c in ("attack", "measure", "success", "no release", "original", "95% CI", "RMSE"):
        tab.add_column(c, justify="left" if c in ("attack", "measure") else "right")
    for r in res["results"]:
        ci = r["ci"]
        tab.add_row(r["attack"], r["success_measure"], _fmt(r["success"]),
                    _fmt(r["baseline_no_release"].get("success")), _fmt(r["baseline_original"].get("success")),
                    "-" if ci is None else f"{100 * ci[0]:.1f}-{100 * ci[1]:.1f} %", _fmt(r["rmse"], pct=False))
    c = Console(highlight=False)
    c.print(tab)
    c.print(f"threat: {res['threat_description']}")
    if out is not None:
        c.print(f"JSON report -> {out}")


def register(app: typer.Typer) -> None:
    """Add ``ppdm attack`` to the app."""
    app.command("attack")(attack)
