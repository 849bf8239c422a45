"""``ppdm hide``: one NMF release that distorts the values and hides chosen cluster patterns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from ppdm.cli.options import (
    ColumnsOpt,
    DropOpt,
    ForceOpt,
    IdOpt,
    KeepIdsOpt,
    KeySeedOpt,
    LabelOpt,
    OutOpt,
    SepOpt,
    split_list,
)

__all__ = ["register"]


def hide(
    input: Annotated[str, typer.Argument(help="Table to release: CSV/TSV/Parquet file.")],
    output: OutOpt,
    clusters: Annotated[int, typer.Option("--clusters", "-k", help="K of the reference K-means.")],
    hide_member: Annotated[list[str] | None, typer.Option(
        "--hide-member", help="ID[:TARGET]: the record leaves its cluster (for cluster TARGET). Repeatable.")] = None,
    negate_pair: Annotated[list[str] | None, typer.Option(
        "--negate-pair", help="ID1,ID2: flip whether the two records share a cluster. Repeatable.")] = None,
    join_pair: Annotated[list[str] | None, typer.Option(
        "--join-pair", help="ID1,ID2: put ID2 into ID1's cluster. Repeatable.")] = None,
    separate_pair: Annotated[list[str] | None, typer.Option(
        "--separate-pair", help="ID1,ID2: move ID2 out of ID1's cluster. Repeatable.")] = None,
    search: Annotated[str, typer.Option(
        help="targeted (minimal factor moves, default) or paper (random NMF restarts + schemes).")] = "targeted",
    scheme: Annotated[int, typer.Option(help="Pair scheme of the paper search: 2 or 3.")] = 3,
    t_policy: Annotated[str, typer.Option("--t-policy", help="Scheme 2 swap partner: smallest or argmin.")
                        ] = "smallest",
    components: Annotated[int | None, typer.Option(help="NMF inner dimension (default: --clusters).")] = None,
    nmf_solver: Annotated[str, typer.Option("--nmf-solver", help="hals, pg, mu or als.")] = "hals",
    max_trials: Annotated[int, typer.Option("--max-trials", help="Candidate releases checked at most.")] = 200,
    tolerance: Annotated[float, typer.Option(help="Largest acceptable side-effect rate (0..1).")] = 0.0,
    reference: Annotated[str, typer.Option(help="Seed rows of K-means: first-rows or kmeans++.")] = "first-rows",
    no_shift: Annotated[bool, typer.Option("--no-shift", help="Refuse negative values instead of shifting.")
                        ] = False,
    id: IdOpt = None,
    label: LabelOpt = None,
    columns: ColumnsOpt = None,
    drop: DropOpt = None,
    state: Annotated[Path | None, typer.Option(help="Write the NMF factors (secret) here, owner-only.")] = None,
    seed: KeySeedOpt = None,
    keep_ids: KeepIdsOpt = False,
    force: ForceOpt = False,
    sep: SepOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Release a table through NMF while hiding cluster memberships and same-cluster relations.

    Records are named by the --id column, else by 1-based row number; clusters are numbered 1..K in the
    order of their seed rows (rows 1..K by default). Success and side effects are checked on the release
    itself with the same K-means protocol. Nothing is written unless the request is achieved.
    """
    from rich.progress import BarColumn, Progress, TextColumn

    from ppdm.hiding.table import hide_table

    with Progress(TextColumn("hiding: trials"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  transient=True, disable=as_json) as bar:
        task = bar.add_task("trials", total=max_trials)

        def tick(done: int, total: int) -> None:
            bar.update(task, completed=done)

        s = hide_table(input, clusters=clusters, hide_member=hide_member or (), negate_pair=negate_pair or (),
                       join_pair=join_pair or (), separate_pair=separate_pair or (), id=id, label=label,
                       columns=split_list(columns), drop=split_list(drop) or (), output=output, state=state,
                       force=force, seed=seed, sep=sep, progress=tick, search=search, scheme=scheme, keep_ids=keep_ids,
                       t_policy=t_policy, components=components, solver=nmf_solver, max_trials=max_trials,
                       tolerance=tolerance, reference=reference, shift=not no_shift)
    if as_json:
        print(json.dumps(s, indent=2, default=str))
    else:
        _print(s)
    if not s["achieved"]:
        raise typer.Exit(1)


def _print(s: dict[str, Any]) -> None:
    from ppdm.cli.console import plain_console, styled

    c = plain_console()
    verdict = ("achieved", "green") if s["achieved"] else ("NOT achieved", "red")
    c.print(styled(verdict, " (nothing written)" if not s["achieved"] else "",
                   f" after {s['trials']} trial(s) ({s['search']} search, NMF K={s['components']}, "
                   f"{s['seconds']:.2f} s)"))
    for g in s["goals"]:
        mark = "ok" if g["achieved"] else "missed"
        if g["kind"] == "member":
            want = f"cluster {g['target']}" if g["target"] is not None else "any other cluster"
            c.print(f"  record {g['record']}: cluster {g['from']} -> {g['to']} (wanted {want}) {mark}")
        else:
            before = "together" if g["together_before"] else "apart"
            after = "together" if g["together_after"] else "apart"
            c.print(f"  pair ({g['x']}, {g['y']}): {before} -> {after} {mark}")
    n_side = len(s["side_effects"])
    c.print(f"side-effect rate: {100 * s['side_effect_rate']:.2f} % ({n_side} other record(s) changed cluster)")
    moved = ", ".join(f"{m['record']}: {m['from']}->{m['to']}" for m in s["moved"][:20])
    more = f" and {len(s['moved']) - 20} more" if len(s["moved"]) > 20 else ""
    c.print(f"records moved: {moved or 'none'}{more}")
    v = s["value"]
    c.print(f"value distortion: RE {v['re']:.4f}  RP {v['rp']:.2f}  RK {v['rk']:.4f}  CP {v['cp']:.4f}  "
            f"CK {v['ck']:.4f}")
    _print_information(c, s)
    if s.get("output"):
        c.print(f"release -> {s['output']}" + (f"   state -> {s['state']} (secret; keep it private)"
                                                 if s.get("state") else ""))


def _print_information(c: Any, s: dict[str, Any]) -> None:
    """ED and the mutual informations, with the rounding they rest on and the columns it leaves unmeasured.

    Parameters
    ----------
    c : rich.console.Console
        Where to print.
    s : dict
        The summary of :func:`ppdm.hiding.table.hide_table`.
    """
    small = set(s.get("information_unmeasured_columns", ()))
    c.print(f"information measures ({s['information_rounding']}):")
    ed = s["entropy_distortion"]
    c.print(f"  ED {ed:.4f}" if ed is not None else f"  ED {s['entropy_distortion_note']}")
    measured = {k: x for k, x in s["mutual_information"].items() if k not in small}
    if measured:
        c.print("  mutual information (bits): " + ", ".join(f"{k} {x:.3f}" for k, x in measured.items()))
    if small:
        # a printed 0.000 would read as "the release destroyed the column"; the rounding did
        names = [k for k in s["mutual_information"] if k in small]
        c.print(f"  not measured meaningfully (values all below 1 in magnitude round to -1, 0 or 1; rescale to "
                f"measure them): {', '.join(names)}")


def register(app: typer.Typer) -> None:
    """Add ``ppdm hide`` to the application."""
    app.command("hide")(hide)
