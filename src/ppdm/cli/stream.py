"""``ppdm stream``: releases that absorb new rows and new attributes (incremental SVD), or new rows placed
against a fixed NMDS landmark configuration (``--method nmds``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from ppdm.cli.options import (
    ColumnsOpt,
    DropOpt,
    DropOtherOpt,
    ForceOpt,
    IdOpt,
    KeepIdsOpt,
    KeySeedOpt,
    LabelOpt,
    SepOpt,
    split_list,
)

StatePath = Annotated[Path, typer.Argument(help="The stream's state file (secret; owner-only).")]
RefreshOpt = Annotated[
    Path | None,
    typer.Option("--refresh-all", help="Re-release the whole table (rank-K approximation after the update) here."),
]
WaitOpt = Annotated[float, typer.Option("--wait", help="Seconds to wait for another update holding the lock.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")]


def _print(summary: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        print(json.dumps(summary, indent=2))
        return
    from ppdm.cli.console import plain_console

    c = plain_console()
    for line in lines:
        c.print(line)


def _counts(s: dict[str, Any]) -> str:
    if s["method"] == "nmds":
        return (f"{s['n_rows']} rows x {s['n_released_columns']} columns -> {s['rank']} NMDS coordinates, "
                f"{s['n_updates']} update(s), {s['mode']}")
    return (f"{s['n_rows']} rows x {s['n_released_columns']} released columns, rank {s['rank']}, "
            f"{s['n_updates']} update(s), {s['mode']}")


def register(app: typer.Typer) -> None:
    stream_app = typer.Typer(help="Streaming releases: absorb new rows and attributes without recomputing.",
                             no_args_is_help=True)
    app.add_typer(stream_app, name="stream")

    @stream_app.command("init")
    def init(
        input: Annotated[str, typer.Argument(help="The first table (CSV/TSV/Parquet).")],
        state: Annotated[Path, typer.Option("--state", help="State file to create (secret; owner-only).")],
        output: Annotated[Path | None, typer.Option("--output", "-o", help="Release of the first table.")] = None,
        method: Annotated[str, typer.Option(
            "--method", "-m", help="svd, ssvd (sparsified) or nmds (landmark NMDS; new rows are placed).")] = "svd",
        rank: Annotated[int, typer.Option(help="Rank K of the release (svd, ssvd).")] = 5,
        dims: Annotated[int | None, typer.Option("--dims", help="Released dimension p (nmds).")] = None,
        landmarks: Annotated[int | None, typer.Option(
            "--landmarks", help="Landmark records fitted by full NMDS; all other and later rows are placed "
            "against them (nmds; default 1000).")] = None,
        dissimilarity: Annotated[str | None, typer.Option(
            "--dissimilarity", help="Dissimilarity of the z-scored rows (nmds; default euclidean).")] = None,
        preprocess: Annotated[str, typer.Option(
            help="Scaling before the factorisation: none, zscore, range, minshift, nonneg. The default is none, "
            "as the paper's incremental SVD (perturb and release default to zscore).")] = "none",
        update_stats: Annotated[bool, typer.Option(
            "--update-stats", help="Re-estimate the scaling statistics after every batch (default: fixed).")] = False,
        append_only: Annotated[bool, typer.Option(
            "--append-only", help="Keep no left factors: update cost independent of the rows absorbed; "
            "no --refresh-all, no add-columns.")] = False,
        residual_rank: Annotated[int | None, typer.Option(
            "--residual-rank", help="Sketch each batch's residual to this rank (default: full QR, as the paper).")
        ] = None,
        buffer_rank: Annotated[int, typer.Option(
            "--buffer-rank", help="Track this many extra components, never released: keeps the release closer "
            "to the exact rank-K one over many updates (default 0, as the paper).")] = 0,
        strategy: Annotated[str | None, typer.Option(help="Sparsification: sts, cts, ets (ssvd).")] = None,
        eps_u: Annotated[float | None, typer.Option("--eps-u", help="Threshold on U (ssvd).")] = None,
        eps_v: Annotated[float | None, typer.Option("--eps-v", help="Threshold on V (ssvd).")] = None,
        id: IdOpt = None,
        label: LabelOpt = None,
        columns: ColumnsOpt = None,
        drop: DropOpt = None,
        drop_other: DropOtherOpt = False,
        seed: KeySeedOpt = None,
        keep_ids: KeepIdsOpt = False,
        force: ForceOpt = False,
        sep: SepOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Start a stream: exact rank-K SVD of the first table, its release and the state file."""
        from ppdm.streaming import stream_init

        params: dict[str, Any] = ({} if method == "nmds" else
                                  {"preprocess": preprocess, "update_stats": update_stats,
                                   "residual_rank": residual_rank, "buffer_rank": buffer_rank})
        for k, v in (("sparsify", strategy), ("eps_u", eps_u), ("eps_v", eps_v), ("dims", dims),
                     ("landmarks", landmarks), ("dissimilarity", dissimilarity)):
            if v is not None:
                params[k] = v
        res = stream_init(input, state=state, output=output, method=method, rank=rank, params=params,
                          append_only=append_only, id=id, label=label, columns=split_list(columns),
                          drop=split_list(drop) or (), drop_other=drop_other, force=force, sep=sep, seed=seed,
                          keep_ids=keep_ids)
        s = res.summary
        _print(s, as_json, [f"stream started: {_counts(s)} ({s['seconds']:.2f} s)",
                            f"state -> {state} (secret; keep it private)"]
               + ([f"release -> {output}"] if output else []))

    @stream_app.command("update")
    def update(
        state: StatePath,
        batch: Annotated[str, typer.Argument(help="New rows, with the same columns as the first table.")],
        output: Annotated[Path | None, typer.Option(
            "--output", "-o", help="Append release: only the new rows (earlier releases never change).")] = None,
        refresh_all: RefreshOpt = None,
        wait: WaitOpt = 0.0,
        force: ForceOpt = False,
        sep: SepOpt = None,
        as_json: JsonOpt = False,
        backend: Annotated[str, typer.Option(
            help="numpy (in memory) or dask (the batch partition by partition; -o is a directory of Parquet files)."
        )] = "numpy",
        scheduler: Annotated[str | None, typer.Option(
            help="Dask scheduler address tcp://host:port (default: a local cluster on 127.0.0.1).")] = None,
        keep_ids: Annotated[bool, typer.Option(
            "--keep-ids", help="Write this update's releases in the linkable layout (original ids and order), "
            "whatever the stream's layout.")] = False,
    ) -> None:
        """Absorb new rows; release them (-o), the whole table (--refresh-all), or both."""
        from ppdm.exceptions import ParameterError
        from ppdm.streaming import stream_update

        if output is None and refresh_all is None:
            raise ParameterError("give -o FILE (new rows), --refresh-all FILE (whole table), or both")
        res = stream_update(state, batch, output=output, refresh_all=refresh_all, force=force, sep=sep, wait=wait,
                            backend=backend, scheduler=scheduler, keep_ids=True if keep_ids else None)
        s = res.summary
        _print(s, as_json, [f"absorbed {s['n_new_rows']} rows: {_counts(s)} ({s['seconds']:.2f} s)"]
               + [f"wrote {p}" for p in res.written[:-1]])

    @stream_app.command("add-columns")
    def add_columns(
        state: StatePath,
        new_attributes: Annotated[str, typer.Argument(
            help="New attribute columns for every absorbed row, same order, plus the id column when the stream "
            "has an --id (it checks the order).")],
        refresh_all: RefreshOpt = None,
        wait: WaitOpt = 0.0,
        force: ForceOpt = False,
        sep: SepOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Absorb new attributes of the rows already absorbed."""
        from ppdm.streaming import stream_add_columns

        res = stream_add_columns(state, new_attributes, refresh_all=refresh_all, force=force, sep=sep, wait=wait)
        s = res.summary
        _print(s, as_json, [f"added {s['new_columns']} column(s): {_counts(s)} ({s['seconds']:.2f} s)"]
               + [f"wrote {p}" for p in res.written[:-1]])

    @stream_app.command("status")
    def status(
        state: StatePath,
        check: Annotated[bool, typer.Option(
            "--check", help="Also compare with an exact recomputation (from the tracked Gram matrix).")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Counts, rank, orthogonality drift; with --check the drift against an exact recomputation."""
        from ppdm.streaming import stream_status

        s = stream_status(state, check=check)
        if s["method"] == "nmds":
            _print(s, as_json, [_counts(s), f"{s['landmarks']} landmarks, "
                                f"landmark stress-1 {s['landmark_stress']:.4f}"])
            return
        o = s["orthogonality"]
        lines = [_counts(s), f"preprocess {s['preprocess']} (statistics {'updated' if s['update_stats'] else 'fixed'})",
                 f"orthogonality drift: U {o['u']:.2e}  V {o['v']:.2e}  (re-orthogonalised past {s['ortho_tol']:g}; "
                 f"{s['reorthogonalizations']} time(s))"]
        if check:
            c = s["check"]
            lines.append(f"exact rank-{s['rank']} RE {c['exact_re']:.6f}  current basis RE {c['projection_re']:.6f}  "
                         f"relative gap {100 * c['relative_gap']:.3f} %  largest subspace angle "
                         f"{c['max_angle_deg']:.3f} deg (preprocessed units)")
        _print(s, as_json, lines)
