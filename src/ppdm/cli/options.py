"""Shared option declarations (defined once, used by every command)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

IdOpt = Annotated[str | None, typer.Option("--id", help="Identifier column: passed through unchanged.")]
LabelOpt = Annotated[str | None, typer.Option("--label", help="Class column: passed through, used for utility.")]
ColumnsOpt = Annotated[
    str | None, typer.Option("--columns", help="Comma-separated columns to perturb (default: every numeric column).")
]
RolesOpt = Annotated[str | None, typer.Option(
    "--roles", help="Column roles that override the inferred ones, e.g. 'notes=drop,diagnosis=sensitive' "
    "(roles: identifier, quasi-identifier, sensitive, label, other, drop); see ppdm schema.")]
DropOpt = Annotated[str | None, typer.Option("--drop", help="Comma-separated columns to leave out of the release.")]
DropOtherOpt = Annotated[
    bool, typer.Option("--drop-other", help="Drop columns that are neither perturbed, id nor label.")
]
# seeds are non-negative: numpy's generators refuse a negative one, and only after the table is read
SeedOpt = Annotated[int, typer.Option(
    "--seed", min=0, help="Seed of every random choice (same seed, same bytes).")]
KeySeedOpt = Annotated[int | None, typer.Option(
    "--seed", min=0, help="Make the release repeatable with this seed (all but the noise of formally private "
    "mechanisms, which OpenDP draws from its own generator). Default: a secret key from OS entropy, kept in the state "
    "only. A release made with a known seed can be undone by anyone who knows or guesses it.")]
KeepIdsOpt = Annotated[bool, typer.Option(
    "--keep-ids", help="Publish the original ids in the original row order (linkable; for releases that stay inside "
    "the organisation). Default: random pseudonyms and shuffled rows, the mapping in the state only.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")]
SepOpt = Annotated[str | None, typer.Option("--sep", help="Field separator of text input (default ',' or tab).")]
SampleOpt = Annotated[int | None, typer.Option(
    "--sample", help="Work on a seeded sample of this many rows (for tables too large for memory).")]
OutOpt = Annotated[Path, typer.Option("--output", "-o", help="Output file (.csv or .parquet).")]


def split_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]
StateInOpt = Annotated[Path | None, typer.Option(
    "--state", help="The release's state file: aligns a pseudonymous, shuffled release with its original.")]
EscapeFormulasOpt = Annotated[bool, typer.Option(
    "--escape-formulas",
    help="Prefix passed-through text cells that spreadsheets run as formulas (=, +, -, @) with '.")]
