"""Command definitions. Heavy libraries are imported inside the commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ppdm.cli.console import styled
from ppdm.cli.options import (
    ColumnsOpt,
    DropOpt,
    DropOtherOpt,
    EscapeFormulasOpt,
    ForceOpt,
    IdOpt,
    KeepIdsOpt,
    KeySeedOpt,
    LabelOpt,
    OutOpt,
    RolesOpt,
    SampleOpt,
    SeedOpt,
    SepOpt,
    StateInOpt,
    split_list,
)

app = typer.Typer(
    name="ppdm",
    help="Privacy-preserving data publishing by perturbation: release a table, measure it, attack it.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
)


def _print_version(value: bool) -> None:
    if value:
        from ppdm import __version__

        print(f"ppdm {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", is_eager=True,
                                          callback=_print_version)] = False,
) -> None:
    """Privacy-preserving data publishing by perturbation: release a table, measure it, attack it."""


datasets_app = typer.Typer(help="Bundled datasets and generators.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")


def _console(stderr: bool = False, *, markup: bool = False):  # type: ignore[no-untyped-def]
    """The console of a command (:mod:`ppdm.cli.console`); ``markup`` only for text ppdm writes itself (the
    reproductions' tables, whose results are coloured by rich's markup)."""
    from rich.console import Console

    from ppdm.cli.console import plain_console

    return Console(stderr=stderr, highlight=False) if markup else plain_console(stderr)


@app.command()
def perturb(
    input: Annotated[str, typer.Argument(help="Table to release: CSV/TSV/Parquet file, directory or glob.")],
    output: OutOpt,
    method: Annotated[str, typer.Option("--method", "-m", help="Mechanism (see `ppdm list`).")] = "svd",
    rank: Annotated[int | None, typer.Option(help="Rank k (svd, ssvd).")] = None,
    solver: Annotated[str | None, typer.Option(help="SVD solver: auto, exact, gram, lanczos, randomized.")] = None,
    strategy: Annotated[str | None, typer.Option(help="Sparsification: sts, cts, ets (ssvd).")] = None,
    eps_u: Annotated[float | None, typer.Option("--eps-u", help="Threshold on U_k (ssvd).")] = None,
    eps_v: Annotated[float | None, typer.Option("--eps-v", help="Threshold on V_k (ssvd).")] = None,
    alpha: Annotated[float | None, typer.Option(help="ETS growth rate (default 1/k).")] = None,
    scale: Annotated[float | None, typer.Option(help="Noise scale: a of U[0,a] or sigma of N(0,sigma^2).")] = None,
    distribution: Annotated[str | None, typer.Option(help="Noise distribution: uniform or normal.")] = None,
    sigma: Annotated[float | None, typer.Option(help="Sigma of multiplicative noise or projection entries.")] = None,
    kind: Annotated[str | None, typer.Option(help="Projection kind: arp, arpo, rpa, rpoa.")] = None,
    components: Annotated[int | None, typer.Option(help="Inner dimension K (nmf; --rank also sets it).")] = None,
    keep: Annotated[int | None, typer.Option(help="Final dimension r <= K of H[:, :r] W[:r] (nmf).")] = None,
    nmf_solver: Annotated[str | None, typer.Option("--nmf-solver", help="NMF solver: hals, pg, mu, als.")] = None,

    dims: Annotated[str | None, typer.Option(
        help="Released dimension p (nmds and p-dimensional baselines): an integer or 'auto' (stress elbow).")] = None,
    dissimilarity: Annotated[str | None, typer.Option(
        help="Dissimilarity (nmds): euclidean, minkowski, manhattan, chebyshev, mahalanobis, cosine, "
             "binary-smc/-jaccard/-hamman, gower, huang.")] = None,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Refuse to release when the release is near-linear in the input (nmds).")] = False,
    landmarks: Annotated[int | None, typer.Option(
        "--landmarks", help="Fit NMDS on this many sampled records and place the others against them (nmds; "
        "default: all records up to 25,000).")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="Other parameter as key=value.")] = None,
    partition_rows: Annotated[str | None, typer.Option(
        "--partition-rows", help="Distort only these records: a leading count or comma-separated ids.")] = None,
    partition_columns: Annotated[str | None, typer.Option(
        "--partition-columns", help="Distort only these (confidential) columns: a count or names.")] = None,
    id: IdOpt = None,
    label: LabelOpt = None,
    columns: ColumnsOpt = None,
    drop: DropOpt = None,
    drop_other: DropOtherOpt = False,
    preprocess: Annotated[str, typer.Option(
        help="Scaling before the mechanism: none, zscore, range, minshift, nonneg.")] = "zscore",
    release_units: Annotated[str, typer.Option(help="original (default) or preprocessed units.")] = "original",
    state: Annotated[Path | None, typer.Option(help="Write the secret state (keys) here, owner-only.")] = None,
    seed: KeySeedOpt = None,
    keep_ids: KeepIdsOpt = False,
    escape_formulas: EscapeFormulasOpt = False,
    roles: RolesOpt = None,
    force: ForceOpt = False,
    sep: SepOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    backend: Annotated[str, typer.Option(
        help="numpy (in memory) or dask (partitioned; -o is then a directory of Parquet files).")] = "numpy",
    scheduler: Annotated[str | None, typer.Option(
        help="Dask scheduler address tcp://host:port (default: a local cluster on 127.0.0.1).")] = None,
) -> None:
    """Release a perturbed copy of a table: every column treated as `ppdm release` treats it (ids become
    pseudonyms, free text and identifying columns are dropped, categories, integers and dates released whole)."""
    from ppdm.cli.params import parse_params
    from ppdm.exceptions import ParameterError
    from ppdm.pipeline import perturb as run

    named = {"rank": rank, "solver": solver, "strategy": strategy, "eps_u": eps_u, "eps_v": eps_v,
             "alpha": alpha, "scale": scale, "distribution": distribution, "sigma": sigma, "kind": kind}
    # the option behind each parameter, for the refusal of one given again with -p
    flags = {k: "--" + k.replace("_", "-") for k in named} | {"n_components": "--dims", "components": "--components"}
    if method == "nmf" and components is None:  # --rank k names NMF's inner dimension too
        components, named["rank"], flags["components"] = rank, None, "--rank"
    named |= {"components": components, "keep": keep, "solver": nmf_solver if method == "nmf" else solver}
    if method == "nmf":
        flags["solver"] = "--nmf-solver"

    named |= {"n_components": (int(dims) if dims is not None and dims.isdigit() else dims),
              "dissimilarity": dissimilarity, "strict": strict or None, "landmarks": landmarks}
    given = {k: v for k, v in named.items() if v is not None}
    extra = parse_params(param, method, {k: flags.get(k, "--" + k.replace("_", "-")) for k in given})
    if "random_state" in extra and seed is not None:
        raise ParameterError(f"the seed is given twice, by --seed {seed} and by -p random_state; give it once")
    params = given | extra
    res = run(input, method=method, params=params, id=id, label=label, columns=split_list(columns),
              drop=split_list(drop) or (), drop_other=drop_other, preprocess=preprocess,
              release_units=release_units, partition_rows=partition_rows, partition_columns=partition_columns,
              output=output, state=state, force=force, seed=seed, sep=sep, backend=backend, scheduler=scheduler,
              keep_ids=keep_ids, escape_formulas=escape_formulas, roles=roles)
    s = res.summary
    if as_json:
        print(json.dumps(s | {"output": str(res.output)}, indent=2))
        return
    c = _console()
    # a random_state is key material: it is never echoed
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if k != "random_state") or "defaults"
    c.print(styled(f"released {s['n_rows']} rows x {s['n_released_columns']} perturbed columns with ",
                   (method, "bold"), f" ({shown}) -> {res.output}"))
    c.print(f"key: {s['key']['source']}; {s['identity']['layout']}")
    if "formula_cells" in s:
        f = s["formula_cells"]
        cols = ", ".join(f"'{k}' ({v})" for k, v in f["columns"].items())
        what = f"text cells that spreadsheets run as formulas in {cols}"
        if f["escaped"]:
            c.print(f"escaped {what}")
        else:  # a warning, with the others on stderr (stdout may be the release itself)
            print(f"warning: {what}; --escape-formulas prefixes them with '", file=sys.stderr)
    if "guarantee" in s:  # a synthesiser of the whole record: its formal guarantee, not a distortion figure
        g = s["guarantee"]
        fig = (f"({g['epsilon']:g}, {g['delta']:g})-differential privacy for {g['unit']}; public: "
               f"{'; '.join(g['public'])}")
    else:
        fig = f"RE = {s['re']:.4f}" if "re" in s else f"stress-1 = {s.get('stress', float('nan')):.4f}"
    c.print(f"{fig}   preprocess = {s['preprocess']}   {s['seconds']:.2f} s"
            + (f"   state -> {res.state} (secret; keep it private)" if res.state else ""))


@app.command()
def evaluate(
    original: Annotated[str, typer.Argument(help="The original table.")],
    release: Annotated[str, typer.Argument(help="The released table.")],
    id: IdOpt = None,
    label: LabelOpt = None,
    columns: ColumnsOpt = None,
    rank_mode: Annotated[str, typer.Option(help="RP/CP rank convention: sort_index or rank.")] = "sort_index",
    normalize: Annotated[str | None, typer.Option(help="Pattern metrics on range-normalised data: range.")] = None,
    utility: Annotated[str | None, typer.Option(
        help="Comma-separated utility measures: kmeans, svm, suite (k-NN, SVM kernels, clusterings, NP/CC) or all "
             "(default kmeans,svm; with --backend dask only kmeans)."
    )] = None,
    tests: Annotated[bool, typer.Option("--tests", help="Paired t-tests of the utility suite's trials.")] = False,
    sample: SampleOpt = None,
    state: StateInOpt = None,
    seed: SeedOpt = 0,
    sep: SepOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")] = False,
    backend: Annotated[str, typer.Option(
        help="numpy (in memory) or dask (partitioned: value metrics and K-means on every row, record linkage on "
             "a seeded sample of --sample rows, default 2000).")] = "numpy",
    scheduler: Annotated[str | None, typer.Option(
        help="Dask scheduler address tcp://host:port (default: a local cluster on 127.0.0.1).")] = None,
) -> None:
    """Distortion (RE, RP, RK, CP, CK, DistVal, ...) and utility of a release against its original."""
    from ppdm.backends import check_backend
    from ppdm.exceptions import ParameterError
    from ppdm.pipeline import evaluate as run

    if check_backend(backend) == "dask":
        if state is not None:
            raise ParameterError("--state alignment runs in memory; evaluate with --backend numpy (and --sample N)")
        _evaluate_dask(original, release, id=id, label=label, columns=columns, rank_mode=rank_mode,
                       normalize=normalize, utility=utility, tests=tests, sample=sample, seed=seed, sep=sep,
                       as_json=as_json, scheduler=scheduler)
        return
    if scheduler is not None:
        raise ParameterError("--scheduler applies to the dask backend; add --backend dask")
    res = run(original, release, id=id, label=label, columns=split_list(columns), rank_mode=rank_mode,
              normalize=normalize, utility=split_list(utility or "kmeans,svm") or (), seed=seed, sep=sep,
              tests=tests, sample=sample, state=state)
    _alignment_notes(res)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    from rich.table import Table

    t = Table(title=f"release vs original ({res.get('sample', str(res['n_rows']) + ' rows')}, "
                    f"{len(res['columns'])} columns)")
    t.add_column("metric")
    t.add_column("value", justify="right")
    t.add_column("meaning")
    from ppdm.metrics import METRICS

    for k, v in res["value"].items():
        t.add_row(k.upper(), f"{v:.4f}", METRICS[k].description)
    for k, v in res["pattern"].items():
        if isinstance(v, float):
            t.add_row(k, f"{v:.4f}", METRICS[k].description)
    for k, v in res.get("utility", {}).items():
        if v["release"] is not None and v["original"] is not None:
            t.add_row(k, f"{v['release']:.2f}", f"original {v['original']:.2f}")
    for k, v in res.get("tests", {}).items():
        t.add_row(f"t-test {k}", f"p = {v['p_value']:.3g}", "significant" if v["significant"] else "not significant")
    c = _console()
    c.print(t)
    c.print(f"pairwise metrics: {res['pattern']['pairs']}")
    left = res.get("left_out", {})
    if left.get("with_gaps"):
        c.print(f"{left['with_gaps']} row(s) with a gap in a compared column left out of every measure")
    if left.get("without_label"):
        c.print(f"{left['without_label']} row(s) without a label left out of the class-based utility")


def _alignment_notes(res: dict[str, Any]) -> None:
    """Say on stderr how rows and columns were matched when it may not be what the user meant: a shuffled
    release matched by position, or columns of one table missing from the other, change every measure."""
    if res.get("rows_matched_by") == "position":
        print("note: rows are matched by position (no --id, no --state); a release ppdm shuffled (its default) "
              "is compared with the right records only when its --state is given", file=sys.stderr)
    gone = res.get("columns_left_out", {})
    parts = [f"{which} column(s) {', '.join(repr(c) for c in cs)} not in the {other}"
             for which, other in (("original", "release"), ("release", "original")) if (cs := gone.get(which))]
    if parts:
        print(f"note: {'; '.join(parts)}: left out, and the original's baselines are computed on the "
              f"{len(res['columns'])} common columns; compare chosen columns with --columns", file=sys.stderr)


def _evaluate_dask(original: str, release: str, *, id: str | None, label: str | None, columns: str | None,
                   rank_mode: str, normalize: str | None, utility: str | None, tests: bool, sample: int | None,
                   seed: int, sep: str | None, as_json: bool, scheduler: str | None) -> None:
    """``ppdm evaluate --backend dask``: value metrics, K-means and sampled record linkage."""
    from ppdm.backends import load
    from ppdm.exceptions import ParameterError

    names = split_list(utility) or [] if utility is not None else ["kmeans"]
    other = [u for u in names if u != "kmeans"]
    if other or tests or normalize is not None:
        what = ", ".join(other) or ("--tests" if tests else "--normalize")
        raise ParameterError(f"{what} is not available with --backend dask (value metrics, K-means and record "
                             "linkage are); evaluate a sample with --backend numpy --sample N")
    res = load("dask").evaluate(original, release, id=id, label=label, columns=split_list(columns),
                                rank_mode=rank_mode, utility=names, seed=seed, sep=sep, scheduler=scheduler,
                                **({} if sample is None else {"linkage": sample}))
    if id is None:
        print("note: rows are matched by position (no --id); a release ppdm shuffled (its default) is compared "
              "with the right records only with its --state, which --backend numpy reads", file=sys.stderr)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    from rich.table import Table

    from ppdm.metrics import METRICS

    t = Table(title=f"release vs original ({res['n_rows']} rows, {len(res['columns'])} columns, dask)")
    for c in ("metric", "value", "meaning"):
        t.add_column(c, justify="right" if c == "value" else "left")
    for k, v in res["value"].items():
        t.add_row(k.upper(), f"{v:.4f}", METRICS[k].description)
    for k, v in res.get("utility", {}).items():
        t.add_row(k, f"{v['release']:.2f}", f"original {v['original']:.2f}")
    link = res.get("linkage")
    if link is not None:
        for space, rate in link["rates"].items():
            t.add_row(f"linkage {space}", f"{100 * rate:.1f} %", f"chance {100 * link['chance']:.2f} %")
    c = _console()
    c.print(t)
    if link is not None:
        c.print(f"record linkage on a {link['sample']}")


@app.command()
def reproduce(
    table: Annotated[str | None, typer.Argument(help="Reproduction id (see --list).")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the available reproductions.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the cells (or coverage, or summary) as JSON.")] = False,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Directory for the reproduction's tidy tables (CSV) and figures (PNG), where it has any.")
    ] = None,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", help="Directory of data sets that are not bundled, for the reproductions that use them: UCI "
        "files as published (yeast.data, ecoli.data, ...) or <name>.csv exports, class last.")
    ] = None,
    trials: Annotated[int | None, typer.Option("--trials", help="Trials per cell, for randomised sweeps.")] = None,
    coverage: Annotated[bool, typer.Option(
        "--coverage", help="Show every result table and figure of the source documents with its reproduction "
        "or the reason it has none.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Run every reproduction and print one summary table.")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="With --all: only the reproductions not marked slow.")
                     ] = False,
    blas_threads: Annotated[int, typer.Option(
        "--blas-threads", min=0, help="BLAS threads while a reproduction runs (0: the library's own setting). "
        "One by default: the reproductions do many small products, where threads gain nothing and stall on "
        "shared cores.")] = 1,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, help="With --all: worker processes (default: the CPU cores, at most 4). Reproductions "
        "that share cached releases run in the same worker.")] = None,
    force: ForceOpt = False,
) -> None:
    """Recompute a published table and compare it cell by cell (exit 1 when a deterministic cell fails)."""
    from ppdm.exceptions import OutputError, ParameterError
    from ppdm.experiments import REPRODUCTIONS, run_reproduction

    if coverage:
        from ppdm.experiments.runner import coverage_json, coverage_table

        if as_json:
            print(json.dumps(coverage_json(), indent=2))
        else:
            _console(markup=True).print(coverage_table())
        return
    if quick and not all_:
        raise ParameterError("--quick selects a subset of --all; give both")
    if jobs is not None and not all_:
        raise ParameterError("--jobs runs --all in parallel; give both")
    if all_ and table is not None:
        raise ParameterError("give a reproduction id or --all, not both")
    if list_ or (table is None and not all_):
        c = _console()
        for k, r in REPRODUCTIONS.items():
            c.print(styled((k, "bold"), f"  {r.title}", ("  (slow)" if r.slow else "", "dim")))
        return
    if out is not None and not out.is_dir():
        if out.exists():
            raise OutputError(f"--out '{out}' is a file; --out takes a directory (the tables and figures are "
                              "written into it): give a directory")
        raise OutputError(f"output directory '{out}' does not exist; create it first")
    if all_:
        import os

        from ppdm.experiments.runner import run_with_progress, select, summary_table

        c = _console(markup=True)
        summaries = run_with_progress(
            select(quick), console=c, show=not as_json, data_dir=data_dir, trials=trials,
            blas_threads=blas_threads or None, jobs=jobs or min(4, os.cpu_count() or 1),
            on_report=None if out is None else (
                lambda rep: _write_artifacts(rep, out, force, data_dir) if rep.tables or rep.figures else None))
        if as_json:
            print(json.dumps([s.to_dict() for s in summaries], indent=2))
        else:
            c.print(summary_table(summaries))
        if not all(s.passed for s in summaries):
            raise typer.Exit(1)
        return
    report = run_reproduction(table, blas_threads=blas_threads or None,  # type: ignore[arg-type]
                              data_dir=data_dir, trials=trials)
    if out is not None:
        _write_artifacts(report, out, force, data_dir)
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        report.print(_console(markup=True))
    if not report.passed:
        raise typer.Exit(1)


def _write_artifacts(report: Any, out: Path, force: bool, data_dir: Path | None = None) -> None:
    """Every table and figure, each written atomically; all paths are checked before the first write."""
    from ppdm.data.io import atomic_write, check_output_path, write_table
    from ppdm.exceptions import OutputError

    names = list(report.tables) + list(report.figures)
    if not names:
        raise OutputError(f"reproduction '{report.id}' has no tables or figures to write; drop --out")
    for n in names:
        check_output_path(out / n, inputs=[data_dir], force=force)
    for n, df in report.tables.items():
        write_table(df, out / n)
    for n, png in report.figures.items():
        with atomic_write(out / n) as f:
            f.write(png)


@app.command("list")
def list_methods() -> None:
    """List the registered mechanisms."""
    from ppdm.registry import MECHANISMS

    c = _console()
    for e in MECHANISMS.values():
        c.print(styled((f"{e.name:<12}", "bold"), f" {e.summary}"))


@app.command()
def inspect(
    state: Annotated[Path, typer.Argument(help="A ppdm state file.")],
    verify: Annotated[bool, typer.Option(
        "--verify/--no-verify", help="Check every array against its checksum (default), or read the header only.")
    ] = True,
) -> None:
    """Show a state file's metadata (never its keys); a modified or truncated file is an error."""
    from ppdm.state import read_header, verify_state

    h = verify_state(state) if verify else read_header(state)
    shown = {k: _redact_seeds(v, k) for k, v in h.items() if k not in ("header_sha256",)}
    shown["arrays"] = {k: {"shape": v["shape"], "dtype": v["dtype"]} for k, v in h.get("arrays", {}).items()}
    print(json.dumps(shown, indent=1))


