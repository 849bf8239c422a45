"""``ppdm release``: the main job."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ppdm.cli.options import (
    ColumnsOpt,
    DropOpt,
    EscapeFormulasOpt,
    ForceOpt,
    IdOpt,
    KeepIdsOpt,
    KeySeedOpt,
    LabelOpt,
    RolesOpt,
    SepOpt,
    split_list,
)


def release_command(
    input: Annotated[str | None, typer.Argument(help="Table to release (CSV/TSV/Parquet).")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Output directory.")] = None,
    config: Annotated[Path | None, typer.Option(help="YAML config: methods, grids, threat, policy.")] = None,
    id: IdOpt = None,
    label: LabelOpt = None,
    columns: ColumnsOpt = None,
    drop: DropOpt = None,
    roles: RolesOpt = None,
    methods: Annotated[str | None, typer.Option(help="Comma-separated mechanisms (default grids).")] = None,
    threat: Annotated[str | None, typer.Option(help="Attacker knowledge, e.g. population, known-io:20.")] = None,
    max_reid: Annotated[float | None, typer.Option("--max-reid", help="Largest re-identification rate.")] = None,
    max_within: Annotated[float | None, typer.Option(
        "--max-within-5pct", help="Largest share of values recovered within 5 %.")] = None,
    max_inference: Annotated[float | None, typer.Option(
        "--max-attribute-inference",
        help="Largest share of people in the release whose sensitive value is inferred beyond the control "
             "(columns with the role 'sensitive').")] = None,
    max_singling_out: Annotated[float | None, typer.Option(
        "--max-singling-out", help="Largest singling-out risk beyond the control (default 0.05).")] = None,
    max_linkability: Annotated[float | None, typer.Option(
        "--max-linkability", help="Largest linkability risk beyond the control (default 0.05).")] = None,
    max_membership: Annotated[float | None, typer.Option(
        "--max-membership-outliers", help="Largest membership advantage on the most outlying records (synthetic "
                                          "records and group centroids; default 0.10).")] = None,
    full_battery: Annotated[bool, typer.Option(
        "--full-battery", help="Run every attack and utility on every candidate that holds the policy after the "
                               "first pass (by default only on those that can still be chosen).")] = False,
    choose: Annotated[str | None, typer.Option(
        help="Release this candidate (its name in the record, e.g. 'mdav(k=20)') in place of the policy's choice; "
             "it must hold the policy and be fully measured. Needs --reason.")] = None,
    reason: Annotated[str | None, typer.Option(
        help="Why the data steward chose --choose over the policy's choice, in words (kept in the record).")] = None,
    objective: Annotated[str | None, typer.Option(
        help="Utility to maximise: tstr_knn_pct (default), knn_pct, svm_pct, kmeans_pct.")] = None,
    seed: KeySeedOpt = None,
    keep_ids: KeepIdsOpt = False,
    escape_formulas: EscapeFormulasOpt = False,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", help="Parallel workers (-1: all cores).")] = None,
    fmt: Annotated[str | None, typer.Option(
        "--format", help="Release file format: csv or parquet (default: as the input).")] = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Cache of scored candidates.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Recompute every candidate.")] = False,
    print_config: Annotated[bool, typer.Option("--print-config", help="Print the default config and exit.")] = False,
    backend: Annotated[str, typer.Option(
        help="numpy (candidates scored by worker processes here) or dask (candidates as tasks on a Dask "
             "cluster).")] = "numpy",
    scheduler: Annotated[str | None, typer.Option(
        help="Dask scheduler address tcp://host:port (default: a local cluster on 127.0.0.1).")] = None,
    part_rows: Annotated[int | None, typer.Option(
        "--part-rows", help="With --backend dask: a Parquet input of more rows is released by parts of about "
                            "this many rows, each read and released by one worker (default 5,000,000).")] = None,
    force: ForceOpt = False,
    sep: SepOpt = None,
) -> None:
    """Sweep mechanisms, attack every candidate, pick the release by policy, write release + record + report."""
    from ppdm.exceptions import ParameterError
    from ppdm.release import config_yaml, load_config, release

    if fmt is None and config is None and input is not None and Path(input).suffix.lower() in (".parquet", ".pq"):
        fmt = "parquet"  # a Parquet table is released as Parquet (columnar, typed, and fast to write)
    overrides: dict[str, object] = {"threat": threat, "seed": seed, "n_jobs": jobs, "output_format": fmt}
    cfg = load_config(config, overrides)
    limits = (max_reid, max_within, max_inference, max_singling_out, max_linkability, max_membership, objective)
    if methods is not None or any(v is not None for v in limits):
        data = cfg.model_dump()
        if methods is not None:
            from ppdm.release.config import DEFAULT_GRIDS

            names = split_list(methods) or []
            data["methods"] = [{"method": m, "grid": DEFAULT_GRIDS.get(m, {})} for m in names]
        pol = data["policy"]
        for k, v in (("max_reidentification", max_reid), ("max_within_5pct", max_within),
                     ("max_attribute_inference", max_inference), ("max_singling_out", max_singling_out),
                     ("max_linkability", max_linkability), ("max_membership_outliers", max_membership),
                     ("objective", objective)):
            if v is not None:
                pol[k] = v
        cfg = load_config(None, data)
    if print_config:
        print(config_yaml(cfg), end="")
        return
    if input is None or output is None:
        raise ParameterError("give the input table and --output DIR (or --print-config)")
    from ppdm.data.outputs import check_disjoint

    # the release's inputs and its outputs never meet (the table is checked again by release() itself)
    check_disjoint([("output directory", output)], [("input table", input), ("config", config),
                                                     ("cache directory", cache_dir)])
    res = release(input, output_dir=output, config=cfg, id=id, label=label, columns=split_list(columns),
                  force=force, cache_dir=cache_dir, use_cache=not no_cache, sep=sep, keep_ids=keep_ids,
                  escape_formulas=escape_formulas, roles=roles, drop=tuple(split_list(drop) or ()),
                  backend=backend, scheduler=scheduler, part_rows=part_rows, full_battery=full_battery,
                  choose=choose, reason=reason)
    from ppdm.cli.console import plain_console

    c = plain_console()
    for line in res.record["summary"]:
        c.print(line)
    c.print(f"wrote {output}/: release.{cfg.output_format}, release.json, report.html, release.state (secret)")


def schema_command(
    input: Annotated[str, typer.Argument(help="Table to describe (CSV/TSV/Parquet).")],
    id: IdOpt = None,
    label: LabelOpt = None,
    drop: DropOpt = None,
    roles: RolesOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the columns as JSON.")] = False,
    sep: SepOpt = None,
) -> None:
    """Show each column's inferred type, role and what a release does with it (counts only, no values)."""
    import json

    from rich.table import Table

    from ppdm.data.columns import infer_columns, parse_roles
    from ppdm.data.io import read_table

    df = read_table(input, sep=sep)
    infos = infer_columns(df, id=id, label=label, drop=tuple(split_list(drop) or ()), roles=parse_roles(roles))
    if as_json:
        print(json.dumps([i.to_dict() for i in infos], indent=1))
        return
    t = Table("column", "type", "role", "missing", "distinct", "treatment", title=f"{len(df)} rows")
    for i in infos:
        t.add_row(i.name, i.type, i.role, str(i.n_missing), str(i.n_distinct), i.treatment)
    from ppdm.cli.console import plain_console

    plain_console().print(t)


def register(app: typer.Typer) -> None:
    app.command("release")(release_command)
    app.command("schema")(schema_command)
