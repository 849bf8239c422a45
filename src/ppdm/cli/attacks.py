"""``ppdm attack``: run attacks on a release under a threat model (a thin shell over ppdm.attacks)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

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
    control: Annotated[str | None, typer.Option(
        "--control", help="Real records of the same population that the release did not contain: runs the three "
                          "tests of anonymisation (singling out, linkability, inference) and membership inference "
                          "against them.")] = None,
    # "\\[" keeps the extra's brackets in the help: rich would read "[audit]" as a markup tag and drop it
    anonymeter: Annotated[bool, typer.Option(
        "--anonymeter", help="With --control: also run anonymeter's evaluators on the same tables and show both "
                             "(needs pip install 'ppdm\\[audit]').")] = False,
) -> None:
    """Attack a release: what can an attacker with the given knowledge recover? (success vs two baselines)"""

    from ppdm.attacks import ThreatModel
    from ppdm.data.io import atomic_write, output_set
    from ppdm.exceptions import ParameterError

    if anonymeter and control is None:
        raise ParameterError("--anonymeter compares the three tests of anonymisation; give --control (real records "
                             "the release did not contain)")
    t = ThreatModel.parse(threat)
    from ppdm.cli.console import plain_console

    console = plain_console()
    reads = [("original table", original), ("release", release), ("state file", state), ("control table", control)]
    with output_set([("JSON report", json_out)], reads, force=force) as (out,):
        anon = None
        if control is not None:
            anon = _anonymisation(console, original, release, control, id=id, label=label, seed=seed, sep=sep,
                                  anonymeter=anonymeter)
        battery = {"threat": t, "attacks": split_list(attacks), "targeted": not all_, "id": id, "label": label,
                   "columns": split_list(columns), "seed": seed, "sep": sep, "sample": sample, "state": state}
        res = _battery(original, release, battery, skip_on_error=anon is not None)
        if anon is not None:
            res["anonymisation"] = anon
        if out is not None:
            with atomic_write(out, binary=False) as f:
                f.write(json.dumps(res, indent=2))
    if "battery_skipped" in res:
        console.print(f"attack battery skipped: {res['battery_skipped']}")
    else:
        _print_battery(console, res)
    # an attack the threat calls for that did not run leaves the measured risk a lower bound: said on stderr
    # (and in the JSON's "skipped"), so that a report without it is not read as the whole battery
    for name, why in res.get("skipped", {}).items():
        print(f"note: attack {name} skipped: {why}", file=sys.stderr)
    if out is not None:
        console.print(f"JSON report -> {out}")


def _anonymisation(console: Any, original: str, release: str, control: str, *, anonymeter: bool,
                   **kw: Any) -> dict[str, Any]:
    """The three tests of anonymisation against the control, printed as soon as they are measured."""
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from ppdm.attacks.anonymisation import anonymisation_tests, check_anonymeter
    from ppdm.cli.anonymisation import print_anonymisation

    if anonymeter:
        check_anonymeter()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), transient=True) as prog:
        task = prog.add_task("tests of anonymisation", total=None)
        anon = anonymisation_tests(original, release, control, anonymeter=anonymeter,
                                   progress=lambda a: prog.update(task, description=f"test: {a}"), **kw)
    print_anonymisation(console, anon)
    return anon


def _battery(original: str, release: str, kw: dict[str, Any], *, skip_on_error: bool) -> dict[str, Any]:
    """The attack battery on the aligned release; beside the tests of anonymisation, a release it cannot
    attack (rows not matched, a mechanism it must replay) is noted, not an error."""
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from ppdm.attacks import attack_tables
    from ppdm.exceptions import PPDMError

    try:
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), transient=True) as prog:
            task = prog.add_task("attacking", total=None)
            return attack_tables(original, release, progress=lambda a: prog.update(task, description=f"attack: {a}"),
                                 **kw)
    except PPDMError as e:
        if not skip_on_error:
            raise
        return {"schema": "ppdm.attack/1", "results": [], "battery_skipped": str(e)}


def _print_battery(console: Any, res: dict[str, Any]) -> None:
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
    console.print(tab)
    console.print(f"threat: {res['threat_description']}")


def register(app: typer.Typer) -> None:
    """Add ``ppdm attack`` to the app."""
    app.command("attack")(attack)