def _redact_seeds(value: object, key: str = "") -> object:
    """Seeds regenerate keys (noise, rotations), so ``inspect`` names them without their values."""
    if "seed" in key or key in ("random_state", "entropy"):
        return "<secret>" if value is not None else None
    if isinstance(value, dict):
        return {k: _redact_seeds(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_seeds(v) for v in value]
    return value


@datasets_app.command("list")
def datasets_list() -> None:
    """List bundled datasets and generators."""
    from ppdm.datasets import DATASETS, GENERATORS

    c = _console()
    for d in DATASETS.values():
        c.print(styled((f"{d.name:<10}", "bold"), f" {d.description}  ({d.source}, {d.licence})"))
    for name, desc in GENERATORS.items():
        c.print(styled((f"{name:<10}", "bold"), f" generator: {desc}"))


@datasets_app.command("show")
def datasets_show(name: Annotated[str, typer.Argument(help="Dataset name.")]) -> None:
    """Describe a dataset: shape, columns, classes (a generator: its output with the default options)."""
    from ppdm.datasets import DATASETS, GENERATORS, generate, load
    from ppdm.exceptions import ParameterError

    c = _console()
    if name in GENERATORS:
        # `datasets list` lists the generators beside the datasets: show describes them too
        df = generate(name, random_state=0)
        c.print(styled((name, "bold"), f": generator: {GENERATORS[name]}"))
        c.print(f"with the default options and --seed 0 (change them in `ppdm datasets export {name}`): "
                f"{df.shape[0]} rows x {df.shape[1]} columns")
    elif name in DATASETS:
        df = load(name)
        c.print(styled((name, "bold"), f": {df.shape[0]} rows x {df.shape[1] - 1} attributes + class"))
    else:
        raise ParameterError(f"unknown generator or dataset '{name}'; choose one of "
                             f"{', '.join([*DATASETS, *GENERATORS])} (see `ppdm datasets list`)")
    attrs = [col for col in df.columns if col != "class"]
    c.print("columns: " + ", ".join(attrs))
    if "class" in df.columns:
        counts = df["class"].value_counts().sort_index()
        c.print("classes: " + ", ".join(f"{k} ({v})" for k, v in counts.items()))
    c.print(df.describe().T.to_string())


@datasets_app.command("export")
def datasets_export(
    name: Annotated[str, typer.Argument(help="Dataset or generator name.")],
    output: OutOpt,
    n: Annotated[int | None, typer.Option(min=1, help="Rows (generators).")] = None,
    m: Annotated[int | None, typer.Option(min=1, help="Columns (generators).")] = None,
    rank: Annotated[int | None, typer.Option(
        min=1, help="Rank (low_rank; default 10, or the smaller of --n and --m).")] = None,
    noise: Annotated[float | None, typer.Option(
        min=0.0, help="Sigma of the Gaussian noise added to every entry (low_rank; default 0).")] = None,
    seed: SeedOpt = 0,
    force: ForceOpt = False,
    with_id: Annotated[bool, typer.Option("--with-id", help="Add a 1-based 'id' column.")] = False,
) -> None:
    """Write a bundled or generated dataset to a file."""
    from ppdm.data.io import check_table_output, output_set, write_table
    from ppdm.datasets import DATASETS, GENERATORS, generate, load
    from ppdm.exceptions import ParameterError

    if name not in DATASETS and name not in GENERATORS:
        raise ParameterError(f"unknown generator or dataset '{name}'; choose one of "
                             f"{', '.join([*DATASETS, *GENERATORS])} (see `ppdm datasets list`)")
    given = [f"--{k}" for k, v in {"n": n, "m": m, "rank": rank, "noise": noise}.items() if v is not None]
    if name in DATASETS and given:
        # a bundled table is written as it is: an option that would change it must not be dropped unsaid
        raise ParameterError(f"{', '.join(given)} {'shape' if len(given) > 1 else 'shapes'} a generated dataset; "
                             f"'{name}' is a bundled one: leave "
                             f"{'them' if len(given) > 1 else 'it'} out")
    check_table_output(output)
    with output_set([("output", output)], [], force=force) as (out,):
        if name in DATASETS:
            df = load(name)
        else:
            kw = {k: v for k, v in {"n": n, "m": m, "rank": rank, "noise": noise}.items() if v is not None}
            if n is not None:
                from ppdm.utils.memory import check_dense

                # the generated matrix, its factors and the frame written from it
                check_dense(n, m or 100, 4, f"generating {n} x {m or 100}", "generate fewer rows (a smaller --n)")
            df = generate(name, random_state=seed, **kw)
        if with_id:
            df.insert(0, "id", range(1, len(df) + 1))
        write_table(df, out)
    print(f"wrote {name}: {df.shape[0]} rows x {df.shape[1]} columns -> {out}", file=sys.stdout)


from ppdm.cli.attacks import register as _register_attacks  # noqa: E402

_register_attacks(app)

from ppdm.cli.release import register as _register_release  # noqa: E402

_register_release(app)

from ppdm.cli.hiding import register as _register_hiding  # noqa: E402, I001
_register_hiding(app)

from ppdm.cli.nmds import register as _register_nmds  # noqa: E402

_register_nmds(app)

from ppdm.cli.stream import register as _register_stream  # noqa: E402, I001
_register_stream(app)

from ppdm.cli.workbench import register as _register_workbench  # noqa: E402, I001
_register_workbench(app)
